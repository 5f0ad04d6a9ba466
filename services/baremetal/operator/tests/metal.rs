// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `MetalReconciler` against an in-process control plane (`mni-testkit`) whose workload
//! simulator makes Deployments available (or fail, with `simulate.mni.dev/fail`). The operator
//! runs as its own ServiceAccount with the rules of `config/rbac/role.yaml`, so a missing RBAC
//! rule fails here, not in a cluster. What the runtime's workload engine does for every service
//! (rollouts, failures named in `Degraded`, settings that roll the backend, pruning) is tested
//! in the runtime itself.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::Resource;
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::NamespaceResourceScope;
use mni_operator::{Manager, READY, RunningManager};
use mni_testkit::{TestEnv, get_controlled, wait_deleted, wait_for_condition};
use serde::de::DeserializeOwned;

use metal_operator::api::metal_v1alpha1::Metal;
use metal_operator::api::metal_v1alpha1::MetalSpec;
use metal_operator::controllers::metal::MetalReconciler;

const NAMESPACE: &str = "default";

/// A control plane with the simulator and the operator, and a Metal that is Ready.
struct Fixture {
    env: TestEnv,
    manager: RunningManager,
    api: Api<Metal>,
    ready: Metal,
}

impl Fixture {
    async fn stop(self) {
        self.manager.shutdown().await.expect("clean shutdown");
        self.env.shutdown().await;
    }
}

/// Starts a control plane with the simulator and the operator, creates a Metal `name` with
/// the default spec and waits until it is Ready.
async fn start(name: &str) -> Fixture {
    let env = TestEnv::builder()
        .with_simulator(true)
        .with_crds(metal_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    let manager = Manager::builder(client.await.expect("the operator's client"))
        .with_controller(MetalReconciler)
        .start_for_tests()
        .await
        .expect("manager starts");
    let api: Api<Metal> = Api::namespaced(env.client(), NAMESPACE);
    let obj = Metal::new(name, MetalSpec::default());
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
    let ready = wait_for_condition(&api, name, READY, "True", env.timeout())
        .await
        .expect("the Metal becomes Ready");
    Fixture {
        env,
        manager,
        api,
        ready,
    }
}

/// Reads the object `name` of kind `K` and asserts that the fixture's Metal controls it.
async fn owned<K>(fixture: &Fixture, name: &str) -> K
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    K: Clone + std::fmt::Debug + DeserializeOwned,
{
    let api: Api<K> = Api::namespaced(fixture.env.client(), NAMESPACE);
    get_controlled(&api, name, &fixture.ready)
        .await
        .expect("a child of the Metal")
}

#[tokio::test]
async fn a_metal_gets_its_children_and_becomes_ready() {
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
    assert_eq!(resources, ["servers"]);
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
async fn deleting_a_metal_in_the_foreground_deletes_its_children() {
    let f = start("deleted").await;
    f.api
        .delete("deleted", &DeleteParams::foreground())
        .await
        .expect("delete");
    wait_deleted(&f.api, "deleted", f.env.timeout())
        .await
        .expect("the Metal goes away once its children are gone");
    let deployments: Api<Deployment> = Api::namespaced(f.env.client(), NAMESPACE);
    wait_deleted(&deployments, "deleted-backend", f.env.timeout())
        .await
        .expect("the backend Deployment is garbage-collected");
    f.stop().await;
}
