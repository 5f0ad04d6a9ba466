// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! [`TenantPlan`]: what a Tenant needs, worked out from it and every other Tenant before
//! anything is written — its place in the tree, its namespaces and the groups to bind — or
//! the [`Refusal`] that names the field at fault.
//!
//! The rules, each refused with a message naming the field:
//!
//! - the parent exists and the tree has no cycle (`spec.parent`);
//! - a sub-tenant's namespaces start with its parent's first namespace and a `-`
//!   (`spec.namespaces[i]`), so a subtree's namespaces sit inside its root's name;
//! - no namespace is claimed by an older Tenant (`spec.namespaces`): the first claim wins, the
//!   later Tenant is refused and nothing of it is created;
//! - every quantity parses and is not negative (`spec.quota.KEY`, `spec.limits.default.KEY`);
//! - a sub-tenant limits every resource its parent limits, and the quotas of a parent's
//!   children, counted in creation order, fit in the parent's (`spec.quota.KEY`): a child that
//!   would overflow it is refused, the ones before it are not.
//!
//! No IO: the reconciler hands in the Tenants from its cache.

use std::collections::BTreeMap;

use kube::ResourceExt;
use mni_formats::quantity::Quantity;

use crate::api::platform_v1alpha1::{QuotaQuantity, Tenant};

/// The prefix of a top-level tenant's default namespace: `tenant-NAME`.
pub const NAMESPACE_PREFIX: &str = "tenant-";

/// How deep tenants may nest: deeper trees are refused as if they were cycles.
pub const MAX_DEPTH: usize = 16;

/// Why a Tenant cannot be set up. Each message starts with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// `spec.parent` names a Tenant that does not exist.
    #[error("spec.parent: tenant {parent:?} does not exist; create it first")]
    ParentNotFound {
        /// The missing parent.
        parent: String,
    },
    /// Following `spec.parent` comes back to the tenant, or goes deeper than [`MAX_DEPTH`].
    #[error("spec.parent: the chain of parents {chain} has a cycle or is deeper than {MAX_DEPTH}")]
    Cycle {
        /// The chain, `a -> b -> a`.
        chain: String,
    },
    /// A sub-tenant's namespace does not start with its parent's namespace.
    #[error(
        "spec.namespaces[{index}]: namespace {namespace:?} must start with {prefix:?}, to sit \
         inside parent tenant {parent:?}'s namespace"
    )]
    OutsideParent {
        /// The index in `spec.namespaces`.
        index: usize,
        /// The namespace.
        namespace: String,
        /// What it must start with.
        prefix: String,
        /// The parent tenant.
        parent: String,
    },
    /// The default namespace name is too long for a namespace.
    #[error(
        "spec.namespaces: the default namespace {namespace:?} is longer than 63 characters; \
         name shorter namespaces in spec.namespaces"
    )]
    NameTooLong {
        /// The name that would have been used.
        namespace: String,
    },
    /// A namespace is listed twice.
    #[error("spec.namespaces[{index}]: namespace {namespace:?} is listed twice")]
    Duplicate {
        /// The index of the second mention.
        index: usize,
        /// The namespace.
        namespace: String,
    },
    /// An older Tenant claims the namespace.
    #[error(
        "spec.namespaces: namespace {namespace:?} belongs to tenant {other:?}; a namespace \
         belongs to one tenant, choose another name"
    )]
    NamespaceClaimed {
        /// The namespace.
        namespace: String,
        /// The tenant that has it.
        other: String,
    },
    /// The namespace exists and is not this Tenant's.
    #[error(
        "spec.namespaces: namespace {namespace:?} already exists and belongs to {owner}, not \
         to this tenant; choose another name"
    )]
    NamespaceTaken {
        /// The namespace.
        namespace: String,
        /// Who has it (`tenant "x"`, or `no tenant`).
        owner: String,
    },
    /// A quantity does not parse, or is negative.
    #[error("{field}: {value:?} is not a valid quantity: {reason}")]
    InvalidQuantity {
        /// The field, `spec.quota.requests.cpu`.
        field: String,
        /// What was written.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// The parent limits a resource the sub-tenant does not.
    #[error("spec.quota.{key}: required, because parent tenant {parent:?} limits {key} to {limit}")]
    QuotaMissing {
        /// The resource.
        key: String,
        /// The parent tenant.
        parent: String,
        /// The parent's limit.
        limit: String,
    },
    /// The children of the parent ask for more than it has.
    #[error(
        "spec.quota.{key}: the sub-tenants of {parent:?} would ask for {total} together, more \
         than its quota of {limit}"
    )]
    QuotaExceedsParent {
        /// The resource.
        key: String,
        /// The parent tenant.
        parent: String,
        /// What the children (this one and the older ones) ask for together.
        total: String,
        /// The parent's limit.
        limit: String,
    },
}

