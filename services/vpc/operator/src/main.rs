// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `network-operator`: the operator binary.
//!
//! `mni_operator::run` runs the controllers registered below against the cluster of the current
//! kubeconfig (or the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `network-operator crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use network_operator::api;
// +mni:fragment:imports:network-reconciler
use network_operator::controllers::network::NetworkReconciler;
// +mni:fragment-end:imports:network-reconciler
// +mni:fragment:imports:virtual_private_cloud-reconciler
use network_operator::controllers::virtual_private_cloud::VirtualPrivateCloudReconciler;
// +mni:fragment-end:imports:virtual_private_cloud-reconciler
// +mni:fragment:imports:controller-options
use mni_operator::ControllerOptions;
// +mni:fragment-end:imports:controller-options
// +mni:fragment:imports:kube-ovn-orphans
use network_operator::controllers::kube_ovn_orphans::KubeOvnOrphanReconciler;
// +mni:fragment-end:imports:kube-ovn-orphans
// +mni:scaffold:imports

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    mni_operator::run(mni_operator::command!(), api::crds(), |manager| {
        // +mni:fragment:controllers:network
        // Networks are reconciled CONCURRENCY at a time.
        let reconciler = NetworkReconciler;
        let concurrency = NetworkReconciler::CONCURRENCY;
        let options = ControllerOptions::default().with_max_concurrent_reconciles(concurrency);
        let manager = manager.with_controller_options(reconciler, options);
        // +mni:fragment-end:controllers:network
        // +mni:fragment:controllers:virtual_private_cloud
        let manager = manager.with_controller(VirtualPrivateCloudReconciler);
        // +mni:fragment-end:controllers:virtual_private_cloud
        // +mni:fragment:controllers:kube-ovn-orphans
        // Kube-OVN objects whose VirtualPrivateCloud is gone are deleted.
        let options = ControllerOptions::default().with_error_reporting(false);
        let manager = manager.with_controller_options(KubeOvnOrphanReconciler, options);
        // +mni:fragment-end:controllers:kube-ovn-orphans
        // +mni:scaffold:controllers
        manager
    })
    .await?;
    Ok(())
}
