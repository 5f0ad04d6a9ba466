// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:metal_v1alpha1
pub mod metal_v1alpha1;
// +mni:fragment-end:api-modules:metal_v1alpha1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `metal-operator crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:metal_v1alpha1::Metal
        <metal_v1alpha1::Metal as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:metal_v1alpha1::Metal
        // +mni:fragment:crds:metal_v1alpha1::Server
        <metal_v1alpha1::Server as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:metal_v1alpha1::Server
        // +mni:scaffold:crds
    ]
}
