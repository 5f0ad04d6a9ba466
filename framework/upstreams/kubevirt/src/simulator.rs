//! [`Simulator`]: a fake virt-controller, virt-handler and CDI over the Kubernetes API.
//!
//! mNi's API server stores `kubevirt.io/v1` and `cdi.kubevirt.io/v1beta1` objects but nothing
//! runs them. The simulator plays KubeVirt's and CDI's controllers as a plain kube-rs client
//! (so it works against any API server): it installs the subset's CRDs if they are absent,
//! registers a node to run virtual machines on, watches the kinds it reads, and on any change
//! runs one level-triggered pass that lists everything, computes the next step of every
//! object (`plan`, pure and unit-tested) and writes it. Phase changes are paced — one step
//! per object per [`Simulator::with_step_interval`] — so `kubectl get -w` shows each phase;
//! everything else is written at once. A converged cluster sees no writes.
//!
//! What it does:
//!
//! - **DataVolume** — creates the claim (same name, owned by the DataVolume, CDI's
//!   annotations) and an importer pod bound to the simulated node (the claim's first
//!   consumer, so mni-dev's `WaitForFirstConsumer` class provisions it); `Pending` until the
//!   claim is `Bound`, then `ImportScheduled` → `ImportInProgress` (`0.00%`, `25.00%`, …) →
//!   `Succeeded` (`100.0%`, `Ready=True`), and deletes the importer pod. A URL whose host
//!   ends in `.invalid` fails: `ImportScheduled` → `Failed`, `Running=False` reason `Error`
//!   with the lookup error. A spec without a size or source, or with a non-http(s) URL,
//!   fails at once (reason `InvalidSpec`, the message names the field).
//! - **VirtualMachine** — creates its `dataVolumeTemplates` (owned by the VM); by its run
//!   strategy (`Always`, `RerunOnFailure`, `Once`, or `running: true`: run; `Halted`: stop;
//!   `Manual`: as `status.stateChangeRequests` say) creates the instance (same name, the
//!   template's labels and annotations, owned by the VM) once its DataVolumes succeeded, or
//!   deletes it; reports `printableStatus` (`Provisioning`, `Starting`, `Running`,
//!   `Stopping`, `Stopped`, `ErrorUnschedulable`, `ErrImagePull`, `DataVolumeError`,
//!   `Terminating`), `created`, `ready`, `Ready`/`DataVolumesReady`/`PodScheduled`
//!   conditions, `RestartRequired` while a running instance's spec differs from the
//!   template, `runStrategy`, `desiredGeneration` and `observedGeneration` (the generation
//!   the instance was started from).
//! - **VirtualMachineInstance** — `Pending` → `Scheduling` → `Scheduled` (on the simulated
//!   node, with a virt-launcher pod there: owned by the instance, its annotations and claims,
//!   `Running` with the instance's first address once the guest runs; `status.activePods`)
//!   → `Running` with an address per interface: from the pod network
//!   ([`DEFAULT_POD_CIDR`]) or, for a Kube-OVN attachment (`ovn.kubernetes.io/logical_switch`
//!   on the pod network, `<nad>.<ns>.ovn.kubernetes.io/logical_switch` or a Subnet whose
//!   provider is `<nad>.<ns>.ovn` on a Multus network), from that Subnet, honouring the fixed
//!   address in `…ip_address`, and records it as Kube-OVN does, in an `IP` object
//!   (`<vm>.<namespace>`) that the fake Kube-OVN counts in the Subnet's `v4usingIPs`; addresses
//!   other `IP`s hold are taken. An instance that asks for more CPU (its request, else its
//!   vCPUs) or memory than the node has, or for node labels it lacks, stays `Scheduling`
//!   with `PodScheduled=False` reason `Unschedulable`; a container disk on a host under
//!   `.invalid` stays `Scheduled` with `Ready=False` reason `ErrImagePull`; an address
//!   conflict or a missing subnet stays `Scheduled` with the reason (`IPConflict`, …).
//!
//! Each instance is checked alone against the node (no bin packing), so hundreds of small
//! VMs fit. Guests never exit, so `Once` and `RerunOnFailure` behave like `Always`.

