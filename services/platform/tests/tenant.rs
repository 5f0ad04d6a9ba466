// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `TenantReconciler` against an in-process control plane (`mni-testkit`).
//!
//! When `config/rbac/role.yaml` exists the controller runs as the operator's own
//! ServiceAccount with exactly those rules, so a missing RBAC rule fails here, not in a cluster.

use kube::api::{Api, PostParams};
use mni_operator::{Manager, READY};
use mni_testkit::{TestEnv, wait_for_condition};

use mni_platform::api::platform_v1alpha1::{Tenant, TenantSpec};
use mni_platform::controllers::tenant::TenantReconciler;

#[tokio::test]
async fn a_tenant_becomes_ready() {
    let env = TestEnv::builder()
        .with_crds(mni_platform::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    let manager = Manager::builder(client.await.expect("the operator's client"))
        .with_controller(TenantReconciler)
        .start_for_tests()
        .await
        .expect("manager starts");

    let api: Api<Tenant> = Api::all(env.client());
    let spec = TenantSpec {
        message: Some("hello".to_owned()),
    };
    api.create(&PostParams::default(), &Tenant::new("sample", spec))
        .await
        .expect("create");
    let ready = wait_for_condition(&api, "sample", READY, "True", env.timeout())
        .await
        .expect("the Tenant becomes Ready");
    let status = ready.status.expect("status");
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.conditions[0].message, "hello");

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
