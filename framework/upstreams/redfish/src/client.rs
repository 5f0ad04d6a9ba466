//! The connection to one Redfish service: building it ([`ClientBuilder`]), authenticating
//! (a session with `X-Auth-Token`, or HTTP basic auth), the JSON requests every other module
//! goes through, and the one [`Error`] enum of the client.
//!
//! Resource-level operations live beside this module, as further `impl Client` blocks:
//! `system` (systems, power, boot override), `inventory` and `media` (virtual media).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;

use crate::address::{AddressError, BmcAddress};
use crate::model::{ErrorBody, ServiceRoot};
use crate::tls::{TlsConfigError, TlsVerification, client_config};

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// Everything that can go wrong talking to a BMC. Each variant says what failed and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The BMC address is not a usable Redfish address.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// The base URL given to the builder is not a URL.
    #[error("invalid Redfish base URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The TLS configuration could not be built (e.g. a CA bundle without certificates).
    #[error(transparent)]
    TlsConfig(#[from] TlsConfigError),
    /// Nothing answered at the address (connection refused, no route, name not resolved).
    #[error("BMC at {address} is unreachable: {reason}")]
    Unreachable {
        /// `scheme://host:port` that was tried.
        address: String,
        /// What the network said.
        reason: String,
    },
    /// The TLS handshake failed, typically because the certificate is not trusted.
    #[error(
        "TLS handshake with BMC at {address} failed: {reason} (give the BMC's CA, or disable \
         certificate verification if the BMC has a self-signed certificate)"
    )]
    Tls {
        /// `scheme://host:port` that was tried.
        address: String,
        /// What rustls said.
        reason: String,
    },
    /// The BMC did not answer in time.
    #[error("{method} {url} timed out after {timeout:?}")]
    Timeout {
        /// The request method.
        method: Method,
        /// The request URL.
        url: String,
        /// The timeout.
        timeout: Duration,
    },
    /// 401: the credentials were refused (or none were given).
    #[error("BMC refused the credentials{user} for {method} {url} (401 Unauthorized)", user = username.as_deref().map(|u| format!(" of user {u:?}")).unwrap_or_default())]
    Unauthorized {
        /// The user name tried, if any.
        username: Option<String>,
        /// The request method.
        method: Method,
        /// The request URL.
        url: String,
    },
    /// 403: authenticated but not allowed.
    #[error("{method} {url} is forbidden for this user (403): {message}")]
    Forbidden {
        /// The request method.
        method: Method,
        /// The request URL.
        url: String,
        /// The BMC's message.
        message: String,
    },
    /// No system with this id or path.
    #[error("the BMC has no system {id:?}{known}", known = if known.is_empty() { String::new() } else { format!(" (it has: {})", known.join(", ")) })]
    UnknownSystem {
        /// The id or path asked for.
        id: String,
        /// The ids the BMC has, when known.
        known: Vec<String>,
    },
    /// The BMC offers no system and none was named.
    #[error("no system named and the BMC has {count} systems; name one in the address path")]
    AmbiguousSystem {
        /// How many systems the BMC lists.
        count: usize,
    },
    /// A value the BMC does not allow for an action or property.
    #[error("{action} does not allow {value:?}; allowed: {}", allowed.join(", "))]
    ActionNotAllowed {
        /// The action or property, e.g. `ComputerSystem.Reset`.
        action: String,
        /// The value asked for.
        value: String,
        /// The values the BMC allows.
        allowed: Vec<String>,
    },
    /// The resource does not offer this feature (no reset action, no virtual media, …).
    #[error("{resource} does not support {feature}")]
    NotSupported {
        /// The resource path.
        resource: String,
        /// What is missing.
        feature: String,
    },
    /// Any other non-success status.
    #[error("{method} {url} failed with {status}: {message}")]
    UnexpectedResponse {
        /// The request method.
        method: Method,
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: StatusCode,
        /// The Redfish message (`@Message.ExtendedInfo`, else `error.message`, else the body).
        message: String,
    },
    /// A body that is not the JSON expected.
    #[error("{url} returned a body that is not a valid {what}: {source}")]
    InvalidBody {
        /// The request URL.
        url: String,
        /// The expected resource type.
        what: &'static str,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// Creating a session did not give a token.
    #[error("session login at {url} returned no X-Auth-Token")]
    NoSessionToken {
        /// The sessions collection URL.
        url: String,
    },
    /// The system did not reach a power state in time.
    #[error(
        "system {system} did not reach power state {wanted} within {timeout:?} (last seen: {last})"
    )]
    PowerTimeout {
        /// The system path.
        system: String,
        /// The wanted state.
        wanted: String,
        /// The last state read.
        last: String,
        /// How long it waited.
        timeout: Duration,
    },
}

