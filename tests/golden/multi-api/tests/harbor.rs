// SPDX-License-Identifier: MIT

//! `HarborReconciler` against an in-process control plane (`mni-testkit`).
//!
//! When `config/rbac/role.yaml` exists the controller runs as the operator's own
//! ServiceAccount with exactly those rules, so a missing RBAC rule fails here, not in a cluster.

use std::path::Path;

use kube::Client;
use kube::api::{Api, PostParams};
use mni_operator::{Manager, READY};
use mni_testkit::{TestEnv, wait_for_condition};

use fleet::api::ships_v1::{Harbor, HarborSpec};
use fleet::controllers::harbor::HarborReconciler;

/// The client the operator has in a cluster: its ServiceAccount with the rules of
/// `config/rbac/role.yaml` (the admin client if the project has no RBAC manifests).
async fn operator_client(env: &TestEnv) -> Client {
    let role = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/rbac/role.yaml");
    let namespace = "fleet-system";
    let account = "fleet-controller-manager";
    env.operator_client(&role, namespace, account)
        .await
        .expect("the operator's client")
}

#[tokio::test]
async fn a_harbor_becomes_ready() {
    let env = TestEnv::builder()
        .with_crds(fleet::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = Manager::builder(operator_client(&env).await)
        .for_tests()
        .with_controller(HarborReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");

    let api: Api<Harbor> = Api::all(env.client());
    let spec = HarborSpec {
        message: Some("hello".to_owned()),
    };
    api.create(&PostParams::default(), &Harbor::new("sample", spec))
        .await
        .expect("create");
    let ready = wait_for_condition(&api, "sample", READY, "True", env.timeout())
        .await
        .expect("the Harbor becomes Ready");
    let status = ready.status.expect("status");
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.conditions[0].message, "hello");

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
