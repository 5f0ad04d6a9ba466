// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The backend over HTTP against an in-process control plane (`mni-testkit`), running as the
//! ServiceAccount the operator gives it, with exactly the Role the operator grants it (nothing
//! on kubeovn.io): VPC and subnet CRUD, and invalid address plans refused with HTTP 422 naming
//! the subnet and the rule.

use axum::http::{Method, StatusCode};
use kube::Api;
use mni_testkit::TestEnv;
use mni_web::testing::TestServer;
use serde_json::json;

use network_backend::router;
use network_operator::api::network_v1alpha1::VirtualPrivateCloud;
use network_operator::controllers::network::backend_rules;

const NAMESPACE: &str = "default";

/// The backend's ServiceAccount, as the operator names it for a Network named `network`.
const ACCOUNT: &str = "network-backend";

/// The backend, running as its ServiceAccount.
async fn start(env: &TestEnv) -> TestServer {
    let client = env
        .service_account_client(NAMESPACE, ACCOUNT, backend_rules())
        .await
        .expect("the backend's service account");
    TestServer::start(router(client, NAMESPACE)).await
}

#[tokio::test]
async fn vpcs_and_subnets_over_http() {
    let env = TestEnv::builder()
        .with_crds(network_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;
    let collection = "/api/v1/virtualprivateclouds";

    let (status, body) = backend.call_json(Method::GET, "/readyz", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = backend.call_json(Method::GET, collection, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "items": [] })));

    let spec = json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.1.0/24" }] });
    let new = json!({ "name": "prod", "spec": spec });
    let (status, body) = backend
        .call_json(Method::POST, collection, Some(new.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["name"], "prod");
    assert_eq!(body["spec"]["subnets"][0]["cidrBlock"], "10.0.1.0/24");
    let (status, body) = backend.call_json(Method::POST, collection, Some(new)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["reason"], "AlreadyExists");

    let subnets = format!("{collection}/prod/subnets");
    let db = json!({ "name": "db", "cidrBlock": "10.0.2.0/24", "private": true });
    let (status, body) = backend
        .call_json(Method::POST, &subnets, Some(db.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["spec"]["subnets"][1]["name"], "db");
    let (status, body) = backend.call_json(Method::POST, &subnets, Some(db)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let stored = Api::<VirtualPrivateCloud>::namespaced(env.client(), NAMESPACE)
        .get("prod")
        .await
        .expect("the object is in the API server");
    assert_eq!(stored.spec.subnets.len(), 2);

    let (status, body) = backend
        .call_json(Method::DELETE, &format!("{subnets}/web"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["subnets"].as_array().map(Vec::len), Some(1));
    let (status, body) = backend
        .call_json(Method::DELETE, &format!("{subnets}/web"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    let item = format!("{collection}/prod");
    let (status, _) = backend.call_json(Method::DELETE, &item, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = backend.call_json(Method::GET, &item, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], 404);

    backend.stop().await;
    env.shutdown().await;
}

#[tokio::test]
async fn invalid_address_plans_are_422_naming_subnet_and_rule() {
    let env = TestEnv::builder()
        .with_crds(network_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;
    let collection = "/api/v1/virtualprivateclouds";

    let cases = [
        (
            json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/24", "gateway": "10.0.1.1" }] }),
            "subnet web: gateway 10.0.1.1 is outside cidrBlock 10.0.0.0/24",
        ),
        (
            json!({ "subnets": [
                { "name": "web", "cidrBlock": "10.0.0.0/16" },
                { "name": "db", "cidrBlock": "10.0.5.0/24" },
            ] }),
            "subnet web: cidrBlock 10.0.0.0/16 overlaps subnet db (10.0.5.0/24)",
        ),
        (
            json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/33" }] }),
            "subnet web: cidrBlock 10.0.0.0/33 is not a CIDR",
        ),
    ];
    for (spec, expected) in cases {
        let (status, body) = backend
            .call_json(
                Method::POST,
                collection,
                Some(json!({ "name": "bad", "spec": spec })),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["reason"], "Invalid");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{message}");
    }
    let listed = Api::<VirtualPrivateCloud>::namespaced(env.client(), NAMESPACE)
        .list(&Default::default())
        .await
        .expect("list");
    assert!(listed.items.is_empty(), "nothing was created");

    // A subnet that overlaps, and a changed cidrBlock.
    let spec = json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.1.0/24" }] });
    let (status, body) = backend
        .call_json(
            Method::POST,
            collection,
            Some(json!({ "name": "prod", "spec": spec })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let overlapping = json!({ "name": "db", "cidrBlock": "10.0.1.128/25" });
    let (status, body) = backend
        .call_json(
            Method::POST,
            &format!("{collection}/prod/subnets"),
            Some(overlapping),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("subnet web: cidrBlock 10.0.1.0/24 overlaps subnet db (10.0.1.128/25)"),
        "{body}"
    );
    let moved = json!({ "spec": { "subnets": [{ "name": "web", "cidrBlock": "10.0.9.0/24" }] } });
    let (status, body) = backend
        .call_json(Method::PUT, &format!("{collection}/prod"), Some(moved))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("subnet web: cidrBlock is immutable (it was 10.0.1.0/24)"),
        "{body}"
    );

    // What only the API server checks (here the schema's port range) is its 422, passed on.
    let nat = json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.1.0/24" }], "natGateway": {
        "lanIp": "10.0.1.254", "externalSubnet": "ovn-vpc-external-network",
        "eips": [{ "name": "in" }],
        "dnatRules": [{ "name": "http", "eip": "in", "externalPort": 0, "internalIp": "10.0.1.5", "internalPort": 80 }],
    } });
    let (status, body) = backend
        .call_json(
            Method::POST,
            collection,
            Some(json!({ "name": "port", "spec": nat })),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["reason"], "Invalid");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.natGateway.dnatRules[0].externalPort"),
        "{message}"
    );

    let (status, body) = backend
        .call_json(Method::POST, collection, Some(json!({ "name": "x" })))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["reason"], "BadRequest");
    let (status, body) = backend.call_json(Method::GET, "/nowhere", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["message"], "no route for /nowhere");

    let (status, body) = backend
        .call_json(Method::GET, "/api/openapi.json", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["openapi"], "3.0.3");
    assert!(body["paths"][collection]["post"].is_object(), "{body}");
    let subnets = "/api/v1/virtualprivateclouds/{name}/subnets";
    assert!(body["paths"][subnets]["post"].is_object(), "{body}");
    let spec = &body["components"]["schemas"]["SubnetSpec"];
    assert!(spec["properties"]["cidrBlock"].is_object(), "{body}");

    backend.stop().await;
    env.shutdown().await;
}
