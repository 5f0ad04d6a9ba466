//! One pod's worker, as kubelet's pod worker: resolves the images (`ErrImagePull`,
//! `ImagePullBackOff`) and the configuration (`CreateContainerConfigError`), runs the init
//! containers one after the other and then the containers, each under its own supervisor
//! (`container`), and writes the pod's status whenever a container's changes.
//!
//! A container supervisor starts an instance, runs its probes beside it (startup, then
//! liveness and readiness), waits for it to exit or fail liveness, and restarts it per
//! `restartPolicy`: the first restart at once, then after kubelet's back-off (10 s doubling
//! to 5 min), waiting in `CrashLoopBackOff`. When the pod is deleted, or the agent stops,
//! each instance gets SIGTERM and `terminationGracePeriodSeconds` before SIGKILL.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, Event, EventSource, HostIP, ObjectReference, Pod,
    PodCondition, PodIP, PodStatus, Probe,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use crate::config::{self, ApiAccess, Resolver};
use crate::probe::{self, Timing};
use crate::registry::{Image, Registry};
use crate::runtime::{Launch, Runtime};

/// What the pod worker hears from the agent.
#[derive(Debug, Clone)]
pub(crate) enum Update {
    /// The pod is (still) bound here and not deleted.
    Live,
    /// The pod was deleted: stop its containers gracefully.
    Deleted,
    /// The agent stops: stop the containers, with at most [`SHUTDOWN_GRACE`].
    Shutdown,
}

/// The longest grace period given to containers when the agent itself stops.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// How often ConfigMap and Secret volumes are rewritten from their objects.
const VOLUME_SYNC: Duration = Duration::from_secs(10);

/// kubelet's first back-off and its cap.
const BACKOFF: Duration = Duration::from_secs(10);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// What every pod worker shares.
pub(crate) struct Ctx {
    pub(crate) client: Client,
    pub(crate) node: String,
    pub(crate) host_ip: String,
    pub(crate) pods_dir: std::path::PathBuf,
    pub(crate) logs_dir: std::path::PathBuf,
    pub(crate) log_max: u64,
    pub(crate) registry: Registry,
    pub(crate) runtime: Arc<dyn Runtime>,
    pub(crate) access: ApiAccess,
}

/// The statuses of one pod's containers, shared by their supervisors.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default, Clone)]
struct State {
    init: Vec<ContainerStatus>,
    containers: Vec<ContainerStatus>,
    initialized: bool,
}

impl Shared {
    fn update(&self, init: bool, name: &str, f: impl FnOnce(&mut ContainerStatus)) {
        {
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let list = if init { &mut s.init } else { &mut s.containers };
            if let Some(c) = list.iter_mut().find(|c| c.name == name) {
                f(c);
            }
        }
        self.changed.notify_one();
    }

    fn set_all_waiting(&self, reason: &str, message: Option<String>) {
        {
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let State {
                init, containers, ..
            } = &mut *s;
            for c in init.iter_mut().chain(containers.iter_mut()) {
                c.state = Some(waiting(reason, message.clone()));
            }
        }
        self.changed.notify_one();
    }

    fn snapshot(&self) -> State {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn waiting(reason: &str, message: Option<String>) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.into()),
            message,
        }),
        ..Default::default()
    }
}

fn now() -> Time {
    Time(Timestamp::now())
}

/// Records an event about the pod, as kubelet's recorder does (best effort).
async fn event(client: &Client, pod: &Pod, type_: &str, reason: &str, message: &str, node: &str) {
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let e = Event {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}.")),
            namespace: Some(ns.clone()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: Some(name),
            namespace: Some(ns.clone()),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(message.into()),
        type_: Some(type_.into()),
        source: Some(EventSource {
            component: Some("kubelet".into()),
            host: Some(node.into()),
        }),
        reporting_component: Some("kubelet".into()),
        reporting_instance: Some(node.into()),
        count: Some(1),
        first_timestamp: Some(now()),
        last_timestamp: Some(now()),
        ..Default::default()
    };
    if let Err(err) = Api::<Event>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &e)
        .await
    {
        tracing::debug!(reason, error = %err, "event not recorded");
    }
}

/// How the worker ended its wait: go on, or stop with this grace period.
fn stopping(rx: &watch::Receiver<Update>, grace: Duration) -> Option<Duration> {
    match &*rx.borrow() {
        Update::Live => None,
        Update::Deleted => Some(grace),
        Update::Shutdown => Some(grace.min(SHUTDOWN_GRACE)),
    }
}

