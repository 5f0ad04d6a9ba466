//! A fleet of bare-metal servers on one Redfish emulator: 100 `Server`s of the reference
//! service `services/baremetal` (the `baremetal/v1` plugin's output), from create to
//! `available` and then to `provisioned`, over real Redfish.
//!
//! Each run starts, fresh: `sushy-emulator` (`mni_redfish::testing::Emulator`, installed by
//! `scripts/sushy-emulator.sh`) with one fake system per server and basic auth; `mni-dev up
//! --simulate-upstream metal3` with a durable data directory (the Metal3 simulator, which
//! registers, inspects, provisions and powers the BareMetalHosts over Redfish, runs inside it);
//! the `metal-operator` binary, built from `services/baremetal` (admin credentials; RBAC is not
//! what is measured). The bench creates one credentials Secret and the `Server`s (16 concurrent
//! clients), each with its own emulator system as BMC, powered off and without an image, and
//! watches until every one reports `Ready=True` with reason `Available` (pre-flighted by the
//! operator, registered and inspected by Metal3). It then gives every server an image and
//! `online: true` (merge patches, 16 concurrent clients) and watches until every one is
//! `Ready=True` with reason `Provisioned` (the BMC was told to boot from PXE and power on, and
//! reported it on; the emulator applies a power action 1–11 s after accepting it).
//!
//! Reported, as medians of 3 runs: the two times; the Redfish requests per server in each
//! phase, counted from the emulator's own access log (every request the operator's pre-flight
//! and the Metal3 simulator sent it, divided by the number of servers); the peak RSS
//! (`VmHWM`) of the operator and of mni-dev (whose figure includes the Metal3 simulator) at the
//! end of the run. A Redfish error answer (other than for the inventory sushy-emulator's fake
//! driver does not implement: storage and memory), a server that does not get there within the
//! time limit, or any failed request fails the bench.
//!
//! `cargo bench -p mni-tests --bench baremetal`; `MNI_BENCH_SERVERS` changes the count,
//! `MNI_BENCH_RUNS` the number of runs, `MNI_BENCH_EMULATOR_LOG` names a file for the emulator's
//! access log of the last run. `cargo test -p mni-tests --bench baremetal -- --smoke`
//! (or `MNI_BENCH_SMOKE=1`) runs 3 servers once on the debug builds.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use mni_bench::{Better, Mode, Report};
use mni_redfish::testing::Emulator;

#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/procs.rs"]
mod procs;

use fleet::{
    client, kubectl_apply, median, repeat, report_medians, sizes, start_dev, start_operator, stat,
    wait_all,
};
use procs::{cpu_secs, peak_rss_mib};
use serde_json::json;

const NAMESPACE: &str = "default";
const USER: &str = "admin";
const PASSWORD: &str = "s3cret";
/// Concurrent clients creating and patching the servers.
const CLIENTS: usize = 16;

/// What one run measured.
#[derive(Debug, Clone, Copy)]
struct Run {
    to_available: f64,
    to_provisioned: f64,
    requests_available: f64,
    requests_provisioned: f64,
    operator_rss: f64,
    dev_rss: f64,
    cpu_dev: f64,
    cpu_operator: f64,
    cpu_emulator: f64,
    unimplemented: u64,
}

/// The binaries a run starts.
struct Binaries {
    dev: PathBuf,
    operator: PathBuf,
    crds: PathBuf,
    profile: &'static str,
}

#[tokio::main]
async fn main() -> ExitCode {
    let mode = Mode::from_env();
    let mut report = Report::new("baremetal", mode);
    if let Err(e) = bench(mode, &mut report).await {
        report.fail(format!("{e:#}"));
    }
    report.finish()
}

