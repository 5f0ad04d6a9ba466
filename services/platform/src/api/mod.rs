// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:platform_v1alpha1
pub mod platform_v1alpha1;
// +mni:fragment-end:api-modules:platform_v1alpha1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `mni-platform crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:platform_v1alpha1::Tenant
        <platform_v1alpha1::Tenant as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:platform_v1alpha1::Tenant
        // +mni:scaffold:crds
    ]
}
