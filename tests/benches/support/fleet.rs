//! What the fleet benches (`baremetal`, `tenants`) share: starting `mni-dev`, watching a set
//! of objects until every one is Ready, and medians.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::TryStreamExt as _;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;
use mni_bench::{Better, Report};
use serde_json::Value;

use crate::procs::Guard;

/// The plural resource name `api` serves, for messages.
fn api_kind(api: &Api<DynamicObject>) -> String {
    api.resource_url()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// A count from the environment variable `name`, or `default`.
fn env_number(name: &str, default: usize) -> Result<usize> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .with_context(|| format!("{name}={v:?} is not a number")),
        Err(_) => Ok(default),
    }
}

/// The fleet's size from `count_var` and the number of runs from `MNI_BENCH_RUNS`: `full`
/// objects in 3 runs, or `smoke` objects once in smoke mode; both at least 1.
pub(crate) fn sizes(
    mode: mni_bench::Mode,
    count_var: &str,
    full: usize,
    smoke: usize,
) -> Result<(usize, usize)> {
    let count = env_number(count_var, mode.pick(full, smoke))?;
    let runs = env_number("MNI_BENCH_RUNS", mode.pick(3, 1))?;
    if count == 0 || runs == 0 {
        bail!("{count_var} and MNI_BENCH_RUNS must be at least 1");
    }
    Ok((count, runs))
}

/// How a figure over `runs` runs is labelled: `1 run`, `median of 3`.
pub(crate) fn stat(runs: usize) -> String {
    if runs == 1 {
        "1 run".to_owned()
    } else {
        format!("median of {runs}")
    }
}

/// The median of the finite values; `None` when there are none.
pub(crate) fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        f64::midpoint(values[mid - 1], values[mid])
    })
}

/// Runs `one` `runs` times, one after the other, saying on stderr which run starts (`{bench}:
/// run 1/3, {what}`) and what it measured (`say`); returns the measurements.
pub(crate) async fn repeat<R, Fut>(
    bench: &str,
    what: &str,
    runs: usize,
    mut one: impl FnMut() -> Fut,
    say: impl Fn(&R) -> String,
) -> Result<Vec<R>>
where
    Fut: Future<Output = Result<R>>,
{
    let mut measured = Vec::with_capacity(runs);
    for run in 1..=runs {
        eprintln!("{bench}: run {run}/{runs}, {what}");
        let m = one().await?;
        eprintln!("  {}", say(&m));
        measured.push(m);
    }
    Ok(measured)
}

/// A figure reported as the median over the runs: what it is, its unit, how it is read from
/// one run's measurement, and which way is better.
pub(crate) type Median<R> = (&'static str, &'static str, fn(&R) -> f64, Better);

/// Reports each of `figures` as the median over `measured`, labelled `{what}: {figure}
/// ({stat})`, e.g. `100 tenants: create to all Ready (median of 3)`.
pub(crate) fn report_medians<R>(
    report: &mut Report,
    what: &str,
    measured: &[R],
    figures: &[Median<R>],
) {
    let stat = stat(measured.len());
    for (figure, unit, of, better) in figures {
        report.figure(
            format!("{what}: {figure} ({stat})"),
            *unit,
            median(measured.iter().map(of).collect()),
            *better,
        );
    }
}

