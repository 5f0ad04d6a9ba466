//! Word-for-word Forbidden messages and SubjectAccessReview reasons, as kube-apiserver writes
//! them.

use crate::common;

use common::*;
use mni_rbac::{
    Authorizer, UserInfo, access_review_status, forbidden_message, forbidden_status_message,
};
use serde_json::json;

#[test]
fn forbidden_namespaced() {
    let sa = UserInfo::service_account("ns", "sa");
    let attrs = ns_req(&sa, "list", "ns", "", "secrets");
    let d = Authorizer::default().authorize(&attrs);
    assert!(!d.allowed);
    assert_eq!(
        forbidden_message(&attrs, &d.reason),
        r#"User "system:serviceaccount:ns:sa" cannot list resource "secrets" in API group "" in the namespace "ns""#
    );
    assert_eq!(
        forbidden_status_message(&attrs, &d.reason),
        r#"secrets is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "secrets" in API group "" in the namespace "ns""#
    );
}

#[test]
fn forbidden_cluster_scope() {
    let attrs = cluster_req(
        &user("alice"),
        "get",
        "apiextensions.k8s.io",
        "customresourcedefinitions",
    )
    .named("widgets.example.com");
    assert_eq!(
        forbidden_message(&attrs, ""),
        r#"User "alice" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope"#
    );
    assert_eq!(
        forbidden_status_message(&attrs, ""),
        r#"customresourcedefinitions.apiextensions.k8s.io "widgets.example.com" is forbidden: User "alice" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope"#
    );
}

#[test]
fn forbidden_subresource_with_name() {
    let attrs = ns_req(&user("alice"), "update", "ns", "apps", "deployments")
        .subresource("status")
        .named("web");
    assert_eq!(
        forbidden_message(&attrs, ""),
        r#"User "alice" cannot update resource "deployments/status" in API group "apps" in the namespace "ns""#
    );
}

#[test]
fn forbidden_non_resource() {
    let attrs = path_req(&UserInfo::anonymous(), "get", "/metrics");
    assert_eq!(
        forbidden_message(&attrs, ""),
        r#"User "system:anonymous" cannot get path "/metrics""#
    );
}

#[test]
fn forbidden_with_rbac_resolution_errors() {
    let a = Authorizer::new(
        &[],
        &[],
        &[
            role_binding("ns", "a", "ClusterRole", "gone", vec![subject("User", "u")]),
            role_binding("ns", "b", "Role", "missing", vec![subject("User", "u")]),
            role_binding("ns", "c", "Role", "missing", vec![subject("User", "u")]),
            role_binding("ns", "other-user", "Role", "x", vec![subject("User", "v")]),
        ],
        &[cluster_role_binding(
            "crb",
            "absent",
            vec![subject("User", "u")],
        )],
    );
    let u = user("u");
    let attrs = ns_req(&u, "get", "ns", "", "pods");
    let d = a.authorize(&attrs);
    assert!(!d.allowed);
    assert_eq!(
        d.reason,
        r#"RBAC: [clusterrole.rbac.authorization.k8s.io "absent" not found, clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "missing" not found]"#
    );
    // One error: no brackets. Cluster-scoped: RoleBindings are not consulted.
    let cluster = cluster_req(&u, "get", "", "nodes");
    let d = a.authorize(&cluster);
    assert_eq!(
        forbidden_message(&cluster, &d.reason),
        r#"User "u" cannot get resource "nodes" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "absent" not found"#
    );
    // Bindings that do not apply to the user contribute no errors.
    let d = a.authorize(&ns_req(&user("nobody"), "get", "ns", "", "pods"));
    assert_eq!(d.reason, "");
}

#[test]
fn unsupported_role_ref_kind() {
    let a = Authorizer::new(
        &[],
        &[],
        &[role_binding(
            "ns",
            "b",
            "Policy",
            "p",
            vec![subject("User", "u")],
        )],
        &[],
    );
    let d = a.authorize(&ns_req(&user("u"), "get", "ns", "", "pods"));
    assert_eq!(
        d.reason,
        r#"RBAC: unsupported role reference kind: "Policy""#
    );
}

#[test]
fn subject_access_review_reasons() {
    let a = Authorizer::new(
        &[role(
            "ns",
            "pod-reader",
            vec![rule(&["get", "list"], &[""], &["pods"])],
        )],
        &[
            cluster_role("node-reader", vec![rule(&["get"], &[""], &["nodes"])]),
            cluster_role("cm-reader", vec![rule(&["get"], &[""], &["configmaps"])]),
        ],
        &[
            role_binding(
                "ns",
                "read-pods",
                "Role",
                "pod-reader",
                vec![
                    subject("User", "someone-else"),
                    json!({"kind": "ServiceAccount", "name": "op"}),
                ],
            ),
            role_binding(
                "ns",
                "team-cms",
                "ClusterRole",
                "cm-reader",
                vec![subject("Group", "system:serviceaccounts:ns")],
            ),
            // Resolution errors do not show once something allows the request.
            role_binding(
                "ns",
                "broken",
                "Role",
                "missing",
                vec![subject("User", "alice")],
            ),
        ],
        &[cluster_role_binding(
            "read-nodes",
            "node-reader",
            vec![subject("User", "alice")],
        )],
    );
    let sa = UserInfo::service_account("ns", "op");
    let d = a.authorize(&ns_req(&sa, "list", "ns", "", "pods"));
    assert_eq!(
        access_review_status(&d),
        json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "read-pods/ns" of Role "pod-reader" to ServiceAccount "op/ns""#})
    );
    let d = a.authorize(&ns_req(&sa, "get", "ns", "", "configmaps"));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by RoleBinding "team-cms/ns" of ClusterRole "cm-reader" to Group "system:serviceaccounts:ns""#
    );
    let alice = user("alice");
    let d = a.authorize(&ns_req(&alice, "get", "ns", "", "nodes"));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by ClusterRoleBinding "read-nodes" of ClusterRole "node-reader" to User "alice""#
    );
    let d = a.authorize(&ns_req(&alice, "delete", "ns", "", "nodes"));
    assert_eq!(
        access_review_status(&d),
        json!({"allowed": false, "reason": r#"RBAC: role.rbac.authorization.k8s.io "missing" not found"#})
    );
    let d = a.authorize(&ns_req(&sa, "delete", "ns", "", "pods"));
    assert_eq!(access_review_status(&d), json!({"allowed": false}));
    let admin = UserInfo::new("admin", ["system:masters"]);
    let d = a.authorize(&ns_req(&admin, "delete", "ns", "", "pods"));
    assert_eq!(access_review_status(&d), json!({"allowed": true}));
}
