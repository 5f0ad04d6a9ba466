//! Authorization decisions over RBAC snapshots: namespaces, resource names, wildcards,
//! subresources, non-resource URLs, aggregation, group subjects and malformed objects.

use crate::common;

use common::*;
use mni_rbac::{Authorizer, UserInfo};
use serde_json::json;

fn allowed(a: &Authorizer, attrs: &mni_rbac::Attributes) -> bool {
    a.authorize(attrs).allowed
}

/// Asserts the decision on each namespaced request `(user, verb, namespace, group,
/// resource, allowed)`.
#[track_caller]
fn expect_ns(a: &Authorizer, cases: &[(&UserInfo, &str, &str, &str, &str, bool)]) {
    for &(user, verb, ns, group, resource, want) in cases {
        assert_eq!(
            allowed(a, &ns_req(user, verb, ns, group, resource)),
            want,
            "{} {verb} {group}/{resource} in {ns}",
            user.name
        );
    }
}

#[test]
fn service_account_with_a_configmap_reader_role() {
    let a = Authorizer::new(
        &[role(
            "ns",
            "cm-reader",
            vec![rule(&["get", "list", "watch"], &[""], &["configmaps"])],
        )],
        &[],
        &[role_binding(
            "ns",
            "read-cms",
            "Role",
            "cm-reader",
            vec![json!({"kind": "ServiceAccount", "name": "op"})],
        )],
        &[],
    );
    assert!(a.warnings().is_empty(), "{:?}", a.warnings());
    let sa = UserInfo::service_account("ns", "op");
    for verb in ["get", "list", "watch"] {
        assert!(
            allowed(&a, &ns_req(&sa, verb, "ns", "", "configmaps")),
            "{verb}"
        );
    }
    expect_ns(
        &a,
        &[
            (&sa, "create", "ns", "", "configmaps", false),
            (&sa, "list", "ns", "", "secrets", false),
            (&sa, "list", "other", "", "configmaps", false),
        ],
    );
    // Cluster-wide (all namespaces) list is not covered by a RoleBinding.
    assert!(!allowed(&a, &cluster_req(&sa, "list", "", "configmaps")));
    // Same name in another namespace is another service account.
    let other = UserInfo::service_account("other", "op");
    assert!(!allowed(
        &a,
        &ns_req(&other, "list", "ns", "", "configmaps")
    ));
    // The wrong API group does not match the core group.
    assert!(!allowed(
        &a,
        &ns_req(&sa, "list", "ns", "apps", "configmaps")
    ));
}

#[test]
fn role_bindings_only_see_roles_of_their_namespace() {
    let a = Authorizer::new(
        &[role("a", "r", vec![rule(&["get"], &[""], &["pods"])])],
        &[cluster_role(
            "cr",
            vec![rule(&["get"], &[""], &["secrets"])],
        )],
        &[
            // Refers to a Role "r" in namespace b, which does not exist.
            role_binding("b", "rb", "Role", "r", vec![subject("User", "u")]),
            // A ClusterRole through a RoleBinding is scoped to the binding's namespace.
            role_binding("a", "rb", "ClusterRole", "cr", vec![subject("User", "u")]),
        ],
        &[],
    );
    let u = user("u");
    expect_ns(
        &a,
        &[
            (&u, "get", "b", "", "pods", false),
            (&u, "get", "a", "", "secrets", true),
            (&u, "get", "b", "", "secrets", false),
        ],
    );
    assert!(!allowed(&a, &cluster_req(&u, "get", "", "secrets")));
}

#[test]
fn cluster_role_bindings_grant_everywhere() {
    let a = Authorizer::new(
        &[],
        &[cluster_role(
            "nodes",
            vec![rule(&["list"], &[""], &["nodes", "pods"])],
        )],
        &[],
        &[cluster_role_binding(
            "b",
            "nodes",
            vec![sa_subject("sys", "ctl")],
        )],
    );
    let sa = UserInfo::service_account("sys", "ctl");
    assert!(allowed(&a, &cluster_req(&sa, "list", "", "nodes")));
    assert!(allowed(&a, &ns_req(&sa, "list", "any", "", "pods")));
    assert!(allowed(&a, &cluster_req(&sa, "list", "", "pods")));
}

