// SPDX-License-Identifier: MIT

//! The `LedgerAccount` custom resource (`ledger.example.com/v1alpha1`, namespaced): the
//! ledger service's domain object, which the backend creates and serves and
//! `LedgerAccountReconciler` reconciles.

use kube::CustomResource;
use mni_core::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// TODO(user): add the fields a LedgerAccount needs, then refresh the CRD under
// `config/crd/bases/` from the operator's `crd` subcommand.

/// What a LedgerAccount asks for.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "ledger.example.com",
    version = "v1alpha1",
    kind = "LedgerAccount",
    plural = "ledgeraccounts",
    namespaced,
    status = "LedgerAccountStatus",
    printcolumn = r#"{"name":"Display Name","type":"string","jsonPath":".spec.displayName"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LedgerAccountSpec {
    /// The name people see in the web UI.
    #[schemars(length(min = 1, max = 256))]
    pub display_name: String,
    /// What the LedgerAccount is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub description: Option<String>,
}

/// What the operator last observed about a LedgerAccount.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerAccountStatus {
    /// `Ready` and friends, each with the generation it describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
