//! `mni-node`: the node agent of `mni-dev` — the kubelet's role for one node. It watches the
//! pods bound to its node (the scheduler in `mni-workloads` binds them; that crate also
//! registers the `Node` and its heartbeat `Lease`) and runs them through a container
//! [`Runtime`]: [`ProcessRuntime`], each container a host process, or [`PodmanRuntime`],
//! each container an OCI container run by podman and runc.
//!
//! Start with [`Agent::new`]; the pieces, in the order a pod meets them:
//!
//! - `registry` ([`Registry`]): which local executable an image name stands for;
//! - `config`: the environment, ServiceAccount credentials and volumes, written to a per-pod
//!   directory (host processes share the host's file system — see that module for the
//!   layout and how `Config::infer()` finds the credentials through `KUBECONFIG`);
//! - `pod`: the pod worker and its container supervisors (restarts, back-off, probes,
//!   graceful termination, the pod's status);
//! - `runtime`: the [`Runtime`] trait and [`ProcessRuntime`];
//! - `podman`: [`PodmanRuntime`];
//! - `logs`: container logs in kubelet's layout, which the API server's `pods/log` reads.
//!
//! # Pod addresses
//!
//! Every pod gets an address of its own from 127.1.0.0/16 (on Linux all of 127.0.0.0/8
//! reaches the loopback interface, with nothing to configure), reported as `status.podIP`
//! and passed as `POD_IP`: two pods can both listen on 8080 if each binds its own address.
//! A process that binds `0.0.0.0` takes the port for every pod. `hostNetwork` pods get the
//! node's address.
//!
//! ```no_run
//! # async fn run(client: kube::Client) -> Result<(), mni_node::Error> {
//! let agent = mni_node::Agent::new(client, mni_node::ProcessRuntime::new(".mni/dev/node/pids"))
//!     .with_data_dir(".mni/dev/node")
//!     .with_registry(".mni/dev/images.yaml");
//! agent.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

mod config;
mod logs;
mod pod;
mod podman;
mod probe;
mod registry;
mod runtime;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::watch;

pub use config::{ApiAccess, mount_env};
pub use logs::{DEFAULT_MAX_SIZE, container_dir, instance_file};
pub use podman::{AGENT_LABEL, PodmanRuntime, SetupError};
pub use registry::{Image, Registry};
pub use runtime::{Container, Launch, Mount, ProcessRuntime, Runtime, Security};

/// The default name of the node the agent runs pods for.
pub const DEFAULT_NODE_NAME: &str = "mni-dev";

