//! Typed walks over objects: the field set of an object, and removing paths from it.
//!
//! [`to_field_set`] is structured-merge-diff's `ToFieldSet`: every leaf, every list item and
//! every map entry of an object, as a [`FieldSet`]. [`remove_items`] is `RemoveItems`, and
//! [`ensure_named_fields`] is `EnsureNamedFieldsAreMembers` (struct fields on the way to a path
//! become members, so pruning can drop a struct that only its pruned leaves kept alive).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::path::{Path, PathElement};
use crate::set::{FieldSet, MAX_DEPTH};
use crate::types::{ListType, MapType, TypeNode};

/// Errors from walking an object with its type information.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A list item cannot be identified (missing key field, wrong item type, null item).
    #[error("{path}: element {index}: {message}")]
    BadItem {
        /// The list, in kube's path spelling.
        path: String,
        /// The item's position.
        index: usize,
        /// structured-merge-diff's message, e.g. `associative list with keys has an element
        /// that omits key field "name" (and doesn't have default value)`.
        message: String,
    },
    /// Two items of an associative list or set have the same key (in an applied config).
    #[error("{path}: duplicate entries for key {element}")]
    Duplicate {
        /// The list, in kube's path spelling.
        path: String,
        /// The key, e.g. `[name="c"]`.
        element: String,
    },
    /// The object is nested deeper than [`MAX_DEPTH`].
    #[error("{path}: value is nested too deeply")]
    TooDeep {
        /// Where the limit was hit.
        path: String,
    },
}

pub(crate) fn path_string(path: &[PathElement]) -> String {
    Path(path.to_vec()).to_string()
}

pub(crate) fn check_depth(path: &[PathElement]) -> Result<(), ValueError> {
    if path.len() > MAX_DEPTH {
        return Err(ValueError::TooDeep {
            path: path_string(path),
        });
    }
    Ok(())
}

/// Whether arrays at `node` merge item by item.
pub(crate) fn granular_list(node: &TypeNode) -> bool {
    !node.scalar
        && match &node.list {
            ListType::Atomic => false,
            ListType::Set => true,
            ListType::Map(keys) => !keys.is_empty(),
        }
}

/// Whether objects at `node` merge key by key.
pub(crate) fn granular_map(node: &TypeNode) -> bool {
    !node.scalar && node.map == MapType::Granular
}

/// The path element of a list item (structured-merge-diff's `listItemToPathElement`).
pub(crate) fn item_element(
    node: &TypeNode,
    item: &Value,
    index: usize,
    path: &[PathElement],
) -> Result<PathElement, ValueError> {
    let bad = |message: String| ValueError::BadItem {
        path: path_string(path),
        index,
        message,
    };
    match &node.list {
        ListType::Map(keys) if !keys.is_empty() => {
            let map = match item {
                Value::Object(map) => map,
                Value::Null => {
                    return Err(bad(
                        "associative list with keys may not have a null element".into(),
                    ));
                }
                _ => {
                    return Err(bad(
                        "associative list with keys may not have non-map elements".into(),
                    ));
                }
            };
            let mut fields = Vec::with_capacity(keys.len());
            for key in keys {
                let value = match map.get(key) {
                    Some(v) => v.clone(),
                    None => match &node.item().child(key).0.default {
                        Some(d) => d.clone(),
                        None => {
                            return Err(bad(format!(
                                "associative list with keys has an element that omits key field {key:?} (and doesn't have default value)"
                            )));
                        }
                    },
                };
                fields.push((key.clone(), value));
            }
            Ok(PathElement::key(fields))
        }
        ListType::Set => match item {
            Value::Object(_) => Err(bad(
                "associative list without keys has an element that's a map type".into(),
            )),
            Value::Array(_) => Err(bad(
                "not supported: associative list with lists as elements".into(),
            )),
            Value::Null => Err(bad(
                "associative list without keys has an element that's an explicit null".into(),
            )),
            _ => Ok(PathElement::Value(item.clone())),
        },
        _ => Ok(PathElement::Index(index)),
    }
}

