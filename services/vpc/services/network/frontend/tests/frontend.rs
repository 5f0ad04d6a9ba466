// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The frontend over HTTP: its embedded assets, and `/api` proxied to a stand-in backend.

use std::net::SocketAddr;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode, header};
use axum::routing::any;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpListener;

use network_frontend::{Backend, serve};

/// The start of the page's title.
const TITLE: &str = "<title>Network";

/// Serves `router` on a free loopback port until the test ends.
async fn spawn(router: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    address
}

/// A frontend whose backend is at `backend`.
async fn frontend(backend: &str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let backend = Backend::new(backend).expect("backend URL");
    tokio::spawn(serve(listener, backend, std::future::pending()));
    address
}

/// Sends a request; returns status, content type and body.
async fn call(method: Method, url: &str, body: &str) -> (StatusCode, String, String) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let request = Request::builder()
        .method(method)
        .uri(url)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .expect("request");
    let response = client.request(request).await.expect("response");
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let body = String::from_utf8_lossy(&bytes).into_owned();
    (status, content_type, body)
}

#[tokio::test]
async fn serves_the_embedded_page() {
    let ui = frontend("http://127.0.0.1:9").await;
    let (status, content_type, body) = call(Method::GET, &format!("http://{ui}/"), "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(body.contains(TITLE), "{body}");
    let (status, content_type, body) = call(Method::GET, &format!("http://{ui}/app.js"), "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.contains("javascript"), "{content_type}");
    assert!(body.contains("/api/v1/virtualprivateclouds"));
    let (status, _, _) = call(Method::GET, &format!("http://{ui}/healthz"), "").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_page_loads_from_its_own_origin_only() {
    let ui = frontend("http://127.0.0.1:9").await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let request = Request::get(format!("http://{ui}/"))
        .body(Body::empty())
        .expect("request");
    let response = client.request(request).await.expect("response");
    let headers = response.headers();
    let value = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let csp = value(header::CONTENT_SECURITY_POLICY);
    assert_eq!(csp, Some("default-src 'self'"));
    assert_eq!(value(header::X_CONTENT_TYPE_OPTIONS), Some("nosniff"));
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
    let backend = spawn(echo).await;
    let ui = frontend(&format!("http://{backend}")).await;
    let (status, _, body) = call(
        Method::POST,
        &format!("http://{ui}/api/v1/virtualprivateclouds?dryRun=All"),
        "{\"name\":\"x\"}",
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let expected = "POST /api/v1/virtualprivateclouds?dryRun=All {\"name\":\"x\"}";
    assert_eq!(body, expected);
}

#[tokio::test]
async fn an_unreachable_backend_is_a_json_502() {
    // Nothing listens on the discard port.
    let ui = frontend("http://127.0.0.1:9").await;
    let url = format!("http://{ui}/api/v1/virtualprivateclouds");
    let (status, content_type, body) = call(Method::GET, &url, "").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(content_type.contains("json"), "{content_type}");
    let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(json["error"]["reason"], "BadGateway");
}