/// Errors of the agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API server could not be reached.
    #[error("cannot reach the API server: {0}")]
    Connect(#[source] kube::Error),
    /// The data directory could not be created.
    #[error("creating the node's data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// The node agent. Build it with [`Agent::new`], then [`Agent::run`] it.
pub struct Agent {
    client: Client,
    runtime: Arc<dyn Runtime>,
    node: String,
    host_ip: String,
    data_dir: PathBuf,
    logs_dir: Option<PathBuf>,
    registry: Option<PathBuf>,
    log_max: u64,
    access: ApiAccess,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("node", &self.node)
            .field("data_dir", &self.data_dir)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent for node [`DEFAULT_NODE_NAME`] running pods with `runtime`, keeping its
    /// files under `.mni/dev/node`.
    pub fn new(client: Client, runtime: impl Runtime + 'static) -> Self {
        Self {
            client,
            runtime: Arc::new(runtime),
            node: DEFAULT_NODE_NAME.into(),
            host_ip: "127.0.0.1".into(),
            data_dir: PathBuf::from(".mni/dev/node"),
            logs_dir: None,
            registry: None,
            log_max: DEFAULT_MAX_SIZE,
            access: ApiAccess::default(),
        }
    }

    /// The node whose pods to run.
    #[must_use]
    pub fn with_node_name(mut self, name: impl Into<String>) -> Self {
        self.node = name.into();
        self
    }

    /// Where per-pod directories (`pods/<uid>`) live; logs go to `logs/` and the image
    /// registry is `images.yaml` there unless set otherwise.
    #[must_use]
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = dir.into();
        self
    }

    /// Where container logs are written (the API server's pod log directory).
    #[must_use]
    pub fn with_logs_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.logs_dir = Some(dir.into());
        self
    }

    /// The image registry file ([`Registry`]).
    #[must_use]
    pub fn with_registry(mut self, path: impl Into<PathBuf>) -> Self {
        self.registry = Some(path.into());
        self
    }

    /// The size cap of one log file ([`DEFAULT_MAX_SIZE`] by default).
    #[must_use]
    pub fn with_log_max_size(mut self, bytes: u64) -> Self {
        self.log_max = bytes.max(1024);
        self
    }

    /// How pods reach the API server (URL and CA), for their kubeconfig and
    /// `KUBERNETES_SERVICE_HOST`.
    #[must_use]
    pub fn with_api_access(mut self, access: ApiAccess) -> Self {
        self.access = access;
        self
    }

    /// The image registry file in use.
    pub fn registry_path(&self) -> PathBuf {
        self.registry
            .clone()
            .unwrap_or_else(|| self.data_dir.join("images.yaml"))
    }

    /// The directory container logs go to.
    pub fn logs_dir(&self) -> PathBuf {
        self.logs_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("logs"))
    }

    /// The runtime's version, as the Node reports it.
    pub fn runtime_version(&self) -> String {
        self.runtime.version()
    }

    /// Runs pods until `shutdown` completes, then stops their containers (SIGTERM, at most
    /// a few seconds' grace, SIGKILL) so none outlive the agent.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        // Pods run in other working directories: every path they are given is absolute.
        let absolute =
            |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        self.logs_dir = Some(absolute(&self.logs_dir()));
        self.registry = Some(absolute(&self.registry_path()));
        self.data_dir = absolute(&self.data_dir);
        let pods_dir = self.data_dir.join("pods");
        std::fs::create_dir_all(&pods_dir).map_err(|source| Error::DataDir {
            path: pods_dir.clone(),
            source,
        })?;
        let api: Api<Pod> = Api::all(self.client.clone());
        api.list(&kube::api::ListParams::default().limit(1))
            .await
            .map_err(Error::Connect)?;
        let ctx = Arc::new(pod::Ctx {
            client: self.client.clone(),
            node: self.node.clone(),
            host_ip: self.host_ip.clone(),
            pods_dir,
            logs_dir: self.logs_dir(),
            log_max: self.log_max,
            registry: Registry::new(self.registry_path()),
            runtime: self.runtime.clone(),
            access: self.access.clone(),
        });
        let cfg = watcher::Config::default().fields(&format!("spec.nodeName={}", self.node));
        let mut events = watcher(api, cfg).boxed();
        let mut workers: HashMap<String, Worker> = HashMap::new();
        let mut ips = IpPool::default();
        let mut listing: Option<HashSet<String>> = None;
        tracing::info!(node = %self.node, runtime = %self.runtime.version(), "node agent started");
        tokio::pin!(shutdown);
        loop {
            let ev = tokio::select! {
                () = &mut shutdown => break,
                ev = events.next() => ev,
            };
            let Some(ev) = ev else { break };
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => {
                    tracing::warn!(error = %e, "watching pods; retrying");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            };
            match ev {
                watcher::Event::Init => listing = Some(HashSet::new()),
                watcher::Event::InitApply(p) | watcher::Event::Apply(p) => {
                    if let (Some(seen), Some(uid)) = (listing.as_mut(), p.metadata.uid.as_ref()) {
                        seen.insert(uid.clone());
                    }
                    self.apply(&ctx, &mut workers, &mut ips, p);
                }
                watcher::Event::InitDone => {
                    if let Some(seen) = listing.take() {
                        workers.retain(|uid, w| {
                            let keep = seen.contains(uid);
                            if !keep {
                                let _ = w.tx.send(pod::Update::Deleted);
                                ips.release(uid);
                            }
                            keep
                        });
                    }
                }
                watcher::Event::Delete(p) => {
                    let uid = p.metadata.uid.clone().unwrap_or_default();
                    if let Some(w) = workers.remove(&uid) {
                        let _ = w.tx.send(pod::Update::Deleted);
                        ips.release(&uid);
                    }
                }
            }
            workers.retain(|_, w| !w.task.is_finished());
        }
        for w in workers.values() {
            let _ = w.tx.send(pod::Update::Shutdown);
        }
        for (_, w) in workers {
            let _ = tokio::time::timeout(pod::SHUTDOWN_GRACE * 2, w.task).await;
        }
        tracing::info!("node agent stopped");
        Ok(())
    }

    fn apply(
        &self,
        ctx: &Arc<pod::Ctx>,
        workers: &mut HashMap<String, Worker>,
        ips: &mut IpPool,
        p: Pod,
    ) {
        let Some(uid) = p.metadata.uid.clone() else {
            return;
        };
        let p = Arc::new(p);
        if p.metadata.deletion_timestamp.is_some() {
            if let Some(w) = workers.remove(&uid) {
                let _ = w.tx.send(pod::Update::Deleted);
                ips.release(&uid);
            }
            return;
        }
        if workers.contains_key(&uid) {
            return;
        }
        let host_network = p.spec.as_ref().and_then(|s| s.host_network) == Some(true);
        let ip = if host_network {
            Some(self.host_ip.clone())
        } else {
            let known = p
                .status
                .as_ref()
                .and_then(|s| s.pod_ip.as_deref())
                .and_then(|i| i.parse().ok());
            ips.get(&uid, known).map(|i| i.to_string())
        };
        let Some(ip) = ip else {
            tracing::warn!(pod = ?p.metadata.name, "no free pod address in 127.1.0.0/16");
            return;
        };
        let (tx, rx) = watch::channel(pod::Update::Live);
        let task = tokio::spawn(pod::run(ctx.clone(), p, ip, rx));
        workers.insert(uid, Worker { tx, task });
    }
}

