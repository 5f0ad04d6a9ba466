// SPDX-License-Identifier: MIT

//! `LedgerAccountReconciler` against an in-process control plane (`mni-testkit`), running as
//! the operator's own ServiceAccount with the rules of `config/rbac/role.yaml`.

use kube::api::{Api, PostParams};
use mni_operator::{Manager, READY};
use mni_testkit::{TestEnv, wait_for_condition};

use ledger_operator::api::ledger_v1alpha1::LedgerAccount;
use ledger_operator::api::ledger_v1alpha1::LedgerAccountSpec;
use ledger_operator::controllers::ledger_account::LedgerAccountReconciler;

#[tokio::test]
async fn a_ledger_account_becomes_ready() {
    let env = TestEnv::builder()
        .with_crds(ledger_operator::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    let manager = Manager::builder(client.await.expect("the operator's client"))
        .with_controller(LedgerAccountReconciler)
        .start_for_tests()
        .await
        .expect("manager starts");

    let api: Api<LedgerAccount> = Api::namespaced(env.client(), "default");
    let spec = LedgerAccountSpec {
        display_name: "Sample".to_owned(),
        description: None,
    };
    let obj = LedgerAccount::new("sample", spec);
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
    let ready = wait_for_condition(&api, "sample", READY, "True", env.timeout())
        .await
        .expect("the LedgerAccount becomes Ready");
    let status = ready.status.expect("status");
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.conditions[0].message, "Sample is ready");

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
