//! Typed views of the `rbac.authorization.k8s.io/v1` objects, parsed leniently from JSON.
//!
//! [`PolicyRule`], [`Subject`] and [`RoleRef`] are the parts of Roles, ClusterRoles,
//! RoleBindings and ClusterRoleBindings that authorization needs. [`Role::from_value`] and
//! [`Binding::from_value`] read them out of stored objects; an object whose shape is wrong
//! (a rule that is not an object, a verb that is not a string, a binding without `roleRef`)
//! yields a [`ParseError`], and the authorizer skips that whole object — fewer permissions, never
//! a panic.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// Why an RBAC object could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The object is not a JSON object.
    #[error("object is not a JSON object")]
    NotAnObject,
    /// A required field is missing or empty.
    #[error("missing required field {0}")]
    Missing(String),
    /// A field has the wrong JSON type.
    #[error("field {field} must be {expected}")]
    WrongType {
        /// The JSON path of the field, e.g. `rules[0].verbs[1]`.
        field: String,
        /// What it must be, e.g. `a string`.
        expected: &'static str,
    },
}

/// One rule of a Role or ClusterRole (`rbac/v1.PolicyRule`).
///
/// Serialises to the Kubernetes JSON shape (`verbs`, `apiGroups`, `resources`, `resourceNames`,
/// `nonResourceURLs`, empty lists omitted except `verbs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct PolicyRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// API groups, `""` for core, `*` for all.
    #[serde(rename = "apiGroups", skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources, optionally `resource/subresource`, `*/subresource` or `*`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Object names the rule is limited to; empty for all names.
    #[serde(rename = "resourceNames", skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Non-resource URL paths; a trailing `*` matches any suffix, `*` alone matches all.
    #[serde(rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Reads a rule; `field` is its JSON path, for error messages.
    pub fn from_value(value: &Value, field: &str) -> Result<Self, ParseError> {
        let obj = value.as_object().ok_or_else(|| ParseError::WrongType {
            field: field.to_string(),
            expected: "an object",
        })?;
        Ok(Self {
            verbs: strings(obj, "verbs", field)?,
            api_groups: strings(obj, "apiGroups", field)?,
            resources: strings(obj, "resources", field)?,
            resource_names: strings(obj, "resourceNames", field)?,
            non_resource_urls: strings(obj, "nonResourceURLs", field)?,
        })
    }

    /// The rule as Kubernetes JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Who a binding grants to (`rbac/v1.Subject`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount` (other kinds never match).
    pub kind: String,
    /// The user, group or service-account name.
    pub name: String,
    /// The service account's namespace; empty means the binding's namespace.
    pub namespace: String,
}

/// The role a binding refers to (`rbac/v1.RoleRef`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleRef {
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// The role's name.
    pub name: String,
}

/// A Role or ClusterRole: name, namespace (empty for ClusterRoles), labels, rules and the
/// ClusterRole `aggregationRule.clusterRoleSelectors` (raw label selectors).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Role {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`; empty for ClusterRoles.
    pub namespace: String,
    /// `metadata.labels` (non-string values ignored).
    pub labels: BTreeMap<String, String>,
    /// `rules`.
    pub rules: Vec<PolicyRule>,
    /// `aggregationRule.clusterRoleSelectors`, if `aggregationRule` is set.
    pub aggregation: Option<Vec<Value>>,
}

impl Role {
    /// Reads a Role or ClusterRole object.
    pub fn from_value(value: &Value) -> Result<Self, ParseError> {
        let obj = value.as_object().ok_or(ParseError::NotAnObject)?;
        let (name, namespace, labels) = metadata(obj)?;
        let rules = match obj.get("rules") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, r)| PolicyRule::from_value(r, &format!("rules[{i}]")))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(wrong("rules", "a list")),
        };
        let aggregation = match obj.get("aggregationRule") {
            None | Some(Value::Null) => None,
            Some(Value::Object(agg)) => match agg.get("clusterRoleSelectors") {
                None | Some(Value::Null) => Some(Vec::new()),
                Some(Value::Array(sel)) => Some(sel.clone()),
                Some(_) => return Err(wrong("aggregationRule.clusterRoleSelectors", "a list")),
            },
            Some(_) => return Err(wrong("aggregationRule", "an object")),
        };
        Ok(Self {
            name,
            namespace,
            labels,
            rules,
            aggregation,
        })
    }
}

/// A RoleBinding or ClusterRoleBinding: name, namespace (empty for ClusterRoleBindings),
/// role reference and subjects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`; empty for ClusterRoleBindings.
    pub namespace: String,
    /// `roleRef`.
    pub role_ref: RoleRef,
    /// `subjects`.
    pub subjects: Vec<Subject>,
}

