//! [`Backend`]: forwards a frontend's `/api/…` requests to its backend — same method, path,
//! query, headers and body; the backend's answer goes back as it is. When the backend cannot
//! be reached the browser gets a `502` with a JSON error in the backend's format, so the page
//! talks to one origin and the backend needs no CORS.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::http::uri::{PathAndQuery, Uri};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

/// Why the proxy could not forward a request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The backend URL is not an absolute `http://` URL.
    #[error("backend URL {0:?} must be an absolute http:// URL, e.g. http://127.0.0.1:8090")]
    InvalidUrl(String),
    /// The backend did not answer.
    #[error("the backend at {url} cannot be reached: {source}")]
    Unreachable {
        /// The backend URL.
        url: String,
        /// The client error.
        #[source]
        source: hyper_util::client::legacy::Error,
    },
}

impl IntoResponse for ProxyError {
    fn into_response(self) -> Response {
        tracing::warn!(error = %self, "proxy failed");
        let body = json!({
            "error": { "code": 502, "reason": "BadGateway", "message": self.to_string() }
        });
        (StatusCode::BAD_GATEWAY, axum::Json(body)).into_response()
    }
}

/// Hop-by-hop headers, which concern one connection and are not forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The backend `/api` requests go to, and a pooled HTTP client for it.
#[derive(Clone, Debug)]
pub struct Backend {
    base: Uri,
    client: Client<HttpConnector, Body>,
}

impl Backend {
    /// A backend at `url`, e.g. `http://127.0.0.1:8090` (a path prefix is kept).
    ///
    /// # Errors
    ///
    /// [`ProxyError::InvalidUrl`] unless `url` is an absolute `http://` URL.
    pub fn new(url: &str) -> Result<Self, ProxyError> {
        let base: Uri = url
            .parse()
            .map_err(|_| ProxyError::InvalidUrl(url.to_owned()))?;
        if base.scheme_str() != Some("http") || base.authority().is_none() {
            return Err(ProxyError::InvalidUrl(url.to_owned()));
        }
        Ok(Self {
            base,
            client: Client::builder(TokioExecutor::new()).build_http(),
        })
    }

    /// The backend's URL.
    #[must_use]
    pub fn url(&self) -> &Uri {
        &self.base
    }

    /// Where a request for `path_and_query` goes.
    fn target(&self, path_and_query: &str) -> Result<Uri, ProxyError> {
        let prefix = self.base.path().trim_end_matches('/');
        let path: PathAndQuery = format!("{prefix}{path_and_query}")
            .parse()
            .map_err(|_| ProxyError::InvalidUrl(self.base.to_string()))?;
        let mut parts = self.base.clone().into_parts();
        parts.path_and_query = Some(path);
        Uri::from_parts(parts).map_err(|_| ProxyError::InvalidUrl(self.base.to_string()))
    }
}

/// Forwards one request. See the [module docs](self).
pub(crate) async fn forward(
    State(backend): State<Backend>,
    request: Request,
) -> Result<Response, ProxyError> {
    let (mut parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", PathAndQuery::as_str)
        .to_owned();
    parts.uri = backend.target(&path)?;
    parts.headers.remove(HOST);
    for name in HOP_BY_HOP {
        parts.headers.remove(HeaderName::from_static(name));
    }
    let response = backend
        .client
        .request(Request::from_parts(parts, body))
        .await
        .map_err(|source| ProxyError::Unreachable {
            url: backend.base.to_string(),
            source,
        })?;
    Ok(response.map(Body::new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_the_path_and_query_under_the_base() {
        let backend = Backend::new("http://backend:8080").expect("valid");
        assert_eq!(
            backend
                .target("/api/v1/x?limit=1")
                .expect("uri")
                .to_string(),
            "http://backend:8080/api/v1/x?limit=1"
        );
        let prefixed = Backend::new("http://backend:8080/prefix/").expect("valid");
        assert_eq!(
            prefixed.target("/api/v1/x").expect("uri").to_string(),
            "http://backend:8080/prefix/api/v1/x"
        );
    }

    #[test]
    fn only_absolute_http_urls_are_backends() {
        for bad in ["backend:8080", "/api", "https://backend", "not a url"] {
            assert!(Backend::new(bad).is_err(), "{bad}");
        }
    }
}
