//! The [`WebhookServer`]: HTTPS on `:9443` with the certificate of a cert-manager directory,
//! routing each path to its typed webhook, `/convert` to the registered conversions, counting
//! every request in controller-runtime's metrics.
//!
//! Build one with [`WebhookServer::builder`], register validators, defaulters and conversions,
//! then [`add_to`](WebhookServerBuilder::add_to) a manager, which starts and stops it with its
//! controllers and serves its metrics and readiness. Without a manager, hand its
//! [`started_checker`](WebhookServerBuilder::started_checker) to whatever reports readiness and
//! [`start`](WebhookServerBuilder::start) it. [`RunningWebhookServer::shutdown`]
//! stops accepting and lets open requests finish.

use std::{
    collections::BTreeMap,
    marker::PhantomData,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{StatusCode, Uri, header},
    response::{IntoResponse, Response},
    routing::post,
};
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

use crate::{
    admission::{
        Defaulter, Defaulting, Handler, Kind, Validating, Validator, mutate_path, validate_path,
    },
    certs::{CertError, CertWatcher},
    conversion::{Conversion, Hub, KindConversion, convert_review},
    metrics::WebhookMetrics,
    review::decode_review,
};

/// controller-runtime's default certificate directory.
pub const DEFAULT_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
/// controller-runtime's default webhook port.
pub const DEFAULT_PORT: u16 = 9443;
/// The path of the conversion webhook (Kubebuilder's).
pub const CONVERT_PATH: &str = "/convert";
/// How often the certificate files are checked for changes unless
/// [`WebhookServerBuilder::with_cert_poll_interval`] says otherwise.
pub const DEFAULT_CERT_POLL_INTERVAL: Duration = Duration::from_secs(10);

/// Errors of starting and running a [`WebhookServer`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The serving certificate could not be loaded.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// The address could not be bound.
    #[error("bind the webhook server to {address}: {source} (pass another port)")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
    /// The server's task panicked or was aborted.
    #[error("webhook server task ended abnormally: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// Namespace of the builder; see the [module docs](self).
#[derive(Debug)]
pub struct WebhookServer;

impl WebhookServer {
    /// A builder with controller-runtime's defaults: certificates from
    /// [`DEFAULT_CERT_DIR`], listening on `0.0.0.0:9443`.
    pub fn builder() -> WebhookServerBuilder {
        WebhookServerBuilder {
            cert_dir: PathBuf::from(DEFAULT_CERT_DIR),
            address: SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
            poll_interval: DEFAULT_CERT_POLL_INTERVAL,
            handlers: BTreeMap::new(),
            conversions: Vec::new(),
            metrics: WebhookMetrics::new(),
            started: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// Configures a webhook server; start with [`WebhookServer::builder`].
#[must_use = "a builder does nothing until .start() is awaited"]
pub struct WebhookServerBuilder {
    cert_dir: PathBuf,
    address: SocketAddr,
    poll_interval: Duration,
    handlers: BTreeMap<String, Arc<dyn Handler>>,
    conversions: Vec<Box<dyn KindConversion>>,
    metrics: WebhookMetrics,
    started: Arc<AtomicBool>,
}

impl WebhookServerBuilder {
    /// The directory holding `tls.crt` and `tls.key` (cert-manager's Secret layout).
    pub fn with_cert_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cert_dir = dir.as_ref().to_path_buf();
        self
    }

    /// Where to listen (default `0.0.0.0:9443`; port 0 picks a free one).
    pub fn with_bind_address(mut self, address: SocketAddr) -> Self {
        self.address = address;
        self
    }

    /// The port to listen on, on the configured address.
    pub fn with_port(mut self, port: u16) -> Self {
        self.address.set_port(port);
        self
    }

    /// How often the certificate files are checked for changes (default 10 s).
    pub fn with_cert_poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Serves `validator` for kind `K` at [`validate_path::<K>()`](validate_path).
    pub fn with_validator<K: Kind, V: Validator<K>>(mut self, validator: V) -> Self {
        let handler = Validating {
            validator,
            kind: PhantomData::<fn() -> K>,
        };
        self.handlers
            .insert(validate_path::<K>(), Arc::new(handler));
        self
    }

    /// Serves `defaulter` for kind `K` at [`mutate_path::<K>()`](mutate_path).
    pub fn with_defaulter<K: Kind, D: Defaulter<K>>(mut self, defaulter: D) -> Self {
        let handler = Defaulting {
            defaulter,
            kind: PhantomData::<fn() -> K>,
        };
        self.handlers.insert(mutate_path::<K>(), Arc::new(handler));
        self
    }

    /// Converts between the versions of `conversion`'s kind at [`CONVERT_PATH`].
    pub fn with_conversion<H: Hub>(mut self, conversion: Conversion<H>) -> Self {
        self.conversions.push(Box::new(conversion));
        self
    }

    /// Registers the server's metrics in the manager's registry, so its `/metrics` serves
    /// them (pass the same registry to `ManagerBuilder::with_metrics`).
    pub fn with_metrics(self, registry: &mni_operator::Metrics) -> Self {
        self.metrics.register(registry);
        self
    }

    /// Adds the server to `manager`, as controller-runtime's manager runs its webhook server:
    /// requests are counted in the manager's registry (so set that first, if at all, with
    /// `ManagerBuilder::with_metrics`), `/readyz` fails until the server listens, and the
    /// server is a runnable of the manager — started before the controllers, on every replica,
    /// stopped gracefully with them. A server that cannot start (no certificate, port taken)
    /// stops the manager with [`ServerError`] as `mni_operator::Error::Runnable`.
    pub fn add_to(self, manager: mni_operator::ManagerBuilder) -> mni_operator::ManagerBuilder {
        let server = self.with_metrics(&manager.metrics());
        let manager = manager.with_readyz_check("webhook", server.started_checker());
        manager.with_runnable("webhook server", move |shutdown| async move {
            let running = server.start().await?;
            shutdown.wait().await;
            running.shutdown().await
        })
    }

    /// controller-runtime's `StartedChecker`: `Ok` once the server listens with a loaded
    /// certificate. Pass it to `ManagerBuilder::with_readyz_check`.
    pub fn started_checker(&self) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
        let started = self.started.clone();
        move || {
            if started.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("webhook server has not started".into())
            }
        }
    }

