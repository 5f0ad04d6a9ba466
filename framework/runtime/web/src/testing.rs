//! Test helpers for services' integration tests (feature `testing`, for dev-dependencies):
//! [`TestServer`] serves a router on a free loopback port and calls it over real HTTP.
//!
//! ```no_run
//! # async fn example(router: axum::Router) {
//! use axum::http::{Method, StatusCode};
//! use mni_web::testing::TestServer;
//!
//! let server = TestServer::start(router).await;
//! let (status, body) = server.call_json(Method::GET, "/healthz", None).await;
//! assert_eq!(status, StatusCode::OK, "{body}");
//! server.stop().await;
//! # }
//! ```

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// What a [`TestServer`] call got back.
#[derive(Clone, Debug)]
pub struct TestResponse {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, as text.
    pub body: String,
}

impl TestResponse {
    /// The `Content-Type` header, empty when there is none.
    #[must_use]
    pub fn content_type(&self) -> &str {
        self.header(header::CONTENT_TYPE.as_str())
            .unwrap_or_default()
    }

    /// The header `name`, if it is there and text.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A router served on a free loopback port, and an HTTP client for it. See the
/// [module docs](self).
#[derive(Debug)]
pub struct TestServer {
    address: SocketAddr,
    http: Client<HttpConnector, Body>,
    stop: oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// Serves `router` on `127.0.0.1:0`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start(router: Router) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(crate::serve(listener, router, async move {
            let _ = stopped.await;
        }));
        Self {
            address,
            http: Client::builder(TokioExecutor::new()).build_http(),
            stop,
            server,
        }
    }

    /// The address it listens on.
    #[must_use]
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://ADDRESS{path}`.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Sends `body` (as JSON) to `path`; returns the status and headers and the body as text.
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub async fn call(&self, method: Method, path: &str, body: &str) -> TestResponse {
        let request = Request::builder()
            .method(method)
            .uri(self.url(path))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_owned()))
            .expect("request");
        let response = self.http.request(request).await.expect("response");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let body = String::from_utf8_lossy(&bytes).into_owned();
        TestResponse {
            status,
            headers,
            body,
        }
    }

    /// Sends a JSON `body` (none when `None`); returns the status and the JSON body (`null`
    /// when empty).
    ///
    /// # Panics
    ///
    /// When the server does not answer, or its body is not JSON.
    pub async fn call_json(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let response = self.call(method, path, &body).await;
        let json = if response.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&response.body).expect("a JSON body")
        };
        (response.status, json)
    }

    /// Stops the server after in-flight requests.
    ///
    /// # Panics
    ///
    /// When the server failed.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.server
            .await
            .expect("the server task")
            .expect("a clean shutdown");
    }
}
