//! Posting an AdmissionReview over HTTPS: HTTP/1.1 connections kept open between calls
//! (see [`Pool`]), TLS verified
//! against the webhook's `caBundle` (or the system roots when it has none) for the host of
//! `clientConfig.url`, or `NAME.NAMESPACE.svc` for a `clientConfig.service`, as upstream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Body;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use super::Error;

/// The largest response read from a webhook.
const MAX_RESPONSE: usize = 3 * 1024 * 1024;

/// Where one call goes.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The host to connect to (an address or a DNS name).
    pub host: String,
    /// The TCP port.
    pub port: u16,
    /// The name the certificate must be valid for.
    pub server_name: String,
    /// The path and query of the request, `?timeout=10s` included.
    pub path: String,
}

impl Endpoint {
    /// The endpoint of a `clientConfig.url` (which must be `https`).
    pub(crate) fn from_url(url: &str, timeout: Duration) -> Result<Self, Error> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| Error::Config(format!("clientConfig.url {url:?}: {e}")))?;
        if uri.scheme_str() != Some("https") {
            return Err(Error::Config(format!(
                "clientConfig.url {url:?}: 'https' is the only allowed URL scheme"
            )));
        }
        let host = uri
            .host()
            .ok_or_else(|| Error::Config(format!("clientConfig.url {url:?}: no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Ok(Endpoint {
            server_name: host.clone(),
            host,
            port: uri.port_u16().unwrap_or(443),
            path: with_timeout(uri.path(), uri.query(), timeout),
        })
    }

    /// The URL, for messages.
    pub(crate) fn url(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("https://{host}:{}{}", self.port, self.path)
    }
}

/// `path?query&timeout=Ns`, as kube-apiserver adds the timeout for the webhook to honour.
pub(crate) fn with_timeout(path: &str, query: Option<&str>, timeout: Duration) -> String {
    let path = if path.is_empty() { "/" } else { path };
    let t = format!("timeout={}s", timeout.as_secs());
    match query.filter(|q| !q.is_empty()) {
        Some(q) => format!("{path}?{q}&{t}"),
        None => format!("{path}?{t}"),
    }
}

/// The system's trust roots, read once.
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// A client configuration trusting the PEM `ca_bundle`, or the system roots.
pub(crate) fn tls_config(ca_bundle: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_bundle {
        Some(pem) => {
            let certs: Vec<_> = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<_, _>>()
                .map_err(|e| format!("clientConfig.caBundle: {e}"))?;
            if certs.is_empty() {
                return Err("clientConfig.caBundle: no PEM certificate".into());
            }
            for c in certs {
                roots
                    .add(c)
                    .map_err(|e| format!("clientConfig.caBundle: {e}"))?;
            }
        }
        None => {
            roots.add_parsable_certificates(system_roots().iter().cloned());
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Open connections to webhooks, kept between calls as kube-apiserver's client keeps them.
/// A pool belongs to one [`Snapshot`](super::Snapshot): connections are keyed by webhook and
/// address, so each was verified with that webhook's `caBundle`, and they close when the
/// configurations change.
#[derive(Default)]
pub(crate) struct Pool {
    idle: Mutex<HashMap<PoolKey, Vec<SendRequest<Body>>>>,
}

/// A webhook's name and the host and port it is called at.
type PoolKey = (String, String, u16);

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").finish_non_exhaustive()
    }
}

/// Idle connections kept per webhook and address.
const MAX_IDLE: usize = 16;

impl Pool {
    fn take(&self, key: &PoolKey) -> Option<SendRequest<Body>> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.get_mut(key)?;
        while let Some(sender) = list.pop() {
            if !sender.is_closed() && sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }

    fn give_back(&self, key: PoolKey, sender: SendRequest<Body>) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(key).or_default();
        if list.len() < MAX_IDLE {
            list.push(sender);
        }
    }
}

