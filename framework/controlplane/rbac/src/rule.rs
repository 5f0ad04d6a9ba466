//! Whether one [`PolicyRule`] allows one request, with Kubernetes' exact matching semantics.
//!
//! - verbs and API groups: exact or `*`;
//! - resources: `*`, exact (`pods`, or `deployments/status` for a subresource request), or
//!   `*/<subresource>` for that subresource of any resource; a rule for `pods` does not cover
//!   `pods/log`;
//! - resource names: an empty list allows every name; otherwise the request must name one of
//!   them, so such a rule never allows `list`, `watch`, `create` or `deletecollection` of
//!   unnamed objects;
//! - non-resource URLs: exact, `*`, or a prefix ending in `*` (`/apis/*`, `/healthz*`).

use crate::attributes::Attributes;
use crate::policy::PolicyRule;

/// The wildcard in verbs, API groups, resources and non-resource URLs.
pub const WILDCARD: &str = "*";

/// Whether the rule lists `verb` (or `*`).
pub fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == WILDCARD || v == verb)
}

/// Whether the rule lists `group` (or `*`).
pub fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups.iter().any(|g| g == WILDCARD || g == group)
}

/// Whether the rule covers `combined` (`resource` or `resource/subresource`), where
/// `subresource` is the request's subresource (empty if none).
pub fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        r == WILDCARD
            || r == combined
            || (!subresource.is_empty()
                && r.strip_prefix("*/")
                    .is_some_and(|rule_sub| rule_sub == subresource))
    })
}

/// Whether the rule allows the object `name` (always, if the rule lists no names).
pub fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

/// Whether the rule covers the non-resource `path`.
pub fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().any(|u| {
        if u == WILDCARD || u == path {
            return true;
        }
        match u.strip_suffix('*') {
            // A trailing run of `*` is one wildcard: strip them all, as kube's TrimRight does.
            Some(_) => path.starts_with(u.trim_end_matches('*')),
            None => false,
        }
    })
}

/// Whether `rule` allows the request `attrs` (kube's `RuleAllows`).
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if !verb_matches(rule, &attrs.verb) {
        return false;
    }
    if !attrs.resource_request {
        return non_resource_url_matches(rule, &attrs.path);
    }
    if !api_group_matches(rule, &attrs.api_group) {
        return false;
    }
    let matched = if attrs.subresource.is_empty() {
        resource_matches(rule, &attrs.resource, "")
    } else {
        let combined = format!("{}/{}", attrs.resource, attrs.subresource);
        resource_matches(rule, &combined, &attrs.subresource)
    };
    matched && resource_name_matches(rule, &attrs.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::UserInfo;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            resource_names: v(names),
            non_resource_urls: Vec::new(),
        }
    }

    fn req(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes::resource(UserInfo::default(), verb, group, resource)
            .in_namespace("ns")
            .subresource(sub)
            .named(name)
    }

    #[test]
    fn subresources_need_their_own_rule() {
        let r = rule(&["get"], &["apps"], &["deployments"], &[]);
        assert!(rule_allows(&req("get", "apps", "deployments", "", ""), &r));
        assert!(!rule_allows(
            &req("get", "apps", "deployments", "status", ""),
            &r
        ));
        let r = rule(&["get"], &["apps"], &["deployments/status"], &[]);
        assert!(rule_allows(
            &req("get", "apps", "deployments", "status", "d"),
            &r
        ));
        assert!(!rule_allows(
            &req("get", "apps", "deployments", "", "d"),
            &r
        ));
        let r = rule(&["update"], &["*"], &["*/scale"], &[]);
        assert!(rule_allows(
            &req("update", "apps", "statefulsets", "scale", "s"),
            &r
        ));
        assert!(!rule_allows(
            &req("update", "apps", "statefulsets", "status", "s"),
            &r
        ));
        assert!(!rule_allows(&req("update", "apps", "scale", "", "s"), &r));
        // `*` covers subresources too.
        let r = rule(&["*"], &["*"], &["*"], &[]);
        assert!(rule_allows(&req("create", "", "pods", "eviction", "p"), &r));
    }

    #[test]
    fn resource_names_require_a_named_request() {
        let r = rule(&["get", "list", "delete"], &[""], &["secrets"], &["s1"]);
        assert!(rule_allows(&req("get", "", "secrets", "", "s1"), &r));
        assert!(!rule_allows(&req("get", "", "secrets", "", "s2"), &r));
        assert!(!rule_allows(&req("list", "", "secrets", "", ""), &r));
        assert!(rule_allows(&req("list", "", "secrets", "", "s1"), &r));
    }

    #[test]
    fn non_resource_urls() {
        let mut r = rule(&["get"], &[], &[], &[]);
        r.non_resource_urls = vec!["/healthz".into(), "/apis/*".into(), "/x**".into()];
        let nr = |verb: &str, path: &str| Attributes::non_resource(UserInfo::default(), verb, path);
        assert!(rule_allows(&nr("get", "/healthz"), &r));
        assert!(!rule_allows(&nr("get", "/healthz/etcd"), &r));
        assert!(rule_allows(&nr("get", "/apis/apps/v1"), &r));
        assert!(rule_allows(&nr("get", "/apis/"), &r));
        assert!(!rule_allows(&nr("get", "/apis"), &r));
        assert!(rule_allows(&nr("get", "/xyz"), &r));
        assert!(!rule_allows(&nr("post", "/healthz"), &r));
        // A resource rule never matches a non-resource request, and vice versa.
        let pods = rule(&["get"], &[""], &["pods"], &[]);
        assert!(!rule_allows(&nr("get", "/api/v1/pods"), &pods));
        assert!(!rule_allows(&req("get", "", "pods", "", ""), &r));
    }

    #[test]
    fn verbs_and_groups() {
        let r = rule(&["list"], &[""], &["pods"], &[]);
        assert!(!rule_allows(&req("watch", "", "pods", "", ""), &r));
        assert!(!rule_allows(&req("list", "apps", "pods", "", ""), &r));
        let r = rule(&["*"], &["*"], &["pods"], &[]);
        assert!(rule_allows(
            &req("deletecollection", "x.io", "pods", "", ""),
            &r
        ));
    }
}