/// How to authenticate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthMethod {
    /// A session when the service root links a sessions collection, else basic auth.
    #[default]
    Auto,
    /// Always a session (`POST …/Sessions`, then `X-Auth-Token`); the session is deleted on
    /// [`Client::logout`] or when the last clone of the client is dropped.
    Session,
    /// HTTP basic auth on every request.
    Basic,
}

/// Builds a [`Client`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ClientBuilder {
    base_url: String,
    system_path: Option<String>,
    credentials: Option<(String, String)>,
    auth: AuthMethod,
    tls: TlsVerification,
    timeout: Duration,
}

impl ClientBuilder {
    /// Sets the user name and password.
    pub fn credentials(mut self, username: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials = Some((username.into(), password.into()));
        self
    }

    /// Chooses the authentication method (default [`AuthMethod::Auto`]).
    pub fn auth_method(mut self, auth: AuthMethod) -> Self {
        self.auth = auth;
        self
    }

    /// Chooses how the certificate is verified (default: the system's trust store).
    pub fn tls(mut self, tls: TlsVerification) -> Self {
        self.tls = tls;
        self
    }

    /// Verifies the certificate against these PEM CA certificates only.
    pub fn ca_pem(self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls(TlsVerification::CustomCa(pem.into()))
    }

    /// Turns certificate verification on or off (Metal3's `disableCertificateVerification`).
    pub fn verify_certificates(self, verify: bool) -> Self {
        if verify {
            self.tls(TlsVerification::SystemRoots)
        } else {
            self.tls(TlsVerification::Disabled)
        }
    }

    /// The timeout of each request (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The system [`Client::default_system`] returns (default: the address's path, else the
    /// only system).
    pub fn system_path(mut self, path: impl Into<String>) -> Self {
        self.system_path = Some(path.into());
        self
    }

