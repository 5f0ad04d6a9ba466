// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:compute_v1alpha1
pub mod compute_v1alpha1;
// +mni:fragment-end:api-modules:compute_v1alpha1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `compute-operator crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:compute_v1alpha1::Compute
        <compute_v1alpha1::Compute as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:compute_v1alpha1::Compute
        // +mni:fragment:crds:compute_v1alpha1::Instance
        <compute_v1alpha1::Instance as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:compute_v1alpha1::Instance
        // +mni:scaffold:crds
    ]
}
