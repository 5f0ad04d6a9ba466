// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Bad input, at both gates: the API server refuses it at admission through the CRD's CEL
//! rules (HTTP 422, the message naming the field), including a change of the BMC address or
//! the image of a server with an image; and the controller — for CRDs installed without the
//! rules — reports `Degraded` with reason `InvalidSpec` and the same message, and creates no
//! BareMetalHost. What needs other objects is a condition too: a missing credentials Secret,
//! one without a password, a missing user-data Secret, a BMC address another Server has.
//! With Metal3's CRDs installed beside the Server CRD, the names kubectl resolves do not clash.

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use mni_metal3::v1alpha1::BareMetalHost;
use mni_operator::{Manager, READY, RunningManager};
use mni_testkit::{TestEnv, wait_for_condition};
use serde_json::{Value, json};

use metal_operator::api::metal_v1alpha1::Server;
use metal_operator::api::metal_v1alpha1::ServerSpec;
use metal_operator::controllers::server::ServerReconciler;

const NAMESPACE: &str = "default";

/// A valid spec with `edit` merged in (`null` removes a field).
fn spec(edit: Value) -> Value {
    let mut spec = json!({
        "bmc": {
            "address": "redfish+http://127.0.0.1:9/redfish/v1/Systems/1",
            "credentialsName": "bmc-credentials",
        },
        "bootMACAddress": "52:54:00:00:00:01",
    });
    merge(&mut spec, edit);
    spec
}