struct Worker {
    tx: watch::Sender<pod::Update>,
    task: tokio::task::JoinHandle<()>,
}

/// Pod addresses from 127.1.0.0/16, per pod uid.
#[derive(Debug, Default)]
struct IpPool {
    by_uid: HashMap<String, u32>,
    used: HashSet<u32>,
    cursor: u32,
}

const POD_NET: u32 = u32::from_be_bytes([127, 1, 0, 0]);

impl IpPool {
    /// The pod's address: the one it had (`known`) if free, else the next free one.
    fn get(&mut self, uid: &str, known: Option<Ipv4Addr>) -> Option<Ipv4Addr> {
        if let Some(off) = self.by_uid.get(uid) {
            return Some(Ipv4Addr::from(POD_NET + off));
        }
        let known = known
            .map(|ip| u32::from(ip).wrapping_sub(POD_NET))
            .filter(|off| *off < 0x1_0000 && !self.used.contains(off));
        let off = match known {
            Some(off) => off,
            None => {
                let mut found = None;
                for _ in 0..0x1_0000 {
                    self.cursor = (self.cursor + 1) % 0x1_0000;
                    let off = self.cursor;
                    if off & 0xff == 0 || off & 0xff == 0xff || self.used.contains(&off) {
                        continue;
                    }
                    found = Some(off);
                    break;
                }
                found?
            }
        };
        self.used.insert(off);
        self.by_uid.insert(uid.to_string(), off);
        Some(Ipv4Addr::from(POD_NET + off))
    }

    fn release(&mut self, uid: &str) {
        if let Some(off) = self.by_uid.remove(uid) {
            self.used.remove(&off);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_get_distinct_loopback_addresses_and_keep_theirs() {
        let mut pool = IpPool::default();
        let a = pool.get("a", None).expect("a");
        let b = pool.get("b", None).expect("b");
        assert_ne!(a, b);
        assert!(a.is_loopback() && b.is_loopback());
        assert_eq!(pool.get("a", None), Some(a));
        pool.release("a");
        let kept = Ipv4Addr::new(127, 1, 9, 9);
        assert_eq!(pool.get("c", Some(kept)), Some(kept));
        assert_ne!(pool.get("d", Some(kept)), Some(kept));
    }

    /// The agent's future can run on a multi-threaded runtime.
    #[allow(dead_code)]
    fn agent_run_is_send(agent: Agent) {
        fn send<T: Send>(_: T) {}
        send(agent.run(std::future::pending()));
    }
}
