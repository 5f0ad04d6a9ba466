// SPDX-License-Identifier: MIT

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:ships_v1
pub mod ships_v1;
// +mni:fragment-end:api-modules:ships_v1
// +mni:fragment:api-modules:crew_v1alpha1
pub mod crew_v1alpha1;
// +mni:fragment-end:api-modules:crew_v1alpha1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `fleet crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:ships_v1::Ship
        <ships_v1::Ship as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:ships_v1::Ship
        // +mni:fragment:crds:ships_v1::Harbor
        <ships_v1::Harbor as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:ships_v1::Harbor
        // +mni:fragment:crds:crew_v1alpha1::Sailor
        <crew_v1alpha1::Sailor as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:crew_v1alpha1::Sailor
        // +mni:scaffold:crds
    ]
}
