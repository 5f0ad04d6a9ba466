//! 1,000 service installations on the embedded control plane: time until all are `Ready`,
//! reconciles per second and the operator's peak RSS.
//!
//! The service is `ledger` of the golden project `tests/golden/multi-api` (exactly what
//! `mni-scaffold new service ledger` generates). The bench builds its operator and `mni-dev` in
//! release mode (the operator under `target/bench-operator`), starts `mni-dev` with a durable data
//! directory and its workload simulator, installs the CRDs with kubectl, starts the operator
//! (admin credentials; RBAC is not what is measured), creates the `Ledger` objects with 16
//! concurrent clients and watches until every one reports `Ready=True`. Reported: time from the
//! first create to all Ready, the operator's reconciles/s over that time (from its `/metrics`),
//! its peak RSS (`VmHWM`) and mni-dev's, and the CPU time each used meanwhile (where the time
//! goes); progress is logged every 5 s. Aim: under 30 s and under 100 MB on 2 cores.
//!
//! `cargo bench -p mni-tests --bench service`; `MNI_BENCH_SERVICES` changes the count and
//! `MNI_BENCH_DEV_LOG` names a file for mni-dev's log. `cargo test -p mni-tests --bench service
//! -- --smoke` runs 20 installations on the debug builds (CI does, after the golden projects).

use std::collections::HashMap;
use std::process::ExitCode;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::watcher;
use mni_bench::{Better, Mode, Report};

#[path = "support/procs.rs"]
mod procs;

use procs::{Guard, cpu_secs, peak_rss_mib};
use serde_json::json;

const METRICS: &str = "127.0.0.1:18690";

/// The operator's `controller_runtime_reconcile_total`, summed over controllers and results.
fn reconciles() -> Result<f64> {
    let out = Command::new("curl")
        .args(["-sf", &format!("http://{METRICS}/metrics")])
        .output()?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("controller_runtime_reconcile_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

#[tokio::main]
async fn main() -> ExitCode {
    let mode = Mode::from_env();
    let mut report = Report::new("service", mode);
    if let Err(e) = run(mode, &mut report).await {
        report.fail(format!("{e:#}"));
    }
    report.finish()
}

async fn run(mode: Mode, report: &mut Report) -> Result<()> {
    let count: usize = std::env::var("MNI_BENCH_SERVICES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(mode.pick(1000, 20));
    let project = mni_tests::golden_dir("multi-api");
    let built = procs::build(mode, &project, "ledger-operator")?;

    let tmp = tempfile::tempdir()?;
    let kubeconfig = tmp.path().join("kubeconfig");
    // `MNI_BENCH_DEV_LOG` keeps mni-dev's log (with `RUST_LOG=info,mni_apiserver::http=debug`,
    // one line per request: what the load is made of).
    let dev_log = std::env::var_os("MNI_BENCH_DEV_LOG")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("mni-dev.log"));
    let log = std::fs::File::create(&dev_log)?;
    let dev = Guard(
        Command::new(&built.dev)
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(tmp.path().join("data"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?,
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&dev_log)?.contains("ready") {
        if Instant::now() > deadline {
            bail!("mni-dev did not start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["apply", "-f"])
        .arg(project.join("services/ledger/operator/config/crd/bases"))
        .stdout(Stdio::null())
        .status()?;
    if !status.success() {
        bail!("kubectl apply of the CRDs failed");
    }
    let operator = Guard(
        Command::new(&built.operator)
            .args(["--metrics-bind-address", METRICS])
            .args(["--health-probe-bind-address", "127.0.0.1:0"])
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()?,
    );

    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig)?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    let client = kube::Client::try_from(config)?;
    let gvk = GroupVersionKind::gvk("ledger.example.com", "v1alpha1", "Ledger");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "ledgers");
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &resource);

    let start = Instant::now();
    let before = reconciles().unwrap_or(0.0);
    let cpu_before = (cpu_secs(dev.0.id())?, cpu_secs(operator.0.id())?);
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            let resource = resource.clone();
            async move {
                let obj: DynamicObject = serde_json::from_value(json!({
                    "apiVersion": resource.api_version,
                    "kind": resource.kind,
                    "metadata": {"name": format!("bench-{i}")},
                    "spec": {},
                }))?;
                api.create(&PostParams::default(), &obj).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    let created = start.elapsed();
    // Watch rather than poll: listing 1,000 objects every 100 ms would load mni-dev with the
    // measurement itself.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    let mut progress = Instant::now() + Duration::from_secs(5);
    let mut ready: HashMap<String, bool> = HashMap::new();
    let events = watcher(api.clone(), watcher::Config::default());
    futures::pin_mut!(events);
    loop {
        let done = ready.values().filter(|r| **r).count();
        if done == count {
            break;
        }
        if Instant::now() > progress {
            eprintln!(
                "  {:>5.1}s: {done}/{count} Ready",
                start.elapsed().as_secs_f64()
            );
            progress += Duration::from_secs(5);
        }
        let event = match tokio::time::timeout_at(deadline, events.try_next()).await {
            Ok(event) => event?.context("the watch ended")?,
            Err(_) => bail!("only {done} of {count} Ready after 300 s"),
        };
        match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => {
                let is_ready = o.data["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                });
                ready.insert(o.metadata.name.unwrap_or_default(), is_ready);
            }
            watcher::Event::Delete(o) => {
                ready.remove(&o.metadata.name.unwrap_or_default());
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }
    let all_ready = start.elapsed();
    let reconciled = reconciles()? - before;
    let cpu = (
        cpu_secs(dev.0.id())? - cpu_before.0,
        cpu_secs(operator.0.id())? - cpu_before.1,
    );
    let label = |what: &str| format!("{count} Ledger installations: {what}");
    report.figure(
        label("created"),
        "s",
        Some(created.as_secs_f64()),
        Better::Lower,
    );
    report.figure(
        label("all Ready"),
        "s",
        Some(all_ready.as_secs_f64()),
        Better::Lower,
    );
    report.figure(
        label("reconciles/s"),
        "1/s",
        Some(reconciled / all_ready.as_secs_f64()),
        Better::Higher,
    );
    report.figure(
        label("reconciles per installation"),
        "",
        Some(reconciled / count as f64),
        Better::Lower,
    );
    report.figure(
        label("operator peak RSS"),
        "MiB",
        Some(peak_rss_mib(operator.0.id())?),
        Better::Lower,
    );
    report.figure(
        label("mni-dev peak RSS"),
        "MiB",
        Some(peak_rss_mib(dev.0.id())?),
        Better::Lower,
    );
    report.note(format!(
        "CPU until all Ready: {:.1} s mni-dev, {:.1} s operator ({} builds, durable store)",
        cpu.0, cpu.1, built.profile
    ));
    Ok(())
}
