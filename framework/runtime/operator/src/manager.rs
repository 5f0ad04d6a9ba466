//! The [`Manager`]: one client, many controllers, probes, metrics, leader election, shutdown.
//!
//! [`Manager::start`] binds the probe and metrics listeners, then (after winning the Lease when
//! leader election is on) starts every controller; [`RunningManager::wait`] returns once a
//! shutdown was asked for (signal or [`ShutdownHandle`]) and every in-flight reconcile has
//! finished, or with an error when leadership is lost. [`Manager::run`] does both.
//!
//! Besides controllers a manager runs *runnables* ([`ManagerBuilder::with_runnable`],
//! controller-runtime's `Runnable`): servers such as the webhook server, started before the
//! controllers on every replica (leader or not), asked to stop with the controllers, and waited
//! for within the same grace. A runnable that fails stops the manager with its error.

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use axum::{Router, extract::State, http::StatusCode, response::IntoResponse, routing::get};
use futures::{FutureExt, future::BoxFuture};
use kube::Client;
use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

use crate::{
    args::OperatorArgs,
    controller::{ControllerOptions, ControllerRun, Registered, StartParams},
    leader::{Elector, LeaderElection, LeaderElectionError},
    metrics::Metrics,
    reconciler::Reconciler,
};

/// Errors of running a [`Manager`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A probe or metrics address could not be bound.
    #[error("bind {what} address {address}: {source} (pass another address, or 0 to disable)")]
    Bind {
        /// `metrics` or `health probe`.
        what: &'static str,
        /// The address.
        address: SocketAddr,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
    /// Leader election failed or leadership was lost.
    #[error(transparent)]
    LeaderElection(#[from] LeaderElectionError),
    /// Reconciles were still running when the graceful-shutdown timeout ran out; they were
    /// dropped.
    #[error(
        "reconciles still running {0:?} after the shutdown was asked for; stopped without them"
    )]
    ShutdownTimeout(Duration),
    /// A runnable added with [`ManagerBuilder::with_runnable`] failed; the manager stopped.
    #[error("{name} failed: {source}")]
    Runnable {
        /// The runnable's name.
        name: String,
        /// What went wrong.
        #[source]
        source: BoxError,
    },
    /// The manager's task panicked or was aborted.
    #[error("manager task ended abnormally: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// The error a runnable returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A runnable: started with the manager's [`ShutdownHandle`], it runs until
/// [`ShutdownHandle::wait`] resolves, then stops and returns.
type Runnable = Box<dyn FnOnce(ShutdownHandle) -> BoxFuture<'static, Result<(), BoxError>> + Send>;

/// controller-runtime's default `GracefulShutdownTimeout`.
const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks a running manager to shut down gracefully; cheap to clone.
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    tx: Arc<watch::Sender<bool>>,
}

impl ShutdownHandle {
    fn new() -> Self {
        Self {
            tx: Arc::new(watch::channel(false).0),
        }
    }

    /// Stops starting reconciles; in-flight ones finish, then the manager returns `Ok(())`.
    pub fn shutdown(&self) {
        self.tx.send_replace(true);
    }

    /// Whether a shutdown was asked for.
    pub fn is_shutting_down(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves once a shutdown was asked for.
    pub fn wait(&self) -> BoxFuture<'static, ()> {
        let mut rx = self.tx.subscribe();
        async move {
            let _ = rx.wait_for(|down| *down).await;
        }
        .boxed()
    }
}

/// A named readiness check `/readyz` runs besides the manager's own (controller-runtime's
/// `AddReadyzCheck`): `Err` carries why it is not ready.
pub type ReadyzCheck = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// What `/readyz` reports.
#[derive(Default)]
struct Readiness {
    /// Not leading (yet): a healthy standby is ready to take over.
    standby: AtomicBool,
    /// Every controller's caches have synced.
    synced: AtomicBool,
    /// The checks added with [`ManagerBuilder::with_readyz_check`], by name.
    checks: Vec<(String, ReadyzCheck)>,
}

/// Builds a [`Manager`]; see [`Manager::builder`].
#[must_use]
pub struct ManagerBuilder {
    client: Client,
    controllers: Vec<Box<dyn ControllerRun>>,
    metrics_address: Option<SocketAddr>,
    health_address: Option<SocketAddr>,
    leader_election: Option<LeaderElection>,
    leader_elect_from_args: Option<Option<String>>,
    namespace: Option<String>,
    handle_signals: bool,
    graceful_shutdown_timeout: Option<Duration>,
    metrics: Arc<Metrics>,
    readyz_checks: Vec<(String, ReadyzCheck)>,
    runnables: Vec<(String, Runnable)>,
}

