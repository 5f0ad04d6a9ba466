//! `mni-workloads`: kwok-style workload simulation over the Kubernetes API.
//!
//! mNi's API server stores objects but runs no controllers and no kubelet: a Deployment
//! never gets pods. The simulator is the missing half, as a plain API client (kube-rs), so
//! it works against any API server: it plays kube-controller-manager's Deployment,
//! ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Endpoints and EndpointSlice
//! controllers and a kubelet on one fake node (`mni-dev`, registered as a `Node` with a
//! heartbeat `Lease`), and kube-scheduler for that node (`scheduler`: requests against
//! allocatable, node selectors and affinity, taints; `FailedScheduling` otherwise). Pods are
//! never run (unless [`Simulator::with_kubelet`] hands them to a real node agent); they are bound to the node and given the status a
//! kubelet would write (Running, pod IPs from 10.244.0.0/16, Ready conditions, container
//! statuses), so `kubectl rollout status`, `kubectl wait --for=condition=Available` and
//! Service → Endpoints lookups behave as on a real cluster.
//!
//! Start with [`Simulator::new`]:
//!
//! ```no_run
//! # async fn run(client: kube::Client) -> Result<(), mni_workloads::Error> {
//! let sim = mni_workloads::Simulator::new(client).with_namespace(Some("default".into()));
//! sim.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
//!
//! # Failure injection
//!
//! Annotations on a Deployment, ReplicaSet, StatefulSet or DaemonSet, on its pod template,
//! or on a single pod change how the pods behave:
//!
//! - [`FAIL_ANNOTATION`] `simulate.mni.dev/fail: "true"` — containers crash-loop: phase
//!   `Running`, `Ready=False`, `state.waiting.reason: CrashLoopBackOff`, `restartCount`
//!   growing with kubelet's back-off (10 s doubling to 5 min). A Deployment then reports
//!   `Available=False` / `MinimumReplicasUnavailable`, and a rollout that makes no progress
//!   for `spec.progressDeadlineSeconds` reports `Progressing=False` /
//!   `ProgressDeadlineExceeded`. Removing the annotation heals the pods in place (on the
//!   workload) or through a new rollout (on the template).
//! - [`READY_DELAY_ANNOTATION`] `simulate.mni.dev/ready-delay: "2s"` — containers run at
//!   once but become ready only this long after the pod started (`500ms`, `2s`, `1m30s`).
//! - [`RUN_DURATION_ANNOTATION`] `simulate.mni.dev/run-duration: "5s"` — containers of a pod
//!   that does not restart `Always` exit after this long (a Job's pods: after
//!   [`DEFAULT_JOB_RUN`] without it), with code 0, or 1 when the pod is also asked to fail:
//!   a Job then retries with kube's back-off up to its `backoffLimit`.
//!
//! # How it works
//!
//! One reflector per kind (`cache`) keeps a local copy of Pods, ReplicaSets, Deployments,
//! StatefulSets, DaemonSets, Services and Endpoints and records which objects each watch
//! event touched; the events wake one level-triggered reconcile pass (`deployment`,
//! `replicaset`, `statefulset`, `daemonset`, `pods`, `endpoints`) over the objects those
//! changes can affect (`scope`: a pod's owners and Services, a workload's pods, …), so the
//! work of a pass grows with what changed, not with the cluster. Each controller computes
//! the desired state, compares it with what it read, and writes only differences (JSON
//! merge patches, `status` subresource for status), so a converged cluster sees no writes.
//! Timed transitions (ready delays, crash-loop restarts, `minReadySeconds`, progress
//! deadlines) schedule a pass over everything, as do a relist and a resync every
//! 30 seconds. Conflicts and vanished objects are not errors: the objects concerned are
//! looked at again in the next pass, from fresh state (`ops`).

mod autoscaling;
mod cache;
mod cronjob;
mod daemonset;
mod deployment;
mod disruption;
mod endpoints;
mod history;
mod job;
mod node;
mod ops;
mod pods;
mod replicaset;
mod scheduler;
mod scope;
mod statefulset;
pub mod storage;
mod util;

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client};
use tokio::sync::Notify;

/// Annotation that makes pods crash-loop and never become ready (`"true"`).
pub const FAIL_ANNOTATION: &str = "simulate.mni.dev/fail";

/// Annotation that delays container readiness after start (e.g. `"2s"`).
pub const READY_DELAY_ANNOTATION: &str = "simulate.mni.dev/ready-delay";

/// Annotation that makes the containers of a pod with `restartPolicy` `Never` or `OnFailure`
/// exit after running this long (e.g. `"5s"`). Pods of a Job exit after
/// [`DEFAULT_JOB_RUN`] without it; other pods run until deleted.
pub const RUN_DURATION_ANNOTATION: &str = "simulate.mni.dev/run-duration";

