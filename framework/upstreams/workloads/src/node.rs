//! The simulated node as a kubelet registers it: a `Node` with this machine's capacity,
//! addresses, node info and the four conditions kubelet reports, and a heartbeat `Lease` in
//! `kube-node-lease` renewed every 10 seconds (kubelet's `nodeLeaseDurationSeconds` is 40).
//! The Node's status is written at start and every 5 minutes (kubelet's
//! `nodeStatusReportFrequency`), so `kubectl get nodes` and `kubectl describe node` show a
//! Ready node with fresh heartbeats, and node-lifecycle logic that reads the Lease sees it
//! alive.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    DaemonEndpoint, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeStatus,
    NodeSystemInfo,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::util;

/// Errors of node registration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// The API server refused a write.
    #[error("{what}: {source}")]
    Api {
        /// What was written.
        what: &'static str,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

fn api_err(what: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |e| Error::Api {
        what,
        source: Box::new(e),
    }
}

/// How often the Lease is renewed.
const LEASE_RENEW: Duration = Duration::from_secs(10);
/// How long a Lease is valid without renewal.
const LEASE_DURATION: i32 = 40;
/// How often the Node's status is rewritten when nothing changed.
const STATUS_REPORT: Duration = Duration::from_secs(300);
/// The namespace of node heartbeats.
const LEASE_NAMESPACE: &str = "kube-node-lease";
/// The Kubernetes version the simulated kubelet reports.
const KUBELET_VERSION: &str = "v1.37.2";

/// This machine's memory in KiB, from `/proc/meminfo` (16 GiB when it cannot be read).
fn memory_kib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(16 * 1024 * 1024)
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The Kubernetes name of this machine's architecture.
fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// The capacity kubelet would report for this machine.
fn capacity() -> BTreeMap<String, Quantity> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    [
        ("cpu", cpus.to_string()),
        ("memory", format!("{}Ki", memory_kib())),
        ("pods", "110".to_string()),
        ("ephemeral-storage", "100Gi".to_string()),
        ("hugepages-1Gi", "0".to_string()),
        ("hugepages-2Mi", "0".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Quantity(v)))
    .collect()
}

fn condition(type_: &str, ok: bool, reason: &str, message: &str, now: &Time) -> NodeCondition {
    NodeCondition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_heartbeat_time: Some(now.clone()),
        last_transition_time: Some(now.clone()),
    }
}

