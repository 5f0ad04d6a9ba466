//! The RBAC authorizer over a snapshot of Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings.
//!
//! [`Authorizer::new`] parses the objects once, applies ClusterRole aggregation, resolves every
//! binding's `roleRef` and indexes bindings by the user names and groups their subjects match,
//! so [`Authorizer::authorize`] only looks at the bindings that can apply to the caller. Build a
//! new `Authorizer` whenever an RBAC object changes; it is immutable and `Send + Sync`.
//!
//! Evaluation follows kube-apiserver: members of `system:masters` are allowed first (the
//! privileged-group authorizer, empty reason); then ClusterRoleBindings are visited, then — for a
//! namespaced request — the RoleBindings of that namespace, and the first rule that allows the
//! request wins with the reason `RBAC: allowed by …`. When nothing allows it, the reason
//! aggregates the errors met resolving bindings that apply to the caller (a missing role), else
//! it is empty. Non-resource URLs are reachable only through ClusterRoleBindings, because
//! non-resource requests have no namespace.

use std::collections::{HashMap, HashSet};

use crate::aggregate::{AggregationError, aggregate};
use crate::attributes::{Attributes, Decision, UserInfo, is_superuser, service_account_user_name};
use crate::message::go_quote;
use crate::policy::{Binding, ParseError, PolicyRule, Role, Subject};
use crate::review::RulesReview;
use crate::rule::rule_allows;