    /// The paths served, sorted (`/convert` last when there are conversions).
    pub fn paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.handlers.keys().cloned().collect();
        if !self.conversions.is_empty() {
            paths.push(CONVERT_PATH.into());
        }
        paths
    }

    /// Loads the certificate, binds the address and serves in the background.
    pub async fn start(self) -> Result<RunningWebhookServer, ServerError> {
        let certs = Arc::new(CertWatcher::load(&self.cert_dir)?);
        let bind = |source| ServerError::Bind {
            address: self.address,
            source,
        };
        let listener = TcpListener::bind(self.address).await.map_err(bind)?;
        let address = listener.local_addr().map_err(bind)?;
        let paths = self.paths();
        for path in &paths {
            self.metrics.webhook_added(path);
        }
        tracing::info!(%address, cert_dir = %self.cert_dir.display(), ?paths, "serving webhooks");
        let inner = Arc::new(Inner {
            handlers: self.handlers,
            conversions: self.conversions,
            metrics: self.metrics,
        });
        let router = Router::new().fallback(post(serve)).with_state(inner);
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(certs.server_config()));
        let (stop_tx, stop_rx) = watch::channel(false);
        let poller = tokio::spawn(poll_certificate(certs.clone(), self.poll_interval));
        let started = self.started.clone();
        started.store(true, Ordering::SeqCst);
        let task = tokio::spawn(async move {
            accept_loop(listener, acceptor, router, stop_rx).await;
            started.store(false, Ordering::SeqCst);
            poller.abort();
        });
        Ok(RunningWebhookServer {
            address,
            certs,
            stop: stop_tx,
            task,
        })
    }
}

/// A started webhook server.
#[derive(Debug)]
pub struct RunningWebhookServer {
    address: SocketAddr,
    certs: Arc<CertWatcher>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl RunningWebhookServer {
    /// The bound address (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The certificate being served and its reloading.
    pub fn certificates(&self) -> &CertWatcher {
        &self.certs
    }

    /// Stops accepting connections, lets the open ones finish their requests and waits.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        self.stop.send_replace(true);
        self.task.await.map_err(ServerError::Task)
    }
}

struct Inner {
    handlers: BTreeMap<String, Arc<dyn Handler>>,
    conversions: Vec<Box<dyn KindConversion>>,
    metrics: WebhookMetrics,
}

async fn poll_certificate(certs: Arc<CertWatcher>, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match certs.reload() {
            Ok(true) => tracing::info!("reloaded the webhook serving certificate"),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, "keeping the previous webhook serving certificate");
            }
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    router: Router,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting a webhook connection failed");
                    continue;
                }
            },
            _ = stop.wait_for(|s| *s) => break,
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(router.clone());
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(error) => {
                    tracing::debug!(%error, %peer, "webhook TLS handshake failed");
                    return;
                }
            };
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .serve_connection(TokioIo::new(tls), service);
            if let Err(error) = watcher.watch(connection).await {
                tracing::debug!(%error, %peer, "webhook connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

async fn serve(State(inner): State<Arc<Inner>>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path();
    let handler = inner.handlers.get(path);
    if handler.is_none() && (path != CONVERT_PATH || inner.conversions.is_empty()) {
        return (
            StatusCode::NOT_FOUND,
            format!("no webhook is served at {path}\n"),
        )
            .into_response();
    }
    let begun = Instant::now();
    inner.metrics.started(path);
    let response = match handler {
        Some(handler) => match decode_review(&body) {
            Ok(request) => {
                let uid = request.uid.clone();
                let verdict = handler.handle(Arc::new(request)).await;
                json(verdict.into_review(&uid))
            }
            Err(e) => bad_request(path, &e),
        },
        None => match convert_review(&inner.conversions, &body) {
            Ok(review) => json(review),
            Err(e) => bad_request(path, &e),
        },
    };
    inner.metrics.finished(
        path,
        response.status().as_u16(),
        begun.elapsed().as_secs_f64(),
    );
    response
}

fn json(value: serde_json::Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn bad_request(path: &str, e: &dyn std::error::Error) -> Response {
    tracing::warn!(path, error = %e, "malformed webhook request");
    (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response()
}
