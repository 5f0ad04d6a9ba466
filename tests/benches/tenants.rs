//! Onboarding 100 tenants: the mNi platform operator (`services/platform`) turns 100 `Tenant`s
//! into namespaces, quotas, limit ranges, default-deny network policies, role bindings and a
//! default VPC each, on the embedded control plane.
//!
//! Each run starts, fresh: `mni-dev up` with a durable data directory; the platform's CRD, the
//! ClusterRoles tenants' groups are bound to, and the VPC service's CRD (so that every tenant
//! also gets its default VPC), applied with kubectl; the `mni-platform` binary, built from
//! `services/platform` (admin credentials; RBAC is not what is measured). The bench creates the
//! `Tenant`s (16 concurrent clients), each with an admin and a viewer group and a quota, and
//! watches until every one reports `Ready=True` (reason `Reconciled`), then counts what the
//! tenants got (every namespace, ResourceQuota, LimitRange, NetworkPolicy, RoleBinding and
//! VPC, listed through the API) and checks nothing is missing.
//!
//! Reported, as medians of 3 runs: the time from the first create to all Ready; tenants per
//! second; the peak RSS (`VmHWM`) of the operator and of mni-dev; CPU time of each. No anchor:
//! no upstream component does this job on this machine.
//!
//! `cargo bench -p mni-tests --bench tenants`; `MNI_BENCH_TENANTS` changes the count,
//! `MNI_BENCH_RUNS` the number of runs. `cargo test -p mni-tests --bench tenants -- --smoke`
//! (or `MNI_BENCH_SMOKE=1`) runs 5 tenants once on the debug builds.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use mni_bench::{Better, Mode, Report};
use serde_json::json;

#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/procs.rs"]
mod procs;

use fleet::{
    client, kubectl_apply, median, repeat, report_medians, sizes, start_dev, start_operator, stat,
    wait_all,
};
use procs::{cpu_secs, peak_rss_mib};

/// Concurrent clients creating the tenants.
const CLIENTS: usize = 16;
/// What every tenant gets in its one namespace: (resource, API group/version, at least).
const PER_TENANT: [(&str, &str, usize); 5] = [
    ("resourcequotas", "v1", 1),
    ("limitranges", "v1", 1),
    ("networkpolicies", "networking.k8s.io/v1", 1),
    ("rolebindings", "rbac.authorization.k8s.io/v1", 2),
    ("virtualprivateclouds", "network.mni.dev/v1alpha1", 1),
];

/// What one run measured.
#[derive(Debug, Clone, Copy)]
struct Run {
    count: usize,
    to_ready: f64,
    operator_rss: f64,
    dev_rss: f64,
    cpu_dev: f64,
    cpu_operator: f64,
}

/// The binaries and manifests a run uses.
struct Binaries {
    dev: PathBuf,
    operator: PathBuf,
    manifests: Vec<PathBuf>,
    profile: &'static str,
}

#[tokio::main]
async fn main() -> ExitCode {
    let mode = Mode::from_env();
    let mut report = Report::new("tenants", mode);
    if let Err(e) = bench(mode, &mut report).await {
        report.fail(format!("{e:#}"));
    }
    report.finish()
}

async fn bench(mode: Mode, report: &mut Report) -> Result<()> {
    let (count, runs) = sizes(mode, "MNI_BENCH_TENANTS", 100, 5)?;
    let binaries = build(mode)?;
    let measured = repeat(
        "tenants",
        &format!("{count} tenants"),
        runs,
        || onboard(&binaries, count, mode),
        |m: &Run| {
            format!(
                "all Ready in {:.2} s, RSS operator {:.1} MiB, mni-dev {:.1} MiB",
                m.to_ready, m.operator_rss, m.dev_rss
            )
        },
    )
    .await?;
    let per_second = |m: &Run| m.count as f64 / m.to_ready;
    report_medians(
        report,
        &format!("{count} tenants"),
        &measured,
        &[
            ("create to all Ready", "s", |m| m.to_ready, Better::Lower),
            (
                "tenants onboarded per second",
                "tenants/s",
                per_second,
                Better::Higher,
            ),
            (
                "operator peak RSS",
                "MiB",
                |m| m.operator_rss,
                Better::Lower,
            ),
            ("mni-dev peak RSS", "MiB", |m| m.dev_rss, Better::Lower),
        ],
    );
    let stat = stat(runs);
    let median_of = |f: fn(&Run) -> f64| median(measured.iter().map(f).collect());
    report.note(format!(
        "CPU per run ({stat}): {:.1} s mni-dev, {:.1} s operator ({} builds, durable store); \
         each tenant: a namespace, ResourceQuota, LimitRange, NetworkPolicies, admin and \
         viewer RoleBindings, a default VPC",
        median_of(|m| m.cpu_dev).unwrap_or(f64::NAN),
        median_of(|m| m.cpu_operator).unwrap_or(f64::NAN),
        binaries.profile,
    ));
    Ok(())
}