#[test]
fn resource_names_restrict_to_named_requests() {
    let a = Authorizer::new(
        &[role(
            "ns",
            "one-secret",
            vec![named_rule(
                &["get", "update", "list", "watch", "delete"],
                &[""],
                &["secrets"],
                &["tls"],
            )],
        )],
        &[],
        &[role_binding(
            "ns",
            "b",
            "Role",
            "one-secret",
            vec![subject("User", "u")],
        )],
        &[],
    );
    let u = user("u");
    let named = |verb: &str, name: &str| ns_req(&u, verb, "ns", "", "secrets").named(name);
    assert!(allowed(&a, &named("get", "tls")));
    assert!(allowed(&a, &named("update", "tls")));
    assert!(allowed(&a, &named("delete", "tls")));
    assert!(!allowed(&a, &named("get", "other")));
    // Unnamed list/watch/create/deletecollection never match a rule with resourceNames.
    for verb in ["list", "watch", "create", "deletecollection"] {
        assert!(
            !allowed(&a, &ns_req(&u, verb, "ns", "", "secrets")),
            "{verb}"
        );
    }
    // A list narrowed to one name (metadata.name field selector) carries the name.
    assert!(allowed(&a, &named("list", "tls")));
}

#[test]
fn wildcards() {
    let a = Authorizer::new(
        &[],
        &[
            cluster_role("all-verbs", vec![rule(&["*"], &["apps"], &["deployments"])]),
            cluster_role("all-groups", vec![rule(&["get"], &["*"], &["widgets"])]),
            cluster_role("all-resources", vec![rule(&["list"], &["batch"], &["*"])]),
        ],
        &[
            role_binding(
                "ns",
                "1",
                "ClusterRole",
                "all-verbs",
                vec![subject("User", "u")],
            ),
            role_binding(
                "ns",
                "2",
                "ClusterRole",
                "all-groups",
                vec![subject("User", "u")],
            ),
            role_binding(
                "ns",
                "3",
                "ClusterRole",
                "all-resources",
                vec![subject("User", "u")],
            ),
        ],
        &[],
    );
    let u = user("u");
    expect_ns(
        &a,
        &[
            (&u, "deletecollection", "ns", "apps", "deployments", true),
            (&u, "escalate", "ns", "apps", "deployments", true),
            (&u, "get", "ns", "extensions", "deployments", false),
            (&u, "get", "ns", "example.com", "widgets", true),
            (&u, "get", "ns", "", "widgets", true),
            (&u, "list", "ns", "example.com", "widgets", false),
            (&u, "list", "ns", "batch", "jobs", true),
        ],
    );
    assert!(allowed(
        &a,
        &ns_req(&u, "list", "ns", "batch", "jobs").subresource("status")
    ));
    assert!(!allowed(&a, &ns_req(&u, "watch", "ns", "batch", "jobs")));
}

#[test]
fn subresources() {
    let a = Authorizer::new(
        &[role(
            "ns",
            "status-writer",
            vec![
                rule(
                    &["get", "update", "patch"],
                    &["apps"],
                    &["deployments/status"],
                ),
                rule(&["get", "update"], &["*"], &["*/scale"]),
            ],
        )],
        &[],
        &[role_binding(
            "ns",
            "b",
            "Role",
            "status-writer",
            vec![subject("User", "u")],
        )],
        &[],
    );
    let u = user("u");
    let d = |verb: &str, sub: &str| {
        ns_req(&u, verb, "ns", "apps", "deployments")
            .subresource(sub)
            .named("web")
    };
    assert!(allowed(&a, &d("update", "status")));
    assert!(allowed(&a, &d("patch", "status")));
    assert!(!allowed(&a, &d("update", "")));
    assert!(allowed(&a, &d("update", "scale")));
    assert!(!allowed(&a, &d("patch", "scale")));
    let sts = ns_req(&u, "update", "ns", "apps", "statefulsets")
        .subresource("scale")
        .named("db");
    assert!(allowed(&a, &sts));
    assert!(!allowed(
        &a,
        &ns_req(&u, "update", "ns", "apps", "statefulsets").named("db")
    ));
    assert!(!allowed(
        &a,
        &ns_req(&u, "update", "ns", "apps", "statefulsets")
            .subresource("status")
            .named("db")
    ));
}

