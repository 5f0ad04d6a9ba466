// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:network_v1alpha1
pub mod network_v1alpha1;
// +mni:fragment-end:api-modules:network_v1alpha1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `network-operator crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:network_v1alpha1::Network
        <network_v1alpha1::Network as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:network_v1alpha1::Network
        // +mni:fragment:crds:network_v1alpha1::VirtualPrivateCloud
        <network_v1alpha1::VirtualPrivateCloud as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:network_v1alpha1::VirtualPrivateCloud
        // +mni:scaffold:crds
    ]
}