/// The field set of an object. `strict` rejects duplicate list keys, as kube does for an
/// applied configuration (live objects may hold duplicates).
pub fn to_field_set(value: &Value, node: &TypeNode, strict: bool) -> Result<FieldSet, ValueError> {
    let mut path = Vec::new();
    walk(value, node, strict, &mut path)
}

fn walk(
    value: &Value,
    node: &TypeNode,
    strict: bool,
    path: &mut Vec<PathElement>,
) -> Result<FieldSet, ValueError> {
    check_depth(path)?;
    let mut set = FieldSet::new();
    match value {
        Value::Object(map) if granular_map(node) => {
            for (key, child) in map {
                let (child_node, declared) = node.child(key);
                let pe = PathElement::field(key.as_str());
                path.push(pe.clone());
                let sub = walk(child, child_node, strict, path);
                path.pop();
                let sub = sub?;
                let member = is_leaf(child, child_node)
                    || child.as_object().is_some_and(Map::is_empty)
                    || !declared;
                if member {
                    set.insert_member(pe.clone());
                }
                set.insert_child(pe, sub);
            }
        }
        Value::Array(items) if granular_list(node) => {
            let mut seen = BTreeSet::new();
            for (index, item) in items.iter().enumerate() {
                let pe = item_element(node, item, index, path)?;
                if !seen.insert(pe.clone()) && strict {
                    return Err(ValueError::Duplicate {
                        path: path_string(path),
                        element: pe.to_string(),
                    });
                }
                path.push(pe.clone());
                let sub = walk(item, node.item(), strict, path);
                path.pop();
                set.insert_member(pe.clone());
                set.insert_child(pe, sub?);
            }
        }
        _ => {}
    }
    Ok(set)
}

/// Whether a value is owned as one leaf: scalars, null, atomic lists and maps.
pub(crate) fn is_leaf(value: &Value, node: &TypeNode) -> bool {
    match value {
        Value::Object(_) => !granular_map(node),
        Value::Array(_) => !granular_list(node),
        _ => true,
    }
}

/// Adds declared struct fields that lead to paths of `set` as members.
pub fn ensure_named_fields(set: &FieldSet, node: &TypeNode) -> FieldSet {
    let mut out = FieldSet::new();
    for m in set.members() {
        out.insert_member(m.clone());
    }
    for (pe, child) in set.children() {
        let child_node = match pe {
            PathElement::Field(name) => {
                let (n, declared) = node.child(name);
                if declared {
                    out.insert_member(pe.clone());
                }
                n
            }
            _ => node.item(),
        };
        out.insert_child(pe.clone(), ensure_named_fields(child, child_node));
    }
    out
}

/// Removes the paths of `set` (members go whole, with everything below them). Returns None
/// when a container loses all its contents (structured-merge-diff leaves a null there, which
/// kube then drops); the root never becomes None.
pub fn remove_items(value: &Value, set: &FieldSet, node: &TypeNode) -> Value {
    let mut path = Vec::new();
    remove(value, set, node, &mut path).unwrap_or_else(|| Value::Object(Map::new()))
}

