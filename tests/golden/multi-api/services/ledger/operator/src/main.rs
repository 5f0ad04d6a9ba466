// SPDX-License-Identifier: MIT

//! `ledger-operator`: the operator binary.
//!
//! `mni_operator::run` runs the controllers registered below against the cluster of the current
//! kubeconfig (or the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `ledger-operator crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use ledger_operator::api;
// +mni:fragment:imports:ledger-reconciler
use ledger_operator::controllers::ledger::LedgerReconciler;
// +mni:fragment-end:imports:ledger-reconciler
// +mni:fragment:imports:ledger_account-reconciler
use ledger_operator::controllers::ledger_account::LedgerAccountReconciler;
// +mni:fragment-end:imports:ledger_account-reconciler
// +mni:fragment:imports:controller-options
use mni_operator::ControllerOptions;
// +mni:fragment-end:imports:controller-options
// +mni:fragment:imports:controllers
use ledger_operator::controllers;
// +mni:fragment-end:imports:controllers
// +mni:scaffold:imports

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    mni_operator::run(mni_operator::command!(), api::crds(), |manager| {
        // +mni:fragment:controllers:ledger
        // Ledgers are reconciled CONCURRENCY at a time.
        let reconciler = LedgerReconciler;
        let concurrency = LedgerReconciler::CONCURRENCY;
        let options = ControllerOptions::default().with_max_concurrent_reconciles(concurrency);
        let manager = manager.with_controller_options(reconciler, options);
        // +mni:fragment-end:controllers:ledger
        // +mni:fragment:controllers:ledger_account
        let manager = manager.with_controller(LedgerAccountReconciler);
        // +mni:fragment-end:controllers:ledger_account
        // +mni:fragment:controllers:entry
        let manager = manager.with_controller(controllers::entry::EntryReconciler);
        // +mni:fragment-end:controllers:entry
        // +mni:scaffold:controllers
        manager
    })
    .await?;
    Ok(())
}
