//! Benchmarks `mni-dev up --with`: from nothing to every ClusterServiceVersion `Succeeded`,
//! and an upgrade of one service with its custom resources present.
//!
//! Run with `cargo bench -p mni-dev --bench upwith` (see `benches/README.md`); `--smoke` runs
//! each part once with tiny sizes. Two measures:
//!
//! - **up**: `mni-dev up --with vpc,vm,baremetal` on an empty data directory, timed from
//!   spawning the process until it prints that every CSV `Succeeded` (and, on the way, until
//!   `ready`); median of 3 runs, each with a fresh directory.
//! - **upgrade**: `up --with vpc --catalog COPY` on a copy of the reference catalog, then 1,000
//!   VirtualPrivateClouds created, then a bundle `mni-vpc.v0.1.1` that `replaces` v0.1.0 added
//!   to the copy; timed from writing the catalog file until the new CSV `Succeeded` and the old
//!   one is gone. Every VirtualPrivateCloud must still be there, with its uid, afterwards.
//!
//! No anchor: real OLM on a kind cluster pulls catalog and bundle images, which this does not
//! do, so the two are not the same work.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube::core::GroupVersionKind;
use mni_bench::{Better, Mode, Report};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// The `mni-dev` binary Cargo built for this bench.
const MNI_DEV: &str = env!("CARGO_BIN_EXE_mni-dev");
/// The services the `up` measure installs.
const SERVICES: &str = "vpc,vm,baremetal";
/// How long one `up` or upgrade may take before the run fails.
const LIMIT: Duration = Duration::from_secs(180);
/// The namespace the VirtualPrivateClouds are created in.
const TENANT: &str = "tenant-a";

fn main() -> ExitCode {
    let mode = Mode::from_env();
    let mut report = Report::new("upwith", mode);
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    runtime.block_on(run(mode, &mut report));
    report.finish()
}