async fn bench(mode: Mode, report: &mut Report) -> Result<()> {
    let (count, runs) = sizes(mode, "MNI_BENCH_SERVERS", 100, 3)?;
    let binaries = build(mode)?;
    let measured = repeat(
        "baremetal",
        &format!("{count} servers"),
        runs,
        || fleet(&binaries, count, mode),
        |m: &Run| {
            format!(
                "available {:.1} s, provisioned {:.1} s, Redfish/server {:.1} + {:.1}, \
                 RSS operator {:.1} MiB, mni-dev {:.1} MiB",
                m.to_available,
                m.to_provisioned,
                m.requests_available,
                m.requests_provisioned,
                m.operator_rss,
                m.dev_rss
            )
        },
    )
    .await?;
    report_medians(
        report,
        &format!("{count} servers"),
        &measured,
        &[
            (
                "create to all available",
                "s",
                |m| m.to_available,
                Better::Lower,
            ),
            (
                "image set to all provisioned",
                "s",
                |m| m.to_provisioned,
                Better::Lower,
            ),
            (
                "Redfish requests per server, to available",
                "requests",
                |m| m.requests_available,
                Better::Lower,
            ),
            (
                "Redfish requests per server, to provisioned",
                "requests",
                |m| m.requests_provisioned,
                Better::Lower,
            ),
            (
                "operator peak RSS",
                "MiB",
                |m| m.operator_rss,
                Better::Lower,
            ),
            (
                "mni-dev peak RSS (with the Metal3 simulator)",
                "MiB",
                |m| m.dev_rss,
                Better::Lower,
            ),
        ],
    );
    let stat = stat(runs);
    let median_of = |f: fn(&Run) -> f64| median(measured.iter().map(f).collect());
    report.note(format!(
        "CPU per run ({stat}): {:.1} s mni-dev, {:.1} s operator, {:.1} s sushy-emulator ({} builds, durable store)",
        median_of(|m| m.cpu_dev).unwrap_or(f64::NAN),
        median_of(|m| m.cpu_operator).unwrap_or(f64::NAN),
        median_of(|m| m.cpu_emulator).unwrap_or(f64::NAN),
        binaries.profile,
    ));
    let unimplemented: u64 = measured.iter().map(|m| m.unimplemented).sum();
    report.note(format!(
        "{unimplemented} of the requests (all runs) asked for inventory sushy-emulator's fake \
         driver does not have (GET …/Storage: 500, …/Memory: 404); the inventory records it as \
         not available"
    ));
    Ok(())
}

/// Builds mni-dev and the operator ([`procs::build`]).
fn build(mode: Mode) -> Result<Binaries> {
    let service = mni_tests::repo_root().join("services/baremetal");
    let built = procs::build(mode, &service, "metal-operator")?;
    Ok(Binaries {
        dev: built.dev,
        operator: built.operator,
        crds: service.join("operator/config/crd/bases"),
        profile: built.profile,
    })
}

/// The pid of this process's child `sushy-emulator` listening on `port` (the harness does not
/// expose it; its command line has `-p PORT`).
fn emulator_pid(port: u16) -> Option<u32> {
    let me = std::process::id();
    let port = port.to_string();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let ppid: u32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let is_emulator = args.iter().any(|a| a.ends_with(b"sushy-emulator"))
                && args
                    .windows(2)
                    .any(|w| w[0] == b"-p" && w[1] == port.as_bytes());
            (ppid == me && is_emulator).then_some(pid)
        })
}

/// Redfish requests in the emulator's access log (werkzeug's `"GET /redfish/v1/… HTTP/1.1"
/// 200 -` lines, the request sometimes wrapped in colour codes).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Requests {
    total: u64,
    /// 4xx answers other than those of `unimplemented`.
    client_errors: u64,
    /// Inventory sections sushy-emulator's fake driver does not implement: `GET …/Storage`
    /// answered 500, `GET …/Memory` or `…/Processors` answered 404; the inventory records them
    /// as not available (`mni_redfish::inventory`).
    unimplemented: u64,
    /// Any other 5xx: a failure.
    server_errors: u64,
}