impl ManagerBuilder {
    /// Applies the command line: addresses, namespace and leader election.
    ///
    /// `--leader-elect` elects on a Lease named after the first controller
    /// (`<name>-leader-election`) in `--leader-election-namespace`, or else the client's
    /// default namespace (the pod's own namespace in a cluster).
    pub fn with_args(mut self, args: &OperatorArgs) -> Self {
        self.metrics_address = args.metrics_bind_address.socket_addr();
        self.health_address = args.health_probe_bind_address.socket_addr();
        self.namespace = args.namespace.clone();
        if args.leader_elect {
            self.leader_elect_from_args = Some(args.leader_election_namespace.clone());
        }
        self
    }

    /// Registers a controller with controller-runtime's default options.
    pub fn with_controller<R: Reconciler>(self, reconciler: R) -> Self {
        self.with_controller_options(reconciler, ControllerOptions::default())
    }

    /// Registers a controller with `options`.
    pub fn with_controller_options<R: Reconciler>(
        mut self,
        reconciler: R,
        options: ControllerOptions,
    ) -> Self {
        self.controllers.push(Box::new(Registered {
            reconciler,
            options,
        }));
        self
    }

    /// Where to serve `/metrics` (`None` disables it; default `0.0.0.0:8080`).
    pub fn with_metrics_address(mut self, address: Option<SocketAddr>) -> Self {
        self.metrics_address = address;
        self
    }

    /// Where to serve `/healthz` and `/readyz` (`None` disables them; default `0.0.0.0:8081`).
    pub fn with_health_probe_address(mut self, address: Option<SocketAddr>) -> Self {
        self.health_address = address;
        self
    }

    /// Reconciles only while holding the Lease `election` describes.
    pub fn with_leader_election(mut self, election: LeaderElection) -> Self {
        self.leader_election = Some(election);
        self
    }

    /// Watches only `namespace` (`None`: all namespaces, the default).
    pub fn with_namespace(mut self, namespace: Option<String>) -> Self {
        self.namespace = namespace;
        self
    }

    /// Whether SIGTERM and SIGINT shut the manager down gracefully (default true); a second
    /// signal exits the process with status 1 at once.
    pub fn with_signal_handling(mut self, handle: bool) -> Self {
        self.handle_signals = handle;
        self
    }

    /// How long in-flight reconciles may take to finish once a shutdown was asked for (default
    /// 30 seconds, controller-runtime's `GracefulShutdownTimeout`, which is also Kubernetes'
    /// default `terminationGracePeriodSeconds`); `None` waits for them however long they take.
    /// When it runs out, the reconciles are dropped and the manager returns
    /// [`Error::ShutdownTimeout`].
    pub fn with_graceful_shutdown_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// For a manager that runs inside a test (or beside other servers in one process): no
    /// signal handling, no `/metrics` and no health-probe listener. The same as
    /// `.with_signal_handling(false).with_metrics_address(None).with_health_probe_address(None)`.
    pub fn for_tests(self) -> Self {
        self.with_signal_handling(false)
            .with_metrics_address(None)
            .with_health_probe_address(None)
    }

    /// Builds the manager [`for_tests`](Self::for_tests) and starts it: what an operator's
    /// integration test runs beside a `mni-testkit` control plane.
    pub async fn start_for_tests(self) -> Result<RunningManager, Error> {
        self.for_tests().build().start().await
    }

    /// Uses `metrics` as the registry (to share it, or to pre-register own metrics). Call it
    /// before adding anything that registers its metrics in [`metrics`](Self::metrics), such as
    /// a webhook server.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// The registry `/metrics` will serve, for components that add their own metrics to it.
    #[must_use]
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Runs `runnable` beside the controllers (controller-runtime's `Manager.Add` of a
    /// `Runnable` that needs no leader election): it is started before the controllers, on every
    /// replica, with the manager's [`ShutdownHandle`]; it should serve until
    /// [`ShutdownHandle::wait`] resolves, then stop and return. The manager waits for it within
    /// the graceful-shutdown timeout. If it returns an error, the manager shuts down and
    /// [`RunningManager::wait`] returns [`Error::Runnable`] naming it.
    pub fn with_runnable<F, Fut, E>(mut self, name: impl Into<String>, runnable: F) -> Self
    where
        F: FnOnce(ShutdownHandle) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let runnable: Runnable =
            Box::new(move |shutdown| runnable(shutdown).map(|r| r.map_err(Into::into)).boxed());
        self.runnables.push((name.into(), runnable));
        self
    }

