//! ResourceQuota arithmetic, as kube-apiserver's quota admission and kube-controller-manager's
//! quota controller compute it: what an object uses (`pods`, `requests.cpu`, `count/…`), which
//! quotas apply to it (scopes), and the `exceeded quota` and `must specify` refusals.
//!
//! No state here: the state layer lists the quotas and objects of a namespace, calls
//! [`usage`] and [`check`], and writes `status.used`.

use std::collections::BTreeMap;

use mni_formats::quantity::Quantity;
use serde_json::Value;

/// Resource name → quantity, as in a quota's `hard` and `used`.
pub(crate) type ResourceList = BTreeMap<String, Quantity>;

/// Reads a `ResourceList` object (`{"cpu": "500m"}`); unreadable quantities are left out.
pub(crate) fn resource_list(v: Option<&Value>) -> ResourceList {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), q.as_str()?.parse().ok()?)))
        .collect()
}

/// Writes a `ResourceList` as JSON, each quantity in its canonical form.
pub(crate) fn to_json(list: &ResourceList) -> Value {
    Value::Object(
        list.iter()
            .map(|(k, q)| (k.clone(), Value::String(q.to_string())))
            .collect(),
    )
}

/// Whether objects of `group`/`plural` can count towards the quota resource `key`.
pub(crate) fn may_count(group: &str, plural: &str, key: &str) -> bool {
    let count = if group.is_empty() {
        format!("count/{plural}")
    } else {
        format!("count/{plural}.{group}")
    };
    if key == count {
        return true;
    }
    if !group.is_empty() || key.starts_with("count/") {
        return false;
    }
    match plural {
        "pods" => {
            matches!(key, "pods" | "cpu" | "memory" | "ephemeral-storage")
                || key.starts_with("requests.") && key != "requests.storage"
                || key.starts_with("limits.")
                || key.starts_with("hugepages-")
        }
        "persistentvolumeclaims" => {
            key == "persistentvolumeclaims"
                || key == "requests.storage"
                || key.contains(".storageclass.storage.k8s.io/")
        }
        "services" => key == "services" || key.starts_with("services."),
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => key == plural,
        _ => false,
    }
}

/// What one stored object of `group`/`plural` uses, under every name a quota may limit it by.
pub(crate) fn usage(group: &str, plural: &str, obj: &Value) -> ResourceList {
    let one = Quantity::from_units(1);
    let mut out = ResourceList::new();
    let count = if group.is_empty() {
        format!("count/{plural}")
    } else {
        format!("count/{plural}.{group}")
    };
    out.insert(count, one);
    if !group.is_empty() {
        return out;
    }
    match plural {
        "pods" if counts_for_compute(obj) => out.extend(pod_compute_usage(obj)),
        "services" => {
            out.insert("services".into(), one);
            let spec = &obj["spec"];
            let ty = spec["type"].as_str().unwrap_or("ClusterIP");
            if ty == "LoadBalancer" {
                out.insert("services.loadbalancers".into(), one);
            }
            if ty == "NodePort" || ty == "LoadBalancer" {
                let ports = spec["ports"].as_array().map_or(0, Vec::len);
                let ports = i64::try_from(ports).unwrap_or(i64::MAX);
                out.insert("services.nodeports".into(), Quantity::from_units(ports));
            }
        }
        "persistentvolumeclaims" => {
            out.insert("persistentvolumeclaims".into(), one);
            let requested = obj
                .pointer("/spec/resources/requests/storage")
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<Quantity>().ok());
            let allocated = obj
                .pointer("/status/allocatedResources/storage")
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<Quantity>().ok());
            let storage = match (requested, allocated) {
                (Some(r), Some(a)) => Some(r.max(a)),
                (r, a) => r.or(a),
            };
            let class = obj
                .pointer("/spec/storageClassName")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty());
            if let Some(class) = class {
                out.insert(
                    format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"),
                    one,
                );
            }
            if let Some(storage) = storage {
                out.insert("requests.storage".into(), storage);
                if let Some(class) = class {
                    out.insert(
                        format!("{class}.storageclass.storage.k8s.io/requests.storage"),
                        storage,
                    );
                }
            }
        }
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => {
            out.insert(plural.into(), one);
        }
        _ => {}
    }
    out
}