impl Binding {
    /// Reads a RoleBinding or ClusterRoleBinding object.
    pub fn from_value(value: &Value) -> Result<Self, ParseError> {
        let obj = value.as_object().ok_or(ParseError::NotAnObject)?;
        let (name, namespace, _) = metadata(obj)?;
        let role_ref = match obj.get("roleRef") {
            Some(Value::Object(r)) => RoleRef {
                kind: string(r, "kind", "roleRef")?,
                name: string(r, "name", "roleRef")?,
            },
            Some(_) => return Err(wrong("roleRef", "an object")),
            None => return Err(ParseError::Missing("roleRef".into())),
        };
        if role_ref.name.is_empty() {
            return Err(ParseError::Missing("roleRef.name".into()));
        }
        let subjects = match obj.get("subjects") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let field = format!("subjects[{i}]");
                    let s = s.as_object().ok_or_else(|| ParseError::WrongType {
                        field: field.clone(),
                        expected: "an object",
                    })?;
                    Ok(Subject {
                        kind: string(s, "kind", &field)?,
                        name: string(s, "name", &field)?,
                        namespace: string(s, "namespace", &field)?,
                    })
                })
                .collect::<Result<_, ParseError>>()?,
            Some(_) => return Err(wrong("subjects", "a list")),
        };
        Ok(Self {
            name,
            namespace,
            role_ref,
            subjects,
        })
    }
}

type Meta = (String, String, BTreeMap<String, String>);

fn metadata(obj: &Map<String, Value>) -> Result<Meta, ParseError> {
    let meta = match obj.get("metadata") {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(wrong("metadata", "an object")),
        None => return Err(ParseError::Missing("metadata".into())),
    };
    let name = string(meta, "name", "metadata")?;
    if name.is_empty() {
        return Err(ParseError::Missing("metadata.name".into()));
    }
    let namespace = string(meta, "namespace", "metadata")?;
    let labels = match meta.get("labels") {
        Some(Value::Object(l)) => l
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect(),
        _ => BTreeMap::new(),
    };
    Ok((name, namespace, labels))
}

fn wrong(field: &str, expected: &'static str) -> ParseError {
    ParseError::WrongType {
        field: field.to_string(),
        expected,
    }
}

/// An optional string field (absent or null → empty).
fn string(obj: &Map<String, Value>, key: &str, parent: &str) -> Result<String, ParseError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(wrong(&format!("{parent}.{key}"), "a string")),
    }
}

/// An optional list of strings (absent or null → empty).
fn strings(obj: &Map<String, Value>, key: &str, parent: &str) -> Result<Vec<String>, ParseError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| wrong(&format!("{parent}.{key}[{i}]"), "a string"))
            })
            .collect(),
        Some(_) => Err(wrong(&format!("{parent}.{key}"), "a list of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_role() {
        let r = Role::from_value(&json!({
            "metadata": {"name": "r", "namespace": "ns", "labels": {"a": "b", "n": 1}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
        }))
        .unwrap();
        assert_eq!((r.name.as_str(), r.namespace.as_str()), ("r", "ns"));
        assert_eq!(r.labels.len(), 1);
        assert_eq!(r.rules[0].resources, ["pods"]);
        assert!(r.aggregation.is_none());
        assert_eq!(
            r.rules[0].to_value(),
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
        );
    }

    #[test]
    fn malformed_objects_are_errors_not_panics() {
        for bad in [
            json!(null),
            json!([]),
            json!({"metadata": {}}),
            json!({"metadata": {"name": 3}}),
            json!({"metadata": {"name": "x"}, "rules": {}}),
            json!({"metadata": {"name": "x"}, "rules": [1]}),
            json!({"metadata": {"name": "x"}, "rules": [{"verbs": ["get", 1]}]}),
            json!({"metadata": {"name": "x"}, "aggregationRule": []}),
        ] {
            assert!(Role::from_value(&bad).is_err(), "{bad}");
        }
        let err = Role::from_value(&json!({"metadata": {"name": "x"}, "rules": [{"verbs": [1]}]}))
            .unwrap_err();
        assert_eq!(err.to_string(), "field rules[0].verbs[0] must be a string");
        for bad in [
            json!({"metadata": {"name": "b"}}),
            json!({"metadata": {"name": "b"}, "roleRef": {"kind": "Role"}}),
            json!({"metadata": {"name": "b"}, "roleRef": {"kind": "Role", "name": "r"}, "subjects": [1]}),
            json!({"metadata": {"name": "b"}, "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"name": 1}]}),
        ] {
            assert!(Binding::from_value(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_a_binding() {
        let b = Binding::from_value(&json!({
            "metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}]
        }))
        .unwrap();
        assert_eq!(b.role_ref.kind, "Role");
        assert_eq!(b.subjects[0].namespace, "");
    }
}