    /// Adds a check `/readyz` runs (controller-runtime's `AddReadyzCheck`): the probe answers
    /// 503 naming `name` and the check's message while it fails. A webhook server adds its
    /// started check here.
    pub fn with_readyz_check(
        mut self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.readyz_checks.push((name.into(), Arc::new(check)));
        self
    }

    /// The manager.
    pub fn build(self) -> Manager {
        let leader_election = self.leader_election.or_else(|| {
            let namespace = self.leader_elect_from_args?.unwrap_or_else(|| {
                std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                    .map(|ns| ns.trim().to_string())
                    .unwrap_or_else(|_| self.client.default_namespace().to_string())
            });
            let first = self.controllers.first().map_or("operator", |c| c.name());
            Some(LeaderElection::new(
                format!("{first}-leader-election"),
                namespace,
            ))
        });
        Manager {
            client: self.client,
            controllers: self.controllers,
            metrics_address: self.metrics_address,
            health_address: self.health_address,
            leader_election,
            namespace: self.namespace,
            handle_signals: self.handle_signals,
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            metrics: self.metrics,
            readyz_checks: self.readyz_checks,
            runnables: self.runnables,
            shutdown: ShutdownHandle::new(),
        }
    }
}

/// Runs controllers; see the [crate docs](crate) for what it takes care of.
pub struct Manager {
    client: Client,
    controllers: Vec<Box<dyn ControllerRun>>,
    metrics_address: Option<SocketAddr>,
    health_address: Option<SocketAddr>,
    leader_election: Option<LeaderElection>,
    namespace: Option<String>,
    handle_signals: bool,
    graceful_shutdown_timeout: Option<Duration>,
    metrics: Arc<Metrics>,
    readyz_checks: Vec<(String, ReadyzCheck)>,
    runnables: Vec<(String, Runnable)>,
    shutdown: ShutdownHandle,
}

impl Manager {
    /// A builder with kubebuilder's defaults: metrics on `:8080`, probes on `:8081`, all
    /// namespaces, no leader election, graceful shutdown on SIGTERM/SIGINT.
    pub fn builder(client: Client) -> ManagerBuilder {
        ManagerBuilder {
            client,
            controllers: Vec::new(),
            metrics_address: Some(SocketAddr::from(([0, 0, 0, 0], 8080))),
            health_address: Some(SocketAddr::from(([0, 0, 0, 0], 8081))),
            leader_election: None,
            leader_elect_from_args: None,
            namespace: None,
            handle_signals: true,
            graceful_shutdown_timeout: Some(DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT),
            metrics: Arc::new(Metrics::new()),
            readyz_checks: Vec::new(),
            runnables: Vec::new(),
        }
    }

    /// A handle that shuts this manager down gracefully.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    /// The metric registry `/metrics` serves.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Runs until shut down; `Ok(())` after a graceful shutdown.
    pub async fn run(self) -> Result<(), Error> {
        self.start().await?.wait().await
    }