mod plan;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use mni_kubeovn::ipam::Cidr;
use mni_kubeovn::v1::{Ip, Subnet};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::cdi::DataVolume;
use crate::v1::{VirtualMachine, VirtualMachineInstance};
use plan::{Kind, NodeInfo, Settings, Snapshot, Write};

/// The node virtual machines run on, registered if absent.
pub const DEFAULT_NODE_NAME: &str = "mni-dev-kubevirt";

/// Where pod-network addresses of instances come from (`10.246.0.1` is the gateway).
pub const DEFAULT_POD_CIDR: &str = "10.246.0.0/16";

/// The field manager of everything the simulator writes.
pub const FIELD_MANAGER: &str = "mni-kubevirt-simulator";

/// The default pause between two phase changes of one object.
pub const DEFAULT_STEP_INTERVAL: Duration = Duration::from_millis(200);

/// The simulated node's allocatable CPU (cores) and memory.
const NODE_CPU: &str = "16";
const NODE_MEMORY: &str = "64Gi";

/// How many writes of one pass are in flight at once.
const WRITE_CONCURRENCY: usize = 16;

/// How long to gather watch events before a pass.
const DEBOUNCE: Duration = Duration::from_millis(20);

/// How soon to retry a pass that failed; doubled while passes keep failing.
const RETRY: Duration = Duration::from_millis(500);

