// SPDX-License-Identifier: MIT

//! The `Ship` custom resource: `ships.example.com/v1`, namespaced.

use kube::CustomResource;
use mni_operator::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// TODO(user): add the fields that describe the desired state, then refresh the CRD under
// `config/crd/bases/` from the operator's `crd` subcommand.

/// What a Ship asks for.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ships.example.com",
    version = "v1",
    kind = "Ship",
    plural = "ships",
    namespaced,
    status = "ShipStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ShipSpec {
    /// An example field: a message the controller reports in the `Ready` condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What the operator last observed about a Ship.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShipStatus {
    /// `Ready` and friends, each with the generation it describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