/// Sleeps `d` unless the pod is stopped first; the grace period when it was.
async fn sleep_or_stop(
    rx: &mut watch::Receiver<Update>,
    d: Duration,
    grace: Duration,
) -> Option<Duration> {
    let deadline = tokio::time::Instant::now() + d;
    loop {
        if let Some(g) = stopping(rx, grace) {
            return Some(g);
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => return None,
            r = rx.changed() => if r.is_err() { return Some(grace.min(SHUTDOWN_GRACE)) },
        }
    }
}

/// Runs the pod until it is deleted or the agent stops.
pub(crate) async fn run(ctx: Arc<Ctx>, pod: Arc<Pod>, ip: String, mut rx: watch::Receiver<Update>) {
    let spec = pod.spec.clone().unwrap_or_default();
    let grace = Duration::from_secs(
        u64::try_from(spec.termination_grace_period_seconds.unwrap_or(30).max(0)).unwrap_or(30),
    );
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    if matches!(phase, Some("Succeeded" | "Failed")) {
        // Finished before: nothing to run again.
        while stopping(&rx, grace).is_none() && rx.changed().await.is_ok() {}
        return;
    }
    let shared = Arc::new(Shared::default());
    let old = pod.status.as_ref();
    let status_of = |c: &Container, list: Option<&Vec<ContainerStatus>>, reason: &str| {
        let prev = list.and_then(|l| l.iter().find(|s| s.name == c.name));
        ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            image_id: String::new(),
            restart_count: prev.map_or(0, |p| p.restart_count),
            state: Some(waiting(reason, None)),
            ..Default::default()
        }
    };
    let has_init = spec.init_containers.as_ref().is_some_and(|v| !v.is_empty());
    {
        let mut s = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.init = spec
            .init_containers
            .iter()
            .flatten()
            .map(|c| {
                status_of(
                    c,
                    old.and_then(|o| o.init_container_statuses.as_ref()),
                    "PodInitializing",
                )
            })
            .collect();
        let reason = if has_init {
            "PodInitializing"
        } else {
            "ContainerCreating"
        };
        s.containers = spec
            .containers
            .iter()
            .map(|c| status_of(c, old.and_then(|o| o.container_statuses.as_ref()), reason))
            .collect();
        s.initialized = !has_init;
    }
    let rx_end = rx.clone();
    let writer = tokio::spawn(write_statuses(
        ctx.clone(),
        pod.clone(),
        ip.clone(),
        shared.clone(),
    ));
    let dir = ctx.pods_dir.join(&uid);
    let result = start(&ctx, &pod, &ip, &dir, &shared, &mut rx, grace).await;
    if let Some((env, images)) = result {
        supervise(&ctx, &pod, &ip, &dir, &shared, rx, grace, &env, &images).await;
    }
    // Let the last status go out (unless the pod is gone), then stop writing.
    tokio::time::sleep(Duration::from_millis(100)).await;
    writer.abort();
    let _ = std::fs::remove_dir_all(&dir);
    if matches!(&*rx_end.borrow(), Update::Deleted) {
        // kubelet removes a deleted pod's logs; nothing can ask for them any more.
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let _ = std::fs::remove_dir_all(ctx.logs_dir.join(format!("{ns}_{name}_{uid}")));
    }
}

type Envs = BTreeMap<String, BTreeMap<String, String>>;

