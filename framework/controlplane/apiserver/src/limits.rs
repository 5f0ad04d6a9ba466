//! LimitRange admission, as kube-apiserver's `LimitRanger` plugin applies it: a new pod's
//! containers get the namespace's default requests and limits (recorded in the
//! `kubernetes.io/limit-ranger` annotation), then pods and claims are checked against the
//! `min`, `max` and `maxLimitRequestRatio` of each Container, Pod and PersistentVolumeClaim
//! item, with upstream's messages.
//!
//! No state here: the state layer passes the namespace's LimitRanges.

use mni_formats::quantity::Quantity;
use serde_json::{Map, Value, json};

use crate::quota::{ResourceList, pod_total, resource_list};

/// The annotation that records the defaults LimitRanger set.
pub(crate) const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The items of the given `type` across the namespace's LimitRanges.
fn items<'a>(ranges: &'a [Value], ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    ranges
        .iter()
        .flat_map(|r| r.pointer("/spec/limits").and_then(Value::as_array))
        .flatten()
        .filter(move |i| i["type"] == ty)
}

/// Sets the default requests and limits of every Container item on a new pod's containers
/// that do not state them.
pub(crate) fn default_pod(pod: &mut Value, ranges: &[Value]) {
    let mut requests = Map::new();
    let mut limits = Map::new();
    for item in items(ranges, "Container") {
        for (field, into) in [("defaultRequest", &mut requests), ("default", &mut limits)] {
            if let Some(m) = item[field].as_object() {
                into.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    for (list, what) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(containers) = pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in containers {
            let name = c["name"].as_str().unwrap_or_default().to_string();
            let Some(c) = c.as_object_mut() else { continue };
            let resources = c.entry("resources").or_insert_with(|| json!({}));
            if !resources.is_object() {
                *resources = json!({});
            }
            let mut set = |field: &str, defaults: &Map<String, Value>| -> Vec<String> {
                let slot = &mut resources[field];
                if !slot.is_object() {
                    *slot = json!({});
                }
                let Some(m) = slot.as_object_mut() else {
                    return Vec::new();
                };
                let mut added: Vec<String> = Vec::new();
                for (k, v) in defaults {
                    if !m.contains_key(k) {
                        m.insert(k.clone(), v.clone());
                        added.push(k.clone());
                    }
                }
                added.sort();
                added
            };
            let set_requests = set("requests", &requests);
            let set_limits = set("limits", &limits);
            for field in ["requests", "limits"] {
                if resources[field].as_object().is_some_and(Map::is_empty)
                    && let Some(r) = resources.as_object_mut()
                {
                    r.remove(field);
                }
            }
            if !set_requests.is_empty() {
                notes.push(format!(
                    "{} request for {what} {name}",
                    set_requests.join(", ")
                ));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {what} {name}", set_limits.join(", ")));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let meta = &mut pod["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"][ANNOTATION] =
        Value::String(format!("LimitRanger plugin set: {}", notes.join("; ")));
}

/// `minConstraint`: the request (and the limit, if any) at least `enforced`.
fn min(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let Some(req) = requests.get(name) else {
        return Some(format!(
            "minimum {name} usage per {ty} is {enforced}.  No request is specified"
        ));
    };
    if *req < enforced {
        return Some(format!(
            "minimum {name} usage per {ty} is {enforced}, but request is {req}"
        ));
    }
    match limits.get(name) {
        Some(lim) if *lim < enforced => Some(format!(
            "minimum {name} usage per {ty} is {enforced}, but limit is {lim}"
        )),
        _ => None,
    }
}

/// `maxConstraint`: a limit is required and at most `enforced`, and so is the request.
fn max(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let Some(lim) = limits.get(name) else {
        return Some(format!(
            "maximum {name} usage per {ty} is {enforced}.  No limit is specified"
        ));
    };
    if *lim > enforced {
        return Some(format!(
            "maximum {name} usage per {ty} is {enforced}, but limit is {lim}"
        ));
    }
    match requests.get(name) {
        Some(req) if *req > enforced => Some(format!(
            "maximum {name} usage per {ty} is {enforced}, but request is {req}"
        )),
        _ => None,
    }
}

/// `maxRequestConstraint` (claims): the request at most `enforced`.
fn max_request(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
) -> Option<String> {
    match requests.get(name) {
        None => Some(format!(
            "maximum {name} usage per {ty} is {enforced}.  No request is specified"
        )),
        Some(req) if *req > enforced => Some(format!(
            "maximum {name} usage per {ty} is {enforced}, but request is {req}"
        )),
        Some(_) => None,
    }
}

/// `limitRequestRatioConstraint`: limit / request at most `enforced`.
fn ratio(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let req = requests.get(name).filter(|q| !q.is_zero());
    let Some(req) = req else {
        return Some(format!(
            "{name} max limit to request ratio per {ty} is {enforced}, but no request is specified or request is 0"
        ));
    };
    let lim = limits.get(name).filter(|q| !q.is_zero());
    let Some(lim) = lim else {
        return Some(format!(
            "{name} max limit to request ratio per {ty} is {enforced}, but no limit is specified or limit is 0"
        ));
    };
    // lim / req > enforced, exactly: lim * 1e9 > enforced_nanos * req.
    if lim.nanos().saturating_mul(1_000_000_000) > enforced.nanos().saturating_mul(req.nanos()) {
        #[allow(clippy::cast_precision_loss)]
        let observed = lim.nanos() as f64 / req.nanos() as f64;
        return Some(format!(
            "{name} max limit to request ratio per {ty} is {enforced}, but provided ratio is {observed:.6}"
        ));
    }
    None
}

/// Checks requests and limits against one item's `min`, `max` and `maxLimitRequestRatio`.
fn check_item(
    item: &Value,
    ty: &str,
    requests: &ResourceList,
    limits: &ResourceList,
    errors: &mut Vec<String>,
) {
    for (name, q) in resource_list(item.get("min")) {
        errors.extend(min(ty, &name, q, requests, limits));
    }
    for (name, q) in resource_list(item.get("max")) {
        errors.extend(max(ty, &name, q, requests, limits));
    }
    for (name, q) in resource_list(item.get("maxLimitRequestRatio")) {
        errors.extend(ratio(ty, &name, q, requests, limits));
    }
}

/// Checks a pod against the Container and Pod items. The errors, in order.
pub(crate) fn validate_pod(pod: &Value, ranges: &[Value]) -> Vec<String> {
    let mut errors = Vec::new();
    let spec = &pod["spec"];
    for item in items(ranges, "Container") {
        let containers = spec["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(spec["initContainers"].as_array().into_iter().flatten());
        for c in containers {
            let requests = resource_list(c.pointer("/resources/requests"));
            let limits = resource_list(c.pointer("/resources/limits"));
            check_item(item, "Container", &requests, &limits, &mut errors);
        }
    }
    for item in items(ranges, "Pod") {
        let requests = pod_total(pod, "requests");
        let limits = pod_total(pod, "limits");
        check_item(item, "Pod", &requests, &limits, &mut errors);
    }
    errors
}

/// Checks a claim's storage request against the PersistentVolumeClaim items.
pub(crate) fn validate_claim(pvc: &Value, ranges: &[Value]) -> Vec<String> {
    let mut errors = Vec::new();
    let requests = resource_list(pvc.pointer("/spec/resources/requests"));
    for item in items(ranges, "PersistentVolumeClaim") {
        for (name, q) in resource_list(item.get("min")) {
            errors.extend(min(
                "PersistentVolumeClaim",
                &name,
                q,
                &requests,
                &ResourceList::new(),
            ));
        }
        for (name, q) in resource_list(item.get("max")) {
            errors.extend(max_request("PersistentVolumeClaim", &name, q, &requests));
        }
    }
    errors
}

/// Upstream's aggregate of errors: one as is, several as `[a, b]`.
pub(crate) fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(items: Value) -> Vec<Value> {
        vec![json!({"spec": {"limits": items}})]
    }

    #[test]
    fn defaults_fill_what_containers_leave_out_and_say_so() {
        let ranges = range(json!([{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]));
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "web", "resources": {"limits": {"cpu": "1"}}},
            {"name": "log"},
        ]}});
        default_pod(&mut pod, &ranges);
        let web = &pod["spec"]["containers"][0]["resources"];
        assert_eq!(web["limits"], json!({"cpu": "1", "memory": "256Mi"}));
        assert_eq!(web["requests"], json!({"cpu": "100m", "memory": "128Mi"}));
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            "LimitRanger plugin set: cpu, memory request for container web; memory limit for container web; cpu, memory request for container log; cpu, memory limit for container log"
        );
    }

    #[test]
    fn min_max_and_ratio_refuse_with_upstreams_messages() {
        let ranges = range(json!([{"type": "Container",
            "min": {"cpu": "100m"}, "max": {"cpu": "1"}, "maxLimitRequestRatio": {"cpu": "2"}}]));
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "50m"}, "limits": {"cpu": "2"}}}]}});
        assert_eq!(
            validate_pod(&pod, &ranges),
            [
                "minimum cpu usage per Container is 100m, but request is 50m",
                "maximum cpu usage per Container is 1, but limit is 2",
                "cpu max limit to request ratio per Container is 2, but provided ratio is 40.000000",
            ]
        );
        let ok = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}]}});
        assert!(validate_pod(&ok, &ranges).is_empty());
        let bare = json!({"spec": {"containers": [{"name": "a"}]}});
        assert_eq!(
            validate_pod(
                &bare,
                &range(json!([{"type": "Container", "max": {"memory": "1Gi"}}]))
            ),
            ["maximum memory usage per Container is 1Gi.  No limit is specified"]
        );
    }

    #[test]
    fn pod_items_use_the_pods_total() {
        let ranges = range(json!([{"type": "Pod", "max": {"memory": "1Gi"}}]));
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"limits": {"memory": "768Mi"}}},
            {"name": "b", "resources": {"limits": {"memory": "512Mi"}}}]}});
        assert_eq!(
            validate_pod(&pod, &ranges),
            ["maximum memory usage per Pod is 1Gi, but limit is 1280Mi"]
        );
    }

    #[test]
    fn claims_are_held_to_their_storage_range() {
        let ranges = range(json!([{"type": "PersistentVolumeClaim",
            "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]));
        let small = json!({"spec": {"resources": {"requests": {"storage": "500Mi"}}}});
        assert_eq!(
            validate_claim(&small, &ranges),
            ["minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"]
        );
        let big = json!({"spec": {"resources": {"requests": {"storage": "20Gi"}}}});
        assert_eq!(
            validate_claim(&big, &ranges),
            ["maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"]
        );
        assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
    }
}