fn merge(base: &mut Value, edit: Value) {
    match (base, edit) {
        (Value::Object(base), Value::Object(edit)) => {
            for (k, v) in edit {
                if v.is_null() {
                    base.remove(&k);
                } else {
                    merge(base.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        (base, edit) => *base = edit,
    }
}

/// Each invalid spec with the message it must get.
fn cases() -> Vec<(&'static str, Value, &'static str)> {
    let image = |edit: Value| {
        let mut image = json!({ "url": "http://images.example.com/os.qcow2", "checksum": "abc" });
        merge(&mut image, edit);
        spec(json!({ "image": image }))
    };
    vec![
        (
            "unsupported-scheme",
            spec(json!({ "bmc": { "address": "ftp://10.0.0.5/redfish/v1/Systems/1" } })),
            "bmc.address: ftp://10.0.0.5/redfish/v1/Systems/1 is not a BMC address Metal3 supports",
        ),
        (
            "malformed-address",
            spec(json!({ "bmc": { "address": "redfish://" } })),
            "bmc.address: redfish:// is",
        ),
        (
            "malformed-mac",
            spec(json!({ "bootMACAddress": "52:54:00:00:01" })),
            "bootMACAddress: 52:54:00:00:01 is not a MAC address (six hex pairs separated by colons)",
        ),
        (
            "image-without-checksum",
            image(json!({ "checksum": null })),
            "image.checksum: required (the image's checksum, or the URL of a checksum file) unless format is live-iso",
        ),
        (
            "unknown-checksum-type",
            image(json!({ "checksumType": "crc32" })),
            "image.checksumType: unknown checksum type crc32; choose one of md5, sha256, sha512, auto",
        ),
        (
            "unknown-format",
            image(json!({ "format": "iso" })),
            "image.format: unknown format iso; choose one of raw, qcow2, vdi, vmdk, live-iso",
        ),
        (
            "ftp-image",
            image(json!({ "url": "ftp://images.example.com/os.qcow2" })),
            "image.url: ftp://images.example.com/os.qcow2 is not an http:// or https:// URL",
        ),
        (
            "device-name",
            spec(json!({ "rootDeviceHints": { "deviceName": "sda" } })),
            "rootDeviceHints.deviceName: sda is not a device path (/dev/…)",
        ),
        (
            "hctl",
            spec(json!({ "rootDeviceHints": { "hctl": "0:0:0" } })),
            "rootDeviceHints.hctl: 0:0:0 is not Host:Channel:Target:Lun (e.g. 0:0:0:0)",
        ),
        (
            "min-size",
            spec(json!({ "rootDeviceHints": { "minSizeGigabytes": -5 } })),
            "rootDeviceHints.minSizeGigabytes: -5 is negative",
        ),
    ]
}

fn server(name: &str, spec: &Value) -> Server {
    let spec: ServerSpec = serde_json::from_value(spec.clone()).expect("a spec");
    Server::new(name, spec)
}

/// The CRDs without their CEL rules, as an API server that ignores them would serve them.
fn crds_without_rules() -> Vec<CustomResourceDefinition> {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("x-kubernetes-validations");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    metal_operator::api::crds()
        .into_iter()
        .map(|crd| {
            let mut value = serde_json::to_value(crd).expect("CRD JSON");
            strip(&mut value);
            serde_json::from_value(value).expect("CRD")
        })
        .collect()
}

async fn start_manager(env: &TestEnv) -> RunningManager {
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    Manager::builder(client.await.expect("the operator's client"))
        .with_controller(ServerReconciler)
        .start_for_tests()
        .await
        .expect("manager starts")
}

/// Every name kubectl resolves for the resources of `group_version` (plural, singular, short
/// names), as the API server's discovery documents serve them.
async fn names(env: &TestEnv, group_version: &str) -> Vec<String> {
    let list = env
        .client()
        .list_api_group_resources(group_version)
        .await
        .expect("discovery");
    let mut names = Vec::new();
    for r in list.resources.into_iter().filter(|r| !r.name.contains('/')) {
        names.push(r.name);
        names.push(r.singular_name);
        names.extend(r.short_names.unwrap_or_default());
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_at_admission_naming_the_field() {
    let env = TestEnv::builder()
        .with_crds(metal_operator::api::crds())
        .with_crds(mni_metal3::crds())
        .start()
        .await
        .expect("control plane starts");
    let api: Api<Server> = Api::namespaced(env.client(), NAMESPACE);
    for (name, spec, expected) in cases() {
        let err = api
            .create(&PostParams::default(), &server(name, &spec))
            .await
            .expect_err(name);
        let kube::Error::Api(status) = err else {
            panic!("{name}: {err}");
        };
        assert_eq!(status.code, 422, "{name}: {status:?}");
        assert!(
            status.message.contains(expected),
            "{name}: {}",
            status.message
        );
    }

    // A server with an image keeps its BMC address and its image until it is deprovisioned.
    let provisioned =
        spec(json!({ "image": { "url": "http://images.example.com/a.qcow2", "checksum": "abc" } }));
    api.create(&PostParams::default(), &server("provisioned", &provisioned))
        .await
        .expect("a valid server");
    for (edit, expected) in [
        (
            json!({ "spec": { "bmc": { "address": "redfish://10.0.0.9/redfish/v1/Systems/1" } } }),
            "bmc.address: cannot change while the server has an image; deprovision it first",
        ),
        (
            json!({ "spec": { "image": { "url": "http://images.example.com/b.qcow2" } } }),
            "image.url: cannot change the image of a provisioned server; deprovision it first",
        ),
    ] {
        let err = api
            .patch("provisioned", &PatchParams::default(), &Patch::Merge(&edit))
            .await
            .expect_err(expected);
        let kube::Error::Api(status) = err else {
            panic!("{expected}: {err}");
        };
        assert_eq!(status.code, 422, "{status:?}");
        assert!(status.message.contains(expected), "{}", status.message);
    }
    // Deprovisioning first is allowed, and then the address may change.
    api.patch(
        "provisioned",
        &PatchParams::default(),
        &Patch::Merge(&json!({ "spec": { "image": null } })),
    )
    .await
    .expect("deprovision");
    api.patch(
        "provisioned",
        &PatchParams::default(),
        &Patch::Merge(
            &json!({ "spec": { "bmc": { "address": "redfish://10.0.0.9/redfish/v1/Systems/1" } } }),
        ),
    )
    .await
    .expect("a new BMC once deprovisioned");

    // Metal3's names stay Metal3's.
    let ours = names(&env, "metal.mni.dev/v1alpha1").await;
    let metal3 = names(&env, "metal3.io/v1alpha1").await;
    assert!(ours.contains(&"srv".to_owned()), "{ours:?}");
    assert!(metal3.contains(&"bmh".to_owned()), "{metal3:?}");
    let clashes: Vec<&String> = ours.iter().filter(|n| metal3.contains(n)).collect();
    assert!(clashes.is_empty(), "names of both: {clashes:?}");
    env.shutdown().await;
}

/// The `Degraded` condition of `name` once it is `True`: its reason and message.
async fn degraded(api: &Api<Server>, env: &TestEnv, name: &str) -> (String, String) {
    let obj = wait_for_condition(api, name, "Degraded", "True", env.timeout())
        .await
        .expect(name);
    let conditions = obj.status.expect("status").conditions;
    let c = conditions
        .iter()
        .find(|c| c.type_ == "Degraded")
        .expect("Degraded");
    (c.reason.clone(), c.message.clone())
}

#[tokio::test]
async fn without_the_rules_the_controller_reports_and_creates_nothing() {
    let env = TestEnv::builder()
        .with_crds(crds_without_rules())
        .with_crds(mni_metal3::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = start_manager(&env).await;
    let api: Api<Server> = Api::namespaced(env.client(), NAMESPACE);
    let hosts: Api<BareMetalHost> = Api::namespaced(env.client(), NAMESPACE);
    for (name, spec, expected) in cases() {
        api.create(&PostParams::default(), &server(name, &spec))
            .await
            .expect(name);
        let (reason, message) = degraded(&api, &env, name).await;
        assert!(message.contains(expected), "{name}: {message}");
        assert_eq!(reason, "InvalidSpec", "{name}");
        let obj = api.get(name).await.expect(name);
        let ready = obj.status.expect("status").conditions;
        let ready = ready.iter().find(|c| c.type_ == READY).expect("Ready");
        assert_eq!(ready.reason, "InvalidSpec", "{name}");
        assert!(
            hosts.get_opt(name).await.expect("get").is_none(),
            "{name}: no BareMetalHost"
        );
    }
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

#[tokio::test]
async fn missing_secrets_and_a_duplicate_bmc_are_conditions_naming_the_field() {
    let env = TestEnv::builder()
        .with_crds(metal_operator::api::crds())
        .with_crds(mni_metal3::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = start_manager(&env).await;
    let api: Api<Server> = Api::namespaced(env.client(), NAMESPACE);
    let hosts: Api<BareMetalHost> = Api::namespaced(env.client(), NAMESPACE);
    let secrets: Api<Secret> = Api::namespaced(env.client(), NAMESPACE);

    api.create(
        &PostParams::default(),
        &server("no-secret", &spec(json!({}))),
    )
    .await
    .expect("create");
    let (reason, message) = degraded(&api, &env, "no-secret").await;
    assert_eq!(reason, "CredentialsSecretNotFound");
    assert!(
        message.contains("bmc.credentialsName: Secret bmc-credentials does not exist"),
        "{message}"
    );

    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": "half-credentials" },
        "stringData": { "username": "admin" },
    }))
    .expect("a Secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create the Secret");
    let half = spec(json!({
        "bmc": {
            "address": "redfish+http://127.0.0.1:9/redfish/v1/Systems/2",
            "credentialsName": "half-credentials",
        },
    }));
    api.create(&PostParams::default(), &server("half-secret", &half))
        .await
        .expect("create");
    let (reason, message) = degraded(&api, &env, "half-secret").await;
    assert_eq!(reason, "CredentialsSecretInvalid");
    assert!(
        message.contains("bmc.credentialsName: Secret half-credentials has no password"),
        "{message}"
    );

    // The same BMC as no-secret, created later.
    api.create(&PostParams::default(), &server("twin", &spec(json!({}))))
        .await
        .expect("create");
    let (reason, message) = degraded(&api, &env, "twin").await;
    assert_eq!(reason, "DuplicateBMCAddress");
    assert!(
        message.contains("is already the BMC of Server default/no-secret"),
        "{message}"
    );
    for name in ["no-secret", "half-secret", "twin"] {
        assert!(
            hosts.get_opt(name).await.expect("get").is_none(),
            "{name}: no BareMetalHost"
        );
    }
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}
