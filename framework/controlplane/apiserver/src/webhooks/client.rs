//! Posting an AdmissionReview over HTTPS: one HTTP/1.1 connection per call, TLS verified
//! against the webhook's `caBundle` (or the system roots when it has none) for the host of
//! `clientConfig.url`, or `NAME.NAMESPACE.svc` for a `clientConfig.service`, as upstream.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

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

/// POSTs `body` (JSON) to `endpoint` within `timeout` and returns the response body.
pub(crate) async fn post(
    endpoint: &Endpoint,
    tls: Arc<rustls::ClientConfig>,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, Error> {
    match tokio::time::timeout(timeout, exchange(endpoint, tls, body)).await {
        Ok(result) => result,
        Err(_) => Err(Error::Timeout {
            url: endpoint.url(),
        }),
    }
}

async fn exchange(
    endpoint: &Endpoint,
    tls: Arc<rustls::ClientConfig>,
    body: Vec<u8>,
) -> Result<Vec<u8>, Error> {
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
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| fail(e.to_string()))?;
    let driver = tokio::spawn(conn);
    let request = http::Request::post(endpoint.path.as_str())
        .header(http::header::HOST, endpoint.server_name.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(axum::body::Body::from(body))
        .map_err(|e| fail(e.to_string()))?;
    let result = async {
        let resp = sender
            .send_request(request)
            .await
            .map_err(|e| fail(e.to_string()))?;
        let status = resp.status().as_u16();
        let bytes = axum::body::to_bytes(axum::body::Body::new(resp.into_body()), MAX_RESPONSE)
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !(200..300).contains(&status) {
            return Err(Error::Status { code: status });
        }
        Ok(bytes.to_vec())
    }
    .await;
    driver.abort();
    result
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