impl Refusal {
    /// The condition reason (CamelCase) for this refusal.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Self::ParentNotFound { .. } => "ParentNotFound",
            Self::Cycle { .. } => "ParentCycle",
            Self::OutsideParent { .. } | Self::NameTooLong { .. } | Self::Duplicate { .. } => {
                "InvalidNamespaces"
            }
            Self::NamespaceClaimed { .. } | Self::NamespaceTaken { .. } => "NamespaceConflict",
            Self::InvalidQuantity { .. } => "InvalidQuota",
            Self::QuotaMissing { .. } | Self::QuotaExceedsParent { .. } => "QuotaExceedsParent",
        }
    }
}

/// What a Tenant needs. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantPlan {
    /// The tenant's ancestors from the root, then the tenant.
    pub path: Vec<String>,
    /// Its namespaces.
    pub namespaces: Vec<String>,
    /// The admin groups bound in its namespaces: its own, then its ancestors'.
    pub admins: Vec<String>,
    /// The viewer groups: its own, then its ancestors'.
    pub viewers: Vec<String>,
}

impl TenantPlan {
    /// Works out what `tenant` needs, given every Tenant (`all`, which may include `tenant`).
    ///
    /// # Errors
    ///
    /// The first [`Refusal`] found.
    pub fn new(tenant: &Tenant, all: &[&Tenant]) -> Result<Self, Refusal> {
        let chain = ancestors(tenant, all)?;
        let namespaces = namespaces(tenant, all)?;
        if let Some(parent) = chain.last() {
            let prefix = format!("{}-", namespaces_of_checked(parent, all)?[0]);
            for (index, namespace) in namespaces.iter().enumerate() {
                if !namespace.starts_with(&prefix) {
                    return Err(Refusal::OutsideParent {
                        index,
                        namespace: namespace.clone(),
                        prefix,
                        parent: parent.name_any(),
                    });
                }
            }
        }
        for (index, namespace) in namespaces.iter().enumerate() {
            if namespaces[..index].contains(namespace) {
                return Err(Refusal::Duplicate {
                    index,
                    namespace: namespace.clone(),
                });
            }
        }
        check_claims(tenant, &namespaces, all)?;
        quantities(tenant)?;
        if let Some(parent) = chain.last() {
            check_fits_parent(tenant, parent, all)?;
        }
        let mut admins = tenant.spec.admins.clone();
        let mut viewers = tenant.spec.viewers.clone();
        for ancestor in chain.iter().rev() {
            admins.extend(ancestor.spec.admins.iter().cloned());
            viewers.extend(ancestor.spec.viewers.iter().cloned());
        }
        dedup(&mut admins);
        dedup(&mut viewers);
        let mut path: Vec<String> = chain.iter().map(|t| t.name_any()).collect();
        path.push(tenant.name_any());
        Ok(Self {
            path,
            namespaces,
            admins,
            viewers,
        })
    }

    /// The tenant's ancestors (without the tenant).
    #[must_use]
    pub fn ancestors(&self) -> &[String] {
        &self.path[..self.path.len() - 1]
    }
}

fn dedup(list: &mut Vec<String>) {
    let mut seen = Vec::new();
    list.retain(|g| {
        let new = !seen.contains(g);
        if new {
            seen.push(g.clone());
        }
        new
    });
}

fn find<'a>(name: &str, all: &[&'a Tenant]) -> Option<&'a Tenant> {
    all.iter().copied().find(|t| t.name_any() == name)
}

/// `tenant`'s ancestors, from the root.
fn ancestors<'a>(tenant: &Tenant, all: &[&'a Tenant]) -> Result<Vec<&'a Tenant>, Refusal> {
    let mut chain: Vec<&'a Tenant> = Vec::new();
    let mut names = vec![tenant.name_any()];
    let mut next = tenant.spec.parent.clone();
    while let Some(parent) = next {
        let cycle = names.contains(&parent);
        names.push(parent.clone());
        if cycle || names.len() > MAX_DEPTH {
            return Err(Refusal::Cycle {
                chain: names.join(" -> "),
            });
        }
        let Some(found) = find(&parent, all) else {
            return Err(Refusal::ParentNotFound { parent });
        };
        chain.push(found);
        next = found.spec.parent.clone();
    }
    chain.reverse();
    Ok(chain)
}

