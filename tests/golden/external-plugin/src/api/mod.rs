// SPDX-License-Identifier: Apache-2.0

//! The custom resource types, one module per API group and version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

// +mni:fragment:api-modules:crew_v1
pub mod crew_v1;
// +mni:fragment-end:api-modules:crew_v1
// +mni:scaffold:api-modules

/// Every CRD this operator serves: what `docs-demo crd` prints.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +mni:fragment:crds:crew_v1::Captain
        <crew_v1::Captain as kube::CustomResourceExt>::crd(),
        // +mni:fragment-end:crds:crew_v1::Captain
        // +mni:scaffold:crds
    ]
}
