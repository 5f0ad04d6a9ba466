// SPDX-License-Identifier: MIT

//! The backend over HTTP against an in-process control plane (`mni-testkit`), running as the
//! ServiceAccount the operator gives it, with exactly the Role the operator grants it.

use axum::http::{Method, StatusCode};
use kube::Api;
use mni_testkit::TestEnv;
use mni_web::testing::TestServer;
use serde_json::json;

use ledger_backend::router;
use ledger_operator::api::ledger_v1alpha1::LedgerAccount;
use ledger_operator::controllers::ledger::backend_rules;

const NAMESPACE: &str = "default";

/// The backend's ServiceAccount, as the operator names it for a Ledger named `ledger`.
const ACCOUNT: &str = "ledger-backend";

/// The backend, running as its ServiceAccount.
async fn start(env: &TestEnv) -> TestServer {
    let client = env
        .service_account_client(NAMESPACE, ACCOUNT, backend_rules())
        .await
        .expect("the backend's service account");
    TestServer::start(router(client, NAMESPACE)).await
}

#[tokio::test]
async fn crud_over_http() {
    let env = TestEnv::builder()
        .with_crds(ledger_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;
    let collection = "/api/v1/ledgeraccounts";

    let (status, body) = backend.call_json(Method::GET, "/readyz", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = backend.call_json(Method::GET, collection, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "items": [] })));

    let spec = json!({ "displayName": "First", "description": "a test" });
    let new = json!({ "name": "first", "spec": spec });
    let (status, body) = backend
        .call_json(Method::POST, collection, Some(new.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["name"], "first");
    assert_eq!(body["spec"]["displayName"], "First");
    let (status, body) = backend.call_json(Method::POST, collection, Some(new)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["reason"], "AlreadyExists");

    let item = format!("{collection}/first");
    let replacement = json!({ "spec": { "displayName": "Renamed" } });
    let (status, body) = backend
        .call_json(Method::PUT, &item, Some(replacement))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["displayName"], "Renamed");
    let (status, body) = backend.call_json(Method::GET, collection, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["items"][0]["spec"]["displayName"], "Renamed");
    let stored = Api::<LedgerAccount>::namespaced(env.client(), NAMESPACE)
        .get("first")
        .await
        .expect("the object is in the API server");
    assert_eq!(stored.spec.display_name, "Renamed");

    let (status, _) = backend.call_json(Method::DELETE, &item, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = backend.call_json(Method::GET, &item, None).await;
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
    let backend = start(&env).await;
    let collection = "/api/v1/ledgeraccounts";

    let (status, body) = backend
        .call_json(Method::POST, collection, Some(json!({ "name": "x" })))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["reason"], "BadRequest");
    let invalid = json!({ "name": "Not_A_Name", "spec": { "displayName": "x" } });
    let (status, body) = backend
        .call_json(Method::POST, collection, Some(invalid))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["reason"], "Invalid");
    let (status, body) = backend.call_json(Method::GET, "/nowhere", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["message"], "no route for /nowhere");

    let (status, body) = backend
        .call_json(Method::GET, "/api/openapi.json", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["openapi"], "3.0.3");
    assert!(body["paths"][collection]["post"].is_object(), "{body}");
    let spec = &body["components"]["schemas"]["LedgerAccountSpec"];
    assert!(spec["properties"]["displayName"].is_object(), "{body}");

    backend.stop().await;
    env.shutdown().await;
}
