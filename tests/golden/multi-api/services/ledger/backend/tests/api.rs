// SPDX-License-Identifier: MIT

//! The backend over HTTP against an in-process control plane (`mni-testkit`), running as the
//! ServiceAccount the operator gives it, with exactly the Role the operator grants it.

use std::net::SocketAddr;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::Api;
use mni_testkit::TestEnv;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use ledger_backend::{AppState, serve};
use ledger_operator::api::ledger_v1alpha1::LedgerAccount;
use ledger_operator::controllers::ledger::backend_rules;

const NAMESPACE: &str = "default";

/// The backend's ServiceAccount, as the operator names it for a Ledger named `ledger`.
const ACCOUNT: &str = "ledger-backend";

/// A running backend and a client for it.
struct Backend {
    address: SocketAddr,
    http: Client<HttpConnector, Body>,
    stop: oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Backend {
    async fn start(env: &TestEnv) -> Self {
        let client = env
            .service_account_client(NAMESPACE, ACCOUNT, backend_rules())
            .await
            .expect("the backend's service account");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(serve(
            listener,
            AppState::new(client, NAMESPACE),
            async move {
                let _ = stopped.await;
            },
        ));
        Self {
            address,
            http: Client::builder(TokioExecutor::new()).build_http(),
            stop,
            server,
        }
    }

    /// Sends a request and returns the status and the JSON body (`null` when empty).
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let request = Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.address))
            .header("content-type", "application/json")
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
            .expect("request");
        let response = self.http.request(request).await.expect("response");
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let json = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("a JSON body")
        };
        (status, json)
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.server
            .await
            .expect("the server task")
            .expect("a clean shutdown");
    }
}

#[tokio::test]
async fn crud_over_http() {
    let env = TestEnv::builder()
        .with_crds(ledger_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = Backend::start(&env).await;
    let collection = "/api/v1/ledgeraccounts";

    let (status, body) = backend.call(Method::GET, "/readyz", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = backend.call(Method::GET, collection, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "items": [] })));

    let spec = json!({ "displayName": "First", "description": "a test" });
    let new = json!({ "name": "first", "spec": spec });
    let (status, body) = backend
        .call(Method::POST, collection, Some(new.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["name"], "first");
    assert_eq!(body["spec"]["displayName"], "First");
    let (status, body) = backend.call(Method::POST, collection, Some(new)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["reason"], "AlreadyExists");

    let item = format!("{collection}/first");
    let replacement = json!({ "spec": { "displayName": "Renamed" } });
    let (status, body) = backend.call(Method::PUT, &item, Some(replacement)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["displayName"], "Renamed");
    let (status, body) = backend.call(Method::GET, collection, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["items"][0]["spec"]["displayName"], "Renamed");
    let stored = Api::<LedgerAccount>::namespaced(env.client(), NAMESPACE)
        .get("first")
        .await
        .expect("the object is in the API server");
    assert_eq!(stored.spec.display_name, "Renamed");

    let (status, _) = backend.call(Method::DELETE, &item, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = backend.call(Method::GET, &item, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], 404);

    backend.stop().await;
    env.shutdown().await;
}

#[tokio::test]
async fn errors_are_json() {
    let env = TestEnv::builder()
        .with_crds(ledger_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = Backend::start(&env).await;
    let collection = "/api/v1/ledgeraccounts";

    let (status, body) = backend
        .call(Method::POST, collection, Some(json!({ "name": "x" })))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["reason"], "BadRequest");
    let invalid = json!({ "name": "Not_A_Name", "spec": { "displayName": "x" } });
    let (status, body) = backend.call(Method::POST, collection, Some(invalid)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["reason"], "Invalid");
    let (status, body) = backend.call(Method::GET, "/nowhere", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["message"], "no route for /nowhere");

    let (status, body) = backend.call(Method::GET, "/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["openapi"], "3.0.3");
    assert!(body["paths"][collection]["post"].is_object(), "{body}");
    let spec = &body["components"]["schemas"]["LedgerAccountSpec"];
    assert!(spec["properties"]["displayName"].is_object(), "{body}");

    backend.stop().await;
    env.shutdown().await;
}
