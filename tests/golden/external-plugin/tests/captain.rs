// SPDX-License-Identifier: Apache-2.0

//! `CaptainReconciler` against an in-process control plane (`mni-testkit`).
//!
//! When `config/rbac/role.yaml` exists the controller runs as the operator's own
//! ServiceAccount with exactly those rules, so a missing RBAC rule fails here, not in a cluster.

use std::path::Path;

use kube::Client;
use kube::api::{Api, PostParams};
use mni_operator::{Manager, READY};
use mni_testkit::{TestEnv, wait_for_condition};

use docs_demo::api::crew_v1::{Captain, CaptainSpec};
use docs_demo::controllers::captain::CaptainReconciler;

/// The client the operator has in a cluster: its ServiceAccount with the rules of
/// `config/rbac/role.yaml` (the admin client if the project has no RBAC manifests).
async fn operator_client(env: &TestEnv) -> Client {
    let role = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/rbac/role.yaml");
    let namespace = "docs-demo-system";
    let account = "docs-demo-controller-manager";
    env.operator_client(&role, namespace, account)
        .await
        .expect("the operator's client")
}

#[tokio::test]
async fn a_captain_becomes_ready() {
    let env = TestEnv::builder()
        .with_crds(docs_demo::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = Manager::builder(operator_client(&env).await)
        .for_tests()
        .with_controller(CaptainReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");

    let api: Api<Captain> = Api::namespaced(env.client(), "default");
    let spec = CaptainSpec {
        message: Some("hello".to_owned()),
    };
    api.create(&PostParams::default(), &Captain::new("sample", spec))
        .await
        .expect("create");
    let ready = wait_for_condition(&api, "sample", READY, "True", env.timeout())
        .await
        .expect("the Captain becomes Ready");
    let status = ready.status.expect("status");
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.conditions[0].message, "hello");

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
