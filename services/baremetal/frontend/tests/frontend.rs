// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The frontend over HTTP: its embedded assets, and `/api` proxied to a stand-in backend.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode, header};
use axum::routing::any;
use http_body_util::BodyExt;
use mni_web::testing::TestServer;

use metal_frontend::{Backend, assets, router};

/// The start of the page's title.
const TITLE: &str = "<title>Metal";

/// The API path of the Servers.
const COLLECTION: &str = "/api/v1/servers";

/// A frontend whose backend is at `backend`.
async fn frontend(backend: &str) -> TestServer {
    let backend = Backend::new(backend).expect("backend URL");
    TestServer::start(router(backend)).await
}

#[test]
fn every_asset_path_is_valid() {
    if let Err(e) = assets() {
        panic!("{e}");
    }
}

#[tokio::test]
async fn serves_the_embedded_page() {
    let ui = frontend("http://127.0.0.1:9").await;
    let page = ui.call(Method::GET, "/", "").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.content_type().starts_with("text/html"), "{page:?}");
    assert!(page.body.contains(TITLE), "{}", page.body);
    let script = ui.call(Method::GET, "/app.js", "").await;
    assert_eq!(script.status, StatusCode::OK);
    assert!(script.content_type().contains("javascript"), "{script:?}");
    assert!(script.body.contains(COLLECTION));
    let health = ui.call(Method::GET, "/healthz", "").await;
    assert_eq!(health.status, StatusCode::OK);
}

#[tokio::test]
async fn the_page_loads_from_its_own_origin_only() {
    let ui = frontend("http://127.0.0.1:9").await;
    let page = ui.call(Method::GET, "/", "").await;
    let csp = page.header(header::CONTENT_SECURITY_POLICY.as_str());
    assert_eq!(csp, Some("default-src 'self'"));
    let nosniff = page.header(header::X_CONTENT_TYPE_OPTIONS.as_str());
    assert_eq!(nosniff, Some("nosniff"));
}

#[tokio::test]
async fn proxies_the_api_to_the_backend() {
    // A stand-in backend that echoes what it received.
    let echo = Router::new().route(
        "/api/{*path}",
        any(|method: Method, request: Request<Body>| async move {
            let uri = request.uri().to_string();
            let body: Bytes = request
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&body).into_owned();
            (StatusCode::CREATED, format!("{method} {uri} {text}"))
        }),
    );
    let backend = TestServer::start(echo).await;
    let ui = frontend(&backend.url("")).await;
    let path = format!("{COLLECTION}?dryRun=All");
    let body = r#"{"name":"x"}"#;
    let response = ui.call(Method::POST, &path, body).await;
    assert_eq!(response.status, StatusCode::CREATED);
    let expected = format!("POST {path} {body}");
    assert_eq!(response.body, expected);
}

#[tokio::test]
async fn an_unreachable_backend_is_a_json_502() {
    // Nothing listens on the discard port.
    let ui = frontend("http://127.0.0.1:9").await;
    let response = ui.call(Method::GET, COLLECTION, "").await;
    assert_eq!(response.status, StatusCode::BAD_GATEWAY);
    assert!(response.content_type().contains("json"), "{response:?}");
    let json: serde_json::Value = serde_json::from_str(&response.body).expect("JSON");
    assert_eq!(json["error"]["reason"], "BadGateway");
}
