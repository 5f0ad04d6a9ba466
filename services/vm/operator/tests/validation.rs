// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Bad input, at both gates: the API server refuses it at admission through the CRD's CEL
//! rules (HTTP 422, the message naming the field), and the
//! controller — for CRDs installed without the rules — reports `Degraded` with reason
//! `InvalidSpec` and the same message, and creates no VirtualMachine. With KubeVirt's CRDs
//! installed beside the Instance CRD, the names kubectl resolves do not clash.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use mni_kubevirt::v1::VirtualMachine;
use mni_operator::{Manager, READY, RunningManager};
use mni_testkit::{TestEnv, wait_for_condition};
use serde_json::{Value, json};

use compute_operator::api::compute_v1alpha1::Instance;
use compute_operator::api::compute_v1alpha1::InstanceSpec;
use compute_operator::controllers::instance::InstanceReconciler;

const NAMESPACE: &str = "default";

/// A valid spec with `edit` merged in (`null` removes a field).
fn spec(edit: Value) -> Value {
    let mut spec = json!({
        "instanceType": "s1.small",
        "bootDisk": { "image": "quay.io/containerdisks/fedora:41" },
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
    vec![
        (
            "unknown-type",
            spec(json!({ "instanceType": "t2.micro" })),
            "instanceType: unknown instance type t2.micro; choose one of s1.small, s1.medium, s1.large, m1.large, m1.xlarge",
        ),
        (
            "type-and-resources",
            spec(json!({ "resources": { "cores": 2, "memory": "4Gi" } })),
            "instanceType: set an instance type or resources, not both",
        ),
        (
            "zero-cores",
            spec(json!({ "instanceType": null, "resources": { "cores": 0, "memory": "4Gi" } })),
            "resources.cores: 0 is not between 1 and 32",
        ),
        (
            "memory-not-a-quantity",
            spec(json!({ "instanceType": null, "resources": { "cores": 2, "memory": "lots" } })),
            "resources.memory: lots is not a quantity in Mi or Gi (e.g. 4Gi)",
        ),
        (
            "memory-above-limit",
            spec(json!({ "instanceType": null, "resources": { "cores": 2, "memory": "256Gi" } })),
            "resources.memory: 256Gi is above the limit of 128Gi",
        ),
        (
            "empty-image",
            spec(json!({ "bootDisk": { "image": "" } })),
            "bootDisk.image: must not be empty",
        ),
        (
            "malformed-image",
            spec(json!({ "bootDisk": { "image": "Fedora:latest!" } })),
            "bootDisk.image: Fedora:latest! is not a container image reference (REGISTRY/REPOSITORY:TAG)",
        ),
        (
            "ftp-import",
            spec(
                json!({ "bootDisk": { "image": null, "http": { "url": "ftp://images.example.com/d.qcow2", "size": "10Gi" } } }),
            ),
            "bootDisk.http.url: ftp://images.example.com/d.qcow2 is not an http:// or https:// URL",
        ),
        (
            "run-strategy",
            spec(json!({ "runStrategy": "Sometimes" })),
            "runStrategy: unknown run strategy Sometimes; choose one of Always, Halted, Manual, RerunOnFailure",
        ),
        (
            "fixed-ip",
            spec(
                json!({ "network": { "vpc": { "name": "tenant", "subnet": "web", "ip": "10.0.1.300" } } }),
            ),
            "network.vpc.ip: 10.0.1.300 is not an IP address",
        ),
    ]
}

fn instance(name: &str, spec: &Value) -> Instance {
    let spec: InstanceSpec = serde_json::from_value(spec.clone()).expect("a spec");
    Instance::new(name, spec)
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
    compute_operator::api::crds()
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
        .with_controller(InstanceReconciler)
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
        .with_crds(compute_operator::api::crds())
        .with_crds(mni_kubevirt::crds())
        .start()
        .await
        .expect("control plane starts");
    let api: Api<Instance> = Api::namespaced(env.client(), NAMESPACE);
    for (name, spec, expected) in cases() {
        let err = api
            .create(&PostParams::default(), &instance(name, &spec))
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

    // KubeVirt's names stay KubeVirt's: what kubectl resolves `vm`, `vms` and
    // `virtualmachine` with is not among the Instance's names.
    let ours = names(&env, "compute.mni.dev/v1alpha1").await;
    let kubevirt = names(&env, "kubevirt.io/v1").await;
    assert!(ours.contains(&"inst".to_owned()), "{ours:?}");
    for name in ["vm", "vms", "virtualmachine", "virtualmachines"] {
        assert!(kubevirt.contains(&name.to_owned()), "{kubevirt:?}");
    }
    let clashes: Vec<&String> = ours.iter().filter(|n| kubevirt.contains(n)).collect();
    assert!(clashes.is_empty(), "names of both: {clashes:?}");
    env.shutdown().await;
}

#[tokio::test]
async fn without_the_rules_the_controller_reports_and_creates_nothing() {
    let env = TestEnv::builder()
        .with_crds(crds_without_rules())
        .with_crds(mni_kubevirt::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = start_manager(&env).await;
    let api: Api<Instance> = Api::namespaced(env.client(), NAMESPACE);
    let vms: Api<VirtualMachine> = Api::namespaced(env.client(), NAMESPACE);
    for (name, spec, expected) in cases() {
        api.create(&PostParams::default(), &instance(name, &spec))
            .await
            .expect(name);
        let invalid = wait_for_condition(&api, name, "Degraded", "True", env.timeout())
            .await
            .expect(name);
        let conditions = invalid.status.expect("status").conditions;
        let degraded = conditions
            .iter()
            .find(|c| c.type_ == "Degraded")
            .expect("Degraded");
        assert!(
            degraded.message.contains(expected),
            "{name}: {}",
            degraded.message
        );
        let ready = conditions.iter().find(|c| c.type_ == READY).expect("Ready");
        assert_eq!(ready.reason, "InvalidSpec", "{name}");
        assert!(
            vms.get_opt(name).await.expect("get").is_none(),
            "{name}: no VM"
        );
    }
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}
