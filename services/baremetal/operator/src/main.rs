// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `metal-operator`: the operator binary.
//!
//! `mni_operator::run` runs the controllers registered below against the cluster of the current
//! kubeconfig (or the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `metal-operator crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use metal_operator::api;
// +mni:fragment:imports:metal-reconciler
use metal_operator::controllers::metal::MetalReconciler;
// +mni:fragment-end:imports:metal-reconciler
// +mni:fragment:imports:server-reconciler
use metal_operator::controllers::server::ServerReconciler;
// +mni:fragment-end:imports:server-reconciler
// +mni:fragment:imports:controller-options
use mni_operator::ControllerOptions;
// +mni:fragment-end:imports:controller-options
// +mni:scaffold:imports

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    mni_operator::run(mni_operator::command!(), api::crds(), |manager| {
        // +mni:fragment:controllers:metal
        // Metals are reconciled CONCURRENCY at a time.
        let reconciler = MetalReconciler;
        let concurrency = MetalReconciler::CONCURRENCY;
        let options = ControllerOptions::default().with_max_concurrent_reconciles(concurrency);
        let manager = manager.with_controller_options(reconciler, options);
        // +mni:fragment-end:controllers:metal
        // +mni:fragment:controllers:server
        let manager = manager.with_controller(ServerReconciler);
        // +mni:fragment-end:controllers:server
        // +mni:scaffold:controllers
        manager
    })
    .await?;
    Ok(())
}