/// A problem found in the snapshot; the affected object (or selector) was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// An object could not be parsed.
    #[error("{kind} {name:?} in namespace {namespace:?} skipped: {source}")]
    Malformed {
        /// `Role`, `ClusterRole`, `RoleBinding` or `ClusterRoleBinding`.
        kind: &'static str,
        /// Its namespace, if readable.
        namespace: String,
        /// Its name, if readable.
        name: String,
        /// What is wrong.
        source: ParseError,
    },
    /// A second role with the same namespace and name; the first one is used.
    #[error("duplicate {kind} {name:?} in namespace {namespace:?} skipped")]
    Duplicate {
        /// `Role` or `ClusterRole`.
        kind: &'static str,
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// A ClusterRole aggregation selector was skipped.
    #[error(transparent)]
    Aggregation(#[from] AggregationError),
}

/// A binding with its role resolved to a rule set (or the error kube reports for it).
#[derive(Debug, Clone)]
struct Resolved {
    binding: Binding,
    rules: Result<usize, String>,
}

/// The bindings of one scope (all ClusterRoleBindings, or one namespace's RoleBindings),
/// indexed by the user names and groups their subjects apply to.
#[derive(Debug, Clone, Default)]
struct BindingSet {
    bindings: Vec<Resolved>,
    by_user: HashMap<String, Vec<u32>>,
    by_group: HashMap<String, Vec<u32>>,
}

impl BindingSet {
    fn push(&mut self, resolved: Resolved) {
        let Ok(index) = u32::try_from(self.bindings.len()) else {
            return;
        };
        for subject in &resolved.binding.subjects {
            let (map, key) = match subject.kind.as_str() {
                "User" => (&mut self.by_user, subject.name.clone()),
                "Group" => (&mut self.by_group, subject.name.clone()),
                "ServiceAccount" => match sa_namespace(subject, &resolved.binding.namespace) {
                    Some(ns) => (
                        &mut self.by_user,
                        service_account_user_name(ns, &subject.name),
                    ),
                    None => continue,
                },
                _ => continue,
            };
            let list = map.entry(key).or_default();
            if list.last() != Some(&index) {
                list.push(index);
            }
        }
        self.bindings.push(resolved);
    }

    /// Indices of the bindings with a subject that may apply to `user`, in binding order.
    fn candidates(&self, user: &UserInfo) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        if let Some(list) = self.by_user.get(&user.name) {
            out.extend(list);
        }
        for group in &user.groups {
            if let Some(list) = self.by_group.get(group) {
                out.extend(list);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The namespace a ServiceAccount subject refers to: its own, else the binding's.
fn sa_namespace<'a>(subject: &'a Subject, binding_namespace: &'a str) -> Option<&'a str> {
    let ns = if subject.namespace.is_empty() {
        binding_namespace
    } else {
        &subject.namespace
    };
    (!ns.is_empty()).then_some(ns)
}

/// Whether `subject` (of a binding in `binding_namespace`) applies to `user`.
fn applies_to(user: &UserInfo, subject: &Subject, binding_namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => user.name == subject.name,
        "Group" => user.in_group(&subject.name),
        "ServiceAccount" => sa_namespace(subject, binding_namespace)
            .is_some_and(|ns| user.name == service_account_user_name(ns, &subject.name)),
        _ => false,
    }
}

/// The RBAC authorizer for one snapshot of RBAC objects. See the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct Authorizer {
    rule_sets: Vec<Vec<PolicyRule>>,
    cluster_roles: HashMap<String, usize>,
    cluster: BindingSet,
    namespaced: HashMap<String, BindingSet>,
    warnings: Vec<SnapshotError>,
}

impl Authorizer {
    /// Builds an authorizer from Role, ClusterRole, RoleBinding and ClusterRoleBinding objects
    /// (as stored JSON). Malformed objects are skipped and reported by
    /// [`warnings`](Self::warnings); aggregation is applied to ClusterRoles.
    pub fn new(
        roles: &[serde_json::Value],
        cluster_roles: &[serde_json::Value],
        role_bindings: &[serde_json::Value],
        cluster_role_bindings: &[serde_json::Value],
    ) -> Self {
        let mut warnings = Vec::new();
        let mut rule_sets = Vec::new();

        let parsed_cluster_roles = parse_roles(cluster_roles, "ClusterRole", &mut warnings);
        let aggregated = aggregate(&parsed_cluster_roles);
        warnings.extend(aggregated.errors.into_iter().map(SnapshotError::from));
        let mut cluster_role_ids = HashMap::new();
        for (role, rules) in parsed_cluster_roles.into_iter().zip(aggregated.rules) {
            cluster_role_ids.insert(role.name, rule_sets.len());
            rule_sets.push(rules);
        }
        let mut role_ids = HashMap::new();
        for role in parse_roles(roles, "Role", &mut warnings) {
            role_ids.insert((role.namespace, role.name), rule_sets.len());
            rule_sets.push(role.rules);
        }

        let resolve = |binding: Binding| {
            let role = &binding.role_ref;
            let rules = match role.kind.as_str() {
                "ClusterRole" => cluster_role_ids.get(&role.name).copied().ok_or_else(|| {
                    format!(
                        "clusterrole.rbac.authorization.k8s.io {} not found",
                        go_quote(&role.name)
                    )
                }),
                "Role" => role_ids
                    .get(&(binding.namespace.clone(), role.name.clone()))
                    .copied()
                    .ok_or_else(|| {
                        format!(
                            "role.rbac.authorization.k8s.io {} not found",
                            go_quote(&role.name)
                        )
                    }),
                other => Err(format!(
                    "unsupported role reference kind: {}",
                    go_quote(other)
                )),
            };
            Resolved { binding, rules }
        };

        let mut cluster = BindingSet::default();
        for mut binding in
            parse_bindings(cluster_role_bindings, "ClusterRoleBinding", &mut warnings)
        {
            // A ClusterRoleBinding is cluster-scoped whatever its metadata says.
            binding.namespace.clear();
            cluster.push(resolve(binding));
        }
        let mut namespaced: HashMap<String, BindingSet> = HashMap::new();
        for binding in parse_bindings(role_bindings, "RoleBinding", &mut warnings) {
            if binding.namespace.is_empty() {
                continue; // a RoleBinding without a namespace grants nothing
            }
            let set = namespaced.entry(binding.namespace.clone()).or_default();
            set.push(resolve(binding));
        }

        Self {
            rule_sets,
            cluster_roles: cluster_role_ids,
            cluster,
            namespaced,
            warnings,
        }
    }

    /// What was skipped while building the authorizer (for logging).
    pub fn warnings(&self) -> &[SnapshotError] {
        &self.warnings
    }

    /// The effective (aggregated) rules of the ClusterRole `name`, if it exists.
    pub fn cluster_role_rules(&self, name: &str) -> Option<&[PolicyRule]> {
        let id = *self.cluster_roles.get(name)?;
        self.rule_sets.get(id).map(Vec::as_slice)
    }

    /// Decides whether the request is allowed: superusers first, then RBAC.
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        if is_superuser(&attrs.user) {
            return Decision::allow("");
        }
        let mut errors: Vec<&str> = Vec::new();
        let mut allowed_by = None;
        self.visit(&attrs.user, &attrs.namespace, |source, rule| match rule {
            Ok(rule) if rule_allows(attrs, rule) => {
                allowed_by = Some(source.describe());
                false
            }
            Ok(_) => true,
            Err(e) => {
                errors.push(e);
                true
            }
        });
        match allowed_by {
            Some(source) => Decision::allow(format!("RBAC: allowed by {source}")),
            None if errors.is_empty() => Decision::no_opinion(""),
            None => Decision::no_opinion(format!("RBAC: {}", aggregate_errors(&errors))),
        }
    }

    /// The rules that apply to `user` in `namespace` (empty: cluster-wide only), for
    /// SelfSubjectRulesReview and `kubectl auth can-i --list`. Like kube's RBAC rule resolver,
    /// this lists what RBAC grants (the superuser shortcut contributes no rules), in evaluation
    /// order and without deduplication.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> RulesReview {
        let mut rules: Vec<&PolicyRule> = Vec::new();
        let mut errors: Vec<&str> = Vec::new();
        self.visit(user, namespace, |_, rule| {
            match rule {
                Ok(rule) => rules.push(rule),
                Err(e) => errors.push(e),
            }
            true
        });
        RulesReview::from_rules(rules, aggregate_errors(&errors))
    }

    /// Calls `visitor` with every rule (or resolution error) granted to `user` in `namespace`,
    /// ClusterRoleBindings first, until it returns `false`.
    fn visit<'s>(
        &'s self,
        user: &UserInfo,
        namespace: &str,
        mut visitor: impl FnMut(Source<'s>, Result<&'s PolicyRule, &'s str>) -> bool,
    ) {
        let mut sets = vec![&self.cluster];
        if !namespace.is_empty()
            && let Some(set) = self.namespaced.get(namespace)
        {
            sets.push(set);
        }
        for set in sets {
            for index in set.candidates(user) {
                let Some(resolved) = set.bindings.get(index as usize) else {
                    continue;
                };
                let binding = &resolved.binding;
                let Some(subject) = binding
                    .subjects
                    .iter()
                    .find(|s| applies_to(user, s, &binding.namespace))
                else {
                    continue;
                };
                match &resolved.rules {
                    Err(e) => {
                        if !visitor(Source { binding, subject }, Err(e)) {
                            return;
                        }
                    }
                    Ok(id) => {
                        for rule in self.rule_sets.get(*id).into_iter().flatten() {
                            if !visitor(Source { binding, subject }, Ok(rule)) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The binding and subject a rule came from.
#[derive(Clone, Copy)]
struct Source<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
}

impl Source<'_> {
    /// Kube's description: `ClusterRoleBinding "b" of ClusterRole "r" to Group "g"` or
    /// `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
    fn describe(&self) -> String {
        let b = self.binding;
        let s = self.subject;
        let subject = if s.kind == "ServiceAccount" {
            let ns = if s.namespace.is_empty() {
                &b.namespace
            } else {
                &s.namespace
            };
            format!("{} {}", s.kind, go_quote(&format!("{}/{ns}", s.name)))
        } else {
            format!("{} {}", s.kind, go_quote(&s.name))
        };
        let (kind, name) = if b.namespace.is_empty() {
            ("ClusterRoleBinding", b.name.clone())
        } else {
            ("RoleBinding", format!("{}/{}", b.name, b.namespace))
        };
        format!(
            "{kind} {} of {} {} to {subject}",
            go_quote(&name),
            b.role_ref.kind,
            go_quote(&b.role_ref.name)
        )
    }
}

/// Kube's error aggregate: one message as is, several (deduplicated) as `[a, b]`.
fn aggregate_errors(errors: &[&str]) -> String {
    let mut seen = HashSet::new();
    let unique: Vec<&str> = errors.iter().copied().filter(|e| seen.insert(*e)).collect();
    match unique.as_slice() {
        [] => String::new(),
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

fn parse_roles(
    values: &[serde_json::Value],
    kind: &'static str,
    warnings: &mut Vec<SnapshotError>,
) -> Vec<Role> {
    let mut roles: Vec<Role> = values
        .iter()
        .filter_map(|v| {
            Role::from_value(v)
                .map_err(|source| warnings.push(malformed(kind, v, source)))
                .ok()
        })
        .collect();
    roles.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let mut seen = HashSet::new();
    roles.retain(|r| {
        let fresh = seen.insert((r.namespace.clone(), r.name.clone()));
        if !fresh {
            warnings.push(SnapshotError::Duplicate {
                kind,
                namespace: r.namespace.clone(),
                name: r.name.clone(),
            });
        }
        fresh
    });
    roles
}

fn parse_bindings(
    values: &[serde_json::Value],
    kind: &'static str,
    warnings: &mut Vec<SnapshotError>,
) -> Vec<Binding> {
    let mut bindings: Vec<Binding> = values
        .iter()
        .filter_map(|v| {
            Binding::from_value(v)
                .map_err(|source| warnings.push(malformed(kind, v, source)))
                .ok()
        })
        .collect();
    bindings.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    bindings
}

fn malformed(kind: &'static str, v: &serde_json::Value, source: ParseError) -> SnapshotError {
    let meta = |key: &str| {
        v.pointer(&format!("/metadata/{key}"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    SnapshotError::Malformed {
        kind,
        namespace: meta("namespace"),
        name: meta("name"),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregate_errors_like_kube() {
        assert_eq!(aggregate_errors(&[]), "");
        assert_eq!(aggregate_errors(&["a", "a"]), "a");
        assert_eq!(aggregate_errors(&["a", "b", "a"]), "[a, b]");
    }

    #[test]
    fn candidates_are_in_binding_order_without_duplicates() {
        let a = Authorizer::new(
            &[],
            &[],
            &[],
            &[
                json!({"metadata": {"name": "b2"}, "roleRef": {"kind": "ClusterRole", "name": "x"},
                    "subjects": [{"kind": "Group", "name": "g"}, {"kind": "User", "name": "u"}]}),
                json!({"metadata": {"name": "b1"}, "roleRef": {"kind": "ClusterRole", "name": "x"},
                    "subjects": [{"kind": "User", "name": "u"}, {"kind": "User", "name": "u"}]}),
                json!({"metadata": {"name": "b3"}, "roleRef": {"kind": "ClusterRole", "name": "x"},
                    "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
            ],
        );
        let user = UserInfo::new("u", ["g"]);
        assert_eq!(a.cluster.candidates(&user), [0, 1]);
        // A ServiceAccount subject without a namespace in a ClusterRoleBinding matches nobody.
        assert!(
            a.cluster
                .by_user
                .keys()
                .all(|k| !k.contains("serviceaccount"))
        );
    }

    #[test]
    fn authorizer_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Authorizer>();
    }
}