/// Builds mni-dev and the platform operator ([`procs::build`]).
fn build(mode: Mode) -> Result<Binaries> {
    let root = mni_tests::repo_root();
    let platform = root.join("services/platform");
    let built = procs::build(mode, &platform, "mni-platform")?;
    Ok(Binaries {
        dev: built.dev,
        operator: built.operator,
        manifests: vec![
            platform.join("config/crd/bases"),
            platform.join("config/rbac/tenant_roles.yaml"),
            root.join(
                "services/vpc/operator/config/crd/bases/network.mni.dev_virtualprivateclouds.yaml",
            ),
        ],
        profile: built.profile,
    })
}

/// One run: a fresh mni-dev and operator, `count` tenants to Ready.
async fn onboard(binaries: &Binaries, count: usize, mode: Mode) -> Result<Run> {
    let tmp = tempfile::tempdir()?;
    let kubeconfig = tmp.path().join("kubeconfig");
    let dev_log = tmp.path().join("mni-dev.log");
    let dev = start_dev(&binaries.dev, tmp.path(), &kubeconfig, &dev_log, &[])?;
    for manifest in &binaries.manifests {
        kubectl_apply(&kubeconfig, manifest)?;
    }
    let operator_log = tmp.path().join("operator.log");
    let operator = start_operator(&binaries.operator, &kubeconfig, &operator_log)?;
    let client = client(&kubeconfig).await?;
    let gvk = GroupVersionKind::gvk("platform.mni.dev", "v1alpha1", "Tenant");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "tenants");
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let limit = mode.pick(Duration::from_secs(600), Duration::from_secs(300));
    let logs = [
        ("operator", operator_log.as_path()),
        ("mni-dev", dev_log.as_path()),
    ];

    let cpu_before = [cpu_secs(dev.0.id())?, cpu_secs(operator.0.id())?];
    let start = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            let obj = json!({
                "apiVersion": resource.api_version,
                "kind": resource.kind,
                "metadata": { "name": format!("t{i}") },
                "spec": {
                    "admins": [format!("t{i}-admins")],
                    "viewers": [format!("t{i}-viewers")],
                    "quota": { "requests.cpu": "4", "requests.memory": "8Gi", "pods": "20" },
                },
            });
            async move {
                let obj: DynamicObject = serde_json::from_value(obj)?;
                api.create(&PostParams::default(), &obj)
                    .await
                    .with_context(|| format!("creating Tenant t{i}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CLIENTS)
        .try_collect::<Vec<()>>()
        .await?;
    wait_all(&api, count, "Reconciled", start, limit, &logs).await?;
    let to_ready = start.elapsed().as_secs_f64();
    let cpu = [
        cpu_secs(dev.0.id())? - cpu_before[0],
        cpu_secs(operator.0.id())? - cpu_before[1],
    ];
    check_objects(&client, count).await?;
    Ok(Run {
        count,
        to_ready,
        operator_rss: peak_rss_mib(operator.0.id())?,
        dev_rss: peak_rss_mib(dev.0.id())?,
        cpu_dev: cpu[0],
        cpu_operator: cpu[1],
    })
}

/// Every tenant's namespace has what [`PER_TENANT`] says, listed through the API.
async fn check_objects(client: &kube::Client, count: usize) -> Result<()> {
    for (plural, api_version, at_least) in PER_TENANT {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let resource = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: String::new(),
            plural: plural.into(),
        };
        let items = Api::<DynamicObject>::all_with(client.clone(), &resource)
            .list(&ListParams::default())
            .await
            .with_context(|| format!("listing {plural}"))?
            .items;
        for i in 0..count {
            let namespace = format!("tenant-t{i}");
            let found = items
                .iter()
                .filter(|o| o.metadata.namespace.as_deref() == Some(namespace.as_str()))
                .count();
            if found < at_least {
                bail!("{namespace} has {found} {plural}, expected at least {at_least}");
            }
        }
    }
    Ok(())
}
