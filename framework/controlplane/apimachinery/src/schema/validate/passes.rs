//! The passes kube-apiserver runs after schema validation: embedded-resource ObjectMeta
//! checks (`schemaobjectmeta.Validate`) and `x-kubernetes-list-type` uniqueness
//! (`listtype.ValidateListSetsAndMaps`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::field::{self, FieldError, gofmt};
use crate::schema::{MAX_VALUE_DEPTH, Structural};
use crate::validation;

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// `schemaobjectmeta.Validate`: embedded resources need apiVersion and kind, and their
/// metadata labels, annotations and finalizers must be valid.
pub(super) fn embedded(
    s: &Structural,
    v: &Value,
    path: &str,
    root: bool,
    errs: &mut Vec<FieldError>,
    depth: usize,
) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match v {
        Value::Object(obj) => {
            if s.embedded_resource && !root {
                for key in ["apiVersion", "kind"] {
                    match obj.get(key) {
                        None | Some(Value::Null) => {
                            errs.push(FieldError::required(
                                field::child(path, key),
                                "must not be empty",
                            ));
                        }
                        Some(Value::String(x)) if x.is_empty() => {
                            errs.push(FieldError::required(
                                field::child(path, key),
                                "must not be empty",
                            ));
                        }
                        Some(Value::String(_)) => {}
                        Some(other) => {
                            errs.push(FieldError::invalid(
                                field::child(path, key),
                                other.clone(),
                                "must be a string",
                            ));
                        }
                    }
                }
                match obj.get("metadata") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(meta)) => {
                        let mpath = field::child(path, "metadata");
                        errs.extend(validation::validate_labels(
                            &string_map(meta.get("labels")),
                            &field::child(&mpath, "labels"),
                        ));
                        errs.extend(validation::validate_annotations(
                            &string_map(meta.get("annotations")),
                            &field::child(&mpath, "annotations"),
                        ));
                        let finalizers: Vec<String> = meta
                            .get("finalizers")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(|f| f.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        errs.extend(validation::validate_finalizers(
                            &finalizers,
                            &field::child(&mpath, "finalizers"),
                        ));
                    }
                    Some(other) => {
                        errs.push(FieldError::invalid(
                            field::child(path, "metadata"),
                            other.clone(),
                            "must be an object",
                        ));
                    }
                }
            }
            for (k, child) in obj {
                if (root || s.embedded_resource) && k == "metadata" {
                    continue;
                }
                if let Some(cs) = s.field(k) {
                    embedded(cs, child, &field::child(path, k), false, errs, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = &s.items {
                for (i, item) in items.iter().enumerate() {
                    embedded(is, item, &field::index(path, i), false, errs, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// `listtype.ValidateListSetsAndMaps`: duplicates in `set` and `map` lists.
pub(super) fn list_types(
    s: &Structural,
    v: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
    depth: usize,
) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match v {
        Value::Object(obj) => {
            for (k, child) in obj {
                if let Some(cs) = s.field(k) {
                    list_types(cs, child, &field::child(path, k), errs, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            match s.list_type.as_deref() {
                Some("set") => list_set(items, path, errs),
                Some("map") => list_map(s, items, path, errs),
                _ => {}
            }
            if let Some(is) = &s.items {
                for (i, item) in items.iter().enumerate() {
                    list_types(is, item, &field::index(path, i), errs, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn list_set(items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let count = seen.entry(gofmt::json(item)).or_insert(0);
        *count += 1;
        if *count == 2 {
            errs.push(FieldError::duplicate(field::index(path, i), item.clone()));
        }
    }
}

fn list_map(s: &Structural, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(obj) = item else {
            errs.push(FieldError::invalid(
                field::index(path, i),
                item.clone(),
                "must be an object for an array of list-type map",
            ));
            continue;
        };
        let mut key = serde_json::Map::new();
        for k in &s.list_map_keys {
            let v = obj.get(k).cloned().or_else(|| {
                s.items
                    .as_ref()
                    .and_then(|is| is.properties.get(k))
                    .and_then(|p| p.default.clone())
            });
            if let Some(v) = v {
                key.insert(k.clone(), v);
            }
        }
        let key = Value::Object(key);
        let count = seen.entry(gofmt::json(&key)).or_insert(0);
        *count += 1;
        if *count == 2 {
            errs.push(FieldError::duplicate(field::index(path, i), key));
        }
    }
}