impl Requests {
    fn count(log: &str) -> Self {
        let mut seen = Requests::default();
        for line in log.lines() {
            let mut parts = line.split('"');
            let (Some(_), Some(request), Some(after)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Some(path) = request
                .split_once(" /redfish")
                .and_then(|(_, rest)| rest.split_whitespace().next())
            else {
                continue;
            };
            let Some(code) = after
                .split_whitespace()
                .next()
                .and_then(|c| c.parse::<u16>().ok())
            else {
                continue;
            };
            seen.total += 1;
            let get = request.contains("GET ");
            match code {
                404 if get && (path.ends_with("/Memory") || path.ends_with("/Processors")) => {
                    seen.unimplemented += 1;
                }
                500 if get && path.ends_with("/Storage") => seen.unimplemented += 1,
                400..=499 => seen.client_errors += 1,
                500.. => seen.server_errors += 1,
                _ => {}
            }
        }
        seen
    }

    fn since(self, before: Self) -> Self {
        Requests {
            total: self.total - before.total,
            client_errors: self.client_errors - before.client_errors,
            unimplemented: self.unimplemented - before.unimplemented,
            server_errors: self.server_errors - before.server_errors,
        }
    }
}

/// One run: a fresh emulator, mni-dev and operator, `count` servers to available and then to
/// provisioned.
async fn fleet(binaries: &Binaries, count: usize, mode: Mode) -> Result<Run> {
    let emulator = Emulator::builder()
        .systems(count)
        .auth(USER, PASSWORD)
        .start()
        .await
        .context("sushy-emulator (install it with scripts/sushy-emulator.sh)")?;
    let emulator_pid = emulator_pid(emulator.port());
    let tmp = tempfile::tempdir()?;
    let kubeconfig = tmp.path().join("kubeconfig");
    let dev_log = tmp.path().join("mni-dev.log");
    let dev = start_dev(
        &binaries.dev,
        tmp.path(),
        &kubeconfig,
        &dev_log,
        &["--simulate-upstream", "metal3"],
    )?;
    kubectl_apply(&kubeconfig, &binaries.crds)?;
    let operator_log = tmp.path().join("operator.log");
    let operator = start_operator(&binaries.operator, &kubeconfig, &operator_log)?;
    let client = client(&kubeconfig).await?;
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": "bmc" },
        "stringData": { "username": USER, "password": PASSWORD },
    }))?;
    Api::<Secret>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .context("creating the credentials Secret")?;
    let gvk = GroupVersionKind::gvk("metal.mni.dev", "v1alpha1", "Server");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "servers");
    let api: Api<DynamicObject> = Api::namespaced_with(client, NAMESPACE, &resource);
    let limit = mode.pick(Duration::from_secs(900), Duration::from_secs(300));
    let logs = [("operator", operator_log.as_path()), ("mni-dev", &dev_log)];

    // Phase 1: create to available.
    let before = Requests::count(&emulator.log());
    let cpu_before = [
        cpu_secs(dev.0.id())?,
        cpu_secs(operator.0.id())?,
        emulator_pid.map_or(Ok(0.0), cpu_secs)?,
    ];
    let start = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            let obj = json!({
                "apiVersion": resource.api_version,
                "kind": resource.kind,
                "metadata": { "name": format!("server-{i}") },
                "spec": {
                    "bmc": { "address": emulator.bmc_address(i), "credentialsName": "bmc" },
                    "bootMACAddress": emulator.systems()[i].macs[0],
                    "online": false,
                },
            });
            async move {
                let obj: DynamicObject = serde_json::from_value(obj)?;
                api.create(&PostParams::default(), &obj)
                    .await
                    .with_context(|| format!("creating Server server-{i}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CLIENTS)
        .try_collect::<Vec<()>>()
        .await?;
    wait_all(&api, count, "Available", start, limit, &logs).await?;
    let to_available = start.elapsed().as_secs_f64();
    let available = Requests::count(&emulator.log());

    // Phase 2: an image and power on, to provisioned.
    let start = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            let patch = json!({ "spec": {
                "online": true,
                "image": {
                    "url": "http://images.example.com/os.qcow2",
                    "checksum": "http://images.example.com/os.qcow2.sha256sum",
                    "checksumType": "sha256",
                    "format": "qcow2",
                },
            } });
            async move {
                let name = format!("server-{i}");
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .with_context(|| format!("patching Server {name}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CLIENTS)
        .try_collect::<Vec<()>>()
        .await?;
    wait_all(&api, count, "Provisioned", start, limit, &logs).await?;
    let to_provisioned = start.elapsed().as_secs_f64();
    let provisioned = Requests::count(&emulator.log());
    let cpu = [
        cpu_secs(dev.0.id())? - cpu_before[0],
        cpu_secs(operator.0.id())? - cpu_before[1],
        emulator_pid.map_or(Ok(f64::NAN), cpu_secs)? - cpu_before[2],
    ];

    // `MNI_BENCH_EMULATOR_LOG` keeps the emulator's access log of the last run.
    if let Some(path) = std::env::var_os("MNI_BENCH_EMULATOR_LOG") {
        std::fs::write(&path, emulator.log())
            .with_context(|| format!("writing {}", Path::new(&path).display()))?;
    }
    let phase1 = available.since(before);
    let phase2 = provisioned.since(available);
    let all = provisioned.since(before);
    if all.server_errors + all.client_errors > 0 {
        let log = emulator.log();
        let failed: Vec<&str> = log
            .lines()
            .filter(|l| {
                let r = Requests::count(l);
                r.server_errors + r.client_errors > 0
            })
            .take(10)
            .collect();
        bail!(
            "sushy-emulator answered {} Redfish request(s) with an error (besides the \
             inventory its fake driver lacks):\n{}",
            all.server_errors + all.client_errors,
            failed.join("\n")
        );
    }
    let per_server = |r: Requests| r.total as f64 / count as f64;
    Ok(Run {
        to_available,
        to_provisioned,
        requests_available: per_server(phase1),
        requests_provisioned: per_server(phase2),
        operator_rss: peak_rss_mib(operator.0.id())?,
        dev_rss: peak_rss_mib(dev.0.id())?,
        cpu_dev: cpu[0],
        cpu_operator: cpu[1],
        cpu_emulator: cpu[2],
        unimplemented: all.unimplemented,
    })
}
