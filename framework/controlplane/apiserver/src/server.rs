//! The server: its builder, HTTP routing and the background loops it starts.
//!
//! Start here. [`Server::builder`] configures the listen address and the store (a directory
//! for durable SQLite, or memory); [`ServerBuilder::start`] opens the [`State`], loads CRDs,
//! starts the compactor and the built-in controllers, and returns a running [`Server`] with its
//! address. Every request goes through [`dispatch`], which authenticates, authorizes and routes
//! by path and verb to a handler (see `handlers`). This module sits on top of every other
//! layer and only composes them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{self, Request};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, header};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::error::{ApiError, ApiResult};
use crate::handlers::{self, Reply};
use crate::request::{self, MAX_BODY, Query, Route};
use crate::state::State;

/// Errors starting or running the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store could not be opened.
    #[error("opening the store: {0}")]
    Store(#[from] mni_store::Error),
    /// The listen address could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Setting up TLS failed.
    #[error("TLS: {0}")]
    Tls(crate::tls::TlsError),
    /// Reading or writing the server's secrets failed.
    #[error("secrets in {path}: {source}")]
    Secrets {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Loading stored CRDs failed.
    #[error("loading CustomResourceDefinitions: {0}")]
    Load(ApiError),
}

/// Configures and starts a [`Server`].
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    listen: SocketAddr,
    data_dir: Option<PathBuf>,
    compaction_interval: Duration,
    compaction_retain: i64,
    bookmark_interval: Duration,
    admin_token: Option<String>,
    secrets_dir: Option<PathBuf>,
    tls: Option<crate::tls::TlsIdentity>,
    unauthenticated_admin: bool,
    pod_logs_dir: Option<PathBuf>,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir: None,
            compaction_interval: Duration::from_secs(300),
            compaction_retain: 10_000,
            bookmark_interval: Duration::from_secs(30),
            admin_token: None,
            secrets_dir: None,
            tls: None,
            unauthenticated_admin: false,
            pod_logs_dir: None,
        }
    }
}

impl ServerBuilder {
    /// The address to listen on (default `127.0.0.1:0`, an ephemeral loopback port).
    #[must_use]
    pub fn with_listen(mut self, addr: SocketAddr) -> Self {
        self.listen = addr;
        self
    }

    /// Persist to SQLite under this directory (default: in memory).
    #[must_use]
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// How often old revisions are compacted, and how many recent revisions are kept.
    #[must_use]
    pub fn with_compaction(mut self, interval: Duration, retain: i64) -> Self {
        self.compaction_interval = interval;
        self.compaction_retain = retain;
        self
    }

    /// How often watches that allow bookmarks receive one (default 30 s).
    #[must_use]
    pub fn with_bookmark_interval(mut self, interval: Duration) -> Self {
        self.bookmark_interval = interval;
        self
    }

    /// The bearer token of the admin identity (`system:masters`); default: a random one,
    /// kept in the data directory when there is one.
    #[must_use]
    pub fn with_admin_token(mut self, token: impl Into<String>) -> Self {
        self.admin_token = Some(token.into());
        self
    }

