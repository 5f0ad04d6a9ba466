// SPDX-License-Identifier: MIT

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:ledger_v1alpha1
pub mod ledger_v1alpha1;
// +mni:fragment-end:api-modules:ledger_v1alpha1
// +mni:fragment:api-modules:ledger_v1beta1
pub mod ledger_v1beta1;
// +mni:fragment-end:api-modules:ledger_v1beta1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `ledger-operator crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:ledger_v1alpha1::Ledger
        <ledger_v1alpha1::Ledger as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:ledger_v1alpha1::Ledger
        // +mni:fragment:crds:ledger_v1alpha1::LedgerAccount
        <ledger_v1alpha1::LedgerAccount as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:ledger_v1alpha1::LedgerAccount
        // +mni:fragment:crds:ledger_v1beta1::Entry
        <ledger_v1beta1::Entry as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:ledger_v1beta1::Entry
        // +mni:scaffold:crds
    ]
}
