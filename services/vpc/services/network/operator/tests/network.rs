// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `NetworkReconciler` against an in-process control plane (`mni-testkit`) whose workload
//! simulator makes Deployments available (or fail, with `simulate.mni.dev/fail`). The operator
//! runs as its own ServiceAccount with the rules of `config/rbac/role.yaml`, so a missing RBAC
//! rule fails here, not in a cluster.

use std::path::Path;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::{Client, Resource};
use mni_operator::{DEGRADED, Manager, READY, RunningManager};
use mni_testkit::{TestEnv, wait_deleted, wait_for, wait_for_condition};
use serde::de::DeserializeOwned;
use serde_json::json;

use network_operator::api::network_v1alpha1::Network;
use network_operator::api::network_v1alpha1::NetworkSpec;
use network_operator::controllers::network::NetworkReconciler;
use network_operator::controllers::network::children::CHECKSUM;

const NAMESPACE: &str = "default";

/// A client with the operator's production rules.
async fn operator_client(env: &TestEnv) -> Client {
    let role = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/rbac/role.yaml");
    let text = std::fs::read_to_string(&role).expect("config/rbac/role.yaml");
    let role: ClusterRole = serde_yaml::from_str(&text).expect("config/rbac/role.yaml parses");
    env.cluster_service_account_client(
        "network-operator-system",
        "network-operator-controller-manager",
        role.rules.unwrap_or_default(),
    )
    .await
    .expect("service account client")
}

/// A control plane with the simulator and the operator, and a Network that is Ready.
struct Fixture {
    env: TestEnv,
    manager: RunningManager,
    api: Api<Network>,
    ready: Network,
}

impl Fixture {
    async fn stop(self) {
        self.manager.shutdown().await.expect("clean shutdown");
        self.env.shutdown().await;
    }
}

