// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Invalid address plans, at both gates: the API server refuses them at admission through the
//! CRD's CEL rules (HTTP 422 naming the subnet and the rule), and the controller — for CRDs
//! installed without the rules — sets `Validated=False` with the same message and creates
//! nothing in Kube-OVN.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use mni_kubeovn::v1 as ovn;
use mni_operator::{Manager, READY, RunningManager};
use mni_testkit::{TestEnv, wait_for, wait_for_condition};
use serde_json::{Value, json};

use network_operator::api::network_v1alpha1::VirtualPrivateCloud;
use network_operator::api::network_v1alpha1::VirtualPrivateCloudSpec;
use network_operator::controllers::virtual_private_cloud::VirtualPrivateCloudReconciler;
use network_operator::controllers::virtual_private_cloud::upstream::OWNER_UID;

const NAMESPACE: &str = "default";

/// Each invalid spec with the message it must get.
fn cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "malformed-cidr",
            json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/33" }] }),
            "subnet web: cidrBlock 10.0.0.0/33 is not a CIDR, nor an IPv4 and an IPv6 CIDR separated by a comma",
        ),
        (
            "overlap",
            json!({ "subnets": [
                { "name": "web", "cidrBlock": "10.0.0.0/16" },
                { "name": "db", "cidrBlock": "10.0.5.0/24" },
            ] }),
            "subnet web: cidrBlock 10.0.0.0/16 overlaps subnet db (10.0.5.0/24)",
        ),
        (
            "gateway-outside",
            json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/24", "gateway": "10.0.1.1" }] }),
            "subnet web: gateway 10.0.1.1 is outside cidrBlock 10.0.0.0/24",
        ),
        (
            "exclude-outside",
            json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/24", "excludeIps": ["10.0.0.5", "10.9.0.1..10.9.0.3"] }] }),
            "subnet web: excludeIps 10.9.0.1..10.9.0.3 is outside cidrBlock 10.0.0.0/24",
        ),
        (
            "dual-stack",
            json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/24,10.1.0.0/24" }] }),
            "subnet web: the dual-stack cidrBlock 10.0.0.0/24,10.1.0.0/24 needs one IPv4 and one IPv6 CIDR",
        ),
        (
            "allow-subnets",
            json!({ "subnets": [{ "name": "db", "cidrBlock": "10.0.2.0/24", "private": true, "allowSubnets": ["web"] }] }),
            "subnet db: allowSubnets web is not a CIDR",
        ),
        (
            "unknown-eip",
            json!({
                "subnets": [{ "name": "web", "cidrBlock": "10.0.1.0/24" }],
                "natGateway": {
                    "lanIp": "10.0.1.254",
                    "externalSubnet": "ovn-vpc-external-network",
                    "eips": [{ "name": "egress" }],
                    "snatRules": [{ "name": "out", "eip": "ingress", "internalCIDR": "10.0.1.0/24" }],
                },
            }),
            "snat rule out: eip ingress is not one of natGateway.eips",
        ),
    ]
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
    network_operator::api::crds()
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
        .with_controller(VirtualPrivateCloudReconciler)
        .start_for_tests()
        .await
        .expect("manager starts")
}

fn vpc(name: &str, spec: &Value) -> VirtualPrivateCloud {
    let spec: VirtualPrivateCloudSpec = serde_json::from_value(spec.clone()).expect("a spec");
    VirtualPrivateCloud::new(name, spec)
}

async fn owned_subnets(env: &TestEnv, uid: &str) -> Vec<String> {
    Api::<ovn::Subnet>::all(env.client())
        .list(&ListParams::default().labels(&format!("{OWNER_UID}={uid}")))
        .await
        .expect("list")
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect()
}

#[tokio::test]
async fn invalid_plans_are_refused_at_admission_naming_subnet_and_rule() {
    let env = TestEnv::builder()
        .with_crds(network_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    for (name, spec, expected) in cases() {
        let err = api
            .create(&PostParams::default(), &vpc(name, &spec))
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

    // cidrBlock is immutable: the transition rule refuses a change.
    let valid = json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/24" }] });
    api.create(&PostParams::default(), &vpc("fixed", &valid))
        .await
        .expect("a valid VPC");
    let change = json!({ "spec": { "subnets": [{ "name": "web", "cidrBlock": "10.0.8.0/24" }] } });
    let err = api
        .patch("fixed", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .expect_err("cidrBlock is immutable");
    assert!(
        err.to_string()
            .contains("subnet web: cidrBlock is immutable (it was 10.0.0.0/24)"),
        "{err}"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn without_the_rules_the_controller_refuses_and_creates_nothing() {
    let env = TestEnv::builder()
        .with_crds(crds_without_rules())
        .with_kube_ovn(true)
        .start()
        .await
        .expect("control plane starts");
    let manager = start_manager(&env).await;
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    for (name, spec, expected) in cases() {
        let created = api
            .create(&PostParams::default(), &vpc(name, &spec))
            .await
            .expect(name);
        let invalid = wait_for_condition(&api, name, "Validated", "False", env.timeout())
            .await
            .expect(name);
        let conditions = invalid.status.expect("status").conditions;
        let validated = conditions
            .iter()
            .find(|c| c.type_ == "Validated")
            .expect("Validated");
        assert!(
            validated.message.contains(expected),
            "{name}: {}",
            validated.message
        );
        let ready = conditions.iter().find(|c| c.type_ == READY).expect("Ready");
        assert_eq!(ready.reason, "InvalidSpec", "{name}");
        let uid = created.uid().expect("uid");
        assert!(
            owned_subnets(&env, &uid).await.is_empty(),
            "{name}: nothing upstream"
        );
    }

    // A changed cidrBlock is refused against the Kube-OVN Subnet, which stays as it was.
    let valid = json!({ "subnets": [{ "name": "web", "cidrBlock": "10.0.0.0/24" }] });
    api.create(&PostParams::default(), &vpc("fixed", &valid))
        .await
        .expect("a valid VPC");
    wait_for_condition(&api, "fixed", READY, "True", env.timeout())
        .await
        .expect("Ready");
    let change = json!({ "spec": { "subnets": [{ "name": "web", "cidrBlock": "10.0.8.0/24" }] } });
    api.patch("fixed", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .expect("accepted without the rules");
    let refused = wait_for(
        &api,
        "fixed",
        |v: &VirtualPrivateCloud| {
            v.status.as_ref().is_some_and(|s| {
                s.conditions.iter().any(|c| {
                    c.type_ == "Validated"
                        && c.message
                            .contains("subnet web: cidrBlock is immutable (it was 10.0.0.0/24)")
                })
            })
        },
        env.timeout(),
    )
    .await
    .expect("Validated=False");
    assert!(refused.status.is_some());
    let subnet = Api::<ovn::Subnet>::all(env.client())
        .get("default-fixed-web")
        .await
        .expect("the Kube-OVN Subnet");
    assert_eq!(subnet.spec.cidr_block, "10.0.0.0/24");

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