    /// Keep the admin token and the token-signing secret in this directory even when the
    /// store is in memory (the data directory is used otherwise).
    #[must_use]
    pub fn with_secrets_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.secrets_dir = Some(dir.into());
        self
    }

    /// Let requests without credentials act as the admin, as kube-apiserver's old insecure port
    /// did. Only for plain HTTP on loopback (`mni-dev up --insecure-http`): client-go sends
    /// bearer tokens only over TLS. Refused at start for other addresses.
    #[must_use]
    pub fn with_unauthenticated_admin(mut self, enabled: bool) -> Self {
        self.unauthenticated_admin = enabled;
        self
    }

    /// Serve `pods/log` from the container logs a node agent writes in this directory, in
    /// kubelet's layout (`<ns>_<pod>_<uid>/<container>/<restart>.log`); without it, log
    /// requests are refused (no container runs).
    #[must_use]
    pub fn with_pod_logs_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.pod_logs_dir = Some(dir.into());
        self
    }

    /// Serve HTTPS with this identity (default: plain HTTP, for in-process tests).
    #[must_use]
    pub fn with_tls(mut self, identity: crate::tls::TlsIdentity) -> Self {
        self.tls = Some(identity);
        self
    }

    /// Opens the store, binds the address and starts serving.
    ///
    /// The store indexes objects by their labels, so equality-selected lists read only
    /// the matching objects.
    pub async fn start(self) -> Result<Server, Error> {
        let store = match &self.data_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(mni_store::Error::from)?;
                mni_store::Store::open(&dir.join("state.db"), store_options())?
            }
            None => mni_store::Store::open_in_memory(store_options())?,
        };
        let listener = TcpListener::bind(self.listen)
            .await
            .map_err(|source| Error::Bind {
                addr: self.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: self.listen,
            source,
        })?;
        let (stop_tx, stop_rx) = watch::channel(false);
        if self.unauthenticated_admin && (self.tls.is_some() || !addr.ip().is_loopback()) {
            return Err(Error::Bind {
                addr,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "unauthenticated admin access is only for plain HTTP on loopback",
                ),
            });
        }
        let (admin_token, signing_secret) = secrets(
            self.secrets_dir.as_deref().or(self.data_dir.as_deref()),
            self.admin_token.clone(),
        )?;
        let state = Arc::new(State::new(
            store,
            crate::auth::Authn::new(admin_token, &signing_secret)
                .with_unauthenticated_admin(self.unauthenticated_admin),
            self.bookmark_interval,
            addr.to_string(),
            stop_rx.clone(),
        ));
        if let Some(tls) = &self.tls {
            state.set_root_ca(&tls.ca_pem);
        }
        if let Some(dir) = &self.pod_logs_dir {
            state.set_pod_logs_dir(dir.clone());
        }
        state.load_crds().map_err(Error::Load)?;
        crate::controllers::bootstrap(&state)
            .await
            .map_err(Error::Load)?;
        let compactor = state.spawn_compactor(self.compaction_interval, self.compaction_retain);
        let controllers = tokio::spawn(crate::controllers::run(state.clone()));
        let app = router(state.clone());
        let mut stop = stop_rx;
        let tls = self
            .tls
            .as_ref()
            .map(crate::tls::TlsIdentity::server_config)
            .transpose()
            .map_err(Error::Tls)?;
        let serve = match tls {
            None => tokio::spawn(async move {
                // Watch events are small writes: do not let Nagle hold them back.
                let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop.wait_for(|s| *s).await;
                    })
                    .await;
            }),
            Some(config) => tokio::spawn(crate::https::serve(listener, config, app, stop)),
        };
        Ok(Server {
            ca_pem: self.tls.map(|t| t.ca_pem),
            addr,
            state,
            stop: stop_tx,
            tasks: vec![serve, controllers, compactor],
        })
    }
}

