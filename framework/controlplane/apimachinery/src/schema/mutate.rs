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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn schema(v: Value) -> Structural {
        Structural::from_value(&v).unwrap_or_default()
    }

    /// Prunes `object`; checks the result and the reported paths.
    fn check_prune(s: Value, mut object: Value, expected: Value, paths: &[&str]) {
        let got = prune(&schema(s), &mut object);
        assert_eq!(object, expected);
        assert_eq!(got, paths);
    }

    /// Drops nulls and defaults `object`; checks the result.
    fn check_default(s: Value, mut object: Value, expected: Value) {
        let s = schema(s);
        drop_non_nullable_nulls(&s, &mut object);
        default(&s, &mut object);
        assert_eq!(object, expected);
    }

    #[test]
    fn prunes_unknown_fields() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a": {"type": "string"},
            "list": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
            "nested": {"type": "array", "items": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}}}}}
        }}}});
        check_prune(
            s,
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "junk": 1}, "extra": 1,
                   "spec": {"a": "x", "b": {"c": 1}, "list": [{"n": "1", "m": 2}], "nested": [[{"k": 1, "z": 0}]]}}),
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "junk": 1},
                   "spec": {"a": "x", "list": [{"n": "1"}], "nested": [[{"k": 1}]]}}),
            &["extra", "spec.b", "spec.list[0].m", "spec.nested[0][0].z"],
        );
    }

    #[test]
    fn preserve_unknown_fields_and_embedded() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                     "properties": {"strict": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}}
        }}}});
        check_prune(
            s,
            json!({"spec": {
                "free": {"anything": {"deep": 1}, "strict": {"a": "x", "b": 1}},
                "tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"a": "x", "b": 2}, "status": {}},
                "map": {"k": {"a": "x", "b": 1}}
            }}),
            json!({"spec": {
                "free": {"anything": {"deep": 1}, "strict": {"a": "x"}},
                "tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"a": "x"}},
                "map": {"k": {"a": "x"}}
            }}),
            &[
                "spec.free.strict.b",
                "spec.tmpl.spec.b",
                "spec.tmpl.status",
                "spec.map.k.b",
            ],
        );
        // A schema-less subtree (additionalProperties: true) loses nested object fields.
        check_prune(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            json!({"a": {"b": 1}, "kind": "K"}),
            json!({"a": {"b": 1}, "kind": "K"}),
            &[],
        );
    }

    #[test]
    fn defaults() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "mode": {"type": "string", "default": "auto"},
            "opt": {"type": "string"},
            "nul": {"type": "string", "nullable": true, "default": "d"},
            "items": {"type": "array", "items": {"type": "object", "default": {"x": 0}, "properties": {
                "x": {"type": "integer"}, "y": {"type": "string", "default": "why"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "v"}}
        }}}});
        check_default(
            s.clone(),
            json!({}),
            json!({"spec": {"replicas": 1, "mode": "auto", "nul": "d"}}),
        );
        check_default(
            s,
            json!({"spec": {"replicas": 3, "mode": null, "opt": null, "nul": null,
                            "items": [{"x": 5}, null], "labels": {"a": null, "b": "c"}}}),
            json!({"spec": {"replicas": 3, "mode": "auto", "nul": null,
                            "items": [{"x": 5, "y": "why"}, {"x": 0, "y": "why"}], "labels": {"a": "v", "b": "c"}}}),
        );
    }

    #[test]
    fn deep_values_are_bounded() {
        let mut v = json!(1);
        for _ in 0..300 {
            v = json!([v]);
        }
        let mut object = json!({"a": v});
        let s = schema(json!({"type": "object"}));
        assert_eq!(prune(&s, &mut object), vec!["a"]);
        default(&s, &mut object);
        drop_non_nullable_nulls(&s, &mut object);
    }
}