/// Resolves images and configuration, retrying with back-off; `None` when stopped first.
async fn start(
    ctx: &Ctx,
    pod: &Pod,
    ip: &str,
    dir: &std::path::Path,
    shared: &Shared,
    rx: &mut watch::Receiver<Update>,
    grace: Duration,
) -> Option<(Envs, BTreeMap<String, Image>)> {
    let spec = pod.spec.clone().unwrap_or_default();
    let mut backoff = BACKOFF;
    let mut pulled_once = false;
    loop {
        let mut images = BTreeMap::new();
        let mut failure = None;
        for c in spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
        {
            let image = c.image.clone().unwrap_or_default();
            let policy = pull_policy(c);
            match ctx.runtime.image(&ctx.registry, &image, policy).await {
                Ok(i) => {
                    images.insert(c.name.clone(), i);
                }
                Err(e) => {
                    failure = Some((image, e));
                    break;
                }
            }
        }
        if let Some((image, err)) = failure {
            let msg = format!("Failed to pull image \"{image}\": {err}");
            let reason = if pulled_once {
                "ImagePullBackOff"
            } else {
                "ErrImagePull"
            };
            let message = if pulled_once {
                format!("Back-off pulling image \"{image}\": {err}")
            } else {
                msg.clone()
            };
            shared.set_all_waiting(reason, Some(message));
            event(&ctx.client, pod, "Warning", "Failed", &msg, &ctx.node).await;
            if !pulled_once {
                // ErrImagePull shows for a moment, then the back-off.
                pulled_once = true;
                if sleep_or_stop(rx, Duration::from_secs(1), grace)
                    .await
                    .is_some()
                {
                    return None;
                }
                continue;
            }
            if sleep_or_stop(rx, backoff, grace).await.is_some() {
                return None;
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            continue;
        }
        let resolver = Resolver {
            client: &ctx.client,
            pod,
            pod_ip: ip,
            host_ip: &ctx.host_ip,
            node: &ctx.node,
            dir,
            access: &ctx.access,
        };
        let resolved = match resolver.resolve().await {
            Ok(r) => non_root(pod, &images).map(|()| r),
            Err(e) => Err(e),
        };
        match resolved {
            Ok(r) => return Some((r.env, images)),
            Err(e) => {
                let missing = matches!(
                    e,
                    config::Error::MissingSecret(_)
                        | config::Error::MissingConfigMap(_)
                        | config::Error::MissingKey { .. }
                        | config::Error::MissingServiceAccount(_)
                        | config::Error::RunsAsRoot(_)
                );
                if missing {
                    shared.set_all_waiting("CreateContainerConfigError", Some(e.to_string()));
                    event(
                        &ctx.client,
                        pod,
                        "Warning",
                        "Failed",
                        &format!("Error: {e}"),
                        &ctx.node,
                    )
                    .await;
                } else {
                    tracing::warn!(error = %e, "preparing a pod; will retry");
                }
                if sleep_or_stop(rx, Duration::from_secs(5), grace)
                    .await
                    .is_some()
                {
                    return None;
                }
            }
        }
    }
}

/// The container's `imagePullPolicy`, defaulted as the API server defaults it: `Always` for
/// an image tagged `latest` or not at all, `IfNotPresent` otherwise.
fn pull_policy(c: &Container) -> &'static str {
    match c.image_pull_policy.as_deref() {
        Some("Always") => "Always",
        Some("Never") => "Never",
        Some("IfNotPresent") => "IfNotPresent",
        _ => {
            let image = c.image.as_deref().unwrap_or_default();
            let name = image.rsplit('/').next().unwrap_or(image);
            if image.contains('@') {
                "IfNotPresent"
            } else {
                match name.rsplit_once(':') {
                    Some((_, "latest")) | None => "Always",
                    Some(_) => "IfNotPresent",
                }
            }
        }
    }
}

/// The container's `securityContext` merged with the pod's (the container's fields win).
fn security(pod: &Pod, c: &Container) -> crate::runtime::Security {
    let p = pod.spec.as_ref().and_then(|s| s.security_context.as_ref());
    let sc = c.security_context.as_ref();
    let caps = sc.and_then(|s| s.capabilities.as_ref());
    crate::runtime::Security {
        run_as_user: sc
            .and_then(|s| s.run_as_user)
            .or_else(|| p.and_then(|p| p.run_as_user)),
        run_as_group: sc
            .and_then(|s| s.run_as_group)
            .or_else(|| p.and_then(|p| p.run_as_group)),
        read_only_root: sc.and_then(|s| s.read_only_root_filesystem) == Some(true),
        drop: caps.and_then(|c| c.drop.clone()).unwrap_or_default(),
        add: caps.and_then(|c| c.add.clone()).unwrap_or_default(),
        no_new_privileges: sc.and_then(|s| s.allow_privilege_escalation) == Some(false),
        privileged: sc.and_then(|s| s.privileged) == Some(true),
    }
}

