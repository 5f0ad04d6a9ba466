// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `compute-operator`: the operator binary.
//!
//! `mni_operator::run` runs the controllers registered below against the cluster of the current
//! kubeconfig (or the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `compute-operator crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use compute_operator::api;
// +mni:fragment:imports:compute-reconciler
use compute_operator::controllers::compute::ComputeReconciler;
// +mni:fragment-end:imports:compute-reconciler
// +mni:fragment:imports:instance-reconciler
use compute_operator::controllers::instance::InstanceReconciler;
// +mni:fragment-end:imports:instance-reconciler
// +mni:fragment:imports:controller-options
use mni_operator::ControllerOptions;
// +mni:fragment-end:imports:controller-options
// +mni:scaffold:imports

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    mni_operator::run(mni_operator::command!(), api::crds(), |manager| {
        // +mni:fragment:controllers:compute
        // Computes are reconciled CONCURRENCY at a time.
        let reconciler = ComputeReconciler;
        let concurrency = ComputeReconciler::CONCURRENCY;
        let options = ControllerOptions::default().with_max_concurrent_reconciles(concurrency);
        let manager = manager.with_controller_options(reconciler, options);
        // +mni:fragment-end:controllers:compute
        // +mni:fragment:controllers:instance
        let manager = manager.with_controller(InstanceReconciler);
        // +mni:fragment-end:controllers:instance
        // +mni:scaffold:controllers
        manager
    })
    .await?;
    Ok(())
}
