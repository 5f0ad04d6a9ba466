//! Builders for RBAC objects and requests shared by the integration tests.

#![allow(dead_code)]

use mni_rbac::{Attributes, UserInfo};
use serde_json::{Value, json};

/// A policy rule.
pub(crate) fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// A policy rule limited to resource names.
pub(crate) fn named_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    names: &[&str],
) -> Value {
    json!({"apiGroups": groups, "resources": resources, "resourceNames": names, "verbs": verbs})
}

/// A non-resource rule.
pub(crate) fn url_rule(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"nonResourceURLs": urls, "verbs": verbs})
}

/// A Role.
pub(crate) fn role(namespace: &str, name: &str, rules: Vec<Value>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    })
}

/// A ClusterRole.
pub(crate) fn cluster_role(name: &str, rules: Vec<Value>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    })
}

/// A subject.
pub(crate) fn subject(kind: &str, name: &str) -> Value {
    json!({"kind": kind, "name": name})
}

/// A ServiceAccount subject with an explicit namespace.
pub(crate) fn sa_subject(namespace: &str, name: &str) -> Value {
    json!({"kind": "ServiceAccount", "name": name, "namespace": namespace})
}

/// A RoleBinding.
pub(crate) fn role_binding(
    namespace: &str,
    name: &str,
    role_kind: &str,
    role_name: &str,
    subjects: Vec<Value>,
) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
        "subjects": subjects,
    })
}

/// A ClusterRoleBinding.
pub(crate) fn cluster_role_binding(name: &str, role_name: &str, subjects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
        "subjects": subjects,
    })
}

/// A namespaced resource request.
pub(crate) fn ns_req(
    user: &UserInfo,
    verb: &str,
    ns: &str,
    group: &str,
    resource: &str,
) -> Attributes {
    Attributes::resource(user.clone(), verb, group, resource).in_namespace(ns)
}

/// A cluster-scoped resource request.
pub(crate) fn cluster_req(user: &UserInfo, verb: &str, group: &str, resource: &str) -> Attributes {
    Attributes::resource(user.clone(), verb, group, resource)
}

/// A non-resource request.
pub(crate) fn path_req(user: &UserInfo, verb: &str, path: &str) -> Attributes {
    Attributes::non_resource(user.clone(), verb, path)
}

/// A plain authenticated user.
pub(crate) fn user(name: &str) -> UserInfo {
    UserInfo::new(name, ["system:authenticated"])
}
