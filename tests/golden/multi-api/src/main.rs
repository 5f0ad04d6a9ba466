// SPDX-License-Identifier: MIT

//! `fleet`: the operator binary.
//!
//! `mni_operator::run` runs the controllers registered below against the cluster of the current
//! kubeconfig (or the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `fleet crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use fleet::api;
// +mni:fragment:imports:controllers
use fleet::controllers;
// +mni:fragment-end:imports:controllers
// +mni:fragment:imports:webhooks
use fleet::webhooks;
// +mni:fragment-end:imports:webhooks
// +mni:scaffold:imports

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    mni_operator::run(mni_operator::command!(), api::crds(), |manager| {
        // +mni:fragment:controllers:ship
        let manager = manager.with_controller(controllers::ship::ShipReconciler);
        // +mni:fragment-end:controllers:ship
        // +mni:fragment:controllers:harbor
        let manager = manager.with_controller(controllers::harbor::HarborReconciler);
        // +mni:fragment-end:controllers:harbor
        // +mni:fragment:controllers:webhooks
        let manager = webhooks::register(manager);
        // +mni:fragment-end:controllers:webhooks
        // +mni:scaffold:controllers
        manager
    })
    .await?;
    Ok(())
}
