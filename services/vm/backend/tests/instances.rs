// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The backend over HTTP against an in-process control plane (`mni-testkit`), running as the
//! ServiceAccount the operator gives it, with exactly the Role the operator grants it (nothing
//! on kubevirt.io): Instance CRUD, the power actions, and bad input refused with HTTP 422
//! naming the field, with the API server's words.

use axum::http::{Method, StatusCode};
use kube::Api;
use mni_testkit::TestEnv;
use mni_web::testing::TestServer;
use serde_json::{Value, json};

use compute_backend::router;
use compute_operator::api::compute_v1alpha1::Instance;
use compute_operator::controllers::compute::backend_rules;

const NAMESPACE: &str = "default";

/// The backend's ServiceAccount, as the operator names it for a Compute named `compute`.
const ACCOUNT: &str = "compute-backend";

const COLLECTION: &str = "/api/v1/instances";

/// The backend, running as its ServiceAccount.
async fn start(env: &TestEnv) -> TestServer {
    let client = env
        .service_account_client(NAMESPACE, ACCOUNT, backend_rules())
        .await
        .expect("the backend's service account");
    TestServer::start(router(client, NAMESPACE)).await
}

fn small() -> Value {
    json!({ "instanceType": "s1.small", "bootDisk": { "image": "quay.io/containerdisks/fedora:41" } })
}

#[tokio::test]
async fn instances_and_power_actions_over_http() {
    let env = TestEnv::builder()
        .with_crds(compute_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;

    let (status, body) = backend.call_json(Method::GET, COLLECTION, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "items": [] })));
    let new = json!({ "name": "web-1", "spec": small() });
    let (status, body) = backend
        .call_json(Method::POST, COLLECTION, Some(new.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["spec"]["instanceType"], "s1.small");
    let (status, body) = backend.call_json(Method::POST, COLLECTION, Some(new)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    let item = format!("{COLLECTION}/web-1");
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/stop"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["runStrategy"], "Halted");
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["runStrategy"], "Always");
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/restart"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let first = body["spec"]["restartRequestedAt"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!first.is_empty(), "{body}");
    let (_, body) = backend
        .call_json(Method::POST, &format!("{item}/restart"), None)
        .await;
    assert_ne!(
        body["spec"]["restartRequestedAt"].as_str(),
        Some(first.as_str()),
        "{body}"
    );
    let stored = Api::<Instance>::namespaced(env.client(), NAMESPACE)
        .get("web-1")
        .await
        .expect("the object is in the API server");
    assert_eq!(stored.spec.run_strategy.as_deref(), Some("Always"));

    let (status, body) = backend
        .call_json(Method::POST, &format!("{COLLECTION}/nope/start"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = backend.call_json(Method::DELETE, &item, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let (status, body) = backend
        .call_json(Method::GET, "/api/openapi.json", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body["paths"]["/api/v1/instances/{name}/restart"]["post"].is_object(),
        "{body}"
    );
    backend.stop().await;
    env.shutdown().await;
}

#[tokio::test]
async fn bad_input_is_422_naming_the_field() {
    let env = TestEnv::builder()
        .with_crds(compute_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;
    let with = |edit: Value| {
        let mut spec = small();
        for (k, v) in edit.as_object().cloned().unwrap_or_default() {
            if v.is_null() {
                spec.as_object_mut().map(|m| m.remove(&k));
            } else {
                spec[k] = v;
            }
        }
        spec
    };
    let cases = [
        (
            with(json!({ "instanceType": "t2.micro" })),
            "instanceType: unknown instance type t2.micro",
        ),
        (
            with(json!({ "resources": { "cores": 2, "memory": "4Gi" } })),
            "instanceType: set an instance type or resources, not both",
        ),
        (
            with(json!({ "instanceType": null, "resources": { "cores": 0, "memory": "4Gi" } })),
            "resources.cores: 0 is not between 1 and 32",
        ),
        (
            with(json!({ "instanceType": null, "resources": { "cores": 1, "memory": "4 GB" } })),
            "resources.memory: 4 GB is not a quantity in Mi or Gi (e.g. 4Gi)",
        ),
        (
            with(json!({ "instanceType": null, "resources": { "cores": 1, "memory": "200Gi" } })),
            "resources.memory: 200Gi is above the limit of 128Gi",
        ),
        (
            with(json!({ "bootDisk": { "image": "" } })),
            "bootDisk.image: must not be empty",
        ),
        (
            with(json!({ "bootDisk": { "image": "not an image" } })),
            "bootDisk.image: not an image is not a container image reference",
        ),
        (
            with(json!({ "bootDisk": { "http": { "url": "file:///etc/passwd", "size": "1Gi" } } })),
            "bootDisk.http.url: file:///etc/passwd is not an http:// or https:// URL",
        ),
        (
            with(json!({ "runStrategy": "Once" })),
            "runStrategy: unknown run strategy Once",
        ),
        (
            with(
                json!({ "network": { "vpc": { "name": "t", "subnet": "web", "ip": "10.0.0.999" } } }),
            ),
            "network.vpc.ip: 10.0.0.999 is not an IP address",
        ),
    ];
    for (spec, expected) in cases {
        let (status, body) = backend
            .call_json(
                Method::POST,
                COLLECTION,
                Some(json!({ "name": "bad", "spec": spec })),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["reason"], "Invalid");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{message}");
    }
    let listed = Api::<Instance>::namespaced(env.client(), NAMESPACE)
        .list(&Default::default())
        .await
        .expect("list");
    assert!(listed.items.is_empty(), "nothing was created");
    backend.stop().await;
    env.shutdown().await;
}
