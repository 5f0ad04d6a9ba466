//! Pruning, null dropping and defaulting, following apiextensions-apiserver's structural
//! `pruning` and `defaulting` algorithms.

use serde_json::Value;

use super::{AdditionalProperties, MAX_VALUE_DEPTH, Structural};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Removes fields the schema does not declare and returns their paths as kube-apiserver reports
/// them (`spec.foo`, `spec.items[0].bar`; warnings read `unknown field "spec.foo"`).
///
/// The object root keeps `apiVersion`, `kind` and `metadata`, as do embedded resources;
/// `x-kubernetes-preserve-unknown-fields` keeps unknown fields below it.
pub fn prune(schema: &Structural, object: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    let mut path = String::new();
    // Depth 0 is the resource root, which is treated as an embedded resource.
    prune_node(object, Some(schema), &mut path, &mut pruned, 0);
    pruned
}

fn push_key(path: &mut String, k: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(k);
}

fn prune_child(
    v: &mut Value,
    s: Option<&Structural>,
    path: &mut String,
    key: &str,
    pruned: &mut Vec<String>,
    depth: usize,
) {
    let len = path.len();
    push_key(path, key);
    prune_node(v, s, path, pruned, depth + 1);
    path.truncate(len);
}

fn additional_schema(s: &Structural) -> Option<Option<&Structural>> {
    match &s.additional_properties {
        Some(AdditionalProperties::Schema(a)) => Some(Some(a)),
        Some(AdditionalProperties::Bool(_)) => Some(None),
        None => None,
    }
}

fn prune_node(
    x: &mut Value,
    s: Option<&Structural>,
    path: &mut String,
    pruned: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    if let Some(s) = s
        && s.preserves_unknown_fields()
    {
        skip_prune(x, s, path, pruned, depth);
        return;
    }
    match x {
        Value::Object(obj) => {
            let Some(s) = s else {
                for k in obj.keys() {
                    pruned.push(joined(path, k));
                }
                obj.clear();
                return;
            };
            let mut remove = Vec::new();
            for (k, v) in obj.iter_mut() {
                if (s.embedded_resource || depth == 0) && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_child(v, Some(prop), path, k, pruned, depth);
                } else if let Some(extra) = additional_schema(s) {
                    prune_child(v, extra, path, k, pruned, depth);
                } else {
                    if !META_FIELDS.contains(&k.as_str()) || !path.is_empty() {
                        pruned.push(joined(path, k));
                    }
                    remove.push(k.clone());
                }
            }
            for k in remove {
                obj.shift_remove(&k);
            }
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                prune_node(v, item_schema, path, pruned, depth + 1);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn joined(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

fn skip_prune(
    x: &mut Value,
    s: &Structural,
    path: &mut String,
    pruned: &mut Vec<String>,
    depth: usize,
) {
    match x {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                if (s.embedded_resource || depth == 0) && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_child(v, Some(prop), path, k, pruned, depth);
                } else if let Some(extra) = additional_schema(s) {
                    prune_child(v, extra, path, k, pruned, depth);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    if depth > MAX_VALUE_DEPTH {
                        return;
                    }
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    skip_prune(v, item_schema, path, pruned, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// Removes `null`s of non-nullable fields that have no default
/// (`PruneNonNullableNullsWithoutDefaults`); kube-apiserver does this right after pruning.
pub fn drop_non_nullable_nulls(schema: &Structural, object: &mut Value) {
    drop_nulls(object, Some(schema), 0);
}

fn drop_nulls(x: &mut Value, s: Option<&Structural>, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match x {
        Value::Object(obj) => {
            obj.retain(|k, v| {
                let schema = s.and_then(|s| s.field(k));
                let drop =
                    v.is_null() && schema.is_some_and(|cs| !cs.nullable && cs.default.is_none());
                if !drop {
                    drop_nulls(v, schema, depth + 1);
                }
                !drop
            });
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for v in items {
                drop_nulls(v, item_schema, depth + 1);
            }
        }
        _ => {}
    }
}

/// Applies `default`s like apiextensions-apiserver: missing properties get their default, and
/// `null`s of non-nullable fields with a default (properties, array items, additionalProperties)
/// are replaced by it; defaults are applied recursively, including inside applied defaults.
pub fn default(schema: &Structural, object: &mut Value) {
    default_node(object, schema, 0);
}

fn non_nullable_null(x: &Value, s: &Structural) -> bool {
    x.is_null() && !s.nullable
}

fn default_node(x: &mut Value, s: &Structural, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match x {
        Value::Object(obj) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else { continue };
                if obj.get(k).is_none_or(|v| non_nullable_null(v, prop)) {
                    obj.insert(k.clone(), d.clone());
                }
            }
            for (k, v) in obj.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default_node(v, prop, depth + 1);
                } else if let Some(AdditionalProperties::Schema(extra)) = &s.additional_properties {
                    if non_nullable_null(v, extra)
                        && let Some(d) = &extra.default
                    {
                        *v = d.clone();
                    }
                    default_node(v, extra, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = s.items.as_deref() else {
                return;
            };
            for v in items.iter_mut() {
                if non_nullable_null(v, item_schema)
                    && let Some(d) = &item_schema.default
                {
                    *v = d.clone();
                }
                default_node(v, item_schema, depth + 1);
            }
        }
        _ => {}
    }
}