/// kubelet's `runAsNonRoot` check: a container that must not run as root, and would (no
/// `runAsUser` and an image whose user is root, or a name that cannot be verified), is not
/// started (`CreateContainerConfigError`).
fn non_root(pod: &Pod, images: &BTreeMap<String, Image>) -> Result<(), config::Error> {
    let spec = pod.spec.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    for c in spec
        .init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
    {
        let wanted = c
            .security_context
            .as_ref()
            .and_then(|s| s.run_as_non_root)
            .or_else(|| {
                spec.security_context
                    .as_ref()
                    .and_then(|s| s.run_as_non_root)
            });
        if wanted != Some(true) {
            continue;
        }
        let sec = security(pod, c);
        let user = match sec.run_as_user {
            Some(uid) => Some(uid.to_string()),
            None => images.get(&c.name).and_then(|i| i.user.clone()),
        };
        let uid = user
            .as_deref()
            .map(|u| u.split(':').next().unwrap_or(u).to_string());
        let message = match uid.as_deref() {
            None | Some("" | "0" | "root") => Some(format!(
                "container has runAsNonRoot and image will run as root (pod: \"{pod_name}\", container: {})",
                c.name
            )),
            Some(u) if u.parse::<i64>().is_err() => Some(format!(
                "container has runAsNonRoot and image has non-numeric user ({u}), cannot verify user is non-root (pod: \"{pod_name}\", container: {})",
                c.name
            )),
            Some(_) => None,
        };
        if let Some(m) = message {
            return Err(config::Error::RunsAsRoot(m));
        }
    }
    Ok(())
}

/// A memory quantity (`64Mi`, `1G`) in bytes, rounded up as kubelet rounds it.
fn bytes(q: &str) -> Option<i64> {
    let q: mni_formats::quantity::Quantity = q.trim().parse().ok()?;
    let nanos = q.nanos();
    i64::try_from(
        nanos.div_euclid(1_000_000_000) + i128::from(nanos.rem_euclid(1_000_000_000) != 0),
    )
    .ok()
}

/// A CPU quantity (`500m`, `2`) in cores.
fn cores(q: &str) -> Option<f64> {
    let q: mni_formats::quantity::Quantity = q.trim().parse().ok()?;
    #[allow(
        clippy::cast_precision_loss,
        reason = "CPU limits are small numbers of millicores"
    )]
    Some(q.millis() as f64 / 1000.0)
}

/// Runs the init containers in order, then the containers, until they end or the pod stops.
#[allow(
    clippy::too_many_arguments,
    reason = "the pod's resolved parts, passed once"
)]
async fn supervise(
    ctx: &Ctx,
    pod: &Pod,
    ip: &str,
    dir: &std::path::Path,
    shared: &Arc<Shared>,
    rx: watch::Receiver<Update>,
    grace: Duration,
    env: &Envs,
    images: &BTreeMap<String, Image>,
) {
    let spec = pod.spec.clone().unwrap_or_default();
    let policy = spec
        .restart_policy
        .clone()
        .unwrap_or_else(|| "Always".into());
    let sup = |c: &Container, init: bool| Supervisor {
        ctx,
        pod,
        ip,
        shared: shared.clone(),
        container: c.clone(),
        image: images.get(&c.name).cloned().unwrap_or_default(),
        env: env.get(&c.name).cloned().unwrap_or_default(),
        init,
        // Init containers are retried on failure unless the pod never restarts.
        policy: if init && policy == "Always" {
            "OnFailure".into()
        } else {
            policy.clone()
        },
        grace,
    };
    for c in spec.init_containers.iter().flatten() {
        let code = sup(c, true).run(rx.clone()).await;
        if code != Some(0) {
            return;
        }
    }
    {
        shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .initialized = true;
        shared.set_containers_creating();
    }
    let all: Vec<_> = spec
        .containers
        .iter()
        .map(|c| sup(c, false).run(rx.clone()))
        .collect();
    // ConfigMap and Secret volumes follow their objects, as kubelet's periodic sync does;
    // the token is renewed well before it expires.
    let refresh = async {
        let resolver = Resolver {
            client: &ctx.client,
            pod,
            pod_ip: ip,
            host_ip: &ctx.host_ip,
            node: &ctx.node,
            dir,
            access: &ctx.access,
        };
        let mut ticks = 0u32;
        loop {
            tokio::time::sleep(VOLUME_SYNC).await;
            ticks += 1;
            if let Err(e) = resolver.volumes().await {
                tracing::debug!(error = %e, "refreshing volumes");
            }
            if ticks.is_multiple_of(180)
                && let Err(e) = resolver.credentials().await
            {
                tracing::warn!(error = %e, "renewing the pod's token");
            }
        }
    };
    tokio::select! {
        _ = futures::future::join_all(all) => {}
        () = refresh => {}
    }
}

impl Shared {
    fn set_containers_creating(&self) {
        {
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            for c in &mut s.containers {
                c.state = Some(waiting("ContainerCreating", None));
            }
        }
        self.changed.notify_one();
    }
}