#[test]
fn non_resource_urls_only_through_cluster_role_bindings() {
    let urls = cluster_role("urls", vec![url_rule(&["get"], &["/healthz", "/apis/*"])]);
    let a = Authorizer::new(
        &[],
        std::slice::from_ref(&urls),
        &[role_binding(
            "ns",
            "rb",
            "ClusterRole",
            "urls",
            vec![subject("User", "ns-only")],
        )],
        &[cluster_role_binding(
            "crb",
            "urls",
            vec![subject("User", "u")],
        )],
    );
    let u = user("u");
    assert!(allowed(&a, &path_req(&u, "get", "/healthz")));
    assert!(!allowed(&a, &path_req(&u, "get", "/healthz/etcd")));
    assert!(!allowed(&a, &path_req(&u, "post", "/healthz")));
    assert!(allowed(&a, &path_req(&u, "get", "/apis/apps/v1")));
    assert!(allowed(&a, &path_req(&u, "get", "/apis/")));
    assert!(!allowed(&a, &path_req(&u, "get", "/apis")));
    assert!(!allowed(&a, &path_req(&u, "get", "/api/v1")));
    // Bound only by a RoleBinding: non-resource URLs are never granted.
    assert!(!allowed(&a, &path_req(&user("ns-only"), "get", "/healthz")));
}

#[test]
fn cluster_role_aggregation() {
    let labelled = |name: &str, label: &str, rules| {
        let mut r = cluster_role(name, rules);
        r["metadata"]["labels"] = json!({label: "true"});
        r
    };
    let mut monitoring = cluster_role("monitoring", vec![]);
    monitoring["aggregationRule"] = json!({"clusterRoleSelectors": [
        {"matchLabels": {"example.com/aggregate-to-monitoring": "true"}}
    ]});
    let a = Authorizer::new(
        &[],
        &[
            monitoring,
            labelled(
                "monitoring-endpoints",
                "example.com/aggregate-to-monitoring",
                vec![rule(
                    &["get", "list", "watch"],
                    &[""],
                    &["services", "endpoints", "pods"],
                )],
            ),
            labelled(
                "monitoring-metrics",
                "example.com/aggregate-to-monitoring",
                vec![url_rule(&["get"], &["/metrics"])],
            ),
            labelled(
                "unrelated",
                "example.com/aggregate-to-other",
                vec![rule(&["*"], &["*"], &["*"])],
            ),
        ],
        &[],
        &[cluster_role_binding(
            "m",
            "monitoring",
            vec![subject("Group", "monitors")],
        )],
    );
    let u = UserInfo::new("prom", ["monitors"]);
    assert!(allowed(&a, &ns_req(&u, "list", "ns", "", "pods")));
    assert!(allowed(&a, &path_req(&u, "get", "/metrics")));
    assert!(!allowed(&a, &ns_req(&u, "list", "ns", "", "secrets")));
    assert_eq!(a.cluster_role_rules("monitoring").map(<[_]>::len), Some(2));
    let reason = a.authorize(&ns_req(&u, "list", "ns", "", "pods")).reason;
    assert_eq!(
        reason,
        "RBAC: allowed by ClusterRoleBinding \"m\" of ClusterRole \"monitoring\" to Group \"monitors\""
    );
}

#[test]
fn group_subjects() {
    let a = Authorizer::new(
        &[],
        &[
            cluster_role("read-cms", vec![rule(&["list"], &[""], &["configmaps"])]),
            cluster_role("read-pods", vec![rule(&["list"], &[""], &["pods"])]),
            cluster_role("read-events", vec![rule(&["list"], &[""], &["events"])]),
        ],
        &[role_binding(
            "team",
            "sas-of-team",
            "ClusterRole",
            "read-pods",
            vec![subject("Group", "system:serviceaccounts:team")],
        )],
        &[
            cluster_role_binding(
                "all-sas",
                "read-cms",
                vec![subject("Group", "system:serviceaccounts")],
            ),
            cluster_role_binding(
                "everyone",
                "read-events",
                vec![subject("Group", "system:authenticated")],
            ),
        ],
    );
    let team_sa = UserInfo::service_account("team", "x");
    let other_sa = UserInfo::service_account("other", "x");
    let human = user("alice");
    expect_ns(
        &a,
        &[
            (&team_sa, "list", "any", "", "configmaps", true),
            (&other_sa, "list", "any", "", "configmaps", true),
            (&human, "list", "any", "", "configmaps", false),
            (&team_sa, "list", "team", "", "pods", true),
            (&other_sa, "list", "team", "", "pods", false),
            (&team_sa, "list", "other", "", "pods", false),
        ],
    );
    for u in [&team_sa, &other_sa, &human] {
        assert!(allowed(&a, &ns_req(u, "list", "any", "", "events")));
    }
    assert!(!allowed(
        &a,
        &ns_req(&UserInfo::anonymous(), "list", "any", "", "events")
    ));
}

