//! The workload engine (`mni_operator::workload`) end to end: a `Shop` service kind reconciled
//! through it on the in-process control plane, whose workload simulator makes Deployments
//! available (or fail, with `simulate.mni.dev/fail`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::{CustomResource, CustomResourceExt, Resource};
use mni_core::{ServiceStatus, WorkloadSpec};
use mni_operator::prelude::*;
use mni_operator::workload::{self, ServiceWorkloads, WorkloadError};
use mni_operator::{DEGRADED, RunningManager};
use mni_testkit::{TestEnv, wait_deleted, wait_for, wait_for_condition};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;

const NAMESPACE: &str = "default";

/// One installation of the shop service.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Shop", namespaced)]
#[kube(status = "ServiceStatus")]
#[serde(rename_all = "camelCase")]
struct ShopSpec {
    frontend: WorkloadSpec,
    backend: WorkloadSpec,
    #[serde(default)]
    settings: std::collections::BTreeMap<String, String>,
    /// Test switch: run without the NetworkPolicy (the engine prunes it).
    #[serde(default)]
    open: bool,
}

// ANCHOR: reconciler (shown in book/src/operator-runtime.md)
struct ShopReconciler;

fn workloads(obj: &Shop) -> ServiceWorkloads {
    let open = obj.spec.open;
    ServiceWorkloads::for_owner(obj, "shop")
        .with_frontend(obj.spec.frontend.clone())
        .with_backend(obj.spec.backend.clone())
        .with_settings(obj.spec.settings.clone())
        .with_backend_rules(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["configmaps".to_owned()]),
            verbs: vec!["get".to_owned()],
            ..Default::default()
        }])
        .with_customize(move |children| {
            if open {
                children.network_policy = None;
            }
        })
}

impl Reconciler for ShopReconciler {
    type K = Shop;
    type Error = WorkloadError;

    fn name(&self) -> &str {
        "shop-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Shop>,
        ctx: &Context<Shop>,
    ) -> Result<Action, WorkloadError> {
        workloads(&obj)
            .reconcile(ctx, &obj, obj.status.as_ref())
            .await
    }

    fn relations(&self) -> Relations<Shop> {
        workload::relations()
    }
}
// ANCHOR_END: reconciler

struct Fixture {
    env: TestEnv,
    manager: RunningManager,
    api: Api<Shop>,
    ready: Shop,
}

impl Fixture {
    async fn stop(self) {
        self.manager.shutdown().await.expect("clean shutdown");
        self.env.shutdown().await;
    }
}

/// A control plane with the simulator and the engine's controller, and a Shop `name` that is
/// Ready.
async fn start(name: &str) -> Fixture {
    let env = TestEnv::builder()
        .with_simulator(true)
        .with_crds(vec![Shop::crd()])
        .start()
        .await
        .expect("control plane starts");
    let manager = Manager::builder(env.client())
        .with_controller(ShopReconciler)
        .start_for_tests()
        .await
        .expect("manager starts");
    let api: Api<Shop> = Api::namespaced(env.client(), NAMESPACE);
    let spec = ShopSpec {
        frontend: WorkloadSpec::new("shop-frontend:1"),
        backend: WorkloadSpec::new("shop-backend:1"),
        settings: Default::default(),
        open: false,
    };
    api.create(&PostParams::default(), &Shop::new(name, spec))
        .await
        .expect("create");
    let ready = wait_for_condition(&api, name, READY, "True", env.timeout())
        .await
        .expect("the Shop becomes Ready");
    Fixture {
        env,
        manager,
        api,
        ready,
    }
}

/// Reads the object `name` of kind `K` and asserts that the fixture's Shop controls it.
async fn owned<K>(f: &Fixture, name: &str) -> K
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    K: Clone + std::fmt::Debug + DeserializeOwned,
{
    let api: Api<K> = Api::namespaced(f.env.client(), NAMESPACE);
    let obj = api
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("{} {name}: {e}", K::kind(&())));
    let refs = obj.meta().owner_references.clone().unwrap_or_default();
    let owner = f.ready.meta().uid.as_ref();
    assert!(
        refs.iter()
            .any(|r| Some(&r.uid) == owner && r.controller == Some(true)),
        "{name} is controlled by the Shop: {refs:?}"
    );
    obj
}

fn backend_checksum(deployment: &Deployment) -> Option<String> {
    let template = deployment.spec.template.metadata.as_ref()?;
    let annotations = template.annotations.as_ref()?;
    annotations
        .get("shop.example.com/settings-checksum")
        .cloned()
}

