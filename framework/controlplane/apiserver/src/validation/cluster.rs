//! Validation of the policy, storage, scheduling and autoscaling kinds, after upstream's
//! `ValidatePodDisruptionBudget`, `ValidatePersistentVolumeClaim`, `ValidateResourceQuota`,
//! `ValidateLimitRange`, `ValidateHorizontalPodAutoscaler`, `ValidateStorageClass` and
//! `ValidatePriorityClass`: the mistakes operators make first, with upstream's paths and
//! messages.

use mni_apimachinery::{FieldError, Selector};
use mni_formats::quantity::Quantity;
use serde_json::{Map, Value};

use super::{at, str_at};

fn quantity(v: &Value) -> Option<Quantity> {
    v.as_str().and_then(|s| s.parse().ok())
}

/// A quantity that must be present and parse; refuses unreadable values.
fn parsed(path: &str, v: &Value, errs: &mut Vec<FieldError>) -> Option<Quantity> {
    let q = quantity(v);
    if q.is_none() {
        errs.push(FieldError::invalid(
            path,
            v.clone(),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ));
    }
    q
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn int_or_percent(path: &str, v: &Value, errs: &mut Vec<FieldError>) {
    match v {
        Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => {
            errs.push(FieldError::invalid(
                path,
                v.clone(),
                "must be greater than or equal to 0",
            ));
        }
        Value::String(s) => {
            let digits = s
                .strip_suffix('%')
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits.map(str::parse::<u64>) {
                Some(Ok(p)) if p > 100 => errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    "must not be greater than 100%",
                )),
                Some(Ok(_)) => {}
                _ => errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )),
            }
        }
        _ => {}
    }
}

/// PodDisruptionBudget: not both `minAvailable` and `maxUnavailable`, each a non-negative
/// count or a percentage up to 100%, a valid selector and eviction policy.
pub(crate) fn pdb(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = at(v, &["spec"]).cloned().unwrap_or(Value::Null);
    let min = spec.get("minAvailable").filter(|m| !m.is_null());
    let max = spec.get("maxUnavailable").filter(|m| !m.is_null());
    if min.is_some() && max.is_some() {
        errs.push(FieldError::invalid(
            "spec",
            spec.clone(),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    if let Some(m) = min {
        int_or_percent("spec.minAvailable", m, &mut errs);
    }
    if let Some(m) = max {
        int_or_percent("spec.maxUnavailable", m, &mut errs);
    }
    if let Some(sel) = spec.get("selector").filter(|s| !s.is_null())
        && let Err(e) = Selector::from_label_selector(sel)
    {
        errs.push(FieldError::invalid(
            "spec.selector",
            sel.clone(),
            e.to_string(),
        ));
    }
    const POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];
    if let Some(p) = spec["unhealthyPodEvictionPolicy"].as_str()
        && !POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            Value::String(p.into()),
            POLICIES,
        ));
    }
    errs
}