fn remove(
    value: &Value,
    set: &FieldSet,
    node: &TypeNode,
    path: &mut Vec<PathElement>,
) -> Option<Value> {
    if path.len() > MAX_DEPTH {
        return Some(value.clone());
    }
    match value {
        Value::Object(map) if granular_map(node) => {
            let mut out = Map::new();
            let mut kept = 0;
            for (key, child) in map {
                let pe = PathElement::field(key.as_str());
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                kept += 1;
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        path.push(pe);
                        let r = remove(child, sub, node.child(key).0, path);
                        path.pop();
                        if let Some(r) = r {
                            out.insert(key.clone(), r);
                        }
                    }
                    None => {
                        out.insert(key.clone(), child.clone());
                    }
                }
            }
            (kept > 0).then_some(Value::Object(out))
        }
        Value::Array(items) if granular_list(node) => {
            let mut out = Vec::new();
            for (index, item) in items.iter().enumerate() {
                let Ok(pe) = item_element(node, item, index, path) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        path.push(pe);
                        let r = remove(item, sub, node.item(), path);
                        path.pop();
                        out.push(r.unwrap_or_else(|| Value::Object(Map::new())));
                    }
                    None => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        _ => Some(value.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeInfo;
    use serde_json::json;

    fn deployment() -> TypeInfo {
        crate::builtin::builtin("apps", "Deployment").unwrap_or_default()
    }

    fn check(obj: Value, types: &TypeInfo, expected: Value) {
        let set = to_field_set(&obj, types.root(), true);
        assert_eq!(set.map(|s| s.to_fields_v1()), Ok(expected));
    }

    #[test]
    fn field_sets() {
        let d = deployment();
        check(
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "x", "labels": {"app": "a"}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                    "template": {"spec": {"containers": [{"name": "c", "image": "i",
                        "ports": [{"containerPort": 80}]}]}}}}),
            &d,
            json!({"f:apiVersion": {}, "f:kind": {},
                "f:metadata": {"f:labels": {"f:app": {}}, "f:name": {}},
                "f:spec": {"f:replicas": {}, "f:selector": {},
                    "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {
                        ".": {}, "f:image": {}, "f:name": {},
                        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                            ".": {}, "f:containerPort": {}}}}}}}}}),
        );
        check(
            json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"empty": {}, "n": null}}),
            &d,
            json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
                "f:spec": {"f:empty": {}, "f:n": {}}}),
        );
        // Deduced: map entries are members themselves.
        check(
            json!({"spec": {"a": {"b": 1}}}),
            &TypeInfo::deduced(),
            json!({"f:spec": {".": {}, "f:a": {".": {}, "f:b": {}}}}),
        );
    }

    #[test]
    fn item_errors() {
        let d = deployment();
        let bad = json!({"spec": {"template": {"spec": {"containers": [{"image": "i"}]}}}});
        assert_eq!(
            to_field_set(&bad, d.root(), true).map_err(|e| e.to_string()),
            Err(".spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)".to_string())
        );
        let dup = json!({"metadata": {"finalizers": ["a", "a"]}});
        assert_eq!(
            to_field_set(&dup, d.root(), true).map_err(|e| e.to_string()),
            Err(".metadata.finalizers: duplicate entries for key [=\"a\"]".to_string())
        );
        assert!(to_field_set(&dup, d.root(), false).is_ok());
        let null_item = json!({"metadata": {"finalizers": [null]}});
        assert!(matches!(
            to_field_set(&null_item, d.root(), true),
            Err(ValueError::BadItem { .. })
        ));
    }

    #[test]
    fn removal() {
        let d = deployment();
        let obj = json!({"metadata": {"labels": {"a": "1", "b": "2"}},
            "spec": {"template": {"spec": {"containers": [{"name": "x"}, {"name": "y", "image": "i"}]}}}});
        let set = FieldSet::from_fields_v1(&json!({
            "f:metadata": {"f:labels": {"f:a": {}}},
            "f:spec": {"f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"x\"}": {}, "k:{\"name\":\"y\"}": {"f:image": {}}}}}}
        }))
        .unwrap_or_default();
        assert_eq!(
            remove_items(&obj, &set, d.root()),
            json!({"metadata": {"labels": {"b": "2"}},
                "spec": {"template": {"spec": {"containers": [{"name": "y"}]}}}})
        );
        let ensured = ensure_named_fields(&set, d.root());
        assert!(ensured.has(&crate::types::field_path("spec.template")));
        assert!(!ensured.has(&crate::types::field_path("metadata.labels.a.b")));
    }
}
