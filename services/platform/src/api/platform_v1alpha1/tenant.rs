// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `Tenant` custom resource (`platform.mni.dev/v1alpha1`, cluster-scoped): one tenant of
//! the mNi cloud — its namespaces, its quota and default limits, who administers and who
//! views it — which `TenantReconciler` turns into Namespaces, a ResourceQuota, a LimitRange,
//! a NetworkPolicy and RoleBindings.
//!
//! Tenants nest through [`TenantSpec::parent`], as Cozystack's do: a sub-tenant's namespaces
//! are named after its parent's (`tenant-acme` → `tenant-acme-dev`), the sum of the children's
//! quotas must fit in the parent's, and the parent's admins and viewers are bound in every
//! namespace of the subtree. What the schema can refuse it refuses (an unparseable quantity,
//! a namespace that is not a DNS-1123 label, a changed parent); what needs other objects
//! (overlapping namespaces, quotas against the parent's) the controller reports as a
//! `Ready=False` condition naming the field.

use std::borrow::Cow;
use std::collections::BTreeMap;

use kube::CustomResource;
use mni_core::Condition;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The regular expression of a Kubernetes resource quantity (apimachinery's
/// `resource.Quantity`), as the schema of every quantity in a Tenant checks it.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// What a Tenant asks for.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "platform.mni.dev",
    version = "v1alpha1",
    kind = "Tenant",
    plural = "tenants",
    status = "TenantStatus",
    printcolumn = r#"{"name":"Parent","type":"string","jsonPath":".spec.parent"}"#,
    printcolumn = r#"{"name":"Namespaces","type":"string","jsonPath":".status.namespaces"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "has(self.parent) == has(oldSelf.parent) && (!has(self.parent) || self.parent == oldSelf.parent)",
        "message": "parent is immutable: a tenant cannot move in the tree; create a new tenant instead",
        "reason": "FieldValueForbidden",
        "fieldPath": ".parent"
    }
]))]
pub struct TenantSpec {
    /// The tenant this one is nested in (a Tenant's name); none for a top-level tenant.
    /// Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub parent: Option<String>,
    /// The tenant's namespaces. Default: one, `tenant-NAME` for a top-level tenant and
    /// `PARENTNS-NAME` for a sub-tenant (PARENTNS: the parent's first namespace). A
    /// sub-tenant's namespaces must start with `PARENTNS-`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 16),
        inner(
            length(min = 1, max = 63),
            regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
        )
    )]
    pub namespaces: Vec<String>,
    /// The ResourceQuota `hard` limits each of the tenant's namespaces gets (`requests.cpu`,
    /// `limits.memory`, `pods`, `count/virtualmachines.compute.mni.dev`, …). A sub-tenant must
    /// limit every resource its parent limits, and the sub-tenants of one parent together
    /// may not ask for more than the parent has.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub quota: BTreeMap<String, QuotaQuantity>,
    /// The container defaults of the tenant's LimitRange. Default: [`TenantLimits::default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<TenantLimits>,
    /// The groups that administer the tenant (and every sub-tenant below it): bound to the
    /// ClusterRole `mni-platform-tenant-admin` in each namespace of the subtree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 256)))]
    pub admins: Vec<String>,
    /// The groups that may view the tenant (and its subtree): bound to the ClusterRole
    /// `mni-platform-tenant-viewer`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 256)))]
    pub viewers: Vec<String>,
}

/// A resource quantity (`500m`, `2Gi`, `10`), checked by the schema against
/// [`QUANTITY_PATTERN`].
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[serde(transparent)]
pub struct QuotaQuantity(pub String);

impl QuotaQuantity {
    /// The quantity as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for QuotaQuantity {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl JsonSchema for QuotaQuantity {
    fn schema_name() -> Cow<'static, str> {
        "QuotaQuantity".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": QUANTITY_PATTERN,
            "maxLength": 64
        })
    }
}

/// The LimitRange defaults for each container in the tenant's namespaces.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantLimits {
    /// Limits a container gets when it sets none (`cpu`, `memory`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default: BTreeMap<String, QuotaQuantity>,
    /// Requests a container gets when it sets none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default_request: BTreeMap<String, QuotaQuantity>,
    /// The most a container may ask for.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub max: BTreeMap<String, QuotaQuantity>,
}

impl Default for TenantLimits {
    /// `500m` CPU and `512Mi` memory as limits, `100m` and `128Mi` as requests, no maximum.
    fn default() -> Self {
        let pair = |cpu: &str, memory: &str| {
            BTreeMap::from([
                ("cpu".to_owned(), QuotaQuantity::from(cpu)),
                ("memory".to_owned(), QuotaQuantity::from(memory)),
            ])
        };
        Self {
            default: pair("500m", "512Mi"),
            default_request: pair("100m", "128Mi"),
            max: BTreeMap::new(),
        }
    }
}

/// What the operator last observed about a Tenant.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The tenant's namespaces, as created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// The tenant's place in the tree: its ancestors from the root, then itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    /// Usage against the quota, summed over the tenant's namespaces from their
    /// ResourceQuotas' status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<TenantQuotaStatus>,
    /// `Ready` (everything is in place, or why not), `DefaultVPC` (whether the tenant's
    /// default VirtualPrivateCloud exists, `VPCServiceNotInstalled` without the VPC service).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A tenant's quota and what its namespaces use of it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantQuotaStatus {
    /// The limits (the spec's quota, per namespace).
    #[serde(default)]
    pub hard: BTreeMap<String, String>,
    /// What the tenant's namespaces use together, by resource.
    #[serde(default)]
    pub used: BTreeMap<String, String>,
}

impl Tenant {
    /// The LimitRange defaults this tenant asks for: its own, or [`TenantLimits::default`].
    #[must_use]
    pub fn limits(&self) -> TenantLimits {
        self.spec.limits.clone().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn the_schema_checks_quantities_and_keeps_the_parent() {
        let crd = serde_json::to_value(Tenant::crd()).unwrap();
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(
            spec["properties"]["quota"]["additionalProperties"]["pattern"],
            QUANTITY_PATTERN
        );
        assert!(
            spec["x-kubernetes-validations"][0]["rule"]
                .as_str()
                .unwrap()
                .contains("oldSelf.parent")
        );
        assert_eq!(crd["spec"]["scope"], "Cluster");
    }

    #[test]
    fn default_limits_set_cpu_and_memory() {
        let tenant = Tenant::new("acme", TenantSpec::default());
        let limits = tenant.limits();
        assert_eq!(limits.default["cpu"].as_str(), "500m");
        assert_eq!(limits.default_request["memory"].as_str(), "128Mi");
    }
}