    /// Reads the service root and logs in. Fails with [`Error::Unreachable`], [`Error::Tls`] or
    /// [`Error::Unauthorized`] when the BMC cannot be used.
    pub async fn connect(self) -> Result<Client, Error> {
        let base = url::Url::parse(&self.base_url).map_err(|e| Error::InvalidUrl {
            url: self.base_url.clone(),
            reason: e.to_string(),
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.host().is_none() {
            return Err(Error::InvalidUrl {
                url: self.base_url.clone(),
                reason: "expected http(s)://HOST[:PORT]".into(),
            });
        }
        let address = base.origin().ascii_serialization();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(client_config(&self.tls)?)
            .https_or_http()
            .enable_http1()
            .build();
        let http = HyperClient::builder(TokioExecutor::new()).build(connector);
        let basic = self.credentials.as_ref().map(|(u, p)| {
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
            HeaderValue::from_str(&format!("Basic {token}")).expect("base64 is a valid header")
        });
        let inner = Arc::new(Inner {
            http,
            address,
            username: self.credentials.as_ref().map(|(u, _)| u.clone()),
            credentials: self.credentials,
            basic,
            use_basic: Mutex::new(false),
            session: Mutex::new(None),
            timeout: self.timeout,
        });
        let client = Client {
            inner,
            root: Arc::new(ServiceRoot::default()),
            system_path: self.system_path,
        };
        // The service root needs no authentication (DSP0266).
        let root: ServiceRoot = client.get("/redfish/v1/").await?;
        let client = Client {
            root: Arc::new(root),
            ..client
        };
        let sessions = client.root.links.sessions.clone();
        match (self.auth, sessions, client.inner.credentials.is_some()) {
            (_, _, false) => {}
            (AuthMethod::Basic, _, true) | (AuthMethod::Auto, None, true) => {
                *client.inner.use_basic.lock().expect("lock") = true;
            }
            (AuthMethod::Session | AuthMethod::Auto, Some(link), true) => {
                client.login(&link.odata_id).await?;
            }
            (AuthMethod::Session, None, true) => {
                return Err(Error::NotSupported {
                    resource: format!("{}/redfish/v1/", client.inner.address),
                    feature: "sessions (the service root links no SessionService sessions; \
                              use basic auth)"
                        .into(),
                });
            }
        }
        // Check the credentials now rather than on the first real request.
        if client.inner.credentials.is_some() {
            let systems = client.systems_path();
            client.get::<serde_json::Value>(&systems).await?;
        }
        Ok(client)
    }
}

#[derive(Debug, Clone)]
struct Session {
    token: HeaderValue,
    location: Option<String>,
}

struct Inner {
    http: HyperClient<Connector, Full<Bytes>>,
    /// `scheme://host:port`.
    address: String,
    username: Option<String>,
    credentials: Option<(String, String)>,
    basic: Option<HeaderValue>,
    use_basic: Mutex<bool>,
    session: Mutex<Option<Session>>,
    timeout: Duration,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("address", &self.address)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let Some(session) = self.session.get_mut().ok().and_then(Option::take) else {
            return;
        };
        let Some(location) = session.location else {
            return;
        };
        // Deleting the session needs the runtime; without one the BMC expires it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let http = self.http.clone();
        let url = absolute(&self.address, &location);
        runtime.spawn(async move {
            let Ok(request) = Request::builder()
                .method(Method::DELETE)
                .uri(&url)
                .header("X-Auth-Token", session.token)
                .body(Full::new(Bytes::new()))
            else {
                return;
            };
            if let Err(e) = http.request(request).await {
                tracing::debug!(%url, error = %e, "could not delete Redfish session");
            }
        });
    }
}

/// A connected, authenticated Redfish client. Cheap to clone; clones share the session.
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
    root: Arc<ServiceRoot>,
    system_path: Option<String>,
}

/// A response body and the headers the client looks at.
pub(crate) struct Response {
    pub(crate) status: StatusCode,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
}

fn absolute(address: &str, path: &str) -> String {
    if path.starts_with("http://") || path.starts_with("https://") {
        path.to_owned()
    } else if path.starts_with('/') {
        format!("{address}{path}")
    } else {
        format!("{address}/{path}")
    }
}

