//! The `scale` subresource: an `autoscaling/v1` `Scale` view of an object's replicas.
//!
//! Built-in workloads read `.spec.replicas`, `.status.replicas` and their label selector; custom
//! resources use the paths their CRD declares (`specReplicasPath`, `statusReplicasPath`,
//! `labelSelectorPath`).

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceInfo;

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
}

fn read_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).try_fold(obj, |cur, seg| cur.get(seg))
}

fn write_path(obj: &mut Value, path: &str, value: Value) {
    let segs: Vec<&str> = segments(path).collect();
    let mut cur = obj;
    for (i, seg) in segs.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        if i + 1 == segs.len() {
            cur[*seg] = value;
            return;
        }
        if !cur.get(*seg).is_some_and(Value::is_object) {
            cur[*seg] = json!({});
        }
        cur = &mut cur[*seg];
    }
}

/// Renders a metav1 LabelSelector as the string form `Scale.status.selector` carries.
fn selector_string(sel: &Value) -> String {
    let mut parts: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        parts.push(match e.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_string(),
            Some("DoesNotExist") => format!("!{key}"),
            _ => continue,
        });
    }
    parts.join(",")
}

/// The `Scale` of an object.
pub(crate) fn to_scale(info: &ResourceInfo, obj: &Value) -> ApiResult<Value> {
    let paths = info.scale.as_ref().ok_or_else(ApiError::path_not_found)?;
    let meta = &obj["metadata"];
    let spec = read_path(obj, &paths.spec_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = read_path(obj, &paths.status_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": spec},
        "status": {"replicas": status},
    });
    if let Some(ns) = meta.get("namespace") {
        scale["metadata"]["namespace"] = ns.clone();
    }
    let selector = if info.custom().is_none() {
        obj.pointer("/spec/selector").map(selector_string)
    } else {
        paths
            .label_selector
            .as_deref()
            .and_then(|p| read_path(obj, p))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(sel) = selector.filter(|s| !s.is_empty()) {
        scale["status"]["selector"] = json!(sel);
    }
    Ok(scale)
}

/// The object with the replicas a `Scale` asks for.
pub(crate) fn apply_scale(info: &ResourceInfo, current: &Value, scale: &Value) -> ApiResult<Value> {
    let paths = info.scale.as_ref().ok_or_else(ApiError::path_not_found)?;
    if let Some(rv) = scale
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        && current
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            != Some(rv)
    {
        return Err(ApiError::stale(
            info.group_resource(),
            crate::object::name(current),
        ));
    }
    let replicas = scale.pointer("/spec/replicas").cloned().unwrap_or(json!(0));
    let errors = match replicas.as_i64() {
        Some(n) if n >= 0 => Vec::new(),
        _ => vec![mni_apimachinery::FieldError::invalid(
            "spec.replicas",
            replicas.clone(),
            "must be greater than or equal to 0",
        )],
    };
    if !errors.is_empty() {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            crate::object::name(current),
            &errors,
        ));
    }
    let mut next = current.clone();
    write_path(&mut next, &paths.spec_replicas, replicas);
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn deployment_scale_round_trip() {
        let r = Registry::with_builtins();
        let info = r.get("apps", "v1", "deployments").expect("deployments");
        let d = json!({"metadata": {"name": "web", "namespace": "ns", "resourceVersion": "4"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 1}});
        let s = to_scale(&info, &d).expect("scale");
        assert_eq!(s["spec"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=web");
        let next = apply_scale(&info, &d, &json!({"spec": {"replicas": 5}})).expect("apply");
        assert_eq!(next["spec"]["replicas"], 5);
        let err = apply_scale(&info, &d, &json!({"spec": {"replicas": -1}})).expect_err("negative");
        assert_eq!(err.code, 422);
    }
}