/// `tenant`'s namespaces: `spec.namespaces`, or the default one.
fn namespaces(tenant: &Tenant, all: &[&Tenant]) -> Result<Vec<String>, Refusal> {
    if !tenant.spec.namespaces.is_empty() {
        return Ok(tenant.spec.namespaces.clone());
    }
    let namespace = match &tenant.spec.parent {
        None => format!("{NAMESPACE_PREFIX}{}", tenant.name_any()),
        Some(parent) => {
            let parent = find(parent, all).ok_or_else(|| Refusal::ParentNotFound {
                parent: parent.clone(),
            })?;
            format!(
                "{}-{}",
                namespaces_of_checked(parent, all)?[0],
                tenant.name_any()
            )
        }
    };
    if namespace.len() > 63 {
        return Err(Refusal::NameTooLong { namespace });
    }
    Ok(vec![namespace])
}

/// [`namespaces`] of an ancestor, after checking the chain above it.
fn namespaces_of_checked(tenant: &Tenant, all: &[&Tenant]) -> Result<Vec<String>, Refusal> {
    ancestors(tenant, all)?;
    namespaces(tenant, all)
}

/// Whether `a` was created before `b` (by creation time, then name).
fn older(a: &Tenant, b: &Tenant) -> bool {
    let key = |t: &Tenant| (t.creation_timestamp().map(|t| t.0), t.name_any());
    key(a) < key(b)
}

fn check_claims(tenant: &Tenant, namespaces: &[String], all: &[&Tenant]) -> Result<(), Refusal> {
    for other in all.iter().copied() {
        if other.name_any() == tenant.name_any() || !older(other, tenant) {
            continue;
        }
        let Ok(theirs) = namespaces_of_checked(other, all) else {
            continue;
        };
        if let Some(namespace) = namespaces.iter().find(|n| theirs.contains(n)) {
            return Err(Refusal::NamespaceClaimed {
                namespace: namespace.clone(),
                other: other.name_any(),
            });
        }
    }
    Ok(())
}

/// Parses `list`, naming `field.KEY` in errors.
fn parse_list(
    field: &str,
    list: &BTreeMap<String, QuotaQuantity>,
) -> Result<BTreeMap<String, Quantity>, Refusal> {
    let mut parsed = BTreeMap::new();
    for (key, value) in list {
        let invalid = |reason: String| Refusal::InvalidQuantity {
            field: format!("{field}.{key}"),
            value: value.0.clone(),
            reason,
        };
        let quantity: Quantity = value.0.parse().map_err(|e| invalid(format!("{e}")))?;
        if quantity < Quantity::ZERO {
            return Err(invalid("it must not be negative".to_owned()));
        }
        parsed.insert(key.clone(), quantity);
    }
    Ok(parsed)
}

/// The tenant's quota, parsed; its limits are checked too.
///
/// # Errors
///
/// [`Refusal::InvalidQuantity`] naming the first bad field.
pub fn quantities(tenant: &Tenant) -> Result<BTreeMap<String, Quantity>, Refusal> {
    let quota = parse_list("spec.quota", &tenant.spec.quota)?;
    if let Some(limits) = &tenant.spec.limits {
        parse_list("spec.limits.default", &limits.default)?;
        parse_list("spec.limits.defaultRequest", &limits.default_request)?;
        parse_list("spec.limits.max", &limits.max)?;
    }
    Ok(quota)
}

