//! ClusterRole aggregation: a ClusterRole with `aggregationRule.clusterRoleSelectors` gets the
//! union of the rules of every other ClusterRole whose labels match one of the selectors, as
//! the kube-controller-manager's `clusterrole-aggregation` controller maintains it.
//!
//! The controller converges over time (`admin` picks up `edit`, which picks up `view`); here the
//! same result is computed at once as a fixpoint over the snapshot. Rules keep the controller's
//! order — selectors in order, matching roles sorted by name, each role's rules in order — with
//! exact duplicates dropped. An aggregated role's own stored `rules` are replaced, as the
//! controller replaces them. Use [`aggregated_cluster_role_rules`] to write the computed rules
//! back into stored objects so that `kubectl get clusterrole admin -o yaml` shows them.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use crate::policy::{PolicyRule, Role};
use crate::selector::{LabelSelector, SelectorError};

/// A selector that could not be used; the aggregation treats it as matching nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AggregationError {
    /// A `clusterRoleSelectors` entry of the named ClusterRole is not a valid label selector.
    #[error("clusterrole {role:?}: clusterRoleSelectors[{index}]: {source}")]
    Selector {
        /// The aggregating ClusterRole.
        role: String,
        /// The index of the selector.
        index: usize,
        /// What is wrong with it.
        source: SelectorError,
    },
}

/// The effective rules of a set of ClusterRoles after aggregation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aggregated {
    /// The rules of each role, in the order of the input.
    pub rules: Vec<Vec<PolicyRule>>,
    /// Selectors that were skipped.
    pub errors: Vec<AggregationError>,
}

/// Applies aggregation to `cluster_roles` (names are expected to be unique).
pub fn aggregate(cluster_roles: &[Role]) -> Aggregated {
    let mut errors = Vec::new();
    let mut rules: Vec<Vec<PolicyRule>> = cluster_roles
        .iter()
        .map(|r| {
            if r.aggregation.is_some() {
                Vec::new()
            } else {
                r.rules.clone()
            }
        })
        .collect();

    // Indices of roles sorted by name, the order the controller visits matches in.
    let mut by_name: Vec<usize> = (0..cluster_roles.len()).collect();
    by_name.sort_by(|&a, &b| cluster_roles[a].name.cmp(&cluster_roles[b].name));

    // For each aggregating role, its parsed selectors' matches (fixed for the snapshot).
    let mut plans: Vec<(usize, Vec<Vec<usize>>)> = Vec::new();
    for (i, role) in cluster_roles.iter().enumerate() {
        let Some(selectors) = &role.aggregation else {
            continue;
        };
        let mut per_selector = Vec::new();
        for (index, sel) in selectors.iter().enumerate() {
            match LabelSelector::from_value(sel) {
                Ok(sel) => per_selector.push(
                    by_name
                        .iter()
                        .copied()
                        .filter(|&j| j != i && sel.matches(&cluster_roles[j].labels))
                        .collect(),
                ),
                Err(source) => errors.push(AggregationError::Selector {
                    role: role.name.clone(),
                    index,
                    source,
                }),
            }
        }
        plans.push((i, per_selector));
    }

    // Iterate to a fixpoint: unions only grow, so this converges; the bound guards cycles
    // whose rule order could otherwise keep changing.
    for _ in 0..=plans.len() {
        let mut changed = false;
        for (i, per_selector) in &plans {
            let mut seen = HashSet::new();
            let mut union = Vec::new();
            for matches in per_selector {
                for &j in matches {
                    for rule in &rules[j] {
                        if seen.insert(rule.clone()) {
                            union.push(rule.clone());
                        }
                    }
                }
            }
            if rules[*i] != union {
                rules[*i] = union;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Aggregated { rules, errors }
}

/// The aggregated rules of every aggregating ClusterRole among `cluster_roles` (JSON objects),
/// by name, as Kubernetes JSON rules — what the aggregation controller would store in each
/// role's `rules`. Malformed objects are ignored; of duplicate names the first wins.
pub fn aggregated_cluster_role_rules(cluster_roles: &[Value]) -> BTreeMap<String, Vec<Value>> {
    let mut names = HashSet::new();
    let roles: Vec<Role> = cluster_roles
        .iter()
        .filter_map(|v| Role::from_value(v).ok())
        .filter(|r| names.insert(r.name.clone()))
        .collect();
    let aggregated = aggregate(&roles);
    roles
        .iter()
        .zip(aggregated.rules)
        .filter(|(role, _)| role.aggregation.is_some())
        .map(|(role, rules)| {
            (
                role.name.clone(),
                rules.iter().map(PolicyRule::to_value).collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn role(v: Value) -> Role {
        Role::from_value(&v).unwrap()
    }

    #[test]
    fn chains_and_cycles_converge() {
        let roles = vec![
            role(json!({"metadata": {"name": "a"},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-a": "true"}}]}})),
            role(
                json!({"metadata": {"name": "b", "labels": {"to-a": "true"}},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-b": "true"}}]},
                "rules": [{"verbs": ["stale"], "apiGroups": [""], "resources": ["x"]}]}),
            ),
            role(
                json!({"metadata": {"name": "c", "labels": {"to-b": "true", "to-a": "true"}},
                "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
            ),
            role(
                json!({"metadata": {"name": "d", "labels": {"to-b": "true"}},
                "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]}),
            ),
        ];
        let agg = aggregate(&roles);
        let verbs = |i: usize| {
            agg.rules[i]
                .iter()
                .map(|r| r.verbs[0].clone())
                .collect::<Vec<_>>()
        };
        // b: c, d (its stale rules are replaced); a: b's union then c (deduplicated).
        assert_eq!(verbs(1), ["get", "list"]);
        assert_eq!(verbs(0), ["get", "list"]);
        assert!(agg.errors.is_empty());

        let cyclic = vec![
            role(json!({"metadata": {"name": "x", "labels": {"l": "x"}},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"l": "y"}}]}})),
            role(json!({"metadata": {"name": "y", "labels": {"l": "y"}},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"l": "x"}}, {"matchLabels": {"l": "z"}}]}})),
            role(json!({"metadata": {"name": "z", "labels": {"l": "z"}},
                "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]})),
        ];
        let agg = aggregate(&cyclic);
        assert_eq!(agg.rules[0], agg.rules[1]);
        assert_eq!(agg.rules[0].len(), 1);
    }

    #[test]
    fn bad_selectors_are_reported_and_skipped() {
        let roles = vec![role(json!({"metadata": {"name": "a"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": []}, {}]}}))];
        let agg = aggregate(&roles);
        assert_eq!(agg.errors.len(), 1);
        assert!(
            agg.errors[0]
                .to_string()
                .starts_with("clusterrole \"a\": clusterRoleSelectors[0]")
        );
        // `{}` matches every other role (none here), never the role itself.
        assert!(agg.rules[0].is_empty());
    }

    #[test]
    fn json_helper_returns_only_aggregating_roles() {
        let out = aggregated_cluster_role_rules(&[
            json!({"metadata": {"name": "view"},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"v": "true"}}]}}),
            json!({"metadata": {"name": "pods", "labels": {"v": "true"}},
                "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
            json!("garbage"),
        ]);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out["view"],
            [json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})]
        );
    }
}