/// Whether a pod still counts for compute resources and `pods`: not finished, and not past
/// its deletion grace period.
fn counts_for_compute(pod: &Value) -> bool {
    !matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    )
}

/// A container's requests or limits.
fn container_list(c: &Value, field: &str) -> ResourceList {
    resource_list(c.pointer(&format!("/resources/{field}")))
}

fn add(into: &mut ResourceList, from: &ResourceList) {
    for (k, q) in from {
        let cur = into.get(k).copied().unwrap_or(Quantity::ZERO);
        into.insert(k.clone(), cur + *q);
    }
}

fn max_into(into: &mut ResourceList, from: &ResourceList) {
    for (k, q) in from {
        if into.get(k).is_none_or(|cur| q > cur) {
            into.insert(k.clone(), *q);
        }
    }
}

/// The pod's effective requests or limits as the scheduler counts them: the containers and
/// sidecars summed, or the largest regular init container when larger, plus the overhead.
pub(crate) fn pod_total(pod: &Value, field: &str) -> ResourceList {
    let spec = &pod["spec"];
    let mut total = ResourceList::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        add(&mut total, &container_list(c, field));
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        let own = container_list(c, field);
        if c["restartPolicy"] == "Always" {
            add(&mut sidecars, &own);
        } else {
            let mut with_sidecars = sidecars.clone();
            add(&mut with_sidecars, &own);
            max_into(&mut init_max, &with_sidecars);
        }
    }
    add(&mut total, &sidecars);
    max_into(&mut total, &init_max);
    add(&mut total, &resource_list(spec.get("overhead")));
    total
}

/// `podComputeUsageHelper`: the compute names a pod's requests and limits count under.
fn compute_names(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    out.insert("pods".into(), Quantity::from_units(1));
    for name in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(name) {
            out.insert(name.into(), *q);
            out.insert(format!("requests.{name}"), *q);
        }
        if let Some(q) = limits.get(name) {
            out.insert(format!("limits.{name}"), *q);
        }
    }
    for (name, q) in requests {
        if name.starts_with("hugepages-") {
            out.insert(name.clone(), *q);
            out.insert(format!("requests.{name}"), *q);
        } else if is_extended(name) {
            out.insert(format!("requests.{name}"), *q);
        }
    }
    out
}

/// An extended resource: a domain-qualified name outside `kubernetes.io` (`nvidia.com/gpu`).
fn is_extended(name: &str) -> bool {
    name.split_once('/').is_some_and(|(domain, _)| {
        !domain.ends_with("kubernetes.io") && !name.starts_with("requests.")
    })
}

fn pod_compute_usage(pod: &Value) -> ResourceList {
    compute_names(&pod_total(pod, "requests"), &pod_total(pod, "limits"))
}

