// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:webapp_v1
pub mod webapp_v1;
// +mni:fragment-end:api-modules:webapp_v1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `guestbook crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:webapp_v1::Guestbook
        <webapp_v1::Guestbook as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:webapp_v1::Guestbook
        // +mni:scaffold:crds
    ]
}
