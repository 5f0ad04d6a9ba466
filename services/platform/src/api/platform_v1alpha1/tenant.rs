// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `Tenant` custom resource: `platform.mni.dev/v1alpha1`, cluster-scoped.

use kube::CustomResource;
use mni_operator::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// TODO(user): add the fields that describe the desired state, then refresh the CRD under
// `config/crd/bases/` from the operator's `crd` subcommand.

/// What a Tenant asks for.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "platform.mni.dev",
    version = "v1alpha1",
    kind = "Tenant",
    plural = "tenants",
    status = "TenantStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct TenantSpec {
    /// An example field: a message the controller reports in the `Ready` condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What the operator last observed about a Tenant.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantStatus {
    /// `Ready` and friends, each with the generation it describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