/// How long the containers of a Job's pods run when no run-duration annotation says.
pub const DEFAULT_JOB_RUN: std::time::Duration = std::time::Duration::from_secs(1);

/// The default name of the simulated node.
pub const DEFAULT_NODE_NAME: &str = "mni-dev";

/// The container runtime the simulated node reports.
pub const DEFAULT_RUNTIME_VERSION: &str = "mni-simulated://0.1.0";

/// The default address of the simulated node (`status.hostIP` of its pods).
pub const DEFAULT_NODE_IP: &str = "172.18.0.2";

/// How long to gather watch events before a pass.
const DEBOUNCE: Duration = Duration::from_millis(20);

/// How soon to retry after a conflict or a failed write; doubled while passes keep failing.
const RETRY: Duration = Duration::from_millis(500);

/// The longest wait between retries of a pass that keeps failing.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// How often a pass looks at everything, whatever the watch events said.
const RESYNC: Duration = Duration::from_secs(30);

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API server could not be reached or refused to list pods.
    #[error("cannot reach the API server: {0}")]
    Connect(#[source] kube::Error),
    /// The caches could not complete their initial list.
    #[error("starting the watch caches: {0}")]
    Cache(String),
}

/// The workload simulator. Build it with [`Simulator::new`], then [`Simulator::run`] it.
#[derive(Clone)]
pub struct Simulator {
    client: Client,
    node_name: String,
    node_ip: String,
    namespace: Option<String>,
    register_node: bool,
    kubelet: bool,
    runtime_version: String,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("node_name", &self.node_name)
            .field("node_ip", &self.node_ip)
            .field("namespace", &self.namespace)
            .field("register_node", &self.register_node)
            .field("kubelet", &self.kubelet)
            .field("runtime_version", &self.runtime_version)
            .finish_non_exhaustive()
    }
}

/// State that lives across passes.
#[derive(Default)]
struct State {
    expectations: ops::Expectations,
    ips: pods::IpPool,
    endpoints: HashSet<(String, String)>,
}

impl Simulator {
    /// A simulator for every namespace, node [`DEFAULT_NODE_NAME`].
    pub fn new(client: Client) -> Self {
        Self {
            client,
            node_name: DEFAULT_NODE_NAME.to_string(),
            node_ip: DEFAULT_NODE_IP.to_string(),
            namespace: None,
            register_node: true,
            kubelet: true,
            runtime_version: DEFAULT_RUNTIME_VERSION.to_string(),
        }
    }

    /// Whether to play the kubelet for the pods bound to the node (on by default): give them
    /// the status of running containers without running anything. Turn it off when a real
    /// node agent (`mni-node`) runs the node's pods; the scheduler still binds them.
    #[must_use]
    pub fn with_kubelet(mut self, kubelet: bool) -> Self {
        self.kubelet = kubelet;
        self
    }

    /// Sets the container runtime the registered node reports
    /// (`status.nodeInfo.containerRuntimeVersion`, [`DEFAULT_RUNTIME_VERSION`] by default).
    #[must_use]
    pub fn with_runtime_version(mut self, version: impl Into<String>) -> Self {
        self.runtime_version = version.into();
        self
    }

    /// Whether to register the node (a `Node` object and its heartbeat `Lease`, as kubelet
    /// does) and run the cluster-wide controllers beside the passes: the volume binder and
    /// provisioner ([`storage`]), the disruption controller (PodDisruptionBudget status) and
    /// the autoscaler (HorizontalPodAutoscaler status, without metrics); on by default, and
    /// only ever done by a simulator of all namespaces.
    pub fn with_node_registration(mut self, register: bool) -> Self {
        self.register_node = register;
        self
    }

    /// Sets the name of the simulated node (pods are bound to it; pods bound to other nodes
    /// are left alone).
    pub fn with_node_name(mut self, name: impl Into<String>) -> Self {
        self.node_name = name.into();
        self
    }

    /// Sets the node's address, reported as the pods' `hostIP` (and `podIP` with
    /// `hostNetwork`).
    pub fn with_node_ip(mut self, ip: impl Into<String>) -> Self {
        self.node_ip = ip.into();
        self
    }

    /// Limits the simulator to one namespace (`None`: all namespaces).
    pub fn with_namespace(mut self, namespace: Option<String>) -> Self {
        self.namespace = namespace;
        self
    }