#[test]
fn superusers_bypass_rbac() {
    let a = Authorizer::new(&[], &[], &[], &[]);
    let admin = UserInfo::new(
        "kubernetes-admin",
        ["system:masters", "system:authenticated"],
    );
    let d = a.authorize(&cluster_req(&admin, "delete", "", "nodes"));
    assert!(d.allowed);
    assert_eq!(d.reason, "");
    assert!(a.authorize(&path_req(&admin, "get", "/anything")).allowed);
    // The superuser shortcut contributes no rules.
    assert!(a.rules_for(&admin, "ns").resource_rules.is_empty());
    assert!(
        !a.authorize(&cluster_req(&user("u"), "get", "", "nodes"))
            .allowed
    );
}

#[test]
fn malformed_objects_are_skipped_not_fatal() {
    let a = Authorizer::new(
        &[
            json!({"metadata": {"name": "bad", "namespace": "ns"}, "rules": [{"verbs": "get"}]}),
            role("ns", "good", vec![rule(&["get"], &[""], &["pods"])]),
            json!(42),
        ],
        &[json!({"metadata": {}}), json!(null)],
        &[
            role_binding("ns", "to-bad", "Role", "bad", vec![subject("User", "u")]),
            role_binding("ns", "to-good", "Role", "good", vec![subject("User", "u")]),
            json!({"metadata": {"name": "no-ref", "namespace": "ns"}}),
            json!({"metadata": {"name": "x", "namespace": "ns"}, "roleRef": {"kind": "Role", "name": "good"}, "subjects": "u"}),
        ],
        &[json!([])],
    );
    assert_eq!(a.warnings().len(), 7, "{:#?}", a.warnings());
    assert!(a.warnings().iter().any(|w| w.to_string()
        == "Role \"bad\" in namespace \"ns\" skipped: field rules[0].verbs must be a list of strings"));
    let u = user("u");
    assert!(allowed(&a, &ns_req(&u, "get", "ns", "", "pods")));
    assert!(!allowed(&a, &ns_req(&u, "list", "ns", "", "pods")));
}

#[test]
fn rules_for_lists_cluster_then_namespace_rules() {
    let a = Authorizer::new(
        &[role("ns", "r", vec![rule(&["get"], &[""], &["pods"])])],
        &[cluster_role(
            "c",
            vec![
                rule(&["list"], &[""], &["nodes"]),
                url_rule(&["get"], &["/healthz"]),
            ],
        )],
        &[
            role_binding("ns", "rb", "Role", "r", vec![subject("User", "u")]),
            role_binding("ns", "missing", "Role", "nope", vec![subject("User", "u")]),
        ],
        &[cluster_role_binding("crb", "c", vec![subject("User", "u")])],
    );
    let u = user("u");
    let review = a.rules_for(&u, "ns");
    let resources: Vec<_> = review
        .resource_rules
        .iter()
        .map(|r| r.resources[0].as_str())
        .collect();
    assert_eq!(resources, ["nodes", "pods"]);
    assert_eq!(review.non_resource_rules.len(), 1);
    assert!(!review.incomplete);
    assert_eq!(
        review.evaluation_error,
        "role.rbac.authorization.k8s.io \"nope\" not found"
    );
    let cluster_only = a.rules_for(&u, "");
    assert_eq!(cluster_only.resource_rules.len(), 1);
    assert_eq!(cluster_only.evaluation_error, "");
    assert_eq!(
        cluster_only.to_status(),
        json!({
            "resourceRules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["nodes"]}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
            "incomplete": false,
        })
    );
    assert!(a.rules_for(&user("nobody"), "ns").resource_rules.is_empty());
}