async fn run(mode: Mode, report: &mut Report) {
    let runs = mode.pick(3, 1);
    let mut ready = Vec::new();
    let mut done = Vec::new();
    for i in 0..runs {
        match up_once().await {
            Ok((r, d)) => {
                eprintln!(
                    "up --with {SERVICES} run {}/{runs}: ready {:.0} ms, all CSVs Succeeded {:.0} ms",
                    i + 1,
                    ms(r),
                    ms(d)
                );
                ready.push(ms(r));
                done.push(ms(d));
            }
            Err(e) => report.fail(format!("up --with {SERVICES}: {e:#}")),
        }
    }
    report.figure(
        format!("up --with {SERVICES}: spawn → every CSV Succeeded (median of {runs})"),
        "ms",
        median(&mut done),
        Better::Lower,
    );
    report.figure(
        format!("up --with {SERVICES}: spawn → ready (median of {runs})"),
        "ms",
        median(&mut ready),
        Better::Lower,
    );
    let objects = mode.pick(1_000, 20);
    match upgrade(objects).await {
        Ok(upgrade) => {
            report.figure(
                format!("upgrade mni-vpc 0.1.0 → 0.1.1 with {objects} VPCs: catalog written → new CSV Succeeded"),
                "ms",
                Some(ms(upgrade.took)),
                Better::Lower,
            );
            report.figure(
                format!("VPCs still there after the upgrade (of {objects})"),
                "objects",
                Some(upgrade.kept as f64),
                Better::Higher,
            );
            if upgrade.kept != objects {
                report.fail(format!(
                    "the upgrade lost VPCs: {} of {objects} left",
                    upgrade.kept
                ));
            }
            report.note(
                "the upgrade waits for mni-olm-lifecycle to re-read the catalog directory, \
                 which it does every 5 s (DEFAULT_POLL_INTERVAL)",
            );
        }
        Err(e) => report.fail(format!("upgrade with {objects} VPCs: {e:#}")),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// A running `mni-dev up`, stopped with SIGTERM when [`Dev::stop`] is called (killed if
/// dropped).
struct Dev {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    dir: PathBuf,
}

impl Dev {
    /// Spawns `mni-dev up` on a fresh data directory under `dir` with `args`.
    fn spawn(dir: &Path, args: &[&str]) -> Result<Self> {
        let log = std::fs::File::create(dir.join("mni-dev.log")).context("creating the log")?;
        let mut child = Command::new(MNI_DEV)
            .args([
                "up",
                "--insecure-http",
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
            ])
            .arg(dir.join("data"))
            .arg("--kubeconfig")
            .arg(dir.join("kc"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawning {MNI_DEV}"))?;
        let stdout = child.stdout.take().context("mni-dev has no stdout")?;
        Ok(Dev {
            child,
            lines: BufReader::new(stdout).lines(),
            dir: dir.to_path_buf(),
        })
    }

    /// Reads stdout until a line containing `what`; fails if mni-dev exits first.
    async fn line(&mut self, what: &str) -> Result<String> {
        let log = self.dir.join("mni-dev.log");
        let read = async {
            while let Some(line) = self.lines.next_line().await? {
                if line.contains(what) {
                    return Ok(line);
                }
            }
            bail!("mni-dev exited before printing {what:?}")
        };
        match tokio::time::timeout(LIMIT, read).await {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(e)) => bail!("{e}; its log ends:\n{}", log_tail(&log)),
            Err(_) => bail!("no {what:?} within {LIMIT:?}; log:\n{}", log_tail(&log)),
        }
    }

    /// A client of this server, from the kubeconfig it wrote.
    async fn client(&self) -> Result<kube::Client> {
        let kubeconfig = kube::config::Kubeconfig::read_from(self.dir.join("kc"))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        Ok(kube::Client::try_from(config)?)
    }

    /// SIGTERM, then wait.
    async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill").arg(pid.to_string()).status().await;
        }
        // Keep reading so mni-dev's last line does not hit a closed pipe.
        while let Ok(Ok(Some(_))) =
            tokio::time::timeout(Duration::from_secs(15), self.lines.next_line()).await
        {}
        let _ = tokio::time::timeout(Duration::from_secs(15), self.child.wait()).await;
    }
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// A scratch directory under the target directory (same disk as the build).
fn scratch() -> Result<tempfile::TempDir> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
    std::fs::create_dir_all(&base)?;
    Ok(tempfile::tempdir_in(base)?)
}

/// One `up --with vpc,vm,baremetal`: the time from spawn to `ready` and to every CSV
/// `Succeeded`.
async fn up_once() -> Result<(Duration, Duration)> {
    let tmp = scratch()?;
    let started = Instant::now();
    let mut dev = Dev::spawn(tmp.path(), &["--with", SERVICES])?;
    dev.line("ready").await?;
    let ready = started.elapsed();
    let line = dev.line("ClusterServiceVersions Succeeded").await?;
    let done = started.elapsed();
    if !line.contains("3 ClusterServiceVersions") {
        bail!("expected 3 CSVs: {line}");
    }
    dev.stop().await;
    Ok((ready, done))
}

/// What the upgrade measure found.
struct Upgrade {
    took: Duration,
    kept: usize,
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// Upgrades mni-vpc with `objects` VirtualPrivateClouds present.
async fn upgrade(objects: usize) -> Result<Upgrade> {
    let tmp = scratch()?;
    let catalog = tmp.path().join("catalog");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../services/catalog/catalog"),
        &catalog,
    )?;
    let catalog_arg = catalog.display().to_string();
    let mut dev = Dev::spawn(tmp.path(), &["--with", "vpc", "--catalog", &catalog_arg])?;
    dev.line("ClusterServiceVersions Succeeded").await?;
    let client = dev.client().await?;
    let namespaces: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource("", "v1", "Namespace", "namespaces"),
    );
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT}
            }))?,
        )
        .await?;
    let vpcs: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        TENANT,
        &resource(
            "network.mni.dev",
            "v1alpha1",
            "VirtualPrivateCloud",
            "virtualprivateclouds",
        ),
    );
    let mut before = BTreeSet::new();
    for i in 0..objects {
        let vpc: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "network.mni.dev/v1alpha1",
            "kind": "VirtualPrivateCloud",
            "metadata": {"name": format!("vpc-{i:04}")},
            "spec": {"subnets": [{"name": "web", "cidrBlock": "10.0.1.0/24"}]},
        }))?;
        let created = vpcs.create(&PostParams::default(), &vpc).await?;
        before.insert(created.metadata.uid.unwrap_or_default());
    }
    eprintln!("upgrade: {objects} VPCs created; publishing mni-vpc.v0.1.1");
    let file = catalog.join("mni-vpc/catalog.yaml");
    let upgraded = with_upgrade(&std::fs::read_to_string(&file)?)?;
    let started = Instant::now();
    std::fs::write(&file, upgraded)?;
    let csvs: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "operators",
        &resource(
            "operators.coreos.com",
            "v1alpha1",
            "ClusterServiceVersion",
            "clusterserviceversions",
        ),
    );
    loop {
        let list = csvs.list(&ListParams::default()).await?;
        let phase = |name: &str| {
            list.items
                .iter()
                .find(|c| c.metadata.name.as_deref() == Some(name))
                .map(|c| c.data["status"]["phase"].as_str().unwrap_or("").to_string())
        };
        if phase("mni-vpc.v0.1.1").as_deref() == Some("Succeeded")
            && phase("mni-vpc.v0.1.0").is_none()
        {
            break;
        }
        if phase("mni-vpc.v0.1.1").as_deref() == Some("Failed") {
            bail!("mni-vpc.v0.1.1 failed: {:?}", list.items);
        }
        if started.elapsed() > LIMIT {
            bail!(
                "mni-vpc.v0.1.1 not Succeeded within {LIMIT:?}: v0.1.1 {:?}, v0.1.0 {:?}",
                phase("mni-vpc.v0.1.1"),
                phase("mni-vpc.v0.1.0")
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = started.elapsed();
    let after: BTreeSet<String> = vpcs
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter_map(|v| v.metadata.uid)
        .collect();
    dev.stop().await;
    Ok(Upgrade {
        took,
        kept: before.intersection(&after).count(),
    })
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| from.display().to_string())? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The mni-vpc catalog file with a bundle `mni-vpc.v0.1.1` that replaces `mni-vpc.v0.1.0`:
/// the same bundle, renamed, its CSV given the new name, version and `replaces`, and a
/// channel entry for it.
fn with_upgrade(catalog: &str) -> Result<String> {
    const OLD: &str = "mni-vpc.v0.1.0";
    const NEW: &str = "mni-vpc.v0.1.1";
    let mut blobs: Vec<Value> = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(catalog) {
        blobs.push(serde::Deserialize::deserialize(doc)?);
    }
    let mut bundle = blobs
        .iter()
        .find(|b| b["schema"] == "olm.bundle" && b["name"] == OLD)
        .cloned()
        .context("no mni-vpc.v0.1.0 bundle in the catalog")?;
    bundle["name"] = NEW.into();
    let b64 = base64::engine::general_purpose::STANDARD;
    for property in bundle["properties"].as_array_mut().context("properties")? {
        match property["type"].as_str() {
            Some("olm.package") => property["value"]["version"] = "0.1.1".into(),
            Some("olm.bundle.object") => {
                let data = property["value"]["data"].as_str().context("data")?;
                let mut object: Value = serde_json::from_slice(&b64.decode(data)?)?;
                if object["kind"] == "ClusterServiceVersion" {
                    object["metadata"]["name"] = NEW.into();
                    object["spec"]["version"] = "0.1.1".into();
                    object["spec"]["replaces"] = OLD.into();
                    property["value"]["data"] = b64.encode(serde_json::to_vec(&object)?).into();
                }
            }
            _ => {}
        }
    }
    let channel = blobs
        .iter_mut()
        .find(|b| b["schema"] == "olm.channel")
        .context("no channel")?;
    channel["entries"]
        .as_array_mut()
        .context("entries")?
        .push(json!({"name": NEW, "replaces": OLD}));
    blobs.push(bundle);
    let mut out = String::new();
    for blob in &blobs {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(blob)?);
    }
    Ok(out)
}