fn check_fits_parent(tenant: &Tenant, parent: &Tenant, all: &[&Tenant]) -> Result<(), Refusal> {
    let Ok(limits) = quantities(parent) else {
        // The parent is refused itself; its children wait for it to be fixed.
        return Ok(());
    };
    let own = quantities(tenant)?;
    let parent_name = parent.name_any();
    let siblings: Vec<BTreeMap<String, Quantity>> = all
        .iter()
        .copied()
        .filter(|t| {
            t.spec.parent.as_deref() == Some(parent_name.as_str())
                && t.name_any() != tenant.name_any()
                && older(t, tenant)
        })
        .filter_map(|t| quantities(t).ok())
        .collect();
    for (key, limit) in &limits {
        let Some(mine) = own.get(key) else {
            return Err(Refusal::QuotaMissing {
                key: key.clone(),
                parent: parent_name,
                limit: limit.to_string(),
            });
        };
        let total: Quantity = siblings
            .iter()
            .filter_map(|s| s.get(key).copied())
            .chain(std::iter::once(*mine))
            .sum();
        if total > *limit {
            return Err(Refusal::QuotaExceedsParent {
                key: key.clone(),
                parent: parent_name,
                total: total.to_string(),
                limit: limit.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::platform_v1alpha1::TenantSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn tenant(name: &str, parent: Option<&str>, quota: &[(&str, &str)], age: i64) -> Tenant {
        let mut t = Tenant::new(
            name,
            TenantSpec {
                parent: parent.map(ToOwned::to_owned),
                quota: quota
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), QuotaQuantity::from(*v)))
                    .collect(),
                admins: vec![format!("{name}-admins")],
                ..TenantSpec::default()
            },
        );
        let time = k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + age).unwrap();
        t.metadata.creation_timestamp = Some(Time(time));
        t
    }

    fn plan(t: &Tenant, all: &[Tenant]) -> Result<TenantPlan, String> {
        let all: Vec<&Tenant> = all.iter().collect();
        TenantPlan::new(t, &all).map_err(|e| e.to_string())
    }

    #[test]
    fn a_top_level_tenant_gets_its_default_namespace() {
        let acme = tenant("acme", None, &[], 0);
        let got = plan(&acme, std::slice::from_ref(&acme)).unwrap();
        assert_eq!(got.namespaces, ["tenant-acme"]);
        assert_eq!(got.path, ["acme"]);
        assert_eq!(got.admins, ["acme-admins"]);
        assert!(got.ancestors().is_empty());
    }

    #[test]
    fn a_sub_tenant_nests_inside_its_parent() {
        let acme = tenant("acme", None, &[("pods", "10")], 0);
        let dev = tenant("dev", Some("acme"), &[("pods", "4")], 1);
        let web = tenant("web", Some("dev"), &[("pods", "2")], 2);
        let all = [acme, dev, web.clone()];
        let got = plan(&web, &all).unwrap();
        assert_eq!(got.namespaces, ["tenant-acme-dev-web"]);
        assert_eq!(got.path, ["acme", "dev", "web"]);
        assert_eq!(got.ancestors(), ["acme", "dev"]);
        assert_eq!(got.admins, ["web-admins", "dev-admins", "acme-admins"]);
    }

    #[test]
    fn refusals_name_the_field() {
        let acme = tenant("acme", None, &[("pods", "10"), ("requests.cpu", "4")], 0);
        let check = |t: &Tenant, others: &[Tenant], expected: &str| {
            let mut all = others.to_vec();
            all.push(t.clone());
            let got = plan(t, &all).unwrap_err();
            assert!(got.contains(expected), "{got}");
        };
        let orphan = tenant("orphan", Some("nobody"), &[], 1);
        check(
            &orphan,
            &[],
            r#"spec.parent: tenant "nobody" does not exist"#,
        );

        let mut outside = tenant(
            "dev",
            Some("acme"),
            &[("pods", "1"), ("requests.cpu", "1")],
            1,
        );
        outside.spec.namespaces = vec!["tenant-acme-dev".into(), "elsewhere".into()];
        check(
            &outside,
            std::slice::from_ref(&acme),
            r#"spec.namespaces[1]: namespace "elsewhere" must start with "tenant-acme-""#,
        );

        let mut thief = tenant("thief", None, &[], 1);
        thief.spec.namespaces = vec!["tenant-acme".into()];
        check(
            &thief,
            std::slice::from_ref(&acme),
            r#"namespace "tenant-acme" belongs to tenant "acme""#,
        );
        // The older claim wins: acme itself is not refused.
        assert!(plan(&acme, &[acme.clone(), thief]).is_ok());

        let bad = tenant("bad", None, &[("requests.cpu", "-1")], 1);
        check(
            &bad,
            &[],
            r#"spec.quota.requests.cpu: "-1" is not a valid quantity"#,
        );
        let bad = tenant("bad", None, &[("pods", "lots")], 1);
        check(&bad, &[], "spec.quota.pods:");

        let missing = tenant("dev", Some("acme"), &[("pods", "1")], 1);
        check(
            &missing,
            std::slice::from_ref(&acme),
            r#"spec.quota.requests.cpu: required, because parent tenant "acme" limits requests.cpu to 4"#,
        );

        let a = tenant(
            "a",
            Some("acme"),
            &[("pods", "6"), ("requests.cpu", "2")],
            1,
        );
        let b = tenant(
            "b",
            Some("acme"),
            &[("pods", "6"), ("requests.cpu", "1")],
            2,
        );
        check(
            &b,
            &[acme.clone(), a.clone()],
            r#"spec.quota.pods: the sub-tenants of "acme" would ask for 12 together, more than its quota of 10"#,
        );
        // The older child still fits.
        assert!(plan(&a, &[acme.clone(), a.clone(), b]).is_ok());

        let mut x = tenant("x", Some("y"), &[], 1);
        let mut y = tenant("y", Some("x"), &[], 2);
        x.spec.namespaces = vec!["x".into()];
        y.spec.namespaces = vec!["y".into()];
        check(
            &x,
            &[y],
            "spec.parent: the chain of parents x -> y -> x has a cycle",
        );
    }
}