/// One container's supervisor.
struct Supervisor<'a> {
    ctx: &'a Ctx,
    pod: &'a Pod,
    ip: &'a str,
    shared: Arc<Shared>,
    container: Container,
    image: Image,
    env: BTreeMap<String, String>,
    init: bool,
    policy: String,
    grace: Duration,
}

/// Why an instance ended.
enum End {
    Exited(i32),
    Unhealthy(i32),
    Stopped(i32),
}

impl Supervisor<'_> {
    fn update(&self, f: impl FnOnce(&mut ContainerStatus)) {
        self.shared.update(self.init, &self.container.name, f);
    }

    /// The container's volume mounts, as host paths under the pod directory's `root/` (where
    /// `config` writes them) mounted at their paths. ConfigMap, Secret, downward API and
    /// projected volumes are read-only, as kubelet mounts them.
    fn mounts(&self) -> Vec<crate::runtime::Mount> {
        let uid = self.pod.metadata.uid.clone().unwrap_or_default();
        let root = self.ctx.pods_dir.join(uid).join("root");
        let volumes = self
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.volumes.clone())
            .unwrap_or_default();
        self.container
            .volume_mounts
            .iter()
            .flatten()
            .map(|m| {
                let v = volumes.iter().find(|v| v.name == m.name);
                let api_data = v.is_some_and(|v| {
                    v.secret.is_some()
                        || v.config_map.is_some()
                        || v.projected.is_some()
                        || v.downward_api.is_some()
                });
                crate::runtime::Mount {
                    host: root.join(m.mount_path.trim_start_matches('/')),
                    container: m.mount_path.clone(),
                    read_only: api_data || m.read_only == Some(true),
                }
            })
            .collect()
    }

    /// Runs the container until it ends for good (its last exit code) or the pod stops
    /// (`None`).
    async fn run(self, mut rx: watch::Receiver<Update>) -> Option<i32> {
        let c = &self.container;
        let pod_name = self.pod.metadata.name.clone().unwrap_or_default();
        let ns = self.pod.metadata.namespace.clone().unwrap_or_default();
        let uid = self.pod.metadata.uid.clone().unwrap_or_default();
        let log_dir = crate::logs::container_dir(&self.ctx.logs_dir, &ns, &pod_name, &uid, &c.name);
        let mut backoff = Duration::ZERO;
        let mut restart = self
            .shared
            .snapshot()
            .containers
            .iter()
            .chain(self.shared.snapshot().init.iter())
            .find(|s| s.name == c.name)
            .map_or(0, |s| s.restart_count);
        loop {
            let argv: Vec<String> = self
                .image
                .argv(c.command.as_deref(), c.args.as_deref())
                .iter()
                .map(|a| config::expand(a, &self.env))
                .collect();
            let isolated = self.ctx.runtime.isolated();
            let working_dir = if isolated {
                // The runtime applies the image's own.
                c.working_dir.clone().map(Into::into)
            } else {
                c.working_dir
                    .clone()
                    .or_else(|| self.image.working_dir.clone())
                    // A container starts in its image's `/`: here, the pod's root directory.
                    .or_else(|| self.env.get("MNI_ROOT").cloned())
                    .map(Into::into)
            };
            let limits = c.resources.as_ref().and_then(|r| r.limits.as_ref());
            let launch = Launch {
                key: format!("{uid}_{}", c.name),
                argv,
                env: self.env.clone(),
                working_dir,
                log_dir: log_dir.clone(),
                restart,
                log_max: self.ctx.log_max,
                image: c.image.clone().unwrap_or_default(),
                mounts: if isolated { self.mounts() } else { Vec::new() },
                security: security(self.pod, c),
                memory_limit: limits
                    .and_then(|l| l.get("memory"))
                    .and_then(|q| bytes(&q.0)),
                cpu_limit: limits.and_then(|l| l.get("cpu")).and_then(|q| cores(&q.0)),
            };
            let started_at = now();
            let (end, oom) = match self.ctx.runtime.start(launch).await {
                Err(e) => {
                    let msg = e.to_string();
                    event(
                        &self.ctx.client,
                        self.pod,
                        "Warning",
                        "Failed",
                        &format!("Error: {msg}"),
                        &self.ctx.node,
                    )
                    .await;
                    self.update(|s| {
                        s.last_state = Some(ContainerState {
                            terminated: Some(ContainerStateTerminated {
                                exit_code: 128,
                                reason: Some("StartError".into()),
                                message: Some(msg.clone()),
                                started_at: Some(started_at.clone()),
                                finished_at: Some(now()),
                                ..Default::default()
                            }),
                            ..Default::default()
                        });
                    });
                    (End::Exited(128), false)
                }
                Ok(mut instance) => {
                    let id = instance.id();
                    let has_startup = c.startup_probe.is_some();
                    self.update(|s| {
                        s.container_id = Some(id.clone());
                        s.image_id = self.image.id.clone().unwrap_or_else(|| {
                            format!(
                                "mni-process://{}",
                                self.image.entrypoint.first().cloned().unwrap_or_default()
                            )
                        });
                        s.state = Some(ContainerState {
                            running: Some(ContainerStateRunning {
                                started_at: Some(started_at.clone()),
                            }),
                            ..Default::default()
                        });
                        s.started = Some(!has_startup);
                        s.ready = !has_startup && c.readiness_probe.is_none() && !self.init;
                    });
                    event(
                        &self.ctx.client,
                        self.pod,
                        "Normal",
                        "Started",
                        &format!("Started container {}", c.name),
                        &self.ctx.node,
                    )
                    .await;
                    let end = tokio::select! {
                        code = instance.wait() => End::Exited(code),
                        () = self.probes() => {
                            let code = instance.stop(self.grace).await;
                            End::Unhealthy(code)
                        }
                        grace = wait_stop(&mut rx, self.grace) => {
                            let started = tokio::time::Instant::now();
                            self.pre_stop(grace).await;
                            let left = grace.saturating_sub(started.elapsed());
                            let code = instance.stop(left).await;
                            End::Stopped(code)
                        }
                    };
                    (end, instance.oom_killed())
                }
            };
            let code = match end {
                End::Exited(c) | End::Unhealthy(c) | End::Stopped(c) => c,
            };
            let reason = if oom {
                "OOMKilled"
            } else if code == 0 {
                "Completed"
            } else {
                "Error"
            };
            let terminated = ContainerStateTerminated {
                exit_code: code,
                reason: Some(reason.into()),
                started_at: Some(started_at),
                finished_at: Some(now()),
                container_id: None,
                ..Default::default()
            };
            let stopped = matches!(end, End::Stopped(_));
            // A container killed for failing liveness restarts per the policy too (its exit
            // code is SIGTERM's or SIGKILL's, so `OnFailure` restarts it).
            let again =
                !stopped && (self.policy == "Always" || (self.policy == "OnFailure" && code != 0));
            if matches!(end, End::Unhealthy(_)) {
                tracing::debug!(container = %c.name, code, "killed for failing liveness");
            }
            if !again {
                self.update(|s| {
                    s.ready = false;
                    s.started = Some(false);
                    s.state = Some(ContainerState {
                        terminated: Some(ContainerStateTerminated {
                            container_id: s.container_id.clone(),
                            ..terminated
                        }),
                        ..Default::default()
                    });
                });
                return (!stopped).then_some(code);
            }
            // Restarted: at once the first time, then after the back-off.
            self.update(|s| {
                s.ready = false;
                s.started = Some(false);
                s.last_state = Some(ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        container_id: s.container_id.clone(),
                        ..terminated
                    }),
                    ..Default::default()
                });
                if !backoff.is_zero() {
                    s.state = Some(waiting(
                        "CrashLoopBackOff",
                        Some(format!(
                            "back-off {}s restarting failed container={} pod={pod_name}_{ns}({uid})",
                            backoff.as_secs(),
                            c.name
                        )),
                    ));
                }
            });
            if !backoff.is_zero() {
                event(
                    &self.ctx.client,
                    self.pod,
                    "Warning",
                    "BackOff",
                    "Back-off restarting failed container",
                    &self.ctx.node,
                )
                .await;
            }
            if sleep_or_stop(&mut rx, backoff, self.grace).await.is_some() {
                return None;
            }
            backoff = if backoff.is_zero() {
                BACKOFF
            } else {
                (backoff * 2).min(MAX_BACKOFF)
            };
            restart += 1;
            self.update(|s| s.restart_count = restart);
        }
    }

    /// Runs the `preStop` hook (`exec` or `httpGet`), within the grace period, as kubelet
    /// does before it sends SIGTERM.
    async fn pre_stop(&self, grace: Duration) {
        let Some(hook) = self
            .container
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_stop.as_ref())
        else {
            return;
        };
        let probe = Probe {
            exec: hook.exec.clone(),
            http_get: hook.http_get.clone(),
            tcp_socket: hook.tcp_socket.clone(),
            timeout_seconds: Some(i32::try_from(grace.as_secs()).unwrap_or(i32::MAX).max(1)),
            ..Probe::default()
        };
        if let Some(sleep) = &hook.sleep {
            let secs = u64::try_from(sleep.seconds.max(0)).unwrap_or(0);
            tokio::time::sleep(Duration::from_secs(secs).min(grace)).await;
        } else if !probe::run(&probe, &self.container, self.ip, &self.env).await {
            let msg = format!("PreStopHook failed for container {}", self.container.name);
            event(
                &self.ctx.client,
                self.pod,
                "Warning",
                "FailedPreStopHook",
                &msg,
                &self.ctx.node,
            )
            .await;
        }
    }

    /// Runs the container's probes; returns only when liveness (or startup) fails.
    async fn probes(&self) {
        let c = &self.container;
        if let Some(p) = &c.startup_probe {
            if !self.until(p, true).await {
                self.unhealthy("Startup").await;
                return;
            }
            self.update(|s| {
                s.started = Some(true);
                s.ready = c.readiness_probe.is_none();
            });
        }
        let readiness = async {
            let Some(p) = &c.readiness_probe else {
                return std::future::pending::<()>().await;
            };
            let t = Timing::of(p);
            tokio::time::sleep(t.initial_delay).await;
            let (mut ok, mut bad) = (0, 0);
            loop {
                if probe::run(p, c, self.ip, &self.env).await {
                    ok += 1;
                    bad = 0;
                    if ok >= t.success_threshold {
                        self.update(|s| s.ready = true);
                    }
                } else {
                    bad += 1;
                    ok = 0;
                    if bad >= t.failure_threshold {
                        self.update(|s| s.ready = false);
                    }
                    event(
                        &self.ctx.client,
                        self.pod,
                        "Warning",
                        "Unhealthy",
                        "Readiness probe failed",
                        &self.ctx.node,
                    )
                    .await;
                }
                tokio::time::sleep(t.period).await;
            }
        };
        let liveness = async {
            let Some(p) = &c.liveness_probe else {
                return std::future::pending::<()>().await;
            };
            if !self.until(p, false).await {
                self.unhealthy("Liveness").await;
            }
        };
        tokio::select! {
            () = readiness => {}
            () = liveness => {}
        }
    }

    async fn unhealthy(&self, kind: &str) {
        let msg = format!("{kind} probe failed");
        event(
            &self.ctx.client,
            self.pod,
            "Warning",
            "Unhealthy",
            &msg,
            &self.ctx.node,
        )
        .await;
        let msg = format!(
            "Container {} failed {} probe, will be restarted",
            self.container.name,
            kind.to_lowercase()
        );
        event(
            &self.ctx.client,
            self.pod,
            "Normal",
            "Killing",
            &msg,
            &self.ctx.node,
        )
        .await;
    }

    /// Probes every period: with `until_success`, until the probe succeeds (true) or fails
    /// `failureThreshold` times (false); otherwise until it fails that often (false).
    async fn until(&self, p: &Probe, until_success: bool) -> bool {
        let t = Timing::of(p);
        tokio::time::sleep(t.initial_delay).await;
        let mut bad = 0;
        loop {
            if probe::run(p, &self.container, self.ip, &self.env).await {
                bad = 0;
                if until_success {
                    return true;
                }
            } else {
                bad += 1;
                if bad >= t.failure_threshold {
                    return false;
                }
            }
            tokio::time::sleep(t.period).await;
        }
    }
}