/// POSTs `body` (JSON) for webhook `name` to `endpoint` within `timeout` and returns the
/// response body, reusing an idle connection of `pool` when there is one.
pub(crate) async fn post(
    pool: &Pool,
    name: &str,
    endpoint: &Endpoint,
    tls: Arc<rustls::ClientConfig>,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, Error> {
    let key = (name.to_string(), endpoint.host.clone(), endpoint.port);
    let exchange = async {
        if let Some(mut sender) = pool.take(&key) {
            // An idle connection the webhook closed meanwhile: fall back to a new one.
            if let Ok(answer) = send(&mut sender, endpoint, body.clone()).await {
                pool.give_back(key.clone(), sender);
                return answer;
            }
        }
        let mut sender = connect(endpoint, tls).await?;
        let answer = send(&mut sender, endpoint, body)
            .await
            .map_err(|e| Error::Call {
                url: endpoint.url(),
                reason: e.to_string(),
            })?;
        pool.give_back(key.clone(), sender);
        answer
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(Error::Timeout {
            url: endpoint.url(),
        }),
    }
}

/// A new HTTP/1.1 connection over TLS to `endpoint`.
async fn connect(
    endpoint: &Endpoint,
    tls: Arc<rustls::ClientConfig>,
) -> Result<SendRequest<Body>, Error> {
    let fail = |reason: String| Error::Call {
        url: endpoint.url(),
        reason,
    };
    let server_name = ServerName::try_from(endpoint.server_name.clone())
        .map_err(|e| fail(format!("invalid server name: {e}")))?;
    let tcp = tokio::net::TcpStream::connect((endpoint.host.as_str(), endpoint.port))
        .await
        .map_err(|e| fail(format!("dial tcp {}:{}: {e}", endpoint.host, endpoint.port)))?;
    tcp.set_nodelay(true).ok();
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(server_name, tcp)
        .await
        .map_err(|e| fail(format!("tls: {e}")))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| fail(e.to_string()))?;
    // Runs until the sender is dropped or the webhook closes the connection.
    tokio::spawn(conn);
    Ok(sender)
}

/// One request on an open connection. The outer error is the connection's (worth a retry on
/// a fresh one); the inner result is the webhook's answer.
async fn send(
    sender: &mut SendRequest<Body>,
    endpoint: &Endpoint,
    body: Vec<u8>,
) -> Result<Result<Vec<u8>, Error>, hyper::Error> {
    let request = http::Request::post(endpoint.path.as_str())
        .header(http::header::HOST, endpoint.server_name.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Body::from(body));
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            return Ok(Err(Error::Call {
                url: endpoint.url(),
                reason: e.to_string(),
            }));
        }
    };
    let resp = sender.send_request(request).await?;
    let status = resp.status().as_u16();
    let bytes = match axum::body::to_bytes(Body::new(resp.into_body()), MAX_RESPONSE).await {
        Ok(b) => b,
        Err(e) => {
            return Ok(Err(Error::Call {
                url: endpoint.url(),
                reason: e.to_string(),
            }));
        }
    };
    if !(200..300).contains(&status) {
        return Ok(Err(Error::Status { code: status }));
    }
    Ok(Ok(bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_the_timeout_and_must_be_https() {
        let e = Endpoint::from_url(
            "https://hook.example.com:8443/v?x=1",
            Duration::from_secs(5),
        )
        .expect("parses");
        assert_eq!((e.host.as_str(), e.port), ("hook.example.com", 8443));
        assert_eq!(e.path, "/v?x=1&timeout=5s");
        assert_eq!(e.url(), "https://hook.example.com:8443/v?x=1&timeout=5s");
        let e = Endpoint::from_url("https://[::1]/", Duration::from_secs(10)).expect("parses");
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("::1", 443, "/?timeout=10s")
        );
        assert!(Endpoint::from_url("http://x/", Duration::from_secs(1)).is_err());
    }

    #[test]
    fn a_bundle_without_certificates_is_refused() {
        assert!(tls_config(Some(b"not pem")).is_err());
        let ca = rcgen::generate_simple_self_signed(vec!["x".into()]).expect("cert");
        assert!(tls_config(Some(ca.cert.pem().as_bytes())).is_ok());
    }
}