/// The longest wait between retries.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// How long to wait for the CRDs to become `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The pod CIDR is not a CIDR.
    #[error("invalid pod CIDR: {0}")]
    PodCidr(#[source] mni_kubeovn::ipam::Error),
    /// The CRDs could not be installed, or did not become `Established`.
    #[error(transparent)]
    Crds(#[from] mni_crd_install::Error),
    /// The simulated node could not be registered.
    #[error("registering Node {name}: {source}")]
    RegisterNode {
        /// The node's name.
        name: String,
        /// What the API server said.
        #[source]
        source: kube::Error,
    },
}

/// The fake KubeVirt and CDI. Build it with [`Simulator::new`], then
/// [`run`](Simulator::run) it.
///
/// ```no_run
/// # async fn run(client: kube::Client) -> Result<(), mni_kubevirt::simulator::Error> {
/// use mni_kubevirt::simulator::Simulator;
/// let sim = Simulator::new(client).with_step_interval(std::time::Duration::from_millis(50));
/// sim.run(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
#[derive(Clone)]
#[must_use = "a simulator does nothing until .run() is awaited"]
pub struct Simulator {
    client: Client,
    node_name: String,
    pod_cidr: Cidr,
    step: Duration,
    install_crds: bool,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("node_name", &self.node_name)
            .field("pod_cidr", &self.pod_cidr.to_string())
            .field("step", &self.step)
            .field("install_crds", &self.install_crds)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulator with the default node, pod CIDR and step interval that installs the CRDs
    /// it needs.
    pub fn new(client: Client) -> Self {
        Simulator {
            client,
            node_name: DEFAULT_NODE_NAME.to_string(),
            pod_cidr: Cidr::parse(DEFAULT_POD_CIDR)
                .unwrap_or_else(|_| unreachable!("DEFAULT_POD_CIDR is a valid CIDR")),
            step: DEFAULT_STEP_INTERVAL,
            install_crds: true,
        }
    }

    /// Sets the node instances and importers run on (registered with 16 CPUs and 64Gi if
    /// absent; an existing node's allocatable is used as it is).
    pub fn with_node_name(mut self, name: impl Into<String>) -> Self {
        self.node_name = name.into();
        self
    }

    /// Sets the CIDR pod-network addresses come from (its first usable address is the
    /// gateway and is never handed out).
    pub fn with_pod_cidr(mut self, cidr: &str) -> Result<Self, Error> {
        self.pod_cidr = Cidr::parse(cidr).map_err(Error::PodCidr)?;
        Ok(self)
    }

    /// Sets the pause between two phase changes of one object (default
    /// [`DEFAULT_STEP_INTERVAL`]).
    pub fn with_step_interval(mut self, step: Duration) -> Self {
        self.step = step;
        self
    }

    /// Whether [`run`](Self::run) installs the subset's CRDs when they are absent (default:
    /// yes). CRDs that exist are never changed.
    pub fn with_crd_install(mut self, install: bool) -> Self {
        self.install_crds = install;
        self
    }

    /// Installs every CRD of [`crate::crds`] that is absent and waits until all are
    /// `Established`.
    pub async fn install_crds(&self) -> Result<(), Error> {
        install_crds(&self.client).await
    }

    /// Runs until `shutdown` completes. Fails only if the CRDs cannot be installed or the
    /// node cannot be registered; later errors are logged and retried.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        tokio::pin!(shutdown);
        if self.install_crds {
            tokio::select! {
                () = &mut shutdown => return Ok(()),
                r = self.install_crds() => r?,
            }
        }
        self.register_node().await?;
        let notify = Arc::new(Notify::new());
        let importers = watcher::Config::default().labels(&format!(
            "{}={}",
            plan::CDI_APP_LABEL.0,
            plan::CDI_APP_LABEL.1
        ));
        let launchers = watcher::Config::default().labels(&format!(
            "{}={}",
            plan::LAUNCHER_LABEL.0,
            plan::LAUNCHER_LABEL.1
        ));
        let watches = futures::future::join_all([
            watch::<VirtualMachine>(&self.client, &notify, watcher::Config::default()),
            watch::<VirtualMachineInstance>(&self.client, &notify, watcher::Config::default()),
            watch::<DataVolume>(&self.client, &notify, watcher::Config::default()),
            watch::<PersistentVolumeClaim>(&self.client, &notify, importers.clone()),
            watch::<Pod>(&self.client, &notify, importers),
            watch::<Pod>(&self.client, &notify, launchers),
            watch::<Subnet>(&self.client, &notify, watcher::Config::default()),
            watch::<Ip>(&self.client, &notify, watcher::Config::default()),
        ]);
        tracing::info!(node = %self.node_name, pod_cidr = %self.pod_cidr, "kubevirt simulator started");
        let settings = Settings {
            node_name: self.node_name.clone(),
            pod_cidr: self.pod_cidr,
        };
        let passes = async {
            let mut retry = RETRY;
            let mut last_step: HashMap<(Kind, String, String), Instant> = HashMap::new();
            loop {
                let wait = match self.pass(&settings, &mut last_step).await {
                    Ok(deferred) => {
                        retry = RETRY;
                        deferred
                    }
                    Err(error) => {
                        tracing::debug!(%error, "kubevirt simulator pass failed; retrying");
                        let wait = retry;
                        retry = (retry * 2).min(MAX_RETRY);
                        Some(wait)
                    }
                };
                match wait {
                    Some(wait) => {
                        tokio::select! {
                            () = notify.notified() => {},
                            () = tokio::time::sleep(wait) => {},
                        }
                    }
                    None => notify.notified().await,
                }
                tokio::time::sleep(DEBOUNCE).await;
            }
        };
        tokio::select! {
            () = &mut shutdown => {},
            _ = watches => {},
            () = passes => {},
        }
        tracing::info!("kubevirt simulator stopped");
        Ok(())
    }

    /// Registers the simulated node unless a node of that name exists.
    async fn register_node(&self) -> Result<(), Error> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        let err = |source| Error::RegisterNode {
            name: self.node_name.clone(),
            source,
        };
        if nodes.get_opt(&self.node_name).await.map_err(err)?.is_some() {
            return Ok(());
        }
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.node_name,
                "labels": {
                    "kubernetes.io/hostname": self.node_name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubevirt.io/schedulable": "true",
                },
            },
        }))
        .unwrap_or_default();
        match nodes.create(&PostParams::default(), &node).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(err(e)),
        }
        let resources = json!({"cpu": NODE_CPU, "memory": NODE_MEMORY, "pods": "110"});
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let status = json!({"status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{
                "type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status (simulated by mni-kubevirt)",
                "lastHeartbeatTime": now, "lastTransitionTime": now,
            }],
            "addresses": [{"type": "Hostname", "address": self.node_name}],
        }});
        nodes
            .patch_status(
                &self.node_name,
                &PatchParams {
                    field_manager: Some(FIELD_MANAGER.into()),
                    ..PatchParams::default()
                },
                &Patch::Merge(&status),
            )
            .await
            .map_err(err)?;
        Ok(())
    }

    /// One pass: list everything, plan, write. Returns how long until a paced step is due.
    async fn pass(
        &self,
        settings: &Settings,
        last_step: &mut HashMap<(Kind, String, String), Instant>,
    ) -> Result<Option<Duration>, kube::Error> {
        let importers = ListParams::default().labels(&format!(
            "{}={}",
            plan::CDI_APP_LABEL.0,
            plan::CDI_APP_LABEL.1
        ));
        let snapshot = Snapshot {
            vms: list(&self.client, &ListParams::default()).await?,
            vmis: list(&self.client, &ListParams::default()).await?,
            dvs: list(&self.client, &ListParams::default()).await?,
            pvcs: list(&self.client, &ListParams::default()).await?,
            importers: list(&self.client, &importers).await?,
            launchers: list(
                &self.client,
                &ListParams::default().labels(&format!(
                    "{}={}",
                    plan::LAUNCHER_LABEL.0,
                    plan::LAUNCHER_LABEL.1
                )),
            )
            .await?,
            // Kube-OVN may not be installed: then there are no subnets.
            subnets: list(&self.client, &ListParams::default())
                .await
                .unwrap_or_default(),
            ips: list(&self.client, &ListParams::default())
                .await
                .unwrap_or_default(),
            node: self.node().await?,
        };
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let mut due: Option<Duration> = None;
        let mut ready = Vec::new();
        for write in plan::plan(&snapshot, settings, &now) {
            if let Write::Status {
                kind,
                namespace,
                name,
                step: true,
                ..
            } = &write
            {
                let key = (*kind, namespace.clone(), name.clone());
                if let Some(at) = last_step.get(&key) {
                    let elapsed = at.elapsed();
                    if elapsed < self.step {
                        let left = self.step - elapsed;
                        due = Some(due.map_or(left, |d| d.min(left)));
                        continue;
                    }
                }
                last_step.insert(key, Instant::now());
            }
            ready.push(write);
        }
        // The writes of one pass are independent (a later pass repairs any order), so they
        // go out concurrently.
        let writes: Vec<_> = ready
            .into_iter()
            .map(|write| {
                let this = self.clone();
                async move { this.write(&write).await.err() }
            })
            .collect();
        let failed = futures::stream::iter(writes)
            .buffer_unordered(WRITE_CONCURRENCY)
            .collect::<Vec<Option<kube::Error>>>()
            .await
            .into_iter()
            .flatten()
            .next();
        // Forget objects that are gone.
        last_step.retain(|_, at| at.elapsed() < self.step * 50);
        failed.map_or(Ok(due), Err)
    }

    async fn node(&self) -> Result<Option<NodeInfo>, kube::Error> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        let Some(node) = nodes.get_opt(&self.node_name).await? else {
            return Ok(None);
        };
        let allocatable = node.status.and_then(|s| s.allocatable).unwrap_or_default();
        let amount = |name: &str| {
            allocatable
                .get(name)
                .and_then(|q| crate::quantity::value(q).ok())
                .unwrap_or(0.0)
        };
        Ok(Some(NodeInfo {
            name: self.node_name.clone(),
            cpu: amount("cpu"),
            memory: amount("memory"),
            labels: node.metadata.labels.unwrap_or_default(),
        }))
    }

    async fn write(&self, write: &Write) -> Result<(), kube::Error> {
        let api = |kind: Kind, namespace: &str| {
            let resource = match kind {
                Kind::VirtualMachine => ApiResource::erase::<VirtualMachine>(&()),
                Kind::VirtualMachineInstance => ApiResource::erase::<VirtualMachineInstance>(&()),
                Kind::DataVolume => ApiResource::erase::<DataVolume>(&()),
                Kind::PersistentVolumeClaim => ApiResource::erase::<PersistentVolumeClaim>(&()),
                Kind::Pod => ApiResource::erase::<Pod>(&()),
                Kind::Ip => {
                    return Api::<DynamicObject>::all_with(
                        self.client.clone(),
                        &ApiResource::erase::<Ip>(&()),
                    );
                }
            };
            Api::<DynamicObject>::namespaced_with(self.client.clone(), namespace, &resource)
        };
        tracing::debug!(?write, "kubevirt simulator write");
        let result = match write {
            Write::Create {
                kind,
                namespace,
                body,
            } => {
                let object: DynamicObject =
                    serde_json::from_value(body.clone()).map_err(kube::Error::SerdeError)?;
                let params = PostParams {
                    field_manager: Some(FIELD_MANAGER.into()),
                    ..PostParams::default()
                };
                api(*kind, namespace)
                    .create(&params, &object)
                    .await
                    .map(|_| ())
            }
            Write::Delete {
                kind,
                namespace,
                name,
            } => api(*kind, namespace)
                .delete(name, &DeleteParams::background())
                .await
                .map(|_| ()),
            Write::Status {
                kind,
                namespace,
                name,
                patch,
                ..
            } => {
                let params = PatchParams {
                    field_manager: Some(FIELD_MANAGER.into()),
                    ..PatchParams::default()
                };
                api(*kind, namespace)
                    .patch_status(name, &params, &Patch::Merge(patch))
                    .await
                    .map(|_| ())
            }
        };
        match result {
            // Gone since the list, or created by a pass that raced this one.
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(()),
            other => other,
        }
    }
}

