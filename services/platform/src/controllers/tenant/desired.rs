// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The objects a Tenant's [`TenantPlan`] becomes, built without IO: for each namespace, the
//! Namespace itself, a ResourceQuota, a LimitRange, a NetworkPolicy and two RoleBindings.
//!
//! - The Namespace carries `platform.mni.dev/tenant=NAME`, one
//!   `tenant.platform.mni.dev/ANCESTOR=true` label per ancestor (so a selector finds a whole
//!   subtree) and the restricted Pod Security level (`pod-security.kubernetes.io/enforce`).
//! - The ResourceQuota `tenant-quota` has the tenant's quota as `hard`; the LimitRange
//!   `tenant-limits` its container defaults.
//! - The NetworkPolicy `tenant-isolation` selects every pod and allows ingress only from the
//!   namespaces of the tenant itself and of its ancestors: everything else is denied.
//!   Ancestors may reach into their subtree, because a parent manages its children; a child
//!   cannot reach its parent, nor siblings each other.
//! - The RoleBinding `tenant-admins` binds the admin groups of the tenant and of every
//!   ancestor to [`ADMIN_ROLE`]; `tenant-viewers` binds the viewer groups to [`VIEWER_ROLE`].
//!   Both ClusterRoles ship with the operator (`config/rbac/tenant_roles.yaml`).
//!
//! The reconciler server-side applies these with an owner reference to the Tenant, so deleting
//! the Tenant deletes them (and the Namespaces with everything in them).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    LimitRange, LimitRangeItem, LimitRangeSpec, Namespace, ResourceQuota, ResourceQuotaSpec,
};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicySpec,
};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};

use super::plan::TenantPlan;
use crate::api::platform_v1alpha1::{QuotaQuantity, Tenant, TenantLimits};

/// The label naming the tenant a namespace belongs to.
pub const TENANT_LABEL: &str = "platform.mni.dev/tenant";
/// The prefix of the labels naming a namespace's ancestor tenants (`…/ANCESTOR=true`).
pub const ANCESTOR_LABEL_PREFIX: &str = "tenant.platform.mni.dev/";
/// The Pod Security label the namespaces carry, with the value `restricted`.
pub const POD_SECURITY_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The ClusterRole a tenant's admins are bound to.
pub const ADMIN_ROLE: &str = "mni-platform-tenant-admin";
/// The ClusterRole a tenant's viewers are bound to.
pub const VIEWER_ROLE: &str = "mni-platform-tenant-viewer";
/// The name of the ResourceQuota in each namespace.
pub const QUOTA_NAME: &str = "tenant-quota";
/// The name of the LimitRange in each namespace.
pub const LIMITS_NAME: &str = "tenant-limits";
/// The name of the NetworkPolicy in each namespace.
pub const POLICY_NAME: &str = "tenant-isolation";
/// The name of the admins' RoleBinding.
pub const ADMINS_BINDING: &str = "tenant-admins";
/// The name of the viewers' RoleBinding.
pub const VIEWERS_BINDING: &str = "tenant-viewers";

/// Everything one namespace of a tenant holds.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespaceObjects {
    /// The Namespace.
    pub namespace: Namespace,
    /// Its ResourceQuota.
    pub quota: ResourceQuota,
    /// Its LimitRange.
    pub limits: LimitRange,
    /// Its NetworkPolicy.
    pub policy: NetworkPolicy,
    /// The admins' and the viewers' RoleBindings.
    pub bindings: [RoleBinding; 2],
}

/// The labels of the tenant's namespaces.
#[must_use]
pub fn namespace_labels(tenant: &str, plan: &TenantPlan) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([
        (TENANT_LABEL.to_owned(), tenant.to_owned()),
        (POD_SECURITY_LABEL.to_owned(), "restricted".to_owned()),
        (
            "pod-security.kubernetes.io/enforce-version".to_owned(),
            "latest".to_owned(),
        ),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "mni-platform".to_owned(),
        ),
    ]);
    for ancestor in plan.ancestors() {
        labels.insert(
            format!("{ANCESTOR_LABEL_PREFIX}{ancestor}"),
            "true".to_owned(),
        );
    }
    labels
}