/// Waits until the pod is deleted or the agent stops; the grace period to give.
async fn wait_stop(rx: &mut watch::Receiver<Update>, grace: Duration) -> Duration {
    loop {
        if let Some(g) = stopping(rx, grace) {
            return g;
        }
        if rx.changed().await.is_err() {
            return grace.min(SHUTDOWN_GRACE);
        }
    }
}

/// The status keys the agent owns.
const MANAGED: &[&str] = &[
    "phase",
    "conditions",
    "hostIP",
    "hostIPs",
    "podIP",
    "podIPs",
    "startTime",
    "containerStatuses",
    "initContainerStatuses",
];

/// Writes the pod's status each time a container's changes.
async fn write_statuses(ctx: Arc<Ctx>, pod: Arc<Pod>, ip: String, shared: Arc<Shared>) {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &ns);
    let mut last: Option<PodStatus> = pod.status.clone();
    let start = pod
        .status
        .as_ref()
        .and_then(|s| s.start_time.clone())
        .unwrap_or_else(now);
    loop {
        let state = shared.snapshot();
        let status = status(&pod, &state, &ctx.host_ip, &ip, &start, last.as_ref());
        if last.as_ref() != Some(&status) {
            let mut body = serde_json::to_value(&status).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut body {
                m.retain(|k, _| MANAGED.contains(&k.as_str()));
            }
            match api
                .patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": body})),
                )
                .await
            {
                Ok(_) => last = Some(status),
                Err(kube::Error::Api(s)) if s.code == 404 => return,
                Err(e) => {
                    tracing::warn!(pod = %name, error = %e, "writing the pod status; will retry");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            }
        }
        shared.changed.notified().await;
        // Gather what changes together into one write.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn condition(
    old: Option<&PodStatus>,
    type_: &str,
    ok: bool,
    reason: Option<&str>,
    message: Option<String>,
) -> PodCondition {
    let status = if ok { "True" } else { "False" };
    let since = old
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(now);
    PodCondition {
        type_: type_.into(),
        status: status.into(),
        last_transition_time: Some(since),
        reason: if ok { None } else { reason.map(Into::into) },
        message: if ok { None } else { message },
        ..Default::default()
    }
}