    /// Binds the listeners and starts running in the background.
    pub async fn start(mut self) -> Result<RunningManager, Error> {
        if let Some(election) = &self.leader_election {
            election.validate()?;
        }
        let readiness = Arc::new(Readiness {
            checks: std::mem::take(&mut self.readyz_checks),
            ..Readiness::default()
        });
        readiness
            .standby
            .store(self.leader_election.is_some(), Ordering::SeqCst);
        let (stopped_tx, stopped_rx) = watch::channel(false);
        let mut servers = Vec::new();
        let metrics_address = match self.metrics_address {
            None => None,
            Some(address) => {
                let router = Router::new()
                    .route("/metrics", get(serve_metrics))
                    .with_state(self.metrics.clone());
                let (bound, task) = serve("metrics", address, router, stopped_rx.clone()).await?;
                servers.push(task);
                Some(bound)
            }
        };
        let health_address = match self.health_address {
            None => None,
            Some(address) => {
                let router = Router::new()
                    .route("/healthz", get(|| async { "ok" }))
                    .route("/readyz", get(serve_readyz))
                    .with_state(readiness.clone());
                let (bound, task) = serve("health probe", address, router, stopped_rx).await?;
                servers.push(task);
                Some(bound)
            }
        };
        let shutdown = self.shutdown.clone();
        let signals = self.handle_signals.then(|| {
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                wait_for_signal().await;
                tracing::info!("shutdown signal received; finishing in-flight reconciles");
                shutdown.shutdown();
                // Like controller-runtime: a second signal does not wait for reconciles.
                wait_for_signal().await;
                tracing::warn!("second shutdown signal received; exiting at once");
                std::process::exit(1);
            })
        });
        // Runnables start before the controllers: a webhook server must answer before the
        // controllers write objects it admits or converts.
        let failure: Arc<Mutex<Option<Error>>> = Arc::default();
        for (name, runnable) in std::mem::take(&mut self.runnables) {
            let (shutdown, failure) = (shutdown.clone(), failure.clone());
            servers.push(tokio::spawn(async move {
                if let Err(source) = runnable(shutdown.clone()).await {
                    tracing::error!(runnable = %name, error = %source, "stopping the manager");
                    let mut failure = failure.lock().unwrap_or_else(PoisonError::into_inner);
                    failure.get_or_insert(Error::Runnable { name, source });
                    shutdown.shutdown();
                }
            }));
        }
        let task = tokio::spawn(async move {
            let grace = self.graceful_shutdown_timeout;
            let asked = self.shutdown.clone();
            let stop_runnables = self.shutdown.clone();
            // Runs out `grace` after a shutdown was asked for (never without a timeout).
            let deadline = async move {
                asked.wait().await;
                match grace {
                    Some(grace) => tokio::time::sleep(grace).await,
                    None => futures::future::pending().await,
                }
            };
            tokio::pin!(deadline);
            let result = tokio::select! {
                result = self.run_controllers(readiness) => result,
                () = &mut deadline => {
                    let grace = grace.unwrap_or_default();
                    tracing::error!(?grace, "graceful shutdown timed out; dropping the reconciles still running");
                    Err(Error::ShutdownTimeout(grace))
                }
            };
            stopped_tx.send_replace(true);
            // The controllers may have ended without a shutdown (leadership lost): the
            // runnables are asked to stop too.
            stop_runnables.shutdown();
            // (`deadline` is polled again only while it has not completed.)
            let mut out_of_time = matches!(result, Err(Error::ShutdownTimeout(_)));
            for mut server in servers {
                // The servers finish their open requests, within what is left of the grace.
                if out_of_time {
                    server.abort();
                    continue;
                }
                tokio::select! {
                    _ = &mut server => {}
                    () = &mut deadline => {
                        out_of_time = true;
                        server.abort();
                    }
                }
            }
            if let Some(signals) = signals {
                signals.abort();
            }
            let failed = failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match (result, failed) {
                (Ok(()), Some(failed)) => Err(failed),
                (result, _) => result,
            }
        });
        Ok(RunningManager {
            metrics_address,
            health_address,
            shutdown,
            task,
        })
    }

    async fn run_controllers(self, readiness: Arc<Readiness>) -> Result<(), Error> {
        let mut elector = self
            .leader_election
            .clone()
            .map(|election| Elector::new(self.client.clone(), election));
        if let (Some(elector), Some(election)) = (elector.as_mut(), &self.leader_election) {
            self.metrics.set_leader(election.name(), false);
            tokio::select! {
                () = elector.acquire() => {}
                () = self.shutdown.wait() => return Ok(()),
            }
            self.metrics.set_leader(election.name(), true);
        }
        let instance = self
            .leader_election
            .as_ref()
            .map(|e| e.identity().to_string())
            .or_else(|| std::env::var("HOSTNAME").ok());
        let mut runs = Vec::new();
        let mut synced = Vec::new();
        for controller in self.controllers {
            let (run, ready) = controller.start(StartParams {
                client: self.client.clone(),
                namespace: self.namespace.clone(),
                metrics: self.metrics.clone(),
                instance: instance.clone(),
                shutdown: self.shutdown.clone(),
            });
            runs.push(run);
            synced.push(ready);
        }
        readiness.standby.store(false, Ordering::SeqCst);
        let sync_watch = tokio::spawn({
            let readiness = readiness.clone();
            async move {
                futures::future::join_all(synced).await;
                readiness.synced.store(true, Ordering::SeqCst);
                tracing::info!("caches synced");
            }
        });
        // Without controllers (a webhook-only manager) there is nothing to wait for but the
        // shutdown, as controller-runtime's manager runs until its context ends.
        let idle = runs.is_empty().then(|| self.shutdown.wait());
        let all = async move {
            futures::future::join_all(runs).await;
            if let Some(shutdown) = idle {
                shutdown.await;
            }
        };
        let result = match (elector, &self.leader_election) {
            (Some(mut elector), Some(election)) => {
                let result = tokio::select! {
                    _ = all => Ok(()),
                    // Dropping `all` drops the controllers, aborting in-flight reconciles.
                    lost = elector.hold() => Err(Error::LeaderElection(lost)),
                };
                self.metrics.set_leader(election.name(), false);
                if result.is_ok() {
                    elector.release().await;
                }
                result
            }
            _ => {
                all.await;
                Ok(())
            }
        };
        sync_watch.abort();
        result
    }
}