fn meta(name: &str, namespace: Option<&str>, labels: &BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(ToOwned::to_owned),
        labels: Some(
            labels
                .iter()
                .filter(|(k, _)| k.as_str() == TENANT_LABEL || k.starts_with("app.kubernetes.io"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        ..ObjectMeta::default()
    }
}

fn resource_list(list: &BTreeMap<String, QuotaQuantity>) -> BTreeMap<String, K8sQuantity> {
    list.iter()
        .map(|(k, v)| (k.clone(), K8sQuantity(v.0.clone())))
        .collect()
}

fn non_empty(list: &BTreeMap<String, QuotaQuantity>) -> Option<BTreeMap<String, K8sQuantity>> {
    (!list.is_empty()).then(|| resource_list(list))
}

fn binding(
    name: &str,
    namespace: &str,
    role: &str,
    groups: &[String],
    labels: &BTreeMap<String, String>,
) -> RoleBinding {
    RoleBinding {
        metadata: meta(name, Some(namespace), labels),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "ClusterRole".to_owned(),
            name: role.to_owned(),
        },
        subjects: Some(
            groups
                .iter()
                .map(|group| Subject {
                    api_group: Some("rbac.authorization.k8s.io".to_owned()),
                    kind: "Group".to_owned(),
                    name: group.clone(),
                    namespace: None,
                })
                .collect(),
        ),
    }
}

/// What each of `tenant`'s namespaces holds, in `plan.namespaces` order.
#[must_use]
pub fn desired(tenant: &Tenant, plan: &TenantPlan) -> Vec<NamespaceObjects> {
    let name = plan.path.last().cloned().unwrap_or_default();
    let labels = namespace_labels(&name, plan);
    let limits: TenantLimits = tenant.limits();
    plan.namespaces
        .iter()
        .map(|ns| NamespaceObjects {
            namespace: Namespace {
                metadata: ObjectMeta {
                    name: Some(ns.clone()),
                    labels: Some(labels.clone()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            },
            quota: ResourceQuota {
                metadata: meta(QUOTA_NAME, Some(ns), &labels),
                spec: Some(ResourceQuotaSpec {
                    hard: Some(resource_list(&tenant.spec.quota)),
                    ..ResourceQuotaSpec::default()
                }),
                ..ResourceQuota::default()
            },
            limits: LimitRange {
                metadata: meta(LIMITS_NAME, Some(ns), &labels),
                spec: Some(LimitRangeSpec {
                    limits: vec![LimitRangeItem {
                        type_: "Container".to_owned(),
                        default: non_empty(&limits.default),
                        default_request: non_empty(&limits.default_request),
                        max: non_empty(&limits.max),
                        ..LimitRangeItem::default()
                    }],
                }),
            },
            policy: NetworkPolicy {
                metadata: meta(POLICY_NAME, Some(ns), &labels),
                spec: Some(NetworkPolicySpec {
                    pod_selector: Some(LabelSelector::default()),
                    policy_types: Some(vec!["Ingress".to_owned()]),
                    ingress: Some(vec![NetworkPolicyIngressRule {
                        from: Some(vec![NetworkPolicyPeer {
                            namespace_selector: Some(LabelSelector {
                                match_expressions: Some(vec![LabelSelectorRequirement {
                                    key: TENANT_LABEL.to_owned(),
                                    operator: "In".to_owned(),
                                    values: Some(plan.path.clone()),
                                }]),
                                ..LabelSelector::default()
                            }),
                            ..NetworkPolicyPeer::default()
                        }]),
                        ..NetworkPolicyIngressRule::default()
                    }]),
                    ..NetworkPolicySpec::default()
                }),
            },
            bindings: [
                binding(ADMINS_BINDING, ns, ADMIN_ROLE, &plan.admins, &labels),
                binding(VIEWERS_BINDING, ns, VIEWER_ROLE, &plan.viewers, &labels),
            ],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::platform_v1alpha1::TenantSpec;

    #[test]
    fn a_sub_tenant_namespace_is_isolated_and_bound_to_the_whole_chain() {
        let tenant = Tenant::new(
            "dev",
            TenantSpec {
                parent: Some("acme".into()),
                quota: BTreeMap::from([("pods".into(), QuotaQuantity::from("5"))]),
                ..TenantSpec::default()
            },
        );
        let plan = TenantPlan {
            path: vec!["acme".into(), "dev".into()],
            namespaces: vec!["tenant-acme-dev".into()],
            admins: vec!["dev-admins".into(), "acme-admins".into()],
            viewers: vec![],
        };
        let objects = desired(&tenant, &plan);
        assert_eq!(objects.len(), 1);
        let o = &objects[0];
        let labels = o.namespace.metadata.labels.as_ref().unwrap();
        assert_eq!(labels[TENANT_LABEL], "dev");
        assert_eq!(labels["tenant.platform.mni.dev/acme"], "true");
        assert_eq!(labels[POD_SECURITY_LABEL], "restricted");
        let hard = o.quota.spec.as_ref().unwrap().hard.as_ref().unwrap();
        assert_eq!(hard["pods"].0, "5");
        let item = &o.limits.spec.as_ref().unwrap().limits[0];
        assert_eq!(item.default.as_ref().unwrap()["cpu"].0, "500m");
        assert!(item.max.is_none());
        let policy = serde_json::to_value(&o.policy).unwrap();
        assert_eq!(
            policy["spec"]["ingress"][0]["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"],
            serde_json::json!(["acme", "dev"])
        );
        assert_eq!(policy["spec"]["podSelector"], serde_json::json!({}));
        let admins: Vec<&str> = o.bindings[0]
            .subjects
            .iter()
            .flatten()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(admins, ["dev-admins", "acme-admins"]);
        assert_eq!(o.bindings[0].role_ref.name, ADMIN_ROLE);
        assert_eq!(o.bindings[1].role_ref.name, VIEWER_ROLE);
    }
}