/// Starts `mni-dev up` (with `extra` arguments, e.g. `--simulate-upstream metal3`) on a free
/// port with a durable data directory under `dir`, and waits until it is ready.
pub(crate) fn start_dev(
    binary: &Path,
    dir: &Path,
    kubeconfig: &Path,
    log: &Path,
    extra: &[&str],
) -> Result<Guard> {
    let out = std::fs::File::create(log)?;
    let dev = Guard(
        Command::new(binary)
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(extra)
            .env("RUST_LOG", "warn,mni_dev=info")
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?,
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(log)?.contains("ready") {
        if Instant::now() > deadline {
            bail!(
                "mni-dev did not start within 30 s; its log:\n{}",
                std::fs::read_to_string(log)?
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(dev)
}

/// `kubectl apply -f path` (a file or a directory) against the cluster of `kubeconfig`.
pub(crate) fn kubectl_apply(kubeconfig: &Path, path: &Path) -> Result<()> {
    let status = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["apply", "--server-side", "-f"])
        .arg(path)
        .stdout(std::process::Stdio::null())
        .status()
        .context("kubectl")?;
    if !status.success() {
        bail!("kubectl apply -f {} failed", path.display());
    }
    Ok(())
}

/// Starts an operator binary (no metrics or probe ports, admin credentials of `kubeconfig`),
/// logging to `log`.
pub(crate) fn start_operator(binary: &Path, kubeconfig: &Path, log: &Path) -> Result<Guard> {
    let out = std::fs::File::create(log)?;
    Ok(Guard(
        Command::new(binary)
            .args(["--metrics-bind-address", "0"])
            .args(["--health-probe-bind-address", "0"])
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "warn")
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?,
    ))
}

/// A client for the cluster of `kubeconfig`.
pub(crate) async fn client(kubeconfig: &Path) -> Result<kube::Client> {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig)?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    Ok(kube::Client::try_from(config)?)
}

/// The last `n` lines of a log file, for a failure message.
pub(crate) fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Watches the objects of `api` until all `count` are `Ready=True` with reason `reason`; on
/// timeout the error names how many got there and what the others say, with the logs' last
/// lines.
pub(crate) async fn wait_all(
    api: &Api<DynamicObject>,
    count: usize,
    reason: &str,
    start: Instant,
    limit: Duration,
    logs: &[(&str, &Path)],
) -> Result<()> {
    // Watch rather than poll: listing every object every 100 ms would load mni-dev with the
    // measurement itself.
    let deadline = tokio::time::Instant::from_std(start + limit);
    let mut progress = Instant::now() + Duration::from_secs(10);
    // Per object: whether it is there, and its Ready condition's reason and message.
    let mut seen: HashMap<String, (bool, String)> = HashMap::new();
    let events = watcher(api.clone(), watcher::Config::default());
    futures::pin_mut!(events);
    loop {
        let done = seen.values().filter(|(d, _)| *d).count();
        if done == count {
            return Ok(());
        }
        if Instant::now() > progress {
            eprintln!(
                "  {:>6.1}s: {done}/{count} {reason}",
                start.elapsed().as_secs_f64()
            );
            progress += Duration::from_secs(10);
        }
        let event = match tokio::time::timeout_at(deadline, events.try_next()).await {
            Ok(event) => {
                event?.with_context(|| format!("the watch of the {} ended", api_kind(api)))?
            }
            Err(_) => {
                let mut others: Vec<String> = seen
                    .iter()
                    .filter(|(_, (d, _))| !d)
                    .map(|(name, (_, why))| format!("{name}: {why}"))
                    .collect();
                others.sort();
                others.truncate(5);
                let logs: Vec<String> = logs
                    .iter()
                    .map(|(name, path)| format!("{name} log ends:\n{}", tail(path, 20)))
                    .collect();
                bail!(
                    "only {done} of {count} {} {reason} after {} s; others:\n{}\n{}",
                    api_kind(api),
                    limit.as_secs(),
                    others.join("\n"),
                    logs.join("\n")
                );
            }
        };
        match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => {
                let ready = ready_condition(&o.data);
                let done = ready
                    .as_ref()
                    .is_some_and(|(status, why, _)| status == "True" && why == reason);
                let why = ready.map_or_else(
                    || "no Ready condition yet".to_owned(),
                    |(status, why, message)| format!("Ready={status} {why}: {message}"),
                );
                seen.insert(o.metadata.name.unwrap_or_default(), (done, why));
            }
            watcher::Event::Delete(o) => {
                seen.remove(&o.metadata.name.unwrap_or_default());
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }
}

/// The `Ready` condition's status, reason and message.
pub(crate) fn ready_condition(obj: &Value) -> Option<(String, String, String)> {
    let c = obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?;
    let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
    Some((text("status"), text("reason"), text("message")))
}