/// Whether a quota's scopes (and `scopeSelector`) select this object. Scopes are about pods:
/// a scoped quota applies to pods only.
pub(crate) fn matches_scopes(quota: &Value, plural: &str, obj: &Value) -> bool {
    let spec = &quota["spec"];
    let mut requirements: Vec<(String, String, Vec<String>)> = spec["scopes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|s| (s.to_string(), "Exists".to_string(), Vec::new()))
        .collect();
    for r in spec
        .pointer("/scopeSelector/matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        requirements.push((
            r["scopeName"].as_str().unwrap_or_default().to_string(),
            r["operator"].as_str().unwrap_or_default().to_string(),
            r["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ));
    }
    if requirements.is_empty() {
        return true;
    }
    if plural != "pods" {
        return false;
    }
    requirements
        .iter()
        .all(|(scope, op, values)| pod_matches_scope(obj, scope, op, values))
}

fn pod_matches_scope(pod: &Value, scope: &str, op: &str, values: &[String]) -> bool {
    let spec = &pod["spec"];
    match scope {
        "Terminating" => spec["activeDeadlineSeconds"].is_number(),
        "NotTerminating" => !spec["activeDeadlineSeconds"].is_number(),
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let class = spec["priorityClassName"].as_str().filter(|c| !c.is_empty());
            match op {
                "Exists" => class.is_some(),
                "DoesNotExist" => class.is_none(),
                "In" => class.is_some_and(|c| values.iter().any(|v| v == c)),
                "NotIn" => class.is_none_or(|c| !values.iter().any(|v| v == c)),
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => cross_namespace_affinity(spec),
        _ => false,
    }
}

/// Whether a pod (anti-)affinity term reaches other namespaces (`namespaces` or a
/// `namespaceSelector`).
fn cross_namespace_affinity(spec: &Value) -> bool {
    let reaches = |term: &Value| {
        term["namespaces"].as_array().is_some_and(|n| !n.is_empty())
            || term["namespaceSelector"].is_object()
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let a = &spec["affinity"][kind];
        let required = a["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .into_iter()
            .flatten();
        let preferred = a["preferredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| &w["podAffinityTerm"]);
        required.chain(preferred).any(reaches)
    })
}

/// A BestEffort pod: no container or init container requests or limits cpu or memory.
fn is_best_effort(pod: &Value) -> bool {
    let spec = &pod["spec"];
    let containers = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(spec["initContainers"].as_array().into_iter().flatten());
    for c in containers {
        for field in ["requests", "limits"] {
            let list = container_list(c, field);
            if list.contains_key("cpu") || list.contains_key("memory") {
                return false;
            }
        }
    }
    true
}

/// Compute names that, when a quota limits them, every container must state.
const MUST_SPECIFY: &[&str] = &[
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// The pod evaluator's constraints: a quota on cpu or memory requests or limits requires every
/// container to state them (`must specify limits.cpu for: app; requests.memory for: app`).
fn pod_constraints(hard: &ResourceList, pod: &Value) -> Result<(), String> {
    let required: Vec<&str> = MUST_SPECIFY
        .iter()
        .copied()
        .filter(|r| hard.contains_key(*r))
        .collect();
    if required.is_empty() {
        return Ok(());
    }
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let spec = &pod["spec"];
    let containers = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(spec["initContainers"].as_array().into_iter().flatten());
    for c in containers {
        let names = compute_names(&container_list(c, "requests"), &container_list(c, "limits"));
        for r in &required {
            if !names.contains_key(*r) {
                missing
                    .entry(r)
                    .or_default()
                    .push(c["name"].as_str().unwrap_or_default().to_string());
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .into_iter()
        .map(|(r, mut names)| {
            names.sort();
            format!("{r} for: {}", names.join(","))
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

/// `a=1,b=2`, sorted, as upstream prints resource lists in quota messages.
fn pretty(list: &ResourceList, keys: &[&String]) -> String {
    keys.iter()
        .map(|k| format!("{k}={}", list.get(*k).copied().unwrap_or(Quantity::ZERO)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Checks that `delta` (what the write adds) fits one quota whose current usage is `used`;
/// `new_pod` is a pod being created, whose containers must state what the quota limits.
/// The error is the text after `<resource> "<name>" is forbidden: `.
pub(crate) fn check(
    quota_name: &str,
    hard: &ResourceList,
    used: &ResourceList,
    delta: &ResourceList,
    new_pod: Option<&Value>,
) -> Result<(), String> {
    if let Some(pod) = new_pod {
        pod_constraints(hard, pod).map_err(|e| format!("failed quota: {quota_name}: {e}"))?;
    }
    let mut failed: Vec<&String> = Vec::new();
    for (name, d) in delta {
        let Some(limit) = hard.get(name) else {
            continue;
        };
        if d.nanos() <= 0 {
            continue;
        }
        let now = used.get(name).copied().unwrap_or(Quantity::ZERO);
        if now + *d > *limit {
            failed.push(name);
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    failed.sort();
    Err(format!(
        "exceeded quota: {quota_name}, requested: {}, used: {}, limited: {}",
        pretty(delta, &failed),
        pretty(used, &failed),
        pretty(hard, &failed)
    ))
}

/// What a write adds: `new - old`, name by name (negative when it frees).
pub(crate) fn delta(new: &ResourceList, old: &ResourceList) -> ResourceList {
    let mut out = new.clone();
    for (k, q) in old {
        let cur = out.get(k).copied().unwrap_or(Quantity::ZERO);
        out.insert(k.clone(), cur - *q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": containers}})
    }

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.parse().expect("quantity")))
            .collect()
    }

    #[test]
    fn a_pod_uses_its_requests_and_limits_under_every_name() {
        let p = pod(json!([
            {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "250m", "nvidia.com/gpu": "1"}}},
        ]));
        let u = usage("", "pods", &p);
        assert_eq!(u["pods"], Quantity::from_units(1));
        assert_eq!(u["count/pods"], Quantity::from_units(1));
        assert_eq!(u["cpu"].to_string(), "500m");
        assert_eq!(u["requests.cpu"].to_string(), "500m");
        assert_eq!(u["limits.cpu"].to_string(), "500m");
        assert_eq!(u["requests.memory"].to_string(), "64Mi");
        assert_eq!(u["requests.nvidia.com/gpu"].to_string(), "1");
        let mut done = p.clone();
        done["status"] = json!({"phase": "Succeeded"});
        let u = usage("", "pods", &done);
        assert!(!u.contains_key("pods") && u.contains_key("count/pods"));
    }

    #[test]
    fn init_containers_count_by_their_largest() {
        let mut p = pod(json!([{"name": "a", "resources": {"requests": {"cpu": "100m"}}}]));
        p["spec"]["initContainers"] =
            json!([{"name": "init", "resources": {"requests": {"cpu": "1"}}}]);
        assert_eq!(usage("", "pods", &p)["requests.cpu"].to_string(), "1");
        p["spec"]["initContainers"][0]["restartPolicy"] = json!("Always");
        assert_eq!(usage("", "pods", &p)["requests.cpu"].to_string(), "1100m");
    }

    #[test]
    fn claims_and_services_count_by_class_and_type() {
        let pvc = json!({"spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "5Gi"}}}});
        let u = usage("", "persistentvolumeclaims", &pvc);
        assert_eq!(u["requests.storage"].to_string(), "5Gi");
        assert_eq!(
            u["fast.storageclass.storage.k8s.io/requests.storage"].to_string(),
            "5Gi"
        );
        let svc = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}});
        let u = usage("", "services", &svc);
        assert_eq!(u["services.loadbalancers"], Quantity::from_units(1));
        assert_eq!(u["services.nodeports"], Quantity::from_units(2));
        let u = usage("apps", "deployments", &json!({}));
        assert_eq!(u.keys().collect::<Vec<_>>(), ["count/deployments.apps"]);
    }

    #[test]
    fn exceeding_names_the_quota_and_the_resources() {
        let hard = list(&[("pods", "2"), ("requests.cpu", "1")]);
        let used = list(&[("pods", "2"), ("requests.cpu", "500m")]);
        let p = pod(json!([{"name": "a", "resources": {"requests": {"cpu": "250m"}}}]));
        let d = usage("", "pods", &p);
        let err = check("compute", &hard, &used, &d, Some(&p)).unwrap_err();
        assert_eq!(
            err,
            "exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
        );
        let used = list(&[("pods", "1"), ("requests.cpu", "500m")]);
        assert!(check("compute", &hard, &used, &d, Some(&p)).is_ok());
    }

    #[test]
    fn quotas_on_compute_require_every_container_to_state_it() {
        let hard = list(&[("limits.cpu", "2"), ("requests.memory", "1Gi")]);
        let p = pod(json!([
            {"name": "web", "resources": {"limits": {"cpu": "1"}}},
            {"name": "log"},
        ]));
        let d = usage("", "pods", &p);
        let err = check("q", &hard, &ResourceList::new(), &d, Some(&p)).unwrap_err();
        assert_eq!(
            err,
            "failed quota: q: must specify limits.cpu for: log; requests.memory for: log,web"
        );
    }

    #[test]
    fn scopes_select_pods() {
        let best_effort = json!({"spec": {"scopes": ["BestEffort"]}});
        let plain = pod(json!([{"name": "a"}]));
        let sized = pod(json!([{"name": "a", "resources": {"requests": {"cpu": "1"}}}]));
        assert!(matches_scopes(&best_effort, "pods", &plain));
        assert!(!matches_scopes(&best_effort, "pods", &sized));
        assert!(!matches_scopes(&best_effort, "services", &json!({})));
        let high = json!({"spec": {"scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}});
        let mut p = plain.clone();
        assert!(!matches_scopes(&high, "pods", &p));
        p["spec"]["priorityClassName"] = json!("high");
        assert!(matches_scopes(&high, "pods", &p));
        assert!(matches_scopes(
            &json!({"spec": {}}),
            "configmaps",
            &json!({})
        ));
    }
}