impl Client {
    /// Starts building a client for a base URL such as `https://10.0.0.5:8000`.
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base_url: base_url.into(),
            system_path: None,
            credentials: None,
            auth: AuthMethod::default(),
            tls: TlsVerification::default(),
            timeout: Duration::from_secs(30),
        }
    }

    /// Starts building a client for a Metal3 BMC address; the address's path, if any, becomes
    /// the default system.
    pub fn for_address(address: &BmcAddress) -> ClientBuilder {
        let builder = Self::builder(address.base_url());
        match address.system_path() {
            Some(path) => builder.system_path(path),
            None => builder,
        }
    }

    /// The service root read when connecting.
    pub fn service_root(&self) -> &ServiceRoot {
        &self.root
    }

    /// `scheme://host:port` of the BMC.
    pub fn address(&self) -> &str {
        &self.inner.address
    }

    /// Whether the client holds a session (rather than sending basic auth).
    pub fn has_session(&self) -> bool {
        self.inner.session.lock().expect("lock").is_some()
    }

    pub(crate) fn configured_system_path(&self) -> Option<&str> {
        self.system_path.as_deref()
    }

    pub(crate) fn systems_path(&self) -> String {
        self.root
            .systems
            .as_ref()
            .map_or_else(|| "/redfish/v1/Systems".to_owned(), |l| l.odata_id.clone())
    }

    /// Deletes the session, if there is one. Later requests fail with 401 unless basic auth is
    /// used.
    pub async fn logout(&self) -> Result<(), Error> {
        let session = self.inner.session.lock().expect("lock").take();
        let Some(Session {
            token,
            location: Some(location),
        }) = session
        else {
            return Ok(());
        };
        let response = self
            .send_raw(Method::DELETE, &location, None, Some(token))
            .await?;
        match response.status {
            s if s.is_success() || s == StatusCode::NOT_FOUND => Ok(()),
            _ => Err(self.status_error(Method::DELETE, &location, response)),
        }
    }

    async fn login(&self, sessions_path: &str) -> Result<(), Error> {
        let (username, password) = self.inner.credentials.clone().unwrap_or_default();
        let body = serde_json::json!({"UserName": username, "Password": password});
        let response = self
            .send_raw(Method::POST, sessions_path, Some(body), None)
            .await?;
        if !response.status.is_success() {
            return Err(self.status_error(Method::POST, sessions_path, response));
        }
        let token = response
            .headers
            .get("X-Auth-Token")
            .cloned()
            .ok_or_else(|| Error::NoSessionToken {
                url: absolute(&self.inner.address, sessions_path),
            })?;
        let location = response
            .headers
            .get(header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_owned)
            .or_else(|| {
                serde_json::from_slice::<serde_json::Value>(&response.body)
                    .ok()
                    .and_then(|v| v["@odata.id"].as_str().map(str::to_owned))
            });
        *self.inner.session.lock().expect("lock") = Some(Session { token, location });
        Ok(())
    }

    /// Sends one request with the client's authentication and returns the raw response.
    async fn send_raw(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
        token: Option<HeaderValue>,
    ) -> Result<Response, Error> {
        let url = absolute(&self.inner.address, path);
        let mut request = Request::builder()
            .method(method.clone())
            .uri(&url)
            .header(header::ACCEPT, "application/json")
            .header("OData-Version", "4.0");
        let token = token.or_else(|| {
            self.inner
                .session
                .lock()
                .expect("lock")
                .as_ref()
                .map(|s| s.token.clone())
        });
        if let Some(token) = token {
            request = request.header("X-Auth-Token", token);
        } else if *self.inner.use_basic.lock().expect("lock")
            && let Some(basic) = &self.inner.basic
        {
            request = request.header(header::AUTHORIZATION, basic.clone());
        }
        let bytes = match &body {
            Some(json) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(json).expect("JSON values serialise"))
            }
            None => Bytes::new(),
        };
        let request = request
            .body(Full::new(bytes))
            .map_err(|e| Error::InvalidUrl {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        let timeout = self.inner.timeout;
        let exchange = async {
            let response = self.inner.http.request(request).await?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await?.to_bytes();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((parts, body))
        };
        let (parts, body) = match tokio::time::timeout(timeout, exchange).await {
            Err(_) => {
                return Err(Error::Timeout {
                    method,
                    url,
                    timeout,
                });
            }
            Ok(Err(e)) => return Err(self.transport_error(e.as_ref())),
            Ok(Ok(done)) => done,
        };
        tracing::trace!(%method, %url, status = %parts.status, "redfish");
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    fn transport_error(&self, error: &(dyn std::error::Error + 'static)) -> Error {
        let address = self.inner.address.clone();
        let mut reasons = Vec::new();
        let mut tls = false;
        let mut current = Some(error);
        while let Some(e) = current {
            if e.downcast_ref::<rustls::Error>().is_some() {
                tls = true;
            }
            let text = e.to_string();
            if !text.is_empty() && !reasons.contains(&text) {
                reasons.push(text);
            }
            current = e.source();
        }
        let reason = reasons.join(": ");
        if tls || reason.contains("invalid peer certificate") {
            Error::Tls { address, reason }
        } else {
            Error::Unreachable { address, reason }
        }
    }

    /// Turns a non-success response into an error.
    pub(crate) fn status_error(&self, method: Method, path: &str, response: Response) -> Error {
        let url = absolute(&self.inner.address, path);
        let message = serde_json::from_slice::<ErrorBody>(&response.body)
            .ok()
            .and_then(|b| b.summary())
            .unwrap_or_else(|| String::from_utf8_lossy(&response.body).trim().to_owned());
        match response.status {
            StatusCode::UNAUTHORIZED => Error::Unauthorized {
                username: self.inner.username.clone(),
                method,
                url,
            },
            StatusCode::FORBIDDEN => Error::Forbidden {
                method,
                url,
                message,
            },
            status => Error::UnexpectedResponse {
                method,
                url,
                status,
                message,
            },
        }
    }

    /// Sends a request, following redirects and logging in again once if the session expired.
    pub(crate) async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<Response, Error> {
        let mut path = path.to_owned();
        let mut relogged = false;
        for _ in 0..5 {
            let response = self
                .send_raw(method.clone(), &path, body.clone(), None)
                .await?;
            let redirect =
                response.status.is_redirection() && response.headers.contains_key(header::LOCATION);
            if redirect {
                path = response.headers[header::LOCATION]
                    .to_str()
                    .unwrap_or_default()
                    .to_owned();
                continue;
            }
            if response.status == StatusCode::UNAUTHORIZED && !relogged && self.has_session() {
                relogged = true;
                let sessions = self
                    .root
                    .links
                    .sessions
                    .as_ref()
                    .map_or("/redfish/v1/SessionService/Sessions", |l| &l.odata_id)
                    .to_owned();
                self.inner.session.lock().expect("lock").take();
                self.login(&sessions).await?;
                continue;
            }
            if response.status.is_success() {
                return Ok(response);
            }
            return Err(self.status_error(method, &path, response));
        }
        Err(Error::UnexpectedResponse {
            method,
            url: absolute(&self.inner.address, &path),
            status: StatusCode::LOOP_DETECTED,
            message: "too many redirects".into(),
        })
    }

    /// `GET`s a resource and decodes it.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        let response = self.request(Method::GET, path, None).await?;
        serde_json::from_slice(&response.body).map_err(|source| Error::InvalidBody {
            url: absolute(&self.inner.address, path),
            what: std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("resource"),
            source,
        })
    }

    /// `PATCH`es a resource.
    pub async fn patch(&self, path: &str, body: serde_json::Value) -> Result<(), Error> {
        self.request(Method::PATCH, path, Some(body)).await?;
        Ok(())
    }

    /// `POST`s an action (`…/Actions/X.Y`) with its parameters.
    pub async fn post_action(&self, target: &str, body: serde_json::Value) -> Result<(), Error> {
        self.request(Method::POST, target, Some(body)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_absolute() {
        assert_eq!(
            absolute("https://h:1", "/redfish/v1"),
            "https://h:1/redfish/v1"
        );
        assert_eq!(
            absolute("https://h:1", "redfish/v1"),
            "https://h:1/redfish/v1"
        );
        assert_eq!(absolute("https://h:1", "http://o/x"), "http://o/x");
    }

    #[test]
    fn errors_name_what_failed() {
        let err = Error::ActionNotAllowed {
            action: "ComputerSystem.Reset".into(),
            value: "Boom".into(),
            allowed: vec!["On".into(), "ForceOff".into()],
        };
        assert_eq!(
            err.to_string(),
            "ComputerSystem.Reset does not allow \"Boom\"; allowed: On, ForceOff"
        );
        let err = Error::Unauthorized {
            username: Some("admin".into()),
            method: Method::GET,
            url: "https://h/redfish/v1/Systems".into(),
        };
        assert!(err.to_string().contains("user \"admin\""), "{err}");
        let err = Error::UnknownSystem {
            id: "x".into(),
            known: vec!["a".into()],
        };
        assert_eq!(err.to_string(), "the BMC has no system \"x\" (it has: a)");
    }

    #[tokio::test]
    async fn a_builder_with_a_bad_url_fails_before_any_io() {
        let err = Client::builder("ftp://h").connect().await.unwrap_err();
        assert!(matches!(err, Error::InvalidUrl { .. }), "{err}");
    }

    fn _client_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Client>();
    }
}
