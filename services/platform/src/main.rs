// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `mni-platform`: the operator binary.
//!
//! `mni_operator::run` runs the controllers registered below against the cluster of the current
//! kubeconfig (or the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `mni-platform crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use mni_platform::api;
// +mni:fragment:imports:controllers
use mni_platform::controllers;
// +mni:fragment-end:imports:controllers
// +mni:scaffold:imports

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    mni_operator::run(mni_operator::command!(), api::crds(), |manager| {
        // +mni:fragment:controllers:tenant
        let manager = manager.with_controller(controllers::tenant::TenantReconciler);
        // +mni:fragment-end:controllers:tenant
        // +mni:scaffold:controllers
        manager
    })
    .await?;
    Ok(())
}
