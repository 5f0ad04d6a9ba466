//! The bootstrap policy behaves like a fresh kube-apiserver: discovery and self reviews for
//! everyone authenticated, health for everyone, `admin` ⊇ `edit` ⊇ `view` by aggregation.

use crate::common;

use common::*;
use mni_rbac::{Authorizer, UserInfo, aggregated_cluster_role_rules, bootstrap_policy};
use serde_json::Value;

/// An authorizer over the bootstrap policy plus extra RoleBindings.
fn cluster(role_bindings: &[Value]) -> Authorizer {
    let policy = bootstrap_policy();
    let (roles, bindings): (Vec<Value>, Vec<Value>) =
        policy.into_iter().partition(|o| o["kind"] == "ClusterRole");
    let a = Authorizer::new(&[], &roles, role_bindings, &bindings);
    assert!(a.warnings().is_empty(), "{:?}", a.warnings());
    a
}

#[test]
fn authenticated_users_get_discovery_and_self_reviews() {
    let a = cluster(&[]);
    let u = UserInfo::service_account("ns", "op");
    for path in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps/v1",
        "/openapi/v3",
        "/version",
        "/healthz",
    ] {
        assert!(a.authorize(&path_req(&u, "get", path)).allowed, "{path}");
    }
    assert!(!a.authorize(&path_req(&u, "get", "/metrics")).allowed);
    let review = cluster_req(
        &u,
        "create",
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
    );
    assert_eq!(
        a.authorize(&review).reason,
        r#"RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated""#
    );
    assert!(
        a.authorize(&cluster_req(
            &u,
            "create",
            "authorization.k8s.io",
            "selfsubjectrulesreviews"
        ))
        .allowed
    );
    assert!(
        !a.authorize(&cluster_req(
            &u,
            "create",
            "authorization.k8s.io",
            "subjectaccessreviews"
        ))
        .allowed
    );
    // Nothing else by default.
    assert!(
        !a.authorize(&ns_req(&u, "list", "ns", "", "configmaps"))
            .allowed
    );
}

#[test]
fn anonymous_users_get_only_public_info() {
    let a = cluster(&[]);
    let anon = UserInfo::anonymous();
    for path in ["/healthz", "/livez", "/readyz", "/version"] {
        assert!(a.authorize(&path_req(&anon, "get", path)).allowed, "{path}");
    }
    assert!(!a.authorize(&path_req(&anon, "get", "/apis")).allowed);
    assert!(
        !a.authorize(&cluster_req(
            &anon,
            "create",
            "authorization.k8s.io",
            "selfsubjectaccessreviews"
        ))
        .allowed
    );
}

#[test]
fn cluster_admin_is_bound_to_system_masters() {
    let a = cluster(&[]);
    let admin = UserInfo::new(
        "kubernetes-admin",
        ["system:masters", "system:authenticated"],
    );
    let review = a.rules_for(&admin, "default");
    assert!(
        review
            .resource_rules
            .iter()
            .any(|r| r.verbs == ["*"] && r.api_groups == ["*"] && r.resources == ["*"])
    );
    assert!(
        review
            .non_resource_rules
            .iter()
            .any(|r| r.non_resource_urls == ["*"])
    );
}

#[test]
fn view_edit_admin_aggregate() {
    let bind = |name: &str, role: &str, who: &str| {
        role_binding(
            "team",
            name,
            "ClusterRole",
            role,
            vec![subject("User", who)],
        )
    };
    let a = cluster(&[
        bind("v", "view", "viewer"),
        bind("e", "edit", "editor"),
        bind("a", "admin", "admin"),
    ]);
    let (viewer, editor, admin) = (user("viewer"), user("editor"), user("admin"));
    let can = |u: &UserInfo, verb: &str, group: &str, resource: &str| {
        a.authorize(&ns_req(u, verb, "team", group, resource))
            .allowed
    };
    for u in [&viewer, &editor, &admin] {
        assert!(can(u, "list", "apps", "deployments"));
        assert!(can(u, "watch", "", "configmaps"));
        assert!(!can(u, "list", "", "nodes"));
    }
    assert!(!can(&viewer, "get", "", "secrets"));
    assert!(!can(&viewer, "create", "apps", "deployments"));
    assert!(can(&editor, "get", "", "secrets"));
    assert!(can(&editor, "create", "apps", "deployments"));
    assert!(can(&editor, "update", "coordination.k8s.io", "leases"));
    assert!(!can(
        &editor,
        "create",
        "rbac.authorization.k8s.io",
        "rolebindings"
    ));
    assert!(can(
        &admin,
        "create",
        "rbac.authorization.k8s.io",
        "rolebindings"
    ));
    assert!(can(&admin, "delete", "", "secrets"));
    // Only in their namespace.
    assert!(
        !a.authorize(&ns_req(&admin, "get", "other", "", "pods"))
            .allowed
    );
    // Status subresources are read-only for editors.
    let status = ns_req(&editor, "update", "team", "apps", "deployments").subresource("status");
    assert!(!a.authorize(&status).allowed);
    let scale = ns_req(&editor, "update", "team", "apps", "deployments").subresource("scale");
    assert!(a.authorize(&scale).allowed);

    let reason = a
        .authorize(&ns_req(&viewer, "get", "team", "", "pods"))
        .reason;
    assert_eq!(
        reason,
        r#"RBAC: allowed by RoleBinding "v/team" of ClusterRole "view" to User "viewer""#
    );
}

#[test]
fn aggregated_rules_can_be_written_back() {
    let roles: Vec<Value> = bootstrap_policy()
        .into_iter()
        .filter(|o| o["kind"] == "ClusterRole")
        .collect();
    let rules = aggregated_cluster_role_rules(&roles);
    assert_eq!(
        rules.keys().map(String::as_str).collect::<Vec<_>>(),
        ["admin", "edit", "view"]
    );
    assert!(rules["admin"].len() > rules["edit"].len());
    assert!(rules["edit"].len() > rules["view"].len());
    // Storing them changes nothing: the aggregation replaces stored rules.
    let stored: Vec<Value> = roles
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(name) = r["metadata"]["name"].as_str()
                && let Some(agg) = rules.get(name)
            {
                r["rules"] = Value::Array(agg.clone());
            }
            r
        })
        .collect();
    assert_eq!(aggregated_cluster_role_rules(&stored), rules);
}