/// A running API server.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    ca_pem: Option<String>,
    state: Arc<State>,
    stop: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Server {
    /// A builder with loopback, ephemeral-port, in-memory defaults.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` or `https://ADDR`, the base URL for clients.
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The admin bearer token (user `mni:admin` in `system:masters`).
    pub fn admin_token(&self) -> &str {
        self.state.authn().admin_token()
    }

    /// The CA certificate clients should trust, when serving HTTPS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// A kube-rs client for the admin identity that reaches this server in process, as
    /// kube-apiserver's loopback client does: each request goes straight to the server's
    /// request handling (authentication, authorization, admission and all), without a socket,
    /// TLS or HTTP/1 encoding. `mni-dev`'s workload simulator uses it; it is not a way in from
    /// outside the process.
    pub fn loopback_client(&self) -> kube::Client {
        use tower::ServiceExt as _;
        let bearer =
            HeaderValue::from_str(&format!("Bearer {}", self.admin_token())).map(|mut v| {
                v.set_sensitive(true);
                v
            });
        let service =
            router(self.state.clone()).map_request(move |req: Request<kube::client::Body>| {
                let (mut parts, body) = req.into_parts();
                if let Ok(bearer) = &bearer {
                    parts.headers.insert(header::AUTHORIZATION, bearer.clone());
                }
                Request::from_parts(parts, Body::new(body))
            });
        kube::Client::new(service, "default")
    }

    /// A kubeconfig for the admin identity, as kubectl and kube-rs read it.
    pub fn kubeconfig(&self) -> String {
        crate::kubeconfig::render(&self.url(), self.admin_token(), "default", self.ca_pem())
    }

    /// The store's current revision (the newest resourceVersion).
    pub fn revision(&self) -> i64 {
        self.state.revision()
    }

    /// Compacts the store's history up to `revision`, as the scheduled compactor does: reads
    /// and watches from older revisions then fail with 410 Gone.
    pub async fn compact(&self, revision: i64) -> Result<u64, Error> {
        Ok(self.state.compact(revision).await?)
    }

    /// Stops accepting requests, ends watches, waits for in-flight requests, and closes the
    /// store so every acknowledged write is on disk.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let mut tasks = self.tasks.into_iter();
        if let Some(serve) = tasks.next() {
            let _ = tokio::time::timeout(Duration::from_secs(10), serve).await;
        }
        for t in tasks {
            t.abort();
        }
        self.state.close().await;
    }
}