#[tokio::test]
async fn a_service_gets_its_children_and_becomes_ready() {
    let f = start("sample").await;
    for name in ["sample-frontend", "sample-backend"] {
        let deployment: Deployment = owned(&f, name).await;
        let pod = deployment.spec.template.spec.expect("pod");
        let security = pod.containers[0]
            .security_context
            .clone()
            .expect("security");
        assert_eq!(security.read_only_root_filesystem, Some(true));
        let _: Service = owned(&f, name).await;
    }
    let _: ServiceAccount = owned(&f, "sample-backend").await;
    let role: Role = owned(&f, "sample-backend").await;
    let resources = role.rules.unwrap_or_default()[0].resources.clone();
    assert_eq!(resources, Some(vec!["configmaps".to_owned()]));
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
async fn a_converged_service_is_not_written_again() {
    let f = start("quiet").await;
    // Let the simulator finish its own status writes first.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let deployments: Api<Deployment> = Api::namespaced(f.env.client(), NAMESPACE);
    let before = deployments.get("quiet-backend").await.expect("backend");
    let status_before = f.api.get("quiet").await.expect("shop").status;
    // An unrelated change to the Shop (a label) reconciles it again.
    let patch = json!({ "metadata": { "labels": { "touched": "yes" } } });
    f.api
        .patch("quiet", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("label the Shop");
    let labelled = |obj: &Shop| {
        obj.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("touched"))
    };
    wait_for(&f.api, "quiet", labelled, f.env.timeout())
        .await
        .expect("labelled");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let after = deployments.get("quiet-backend").await.expect("backend");
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    let shop = f.api.get("quiet").await.expect("shop");
    assert_eq!(shop.status, status_before, "no status write either");
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
    let three_ready = |obj: &Shop| {
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
async fn a_failing_backend_is_named_in_degraded_and_heals() {
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
        .expect("the Shop becomes Degraded");
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
async fn a_child_no_longer_wanted_is_pruned_and_others_are_left_alone() {
    let f = start("pruned").await;
    let _: NetworkPolicy = owned(&f, "pruned-backend").await;
    // A ConfigMap the Shop owns that the engine did not apply must survive pruning.
    let configmaps: Api<ConfigMap> = Api::namespaced(f.env.client(), NAMESPACE);
    let mut mine = ConfigMap::default();
    mine.metadata.name = Some("pruned-extra".to_owned());
    mine.metadata.owner_references =
        Some(vec![f.ready.controller_owner_ref(&()).expect("owner ref")]);
    configmaps
        .create(&PostParams::default(), &mine)
        .await
        .expect("an extra owned ConfigMap");

    let patch = json!({ "spec": { "open": true } });
    f.api
        .patch("pruned", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("open the backend");
    let policies: Api<NetworkPolicy> = Api::namespaced(f.env.client(), NAMESPACE);
    wait_deleted(&policies, "pruned-backend", f.env.timeout())
        .await
        .expect("the NetworkPolicy is pruned");
    let _: ConfigMap = owned(&f, "pruned-backend-settings").await;
    let _: ConfigMap = owned(&f, "pruned-extra").await;
    f.stop().await;
}

#[tokio::test]
async fn a_name_too_long_for_its_services_is_an_invalid_spec() {
    let env = TestEnv::builder()
        .with_simulator(true)
        .with_crds(vec![Shop::crd()])
        .start()
        .await
        .expect("control plane starts");
    let manager = Manager::builder(env.client())
        .with_controller(ShopReconciler)
        .start_for_tests()
        .await
        .expect("manager starts");
    let api: Api<Shop> = Api::namespaced(env.client(), NAMESPACE);
    let name = "x".repeat(workload::MAX_NAME_LENGTH + 1);
    let spec = ShopSpec {
        frontend: WorkloadSpec::new("f:1"),
        backend: WorkloadSpec::new("b:1"),
        settings: Default::default(),
        open: false,
    };
    api.create(&PostParams::default(), &Shop::new(&name, spec))
        .await
        .expect("create");
    let invalid = wait_for_condition(&api, &name, READY, "False", env.timeout())
        .await
        .expect("Ready=False");
    let ready = invalid.status.expect("status").conditions;
    let ready = ready.iter().find(|c| c.type_ == READY).expect("Ready");
    assert_eq!(ready.reason, "InvalidSpec");
    assert!(ready.message.contains("metadata.name"), "{}", ready.message);
    let deployments: Api<Deployment> = Api::namespaced(env.client(), NAMESPACE);
    assert!(
        deployments
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

#[tokio::test]
async fn deleting_a_service_in_the_foreground_deletes_its_children() {
    let f = start("deleted").await;
    f.api
        .delete("deleted", &DeleteParams::foreground())
        .await
        .expect("delete");
    wait_deleted(&f.api, "deleted", f.env.timeout())
        .await
        .expect("the Shop goes away once its children are gone");
    let deployments: Api<Deployment> = Api::namespaced(f.env.client(), NAMESPACE);
    wait_deleted(&deployments, "deleted-backend", f.env.timeout())
        .await
        .expect("the backend Deployment is garbage-collected");
    f.stop().await;
}