    /// Runs until `shutdown` completes. Fails only if the API server cannot be reached at
    /// start; later errors are logged and retried.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        let probe: Api<Pod> = match &self.namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        };
        probe
            .list(&ListParams::default().limit(1))
            .await
            .map_err(Error::Connect)?;
        // Dropped (and so stopped) when `run` returns.
        let mut heartbeat = tokio::task::JoinSet::new();
        if self.register_node && self.namespace.is_none() {
            heartbeat.spawn(node::heartbeat(
                self.client.clone(),
                self.node_name.clone(),
                self.node_ip.clone(),
                self.runtime_version.clone(),
            ));
            // The volume binder and provisioner watch cluster-wide, as the node does.
            heartbeat.spawn(storage::run(self.client.clone()));
            heartbeat.spawn(disruption::run(self.client.clone()));
            heartbeat.spawn(autoscaling::run(self.client.clone()));
        }
        let notify = Arc::new(Notify::new());
        let cache = cache::Cache::start(&self.client, self.namespace.as_deref(), &notify);
        tokio::pin!(shutdown);
        tokio::select! {
            () = &mut shutdown => return Ok(()),
            r = cache.ready() => r.map_err(|e| Error::Cache(e.to_string()))?,
        }
        tracing::info!(node = %self.node_name, namespace = ?self.namespace, "simulator started");
        let mut state = State::default();
        let mut retry = RETRY;
        // Objects to look at again, and when the earliest timed transition is due.
        let mut redo = scope::Scope::default();
        let mut wake: Option<jiff::Timestamp> = None;
        let mut last_full = tokio::time::Instant::now();
        let mut full = true;
        loop {
            // Changes first, then the snapshot: a change recorded in between is in the
            // snapshot and also in the next pass, never in neither.
            let changes = cache.take_changes();
            let snap = cache.snapshot();
            let mut scope = match changes {
                Some(changes) if !full && last_full.elapsed() < RESYNC => {
                    scope::Scope::of(&changes, &snap)
                }
                _ => scope::Scope::all(),
            };
            scope.merge(std::mem::take(&mut redo));
            let outcome = if scope.is_empty() {
                ops::Outcome::default()
            } else {
                if scope.is_all() {
                    last_full = tokio::time::Instant::now();
                    // A full pass computes every timed transition afresh.
                    wake = None;
                }
                tokio::select! {
                    () = &mut shutdown => break,
                    o = self.pass(&snap, &scope, &mut state) => o,
                }
            };
            drop(snap);
            full = false;
            let mut next_retry = None;
            if outcome.retry {
                next_retry = Some(tokio::time::Instant::now() + retry);
                retry = (retry * 2).min(MAX_RETRY);
            } else {
                retry = RETRY;
            }
            redo = outcome.redo;
            wake = util::earliest(wake, outcome.wake);
            let next_wake = wake.map(|at| {
                let wait = util::elapsed(util::now(), at);
                tokio::time::Instant::now() + wait.max(Duration::from_millis(100))
            });
            let next_resync = last_full + RESYNC;
            let timer = async {
                let at = [next_retry, next_wake]
                    .into_iter()
                    .flatten()
                    .fold(next_resync, tokio::time::Instant::min);
                tokio::time::sleep_until(at).await;
            };
            tokio::select! {
                () = &mut shutdown => break,
                () = notify.notified() => {}
                () = timer => {}
            }
            if next_wake.is_some_and(|at| at <= tokio::time::Instant::now()) {
                full = true;
            }
            tokio::time::sleep(DEBOUNCE).await;
        }
        tracing::info!("simulator stopped");
        Ok(())
    }

    /// One level-triggered pass over the objects in `scope`.
    async fn pass(
        &self,
        snap: &cache::Snapshot,
        scope: &scope::Scope,
        state: &mut State,
    ) -> ops::Outcome {
        let now = util::now();
        let mut out = ops::Outcome::default();
        state.expectations.observe(snap);
        let client = &self.client;
        deployment::sync(client, snap, scope, now, &mut out).await;
        replicaset::sync(client, snap, scope, &state.expectations, now, &mut out).await;
        statefulset::sync(client, snap, scope, now, &mut out).await;
        daemonset::sync(
            client,
            &self.node_name,
            snap,
            scope,
            &state.expectations,
            now,
            &mut out,
        )
        .await;
        let node = pods::Node {
            name: &self.node_name,
            ip: &self.node_ip,
        };
        job::sync(client, snap, scope, &state.expectations, now, &mut out).await;
        cronjob::sync(client, snap, scope, now, &mut out).await;
        let requires_node = self.register_node && self.namespace.is_none();
        scheduler::sync(
            client,
            &self.node_name,
            requires_node,
            snap,
            scope,
            now,
            &mut out,
        )
        .await;
        if self.kubelet {
            pods::sync(client, &node, snap, scope, &mut state.ips, now, &mut out).await;
        }
        endpoints::sync(client, snap, scope, &mut state.endpoints, &mut out).await;
        if out.writes > 0 {
            tracing::debug!(writes = out.writes, full = scope.is_all(), "reconcile pass");
        }
        out
    }
}