/// kubelet's phase for these container states.
fn phase(pod: &Pod, state: &State) -> &'static str {
    let policy = pod
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("Always");
    let init_failed = state.init.iter().any(|c| {
        c.state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .is_some_and(|t| t.exit_code != 0)
    });
    if init_failed && policy == "Never" {
        return "Failed";
    }
    if !state.initialized {
        return "Pending";
    }
    let term = |c: &ContainerStatus| c.state.as_ref().and_then(|s| s.terminated.clone());
    let started = |c: &ContainerStatus| {
        c.state.as_ref().is_some_and(|s| s.running.is_some()) || c.last_state.is_some()
    };
    if state.containers.iter().all(|c| term(c).is_some()) {
        return if state
            .containers
            .iter()
            .all(|c| term(c).is_some_and(|t| t.exit_code == 0))
        {
            "Succeeded"
        } else {
            "Failed"
        };
    }
    if state
        .containers
        .iter()
        .any(|c| started(c) || term(c).is_some())
    {
        "Running"
    } else {
        "Pending"
    }
}

fn status(
    pod: &Pod,
    state: &State,
    host_ip: &str,
    ip: &str,
    start: &Time,
    old: Option<&PodStatus>,
) -> PodStatus {
    let phase = phase(pod, state);
    let unready: Vec<&str> = state
        .containers
        .iter()
        .filter(|c| !c.ready)
        .map(|c| c.name.as_str())
        .collect();
    let ready = unready.is_empty() && phase == "Running";
    let reason = if phase == "Succeeded" {
        "PodCompleted"
    } else {
        "ContainersNotReady"
    };
    let msg = (phase != "Succeeded")
        .then(|| format!("containers with unready status: [{}]", unready.join(" ")));
    let init_pending: Vec<&str> = state
        .init
        .iter()
        .filter(|c| {
            c.state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .is_none_or(|t| t.exit_code != 0)
        })
        .map(|c| c.name.as_str())
        .collect();
    let conditions = vec![
        condition(old, "PodReadyToStartContainers", true, None, None),
        condition(
            old,
            "Initialized",
            state.initialized,
            Some("ContainersNotInitialized"),
            Some(format!(
                "containers with incomplete status: [{}]",
                init_pending.join(" ")
            )),
        ),
        condition(old, "Ready", ready, Some(reason), msg.clone()),
        condition(old, "ContainersReady", ready, Some(reason), msg),
        condition(old, "PodScheduled", true, None, None),
    ];
    PodStatus {
        phase: Some(phase.into()),
        conditions: Some(conditions),
        host_ip: Some(host_ip.into()),
        host_ips: Some(vec![HostIP { ip: host_ip.into() }]),
        pod_ip: Some(ip.into()),
        pod_ips: Some(vec![PodIP { ip: ip.into() }]),
        start_time: Some(start.clone()),
        container_statuses: Some(state.containers.clone()),
        init_container_statuses: (!state.init.is_empty()).then(|| state.init.clone()),
        ..old.cloned().unwrap_or_default()
    }
}