/// A started [`Manager`].
#[derive(Debug)]
pub struct RunningManager {
    metrics_address: Option<SocketAddr>,
    health_address: Option<SocketAddr>,
    shutdown: ShutdownHandle,
    task: JoinHandle<Result<(), Error>>,
}

impl RunningManager {
    /// The bound `/metrics` address (with the real port when `:0` was asked for).
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics_address
    }

    /// The bound `/healthz` and `/readyz` address.
    pub fn health_probe_address(&self) -> Option<SocketAddr> {
        self.health_address
    }

    /// A handle that shuts the manager down gracefully.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    /// Waits until the manager stops.
    pub async fn wait(self) -> Result<(), Error> {
        self.task.await.map_err(Error::Task)?
    }

    /// Shuts down gracefully and waits for it.
    pub async fn shutdown(self) -> Result<(), Error> {
        self.shutdown.shutdown();
        self.wait().await
    }

    /// Stops at once, like a crashed process: in-flight reconciles are dropped and the Lease is
    /// not released.
    pub fn abort(self) {
        self.task.abort();
    }
}

async fn serve(
    what: &'static str,
    address: SocketAddr,
    router: Router,
    mut stopped: watch::Receiver<bool>,
) -> Result<(SocketAddr, JoinHandle<()>), Error> {
    let bind_err = |source| Error::Bind {
        what,
        address,
        source,
    };
    let listener = TcpListener::bind(address).await.map_err(bind_err)?;
    let bound = listener.local_addr().map_err(bind_err)?;
    tracing::info!(%bound, "serving {what}");
    let task = tokio::spawn(async move {
        let stop = async move {
            let _ = stopped.wait_for(|s| *s).await;
        };
        if let Err(error) = axum::serve(listener, router)
            .with_graceful_shutdown(stop)
            .await
        {
            tracing::warn!(%error, "{what} server failed");
        }
    });
    Ok((bound, task))
}

async fn serve_metrics(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.encode(),
    )
}

async fn serve_readyz(State(readiness): State<Arc<Readiness>>) -> impl IntoResponse {
    readyz(&readiness)
}

fn readyz(readiness: &Readiness) -> (StatusCode, String) {
    if !readiness.standby.load(Ordering::SeqCst) && !readiness.synced.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "caches not synced".into());
    }
    for (name, check) in &readiness.checks {
        if let Err(why) = check() {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("readyz check {name:?} failed: {why}"),
            );
        }
    }
    (StatusCode::OK, "ok".into())
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = ctrl_c.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readyz_runs_the_added_checks_once_the_caches_are_synced() {
        let started = Arc::new(AtomicBool::new(false));
        let flag = started.clone();
        let check: ReadyzCheck = Arc::new(move || {
            if flag.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("not listening yet".into())
            }
        });
        let readiness = Readiness {
            checks: vec![("webhook".into(), check)],
            ..Readiness::default()
        };
        assert_eq!(readyz(&readiness).1, "caches not synced");
        readiness.synced.store(true, Ordering::SeqCst);
        assert_eq!(
            readyz(&readiness),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "readyz check \"webhook\" failed: not listening yet".to_string()
            )
        );
        started.store(true, Ordering::SeqCst);
        assert_eq!(readyz(&readiness), (StatusCode::OK, "ok".to_string()));
    }
}
