//! Interplay with client-side apply's `kubectl.kubernetes.io/last-applied-configuration`.
//!
//! kube-apiserver special-cases the field manager `kubectl` (what `kubectl apply
//! --server-side` uses) so objects managed by client-side apply can move to server-side apply:
//! conflicts on fields whose live value still matches the last-applied annotation are forced
//! ([`allowed_conflicts`], kube's `lastAppliedManager`), and when the object carries the
//! annotation it is rewritten to the new configuration ([`sync_last_applied`], kube's
//! `lastAppliedUpdater`). [`build_last_applied`] encodes like Go's `json.Marshal`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::managed::strip_managed_fields;
use crate::merge::compare;
use crate::typed::to_field_set;
use crate::types::TypeInfo;

/// The client-side apply annotation.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The field manager kube applies these rules to.
pub const KUBECTL_MANAGER: &str = "kubectl";

fn annotation(obj: &Value) -> Option<&str> {
    obj.get("metadata")?
        .get("annotations")?
        .get(LAST_APPLIED_ANNOTATION)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// The conflict paths (as kube prints them) an apply by `kubectl` may take over: fields of the
/// last-applied configuration whose live value is still the last-applied one. None when the
/// live object has no usable annotation.
pub fn allowed_conflicts(
    live: &Value,
    types: &TypeInfo,
    api_version: &str,
) -> Option<BTreeSet<String>> {
    let last: Value = serde_json::from_str(annotation(live)?).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return None;
    }
    let mut live = live.clone();
    strip_managed_fields(&mut live);
    let root = types.root();
    let set = to_field_set(&last, root, false).ok()?;
    let cmp = compare(&last, &live, root).ok()?;
    let allowed = set
        .difference(&cmp.modified)
        .difference(&cmp.added)
        .difference(&cmp.removed);
    Some(allowed.paths().iter().map(ToString::to_string).collect())
}

/// The annotation value for an applied configuration: the configuration without the
/// annotation itself, as compact JSON with sorted keys and Go's HTML escaping.
pub fn build_last_applied(config: &Value) -> String {
    let mut config = config.clone();
    if let Some(Value::Object(annotations)) = config
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
    go_json(&sorted(&config))
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                if let Some(child) = map.get(k) {
                    out.insert(k.clone(), sorted(child));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn go_json(v: &Value) -> String {
    let mut out = String::new();
    for c in v.to_string().chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Rewrites the annotation of `object` to `config` if `object` carries it (kube does this only
/// for the `kubectl` manager; the caller checks).
pub fn sync_last_applied(object: &mut Value, config: &Value) {
    if annotation(object).is_none() {
        return;
    }
    // kube's lastAppliedUpdater writes runtime.Encode's output: json.Encoder's, which ends in
    // a newline (kubectl's own client-side apply writes none).
    let mut value = build_last_applied(config);
    value.push('\n');
    if let Some(Value::Object(annotations)) = object
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.insert(LAST_APPLIED_ANNOTATION.to_string(), Value::String(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builds_like_go() {
        let config = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "c", "annotations": {LAST_APPLIED_ANNOTATION: "x", "b": "<&>"}},
            "data": {"z": "1", "a": "2"}});
        assert_eq!(
            build_last_applied(&config),
            r#"{"apiVersion":"v1","data":{"a":"2","z":"1"},"kind":"ConfigMap","metadata":{"annotations":{"b":"\u003c\u0026\u003e"},"name":"c"}}"#
        );
    }

    #[test]
    fn allowed_only_where_live_matches() {
        let types = crate::builtin::builtin("apps", "Deployment").unwrap_or_default();
        let last = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,"paused":true}}"#;
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "annotations": {LAST_APPLIED_ANNOTATION: last}},
            "spec": {"replicas": 3, "paused": true}});
        let allowed = allowed_conflicts(&live, &types, "apps/v1").unwrap_or_default();
        assert!(allowed.contains(".spec.paused"));
        assert!(!allowed.contains(".spec.replicas"));
        assert!(allowed_conflicts(&live, &types, "apps/v1beta1").is_none());
        let mut object = live.clone();
        sync_last_applied(
            &mut object,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
        );
        assert_eq!(
            object["metadata"]["annotations"][LAST_APPLIED_ANNOTATION],
            json!("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\"}\n")
        );
    }
}
