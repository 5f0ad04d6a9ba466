// SPDX-License-Identifier: MIT

//! `HarborReconciler` against an in-process control plane (`mni-testkit`).
//!
//! When `config/rbac/role.yaml` exists the controller runs as the operator's own
//! ServiceAccount with exactly those rules, so a missing RBAC rule fails here, not in a cluster.

use std::path::Path;

use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::Client;
use kube::api::{Api, PostParams};
use mni_operator::{Manager, READY};
use mni_testkit::{TestEnv, wait_for_condition};

use fleet::api::ships_v1::{Harbor, HarborSpec};
use fleet::controllers::harbor::HarborReconciler;

/// A client with the operator's production rules, or the admin client without RBAC manifests.
async fn operator_client(env: &TestEnv) -> Client {
    let role = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/rbac/role.yaml");
    let Ok(text) = std::fs::read_to_string(&role) else {
        return env.client();
    };
    let role: ClusterRole = serde_yaml::from_str(&text).expect("config/rbac/role.yaml parses");
    env.cluster_service_account_client(
        "fleet-system",
        "fleet-controller-manager",
        role.rules.unwrap_or_default(),
    )
    .await
    .expect("service account client")
}

#[tokio::test]
async fn a_harbor_becomes_ready() {
    let env = TestEnv::builder()
        .with_crds(fleet::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let manager = Manager::builder(operator_client(&env).await)
        .with_signal_handling(false)
        .with_metrics_address(None)
        .with_health_probe_address(None)
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