/// PersistentVolumeClaim: at least one supported access mode (ReadWriteOncePod alone), a
/// positive storage request, a valid class name and volume mode.
pub(crate) fn pvc(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    const MODES: &[&str] = &[
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    let modes: Vec<&str> = at(v, &["spec", "accessModes"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if modes.is_empty() {
        errs.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    for m in &modes {
        if !MODES.contains(m) {
            errs.push(FieldError::not_supported(
                "spec.accessModes",
                Value::String((*m).into()),
                MODES,
            ));
        }
    }
    if modes.len() > 1 && modes.contains(&"ReadWriteOncePod") {
        errs.push(FieldError::forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let path = "spec.resources[storage]";
    match at(v, &["spec", "resources", "requests", "storage"]) {
        None | Some(Value::Null) => errs.push(FieldError::required(path, "")),
        Some(q) => {
            if let Some(parsed) = parsed(path, q, &mut errs)
                && parsed.nanos() <= 0
            {
                errs.push(FieldError::invalid(
                    path,
                    q.clone(),
                    "must be greater than zero",
                ));
            }
        }
    }
    if let Some(class) = str_at(v, &["spec", "storageClassName"]).filter(|c| !c.is_empty())
        && !mni_formats::names::is_dns1123_subdomain(class)
    {
        errs.push(FieldError::invalid(
            "spec.storageClassName",
            Value::String(class.into()),
            mni_apimachinery::regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
                &["example.com"],
            ),
        ));
    }
    const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];
    if let Some(m) = str_at(v, &["spec", "volumeMode"])
        && !VOLUME_MODES.contains(&m)
    {
        errs.push(FieldError::not_supported(
            "spec.volumeMode",
            Value::String(m.into()),
            VOLUME_MODES,
        ));
    }
    errs
}

/// The resource names a quota may limit without a domain.
const STANDARD_QUOTA: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// Quota resources counted in whole objects.
fn is_integer_resource(name: &str) -> bool {
    name.starts_with("count/")
        || matches!(
            name,
            "pods"
                | "services"
                | "replicationcontrollers"
                | "resourcequotas"
                | "secrets"
                | "configmaps"
                | "persistentvolumeclaims"
                | "services.nodeports"
                | "services.loadbalancers"
        )
}

/// `ValidateResourceQuantityValue`: non-negative, whole for countable resources.
fn resource_quantity(path: &str, name: &str, v: &Value, errs: &mut Vec<FieldError>) {
    let Some(q) = parsed(path, v, errs) else {
        return;
    };
    if q.nanos() < 0 {
        errs.push(FieldError::invalid(
            path,
            v.clone(),
            "must be greater than or equal to 0",
        ));
    }
    if is_integer_resource(name) && q.nanos() % 1_000_000_000 != 0 {
        errs.push(FieldError::invalid(path, v.clone(), "must be an integer"));
    }
}

/// ResourceQuota: standard (or domain-qualified) resource names, non-negative and whole
/// where counted, supported scopes that do not conflict.
pub(crate) fn resource_quota(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // Upstream walks a map; sorted here, so messages come in a stable order.
    let mut hard: Vec<(&String, &Value)> = at(v, &["spec", "hard"])
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .collect();
    hard.sort_by_key(|(k, _)| *k);
    for (name, q) in hard {
        let path = format!("spec.hard[{name}]");
        let qualified = name.contains('/');
        if !qualified
            && !STANDARD_QUOTA.contains(&name.as_str())
            && !name.starts_with("hugepages-")
            && !name.starts_with("requests.hugepages-")
        {
            errs.push(FieldError::invalid(
                path.clone(),
                Value::String(name.clone()),
                "must be a standard resource for quota",
            ));
        }
        resource_quantity(&path, name, q, &mut errs);
    }
    const SCOPES: &[&str] = &[
        "BestEffort",
        "CrossNamespacePodAffinity",
        "NotBestEffort",
        "NotTerminating",
        "PriorityClass",
        "Terminating",
        "VolumeAttributesClass",
    ];
    let scopes: Vec<&str> = at(v, &["spec", "scopes"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for s in &scopes {
        if !SCOPES.contains(s) {
            errs.push(FieldError::not_supported(
                "spec.scopes",
                Value::String((*s).into()),
                SCOPES,
            ));
        }
    }
    let conflicting = |a: &str, b: &str| scopes.contains(&a) && scopes.contains(&b);
    if conflicting("Terminating", "NotTerminating") || conflicting("BestEffort", "NotBestEffort") {
        errs.push(FieldError::invalid(
            "spec.scopes",
            at(v, &["spec", "scopes"]).cloned().unwrap_or(Value::Null),
            "conflicting scopes",
        ));
    }
    errs
}

/// LimitRange: a type for each item, non-negative quantities, no defaults on Pod items, and
/// `min` ≤ `defaultRequest` ≤ `default` ≤ `max`, ratios of at least 1.
pub(crate) fn limit_range(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let items = at(v, &["spec", "limits"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        let base = format!("spec.limits[{i}]");
        let ty = item["type"].as_str().unwrap_or_default();
        if ty.is_empty() {
            errs.push(FieldError::required(format!("{base}.type"), ""));
        }
        let read = |field: &str, errs: &mut Vec<FieldError>| -> Vec<(String, Quantity, Value)> {
            let mut out = Vec::new();
            for (k, q) in item[field].as_object().into_iter().flatten() {
                let path = format!("{base}.{field}[{k}]");
                resource_quantity(&path, k, q, errs);
                if let Some(parsed) = quantity(q) {
                    out.push((k.clone(), parsed, q.clone()));
                }
            }
            out
        };
        let min = read("min", &mut errs);
        let max = read("max", &mut errs);
        let default = read("default", &mut errs);
        let request = read("defaultRequest", &mut errs);
        let ratio = read("maxLimitRequestRatio", &mut errs);
        if ty == "Pod" {
            for field in ["default", "defaultRequest"] {
                if item[field].as_object().is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(
                        format!("{base}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        }
        let find = |list: &[(String, Quantity, Value)], k: &str| {
            list.iter().find(|(n, _, _)| n == k).map(|(_, q, _)| *q)
        };
        for (k, q, raw) in &min {
            if let Some(m) = find(&max, k)
                && *q > m
            {
                errs.push(FieldError::invalid(
                    format!("{base}.min[{k}]"),
                    raw.clone(),
                    format!("min value {q} is greater than max value {m}"),
                ));
            }
        }
        for (k, q, raw) in &request {
            let path = format!("{base}.defaultRequest[{k}]");
            if let Some(m) = find(&min, k)
                && m > *q
            {
                errs.push(FieldError::invalid(
                    path.clone(),
                    raw.clone(),
                    format!("min value {m} is greater than default request value {q}"),
                ));
            }
            if let Some(m) = find(&max, k)
                && *q > m
            {
                errs.push(FieldError::invalid(
                    path.clone(),
                    raw.clone(),
                    format!("default request value {q} is greater than max value {m}"),
                ));
            }
            if let Some(d) = find(&default, k)
                && *q > d
            {
                errs.push(FieldError::invalid(
                    path,
                    raw.clone(),
                    format!("default request value {q} is greater than default limit value {d}"),
                ));
            }
        }
        for (k, q, raw) in &default {
            let path = format!("{base}.default[{k}]");
            if let Some(m) = find(&min, k)
                && m > *q
            {
                errs.push(FieldError::invalid(
                    path.clone(),
                    raw.clone(),
                    format!("min value {m} is greater than default value {q}"),
                ));
            }
            if let Some(m) = find(&max, k)
                && *q > m
            {
                errs.push(FieldError::invalid(
                    path,
                    raw.clone(),
                    format!("default value {q} is greater than max value {m}"),
                ));
            }
        }
        for (k, q, raw) in &ratio {
            if q.nanos() < 1_000_000_000 {
                errs.push(FieldError::invalid(
                    format!("{base}.maxLimitRequestRatio[{k}]"),
                    raw.clone(),
                    format!("ratio {q} is less than 1"),
                ));
            }
        }
    }
    errs
}

/// HorizontalPodAutoscaler (either version; v1 is checked in its v2 form, as upstream checks
/// the internal one): replica bounds and the target reference.
pub(crate) fn hpa(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = at(v, &["spec", "minReplicas"]).and_then(Value::as_i64);
    let max = at(v, &["spec", "maxReplicas"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(m) = min
        && m < 1
    {
        errs.push(FieldError::invalid(
            "spec.minReplicas",
            m.into(),
            "must be greater than or equal to 1",
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            max.into(),
            "must be greater than 0",
        ));
    }
    if let Some(m) = min
        && max < m
    {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            max.into(),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    for field in ["kind", "name"] {
        if str_at(v, &["spec", "scaleTargetRef", field]).is_none_or(str::is_empty) {
            errs.push(FieldError::required(
                format!("spec.scaleTargetRef.{field}"),
                "",
            ));
        }
    }
    errs
}

/// The v1 HorizontalPodAutoscaler, validated in its v2 form.
pub(crate) fn hpa_v1(v: &Value) -> Vec<FieldError> {
    let mut errs = hpa(&crate::conversion::hpa_v1_to_v2(v.clone()));
    if let Some(p) = at(v, &["spec", "targetCPUUtilizationPercentage"]).and_then(Value::as_i64)
        && p < 1
    {
        errs.push(FieldError::invalid(
            "spec.targetCPUUtilizationPercentage",
            p.into(),
            "must be greater than 0",
        ));
    }
    errs
}

/// StorageClass: a provisioner, supported reclaim policy and binding mode.
pub(crate) fn storage_class(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_at(v, &["provisioner"]).is_none_or(str::is_empty) {
        errs.push(FieldError::required("provisioner", ""));
    }
    const POLICIES: &[&str] = &["Delete", "Retain"];
    if let Some(p) = str_at(v, &["reclaimPolicy"])
        && !POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "reclaimPolicy",
            Value::String(p.into()),
            POLICIES,
        ));
    }
    const MODES: &[&str] = &["Immediate", "WaitForFirstConsumer"];
    match str_at(v, &["volumeBindingMode"]) {
        None => errs.push(FieldError::required("volumeBindingMode", "")),
        Some(m) if !MODES.contains(&m) => errs.push(FieldError::not_supported(
            "volumeBindingMode",
            Value::String(m.into()),
            MODES,
        )),
        Some(_) => {}
    }
    errs
}

/// The highest priority a user-defined PriorityClass may have.
const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;

/// PriorityClass: `system-` names are reserved, user values at most one billion, a supported
/// preemption policy.
pub(crate) fn priority_class(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(v, &["metadata", "name"]).unwrap_or_default();
    let system = matches!(name, "system-node-critical" | "system-cluster-critical");
    if name.starts_with("system-") && !system {
        errs.push(FieldError::forbidden(
            "metadata.name",
            "priority class names with 'system-' prefix are reserved",
        ));
    }
    if !system
        && at(v, &["value"])
            .and_then(Value::as_i64)
            .is_some_and(|n| n > HIGHEST_USER_PRIORITY)
    {
        errs.push(FieldError::forbidden(
            "value",
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        ));
    }
    const POLICIES: &[&str] = &["Never", "PreemptLowerPriority"];
    if let Some(p) = str_at(v, &["preemptionPolicy"])
        && !POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "preemptionPolicy",
            Value::String(p.into()),
            POLICIES,
        ));
    }
    errs
}

/// APIService: named `<version>.<group>` after its spec, with both priorities positive.
pub(crate) fn api_service(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let version = str_at(v, &["spec", "version"]).unwrap_or_default();
    let group = str_at(v, &["spec", "group"]).unwrap_or_default();
    let required = format!("{version}.{group}");
    let name = str_at(v, &["metadata", "name"]).unwrap_or_default();
    if name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            Value::String(name.into()),
            format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
        ));
    }
    if version.is_empty() {
        errs.push(FieldError::required("spec.version", ""));
    }
    for field in ["groupPriorityMinimum", "versionPriority"] {
        let n = at(v, &["spec", field]).and_then(Value::as_i64).unwrap_or(0);
        if n <= 0 {
            errs.push(FieldError::invalid(
                format!("spec.{field}"),
                n.into(),
                "must be positive and less than 20000",
            ));
        }
    }
    errs
}

/// StorageClass defaults: `Delete` and `Immediate`.
pub(crate) fn default_storage_class(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        set(o, "reclaimPolicy", "Delete");
        set(o, "volumeBindingMode", "Immediate");
    }
}

/// PriorityClass defaults: `PreemptLowerPriority`.
pub(crate) fn default_priority_class(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        set(o, "preemptionPolicy", "PreemptLowerPriority");
    }
}

fn set(o: &mut Map<String, Value>, key: &str, value: &str) {
    if o.get(key).is_none_or(Value::is_null) {
        o.insert(key.into(), Value::String(value.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn disruption_budgets() {
        let both = json!({"spec": {"minAvailable": 1, "maxUnavailable": "10%"}});
        assert!(
            messages(&pdb(&both))[0]
                .ends_with("minAvailable and maxUnavailable cannot be both set")
        );
        let over = json!({"spec": {"minAvailable": "120%"}});
        assert_eq!(
            messages(&pdb(&over)),
            ["spec.minAvailable: Invalid value: \"120%\": must not be greater than 100%"]
        );
        assert!(pdb(&json!({"spec": {"maxUnavailable": 1}})).is_empty());
    }

    #[test]
    fn claims() {
        let bare = json!({"spec": {}});
        assert_eq!(
            messages(&pvc(&bare)),
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value",
            ]
        );
        let zero = json!({"spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}});
        assert_eq!(
            messages(&pvc(&zero)),
            [
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
                "spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
            ]
        );
    }

    #[test]
    fn quotas() {
        let q = json!({"spec": {"hard": {"pods": "1.5", "cpu": "-1", "gpus": "1", "count/deployments.apps": "3"}}});
        assert_eq!(
            messages(&resource_quota(&q)),
            [
                "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.hard[gpus]: Invalid value: \"gpus\": must be a standard resource for quota",
                "spec.hard[pods]: Invalid value: \"1.5\": must be an integer",
            ]
        );
    }

    #[test]
    fn limit_ranges() {
        let r = json!({"spec": {"limits": [{"type": "Container",
            "min": {"cpu": "200m"}, "max": {"cpu": "100m"},
            "maxLimitRequestRatio": {"memory": "500m"}}]}});
        assert_eq!(
            messages(&limit_range(&r)),
            [
                "spec.limits[0].min[cpu]: Invalid value: \"200m\": min value 200m is greater than max value 100m",
                "spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: \"500m\": ratio 500m is less than 1",
            ]
        );
        let pod = json!({"spec": {"limits": [{"type": "Pod", "default": {"cpu": "1"}}]}});
        assert_eq!(
            messages(&limit_range(&pod)),
            ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]
        );
    }

    #[test]
    fn autoscalers_classes_and_priorities() {
        let h = json!({"spec": {"minReplicas": 3, "maxReplicas": 2, "scaleTargetRef": {"kind": "Deployment"}}});
        assert_eq!(
            messages(&hpa(&h)),
            [
                "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
                "spec.scaleTargetRef.name: Required value",
            ]
        );
        let sc = json!({"provisioner": "", "reclaimPolicy": "Recycle", "volumeBindingMode": "Immediate"});
        assert_eq!(
            messages(&storage_class(&sc)),
            [
                "provisioner: Required value",
                "reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
            ]
        );
        let pc = json!({"metadata": {"name": "system-mine"}, "value": 2_000_000_000});
        assert_eq!(
            messages(&priority_class(&pc)),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved",
                "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            ]
        );
    }
}