/// Starts a control plane with the simulator and the operator, creates a Network `name` with
/// the default spec and waits until it is Ready.
async fn start(name: &str) -> Fixture {
    let env = TestEnv::builder()
        .with_simulator(true)
        .with_crds(network_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = Manager::builder(operator_client(&env).await)
        .with_signal_handling(false)
        .with_metrics_address(None)
        .with_health_probe_address(None)
        .with_controller(NetworkReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");
    let api: Api<Network> = Api::namespaced(env.client(), NAMESPACE);
    let obj = Network::new(name, NetworkSpec::default());
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
    let ready = wait_for_condition(&api, name, READY, "True", env.timeout())
        .await
        .expect("the Network becomes Ready");
    Fixture {
        env,
        manager,
        api,
        ready,
    }
}

/// Reads the object `name` of kind `K` and asserts that the fixture's Network controls it.
async fn owned<K>(fixture: &Fixture, name: &str) -> K
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    K: Clone + std::fmt::Debug + DeserializeOwned,
{
    let api: Api<K> = Api::namespaced(fixture.env.client(), NAMESPACE);
    let obj = api
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("{} {name}: {e}", K::kind(&())));
    let refs = obj.meta().owner_references.clone().unwrap_or_default();
    let owner = fixture.ready.meta().uid.as_ref();
    assert!(
        refs.iter()
            .any(|r| Some(&r.uid) == owner && r.controller == Some(true)),
        "{name} is controlled by the Network: {refs:?}"
    );
    obj
}

fn backend_checksum(deployment: &Deployment) -> Option<String> {
    deployment
        .spec
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(CHECKSUM)
        .cloned()
}

#[tokio::test]
async fn a_network_gets_its_children_and_becomes_ready() {
    let f = start("sample").await;
    for name in ["sample-frontend", "sample-backend"] {
        let deployment: Deployment = owned(&f, name).await;
        let pod = deployment.spec.template.spec.expect("pod");
        let container = &pod.containers[0];
        let security = container.security_context.clone().expect("security");
        assert_eq!(security.read_only_root_filesystem, Some(true));
        let _: Service = owned(&f, name).await;
    }
    let _: ServiceAccount = owned(&f, "sample-backend").await;
    let role: Role = owned(&f, "sample-backend").await;
    let rules = role.rules.unwrap_or_default();
    let resources = rules[0].resources.clone().unwrap_or_default();
    assert_eq!(resources, ["virtualprivateclouds"]);
    let _: RoleBinding = owned(&f, "sample-backend").await;
    let _: ConfigMap = owned(&f, "sample-backend-settings").await;
    let _: NetworkPolicy = owned(&f, "sample-backend").await;

    let status = f.ready.status.clone().expect("status");
    assert_eq!(status.observed_generation, Some(1));
    let url = status.url.as_deref();
    assert_eq!(url, Some("http://sample-frontend.default.svc:8080"));
    assert_eq!(status.backend.map(|b| b.ready_replicas), Some(1));
    f.stop().await;
}

#[tokio::test]
async fn scaling_the_frontend_is_applied_and_becomes_ready_again() {
    let f = start("scaled").await;
    let patch = json!({ "spec": { "frontend": { "replicas": 3 } } });
    f.api
        .patch("scaled", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("scale");
    let three_ready = |obj: &Network| {
        obj.status.as_ref().is_some_and(|s| {
            s.observed_generation == Some(2)
                && s.frontend.as_ref().map(|f| f.ready_replicas) == Some(3)
        })
    };
    wait_for(&f.api, "scaled", three_ready, f.env.timeout())
        .await
        .expect("three frontend replicas become ready");
    let frontend: Deployment = owned(&f, "scaled-frontend").await;
    assert_eq!(frontend.spec.replicas, Some(3));
    wait_for_condition(&f.api, "scaled", READY, "True", f.env.timeout())
        .await
        .expect("Ready again");
    f.stop().await;
}

#[tokio::test]
async fn a_failing_backend_is_named_in_degraded() {
    let f = start("failing").await;
    let deployments: Api<Deployment> = Api::namespaced(f.env.client(), NAMESPACE);
    let fail = |value: serde_json::Value| {
        let annotations = json!({ "simulate.mni.dev/fail": value });
        Patch::Merge(json!({ "metadata": { "annotations": annotations } }))
    };
    let params = PatchParams::default();
    deployments
        .patch("failing-backend", &params, &fail(json!("true")))
        .await
        .expect("break the backend");
    let degraded = wait_for_condition(&f.api, "failing", DEGRADED, "True", f.env.timeout())
        .await
        .expect("the Network becomes Degraded");
    let conditions = degraded.status.expect("status").conditions;
    let find = |type_: &str| conditions.iter().find(|c| c.type_ == type_).cloned();
    let why = find(DEGRADED).expect("Degraded").message;
    assert!(why.starts_with("backend: "), "{why}");
    assert!(why.contains("CrashLoopBackOff"), "{why}");
    assert!(!find(READY).expect("Ready").is_true());

    deployments
        .patch("failing-backend", &params, &fail(serde_json::Value::Null))
        .await
        .expect("heal the backend");
    wait_for_condition(&f.api, "failing", DEGRADED, "False", f.env.timeout())
        .await
        .expect("no longer Degraded");
    wait_for_condition(&f.api, "failing", READY, "True", f.env.timeout())
        .await
        .expect("Ready again");
    f.stop().await;
}

#[tokio::test]
async fn changing_the_settings_rolls_the_backend_only() {
    let f = start("settings").await;
    let backend: Deployment = owned(&f, "settings-backend").await;
    let frontend: Deployment = owned(&f, "settings-frontend").await;
    let before = backend_checksum(&backend).expect("a checksum annotation");

    let patch = json!({ "spec": { "settings": { "GREETING": "hello" } } });
    f.api
        .patch("settings", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("change the settings");
    let deployments: Api<Deployment> = Api::namespaced(f.env.client(), NAMESPACE);
    let changed = |d: &Deployment| backend_checksum(d).is_some_and(|c| c != before);
    let rolled = wait_for(&deployments, "settings-backend", changed, f.env.timeout())
        .await
        .expect("the backend's pod template changes");
    assert!(rolled.metadata.generation > backend.metadata.generation);
    let settings: ConfigMap = owned(&f, "settings-backend-settings").await;
    let data = settings.data.unwrap_or_default();
    assert_eq!(data.get("GREETING").map(String::as_str), Some("hello"));
    let after: Deployment = owned(&f, "settings-frontend").await;
    assert_eq!(after.metadata.generation, frontend.metadata.generation);
    f.stop().await;
}

#[tokio::test]
async fn deleting_a_network_in_the_foreground_deletes_its_children() {
    let f = start("deleted").await;
    f.api
        .delete("deleted", &DeleteParams::foreground())
        .await
        .expect("delete");
    wait_deleted(&f.api, "deleted", f.env.timeout())
        .await
        .expect("the Network goes away once its children are gone");
    let deployments: Api<Deployment> = Api::namespaced(f.env.client(), NAMESPACE);
    wait_deleted(&deployments, "deleted-backend", f.env.timeout())
        .await
        .expect("the backend Deployment is garbage-collected");
    f.stop().await;
}
