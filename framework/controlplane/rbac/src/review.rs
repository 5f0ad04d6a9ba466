//! The bodies of the `authorization.k8s.io/v1` review statuses that the API server returns:
//! [`RulesReview`] for SelfSubjectRulesReview (`kubectl auth can-i --list`) and
//! [`access_review_status`] for SubjectAccessReview, LocalSubjectAccessReview and
//! SelfSubjectAccessReview (`kubectl auth can-i`).

use serde::Serialize;
use serde_json::{Value, json};

use crate::attributes::Decision;
use crate::policy::PolicyRule;

/// A resource rule of a SelfSubjectRulesReview (`authorization/v1.ResourceRule`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResourceRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// API groups, `*` for all.
    #[serde(rename = "apiGroups", skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources, `*` for all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Resource names; empty for all.
    #[serde(rename = "resourceNames", skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
}

/// A non-resource rule of a SelfSubjectRulesReview (`authorization/v1.NonResourceRule`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NonResourceRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// URL paths, with `*` as in policy rules.
    #[serde(rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
}

/// What a user may do in a namespace: the status of a SelfSubjectRulesReview.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RulesReview {
    /// Rules with resources.
    pub resource_rules: Vec<ResourceRule>,
    /// Rules with non-resource URLs.
    pub non_resource_rules: Vec<NonResourceRule>,
    /// Whether the list may be incomplete (kube's RBAC resolver always reports `false`, putting
    /// resolution problems in `evaluation_error` instead).
    pub incomplete: bool,
    /// Role resolution errors, e.g. `role.rbac.authorization.k8s.io "x" not found`; empty if
    /// none.
    pub evaluation_error: String,
}

impl RulesReview {
    /// Splits policy rules as kube does: a rule with resources yields a resource rule, a rule
    /// with non-resource URLs a non-resource rule (a rule with both yields both).
    pub(crate) fn from_rules(rules: Vec<&PolicyRule>, evaluation_error: String) -> Self {
        let mut review = Self {
            evaluation_error,
            ..Self::default()
        };
        for rule in rules {
            if !rule.resources.is_empty() {
                review.resource_rules.push(ResourceRule {
                    verbs: rule.verbs.clone(),
                    api_groups: rule.api_groups.clone(),
                    resources: rule.resources.clone(),
                    resource_names: rule.resource_names.clone(),
                });
            }
            if !rule.non_resource_urls.is_empty() {
                review.non_resource_rules.push(NonResourceRule {
                    verbs: rule.verbs.clone(),
                    non_resource_urls: rule.non_resource_urls.clone(),
                });
            }
        }
        review
    }

    /// The `status` object of a SelfSubjectRulesReview.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "resourceRules": self.resource_rules,
            "nonResourceRules": self.non_resource_rules,
            "incomplete": self.incomplete,
        });
        if !self.evaluation_error.is_empty()
            && let Some(obj) = status.as_object_mut()
        {
            obj.insert(
                "evaluationError".into(),
                Value::String(self.evaluation_error.clone()),
            );
        }
        status
    }
}

/// The `status` object of a SubjectAccessReview (or Local-/SelfSubjectAccessReview) for
/// `decision`: `allowed`, and `reason` when there is one. RBAC never sets `denied`.
pub fn access_review_status(decision: &Decision) -> Value {
    let mut status = json!({ "allowed": decision.allowed });
    if !decision.reason.is_empty()
        && let Some(obj) = status.as_object_mut()
    {
        obj.insert("reason".into(), Value::String(decision.reason.clone()));
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_mixed_rules_and_serialises() {
        let rule = PolicyRule {
            verbs: vec!["get".into()],
            api_groups: vec![String::new()],
            resources: vec!["pods".into()],
            resource_names: Vec::new(),
            non_resource_urls: vec!["/healthz".into()],
        };
        let review = RulesReview::from_rules(vec![&rule], "boom".into());
        assert_eq!(
            review.to_status(),
            json!({
                "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                "incomplete": false,
                "evaluationError": "boom",
            })
        );
        let empty = RulesReview::from_rules(Vec::new(), String::new()).to_status();
        assert_eq!(
            empty,
            json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false})
        );
    }

    #[test]
    fn access_review_status_omits_empty_reason() {
        assert_eq!(
            access_review_status(&Decision::no_opinion("")),
            json!({"allowed": false})
        );
        assert_eq!(
            access_review_status(&Decision::allow("RBAC: allowed by x")),
            json!({"allowed": true, "reason": "RBAC: allowed by x"})
        );
    }
}