/// The status a kubelet on this machine reports; transition times carried over from `old`.
fn status(name: &str, ip: &str, runtime: &str, old: Option<&NodeStatus>) -> NodeStatus {
    let now = Time(util::now());
    let mut conditions = vec![
        condition(
            "MemoryPressure",
            false,
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
            &now,
        ),
        condition(
            "DiskPressure",
            false,
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
            &now,
        ),
        condition(
            "PIDPressure",
            false,
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
            &now,
        ),
        condition(
            "Ready",
            true,
            "KubeletReady",
            "kubelet is posting ready status",
            &now,
        ),
    ];
    for c in &mut conditions {
        if let Some(prev) = old.and_then(|s| s.conditions.as_ref()).and_then(|cs| {
            cs.iter()
                .find(|p| p.type_ == c.type_ && p.status == c.status)
        }) {
            c.last_transition_time
                .clone_from(&prev.last_transition_time);
        }
    }
    let capacity = capacity();
    NodeStatus {
        allocatable: Some(capacity.clone()),
        capacity: Some(capacity),
        conditions: Some(conditions),
        addresses: Some(vec![
            NodeAddress {
                type_: "InternalIP".into(),
                address: ip.into(),
            },
            NodeAddress {
                type_: "Hostname".into(),
                address: name.into(),
            },
        ]),
        daemon_endpoints: Some(NodeDaemonEndpoints {
            kubelet_endpoint: Some(DaemonEndpoint { port: 10250 }),
        }),
        node_info: Some(NodeSystemInfo {
            architecture: arch().into(),
            boot_id: read_trimmed("/proc/sys/kernel/random/boot_id"),
            container_runtime_version: runtime.into(),
            kernel_version: read_trimmed("/proc/sys/kernel/osrelease"),
            kube_proxy_version: String::new(),
            kubelet_version: KUBELET_VERSION.into(),
            machine_id: read_trimmed("/etc/machine-id"),
            operating_system: std::env::consts::OS.into(),
            os_image: "mNi node".into(),
            system_uuid: String::new(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Registers the node (creating it when missing) and writes its status.
async fn register(client: &Client, name: &str, ip: &str, runtime: &str) -> Result<Node, Error> {
    let nodes: Api<Node> = Api::all(client.clone());
    let existing = nodes
        .get_opt(name)
        .await
        .map_err(api_err("reading the node"))?;
    let node = match existing {
        Some(n) => n,
        None => {
            let labels: BTreeMap<String, String> = [
                ("kubernetes.io/hostname", name),
                ("kubernetes.io/os", std::env::consts::OS),
                ("kubernetes.io/arch", arch()),
                ("beta.kubernetes.io/os", std::env::consts::OS),
                ("beta.kubernetes.io/arch", arch()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let node = Node {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    labels: Some(labels),
                    annotations: Some(
                        [("node.alpha.kubernetes.io/ttl".to_string(), "0".to_string())].into(),
                    ),
                    ..Default::default()
                },
                ..Default::default()
            };
            match nodes.create(&PostParams::default(), &node).await {
                Ok(n) => n,
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    nodes.get(name).await.map_err(api_err("reading the node"))?
                }
                Err(e) => return Err(api_err("registering the node")(e)),
            }
        }
    };
    let body = json!({"status": status(name, ip, runtime, node.status.as_ref())});
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map_err(api_err("writing the node status"))
}

/// Creates or renews the node's Lease.
async fn renew(client: &Client, node: &Node) -> Result<(), Error> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let leases: Api<Lease> = Api::namespaced(client.clone(), LEASE_NAMESPACE);
    let now = MicroTime(util::now());
    let body = json!({"spec": {"renewTime": now}});
    match leases
        .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(LEASE_NAMESPACE.into()),
                    owner_references: Some(vec![util::owner_ref("v1", "Node", &node.metadata)]),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(name),
                    lease_duration_seconds: Some(LEASE_DURATION),
                    renew_time: Some(now),
                    ..Default::default()
                }),
            };
            match leases.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                Err(e) => Err(api_err("creating the node lease")(e)),
            }
        }
        Err(e) => Err(api_err("renewing the node lease")(e)),
    }
}

/// Keeps the node registered and its Lease fresh, forever (the caller drops this future to
/// stop). Failures are logged and retried at the next tick.
pub(crate) async fn heartbeat(client: Client, name: String, ip: String, runtime: String) {
    let mut node: Option<Node> = None;
    let mut last_status = None::<tokio::time::Instant>;
    let mut tick = tokio::time::interval(LEASE_RENEW);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if node.is_none() || last_status.is_none_or(|t| t.elapsed() >= STATUS_REPORT) {
            match register(&client, &name, &ip, &runtime).await {
                Ok(n) => {
                    node = Some(n);
                    last_status = Some(tokio::time::Instant::now());
                }
                Err(e) => {
                    tracing::warn!(node = %name, error = %e, "node registration failed; will retry");
                    continue;
                }
            }
        }
        if let Some(n) = &node
            && let Err(e) = renew(&client, n).await
        {
            tracing::warn!(node = %name, error = %e, "node heartbeat failed; will retry");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_reports_this_machine() {
        let c = capacity();
        assert!(c["cpu"].0.parse::<usize>().is_ok_and(|n| n >= 1));
        assert!(c["memory"].0.ends_with("Ki"));
        assert_eq!(c["pods"].0, "110");
    }

    #[test]
    fn conditions_keep_their_transition_times() {
        let first = status("n", "10.0.0.1", "r://1", None);
        let mut earlier = first.clone();
        for c in earlier.conditions.iter_mut().flatten() {
            c.last_transition_time = Some(Time("2020-01-01T00:00:00Z".parse().expect("time")));
        }
        let second = status("n", "10.0.0.1", "r://1", Some(&earlier));
        let ready = second
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready")
            .expect("ready");
        assert_eq!(ready.status, "True");
        assert_eq!(
            ready.last_transition_time,
            Some(Time("2020-01-01T00:00:00Z".parse().expect("time")))
        );
    }
}