/// The admin token and the ServiceAccount-token signing secret: given, read from the data
/// directory, or made (and kept there, owner-only, when there is a data directory).
fn secrets(
    data_dir: Option<&std::path::Path>,
    admin: Option<String>,
) -> Result<(String, Vec<u8>), Error> {
    let random = || -> String {
        let a = uuid::Uuid::new_v4().simple().to_string();
        let b = uuid::Uuid::new_v4().simple().to_string();
        format!("{a}{b}")
    };
    let Some(dir) = data_dir else {
        return Ok((admin.unwrap_or_else(random), random().into_bytes()));
    };
    let load = |name: &str, make: &dyn Fn() -> String| -> Result<String, Error> {
        let path = dir.join("pki").join(name);
        let err = |source| Error::Secrets {
            path: path.display().to_string(),
            source,
        };
        match std::fs::read_to_string(&path) {
            Ok(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Ok(_) | Err(_) => {
                let value = make();
                crate::tls::write_private(&path, value.as_bytes(), 0o600).map_err(err)?;
                Ok(value)
            }
        }
    };
    let admin = match admin {
        Some(t) => t,
        None => load("admin.token", &random)?,
    };
    let signing = load("sa-signing.key", &random)?;
    Ok((admin, signing.into_bytes()))
}

/// Every request goes to [`dispatch`], over the network or through the loopback client.
fn router(state: Arc<State>) -> axum::Router {
    axum::Router::new().fallback(dispatch).with_state(state)
}

/// Routes one request.
///
/// Like kube-apiserver's httplog, every request is logged at `debug` level under the target
/// `mni_apiserver::http` (method, path, query, status, latency, user agent), e.g.
/// `RUST_LOG=info,mni_apiserver::http=debug`; the query may name objects, never secrets.
async fn dispatch(extract::State(state): extract::State<Arc<State>>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let http_log =
        tracing::enabled!(target: "mni_apiserver::http", tracing::Level::DEBUG).then(|| {
            let query = req.uri().query().unwrap_or_default().to_string();
            let agent = req
                .headers()
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            (std::time::Instant::now(), query, agent)
        });
    let mut labels = crate::metrics::RequestLabels::other(&method);
    let result = handle(state.clone(), req, &mut labels).await;
    let resp = match result {
        Ok(resp) => resp,
        Err(e) => {
            if e.code >= 500 {
                tracing::error!(%method, %path, error = %e, "request failed");
            } else {
                tracing::debug!(%method, %path, error = %e, "request rejected");
            }
            e.into_response()
        }
    };
    state.metrics().count(labels, resp.status().as_u16());
    if let Some((start, query, agent)) = http_log {
        tracing::debug!(
            target: "mni_apiserver::http",
            %method,
            %path,
            %query,
            status = resp.status().as_u16(),
            latency_us = start.elapsed().as_micros() as u64,
            %agent,
            "request"
        );
    }
    resp
}

async fn handle(
    state: Arc<State>,
    req: Request,
    labels: &mut crate::metrics::RequestLabels,
) -> ApiResult<Response> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = Query::parse(parts.uri.query());
    let headers = parts.headers;
    let method = parts.method;
    let body = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| ApiError::too_large(MAX_BODY))?;
    let user = state.authenticate(&headers, &path)?;
    match path.as_str() {
        "/version" | "/version/" => return Ok(handlers::discovery::version()),
        "/healthz" | "/readyz" | "/livez" => {
            return Ok((http::StatusCode::OK, "ok").into_response());
        }
        _ => {}
    }
    let route = request::route(&state.registry(), &path);
    let target = match &route {
        Ok(Route::Resource(t)) => Some(t.clone()),
        _ => None,
    };
    if let Some(t) = &target {
        *labels = crate::metrics::RequestLabels::resource(&method, t, &query);
    }
    let attrs = match &target {
        Some(t) => {
            let by_name = query
                .get("fieldSelector")
                .and_then(|f| f.strip_prefix("metadata.name="));
            crate::auth::resource_attributes(&user, &method, t, query.flag("watch"), by_name)
        }
        None => mni_rbac::Attributes::non_resource(
            user.clone(),
            method.as_str().to_ascii_lowercase(),
            path.clone(),
        ),
    };
    state.authorize(&attrs)?;
    if path == "/metrics" {
        return Ok((
            http::StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            state.metrics().encode(),
        )
            .into_response());
    }
    if path == "/openapi/v2" || path.starts_with("/openapi/v3") {
        return handlers::discovery::openapi(&state, &path, &headers);
    }
    let target = match route? {
        Route::Resource(target) => target,
        discovery => return handlers::discovery::serve(&state, &discovery, &headers),
    };
    if target.subresource.as_deref() == Some("log") {
        if method != Method::GET {
            return Err(handlers::subresources::refuse(&method, &target));
        }
        return handlers::logs::get(&state, &target, &query);
    }
    if let Some(resp) = handlers::components::handle(&state, &target, &method, &query, &headers)? {
        return Ok(resp);
    }
    if let Some(reply) =
        handlers::reviews::handle(&state, &target, &method, &user, &headers, &body).await?
    {
        return Ok(handlers::json_response(reply.code, &reply.body, &[]));
    }
    let output = request::output(&headers);
    let is_item = target.name.is_some();
    let reply: Reply = match (method.clone(), is_item) {
        (Method::GET, false) if query.flag("watch") => {
            return handlers::watch::watch(state, target, query, output).await;
        }
        (Method::GET, false) => return handlers::list::list(&state, &target, &query, output).await,
        (Method::GET, true) => return handlers::read::get(&state, &target, &query, output),
        (Method::POST, false) => {
            handlers::create::create(&state, &target, &query, &user, &headers, &body).await?
        }
        (Method::PUT, true) => {
            handlers::update::put(&state, &target, &query, &user, &headers, &body).await?
        }
        (Method::PATCH, true) => {
            handlers::update::patch(&state, &target, &query, &user, &headers, &body).await?
        }
        (Method::DELETE | Method::POST, true) if target.subresource.is_some() => {
            return Err(handlers::subresources::refuse(&method, &target));
        }
        (Method::DELETE, true) => {
            handlers::delete::delete(&state, &target, &query, &user, &headers, &body).await?
        }
        (Method::DELETE, false) => {
            handlers::delete::delete_collection(&state, &target, &query, &user, &headers, &body)
                .await?
        }
        (m, _) => {
            return Err(ApiError::method_not_allowed(
                m.as_str(),
                &target.info.plural,
            ));
        }
    };
    Ok(reply.into_response(output))
}

/// How the API server opens its store: label pairs as index terms.
fn store_options() -> mni_store::StoreOptions {
    mni_store::StoreOptions::default().with_indexer(crate::state::label_indexer())
}
