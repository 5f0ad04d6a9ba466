// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `network_frontend`: the network service's web UI.
//!
//! A page that lists, creates and deletes VirtualPrivateClouds and shows their status. Its HTML,
//! JavaScript and CSS (under `assets/`) are compiled into the binary with `include_str!`, so
//! building it needs no Node toolchain and the image is one static file. The page calls
//! `/api/…` on its own origin; [`proxy`] forwards those requests to the backend, so the browser
//! talks to one server and the backend needs no CORS.
//!
//! Start with [`router`]; `src/main.rs` parses the flags and runs [`serve`].

pub mod proxy;

use std::future::Future;

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use axum::response::IntoResponse;
use axum::routing::{any, get};
use tokio::net::TcpListener;

pub use proxy::{Backend, ProxyError};

/// The page.
pub const INDEX_HTML: &str = include_str!("../assets/index.html");
/// Its script.
pub const APP_JS: &str = include_str!("../assets/app.js");
/// Its style sheet.
pub const STYLE_CSS: &str = include_str!("../assets/style.css");

/// Every route: the assets, the `/api` proxy and the probes.
pub fn router(backend: Backend) -> Router {
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", INDEX_HTML)))
        .route(
            "/app.js",
            get(|| asset("text/javascript; charset=utf-8", APP_JS)),
        )
        .route(
            "/style.css",
            get(|| asset("text/css; charset=utf-8", STYLE_CSS)),
        )
        .route("/api/{*path}", any(proxy::forward))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
        .with_state(backend)
}

/// One embedded asset. The page loads scripts, styles and data from its own origin only.
async fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    let headers = [
        (CONTENT_TYPE, content_type),
        (CACHE_CONTROL, "no-cache"),
        (CONTENT_SECURITY_POLICY, "default-src 'self'"),
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (headers, body)
}

/// Serves [`router`] on `listener` until `shutdown` completes, then lets in-flight requests
/// finish.
pub async fn serve(
    listener: TcpListener,
    backend: Backend,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(backend))
        .with_graceful_shutdown(shutdown)
        .await
}
