// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The backend over HTTP against an in-process control plane (`mni-testkit`), running as the
//! ServiceAccount the operator gives it, with exactly the Role the operator grants it (nothing
//! on metal3.io): Server CRUD, the power, reboot and provisioning actions, and bad input
//! refused with HTTP 422 naming the field, with the API server's words.

use axum::http::{Method, StatusCode};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use mni_testkit::TestEnv;
use mni_web::testing::TestServer;
use serde_json::{Value, json};

use metal_backend::router;
use metal_operator::api::metal_v1alpha1::REBOOT_ANNOTATION;
use metal_operator::api::metal_v1alpha1::RebootMode;
use metal_operator::api::metal_v1alpha1::RebootRequest;
use metal_operator::api::metal_v1alpha1::Server;
use metal_operator::controllers::metal::backend_rules;

const NAMESPACE: &str = "default";

/// The backend's ServiceAccount, as the operator names it for a Metal named `metal`.
const ACCOUNT: &str = "metal-backend";

const COLLECTION: &str = "/api/v1/servers";

/// The backend, running as its ServiceAccount.
async fn start(env: &TestEnv) -> TestServer {
    let client = env
        .service_account_client(NAMESPACE, ACCOUNT, backend_rules())
        .await
        .expect("the backend's service account");
    TestServer::start(router(client, NAMESPACE)).await
}

fn rack() -> Value {
    json!({
        "bmc": {
            "address": "redfish+https://10.0.0.5/redfish/v1/Systems/1",
            "credentialsName": "rack-1-bmc",
        },
        "bootMACAddress": "52:54:00:00:00:01",
    })
}

fn image() -> Value {
    json!({ "url": "http://images.example.com/os.qcow2", "checksum": "abc", "checksumType": "sha256" })
}

#[tokio::test]
async fn servers_and_their_actions_over_http() {
    let env = TestEnv::builder()
        .with_crds(metal_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;

    let (status, body) = backend.call_json(Method::GET, COLLECTION, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "items": [] })));
    let new = json!({ "name": "rack-1", "spec": rack() });
    let (status, body) = backend
        .call_json(Method::POST, COLLECTION, Some(new.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["spec"]["online"], false);
    let (status, body) = backend.call_json(Method::POST, COLLECTION, Some(new)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    let item = format!("{COLLECTION}/rack-1");
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/power-on"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["online"], true);
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/provision"), Some(image()))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["spec"]["image"]["url"],
        "http://images.example.com/os.qcow2"
    );

    // A second image, or another BMC, only after deprovisioning.
    let other = json!({ "url": "http://images.example.com/other.qcow2", "checksum": "def" });
    let (status, body) = backend
        .call_json(
            Method::POST,
            &format!("{item}/provision"),
            Some(other.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("image.url: cannot change the image of a provisioned server"),
        "{message}"
    );
    let mut moved = rack();
    moved["bmc"]["address"] = json!("redfish://10.0.0.9/redfish/v1/Systems/1");
    moved["image"] = image();
    let (status, body) = backend
        .call_json(Method::PUT, &item, Some(json!({ "spec": moved })))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("bmc.address: cannot change"), "{message}");

    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/deprovision"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["spec"]["image"].is_null(), "{body}");
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/provision"), Some(other))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = backend
        .call_json(Method::POST, &format!("{item}/power-off"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let stored = Api::<Server>::namespaced(env.client(), NAMESPACE)
        .get("rack-1")
        .await
        .expect("the object is in the API server");
    assert!(!stored.spec.online);
    assert_eq!(
        stored.spec.image.map(|i| i.url).as_deref(),
        Some("http://images.example.com/other.qcow2")
    );

    // Reboot: a bad mode is 422 naming it; a server that is not provisioned is 409.
    let reboot = format!("{item}/reboot");
    let (status, body) = backend
        .call_json(Method::POST, &reboot, Some(json!({ "mode": "gentle" })))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("mode: must be soft or hard"),
        "{message}"
    );
    let (status, body) = backend.call_json(Method::POST, &reboot, None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("state: server rack-1 is not registered yet; only a provisioned server"),
        "{message}"
    );
    // Provisioned (as the operator would report it): the request is recorded once; asking
    // again while it is not finished changes nothing.
    let servers = Api::<Server>::namespaced(env.client(), NAMESPACE);
    servers
        .patch_status(
            "rack-1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "state": "provisioned" } })),
        )
        .await
        .expect("status");
    let (status, body) = backend
        .call_json(Method::POST, &reboot, Some(json!({ "mode": "hard" })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let annotation = |s: &Server| s.annotations().get(REBOOT_ANNOTATION).cloned();
    let requested = annotation(&servers.get("rack-1").await.expect("get")).expect("requested");
    let request: RebootRequest = serde_json::from_str(&requested).expect("a request");
    assert_eq!(request.mode, Some(RebootMode::Hard));
    let (status, body) = backend.call_json(Method::POST, &reboot, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let again = annotation(&servers.get("rack-1").await.expect("get"));
    assert_eq!(again.as_deref(), Some(requested.as_str()), "idempotent");

    let (status, body) = backend
        .call_json(Method::POST, &format!("{COLLECTION}/nope/power-on"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = backend.call_json(Method::DELETE, &item, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let (status, body) = backend
        .call_json(Method::GET, "/api/openapi.json", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    for action in [
        "power-on",
        "power-off",
        "reboot",
        "provision",
        "deprovision",
    ] {
        assert!(
            body["paths"][format!("{COLLECTION}/{}/{action}", "{name}")]["post"].is_object(),
            "{action}: {body}"
        );
    }
    backend.stop().await;
    env.shutdown().await;
}

#[tokio::test]
async fn bad_input_is_422_naming_the_field() {
    let env = TestEnv::builder()
        .with_crds(metal_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let backend = start(&env).await;
    let with = |edit: Value| {
        let mut spec = rack();
        for (k, v) in edit.as_object().cloned().unwrap_or_default() {
            spec[k] = v;
        }
        spec
    };
    let cases = [
        (
            with(json!({ "bmc": { "address": "http://10.0.0.5", "credentialsName": "c" } })),
            "bmc.address: http://10.0.0.5 is not a BMC address Metal3 supports",
        ),
        (
            with(json!({ "bmc": { "address": "redfish://", "credentialsName": "c" } })),
            "bmc.address: redfish:// is",
        ),
        (
            with(json!({ "bootMACAddress": "52-54-00-00-00-01" })),
            "bootMACAddress: 52-54-00-00-00-01 is not a MAC address",
        ),
        (
            with(json!({ "image": { "url": "http://images.example.com/os.qcow2" } })),
            "image.checksum: required",
        ),
        (
            with(
                json!({ "image": { "url": "http://images.example.com/os.qcow2", "checksum": "abc", "checksumType": "crc32" } }),
            ),
            "image.checksumType: unknown checksum type crc32",
        ),
        (
            with(json!({ "rootDeviceHints": { "deviceName": "sda" } })),
            "rootDeviceHints.deviceName: sda is not a device path",
        ),
        (
            with(json!({ "hostLabels": { "no spaces": "x" } })),
            "hostLabels: key no spaces",
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
    let listed = Api::<Server>::namespaced(env.client(), NAMESPACE)
        .list(&Default::default())
        .await
        .expect("list");
    assert!(listed.items.is_empty(), "nothing was created");
    backend.stop().await;
    env.shutdown().await;
}