/// Lists every object of a kind, in all namespaces.
async fn list<K>(client: &Client, params: &ListParams) -> Result<Vec<K>, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    Ok(api.list(params).await?.items)
}

/// Watches one kind and wakes a pass on every event; never ends.
fn watch<K>(
    client: &Client,
    notify: &Arc<Notify>,
    config: watcher::Config,
) -> futures::future::BoxFuture<'static, ()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let api: Api<K> = Api::all(client.clone());
    let notify = Arc::clone(notify);
    Box::pin(watcher(api, config).default_backoff().for_each(move |_| {
        notify.notify_one();
        futures::future::ready(())
    }))
}

/// Installs the absent CRDs of the subset and waits until all are `Established`.
async fn install_crds(client: &Client) -> Result<(), Error> {
    mni_crd_install::install_absent(client, &crate::crds(), FIELD_MANAGER, ESTABLISH_TIMEOUT)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator can run on a multi-threaded runtime.
    #[allow(dead_code, reason = "only needs to compile")]
    fn run_is_send(sim: Simulator) {
        fn assert_send<T: Send>(_: T) {}
        assert_send(sim.run(async {}));
    }

    #[test]
    fn default_pod_cidr_is_valid() {
        assert_eq!(
            Cidr::parse(DEFAULT_POD_CIDR).map(|c| c.to_string()),
            Ok(DEFAULT_POD_CIDR.to_string())
        );
    }
}
