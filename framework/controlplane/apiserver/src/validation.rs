//! Validation of built-in kinds, after kube-apiserver's `ValidateX` functions.
//!
//! Not the whole of upstream validation: the rules an operator author trips over first
//! (selectors that do not match their template, containers without names or images, bad ports,
//! malformed RBAC rules, invalid data keys), with upstream's paths and messages. Object
//! metadata (names, labels, annotations) is validated for every kind in `objects`.

mod cluster;

use std::collections::BTreeSet;

use mni_apimachinery::{FieldError, Selector};
use serde_json::Value;

pub(crate) use cluster::{
    api_service, default_priority_class, default_storage_class, hpa, hpa_v1, limit_range, pdb,
    priority_class, pvc, resource_quota, storage_class,
};

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |cur, k| cur.get(*k))?.as_str()
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, k| cur.get(*k))
}

/// Kubernetes' `IsConfigMapKey`: the key of a ConfigMap or Secret entry.
fn config_map_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push(mni_apimachinery::max_len_error(253));
    }
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
    {
        errs.push(mni_apimachinery::regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." || key == ".." || key.starts_with("..") {
        errs.push("must not be '.' or '..' or start with '..'".to_string());
    }
    errs
}

fn data_keys(v: &Value, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(map) = v.get(field).and_then(Value::as_object) {
        for key in map.keys() {
            for msg in config_map_key(key) {
                errs.push(FieldError::invalid(field, Value::String(key.clone()), msg));
            }
        }
    }
}

/// ConfigMap: keys are valid config keys and unique across `data` and `binaryData`.
pub(crate) fn config_map(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    data_keys(v, "data", &mut errs);
    data_keys(v, "binaryData", &mut errs);
    if let (Some(d), Some(b)) = (
        v.get("data").and_then(Value::as_object),
        v.get("binaryData").and_then(Value::as_object),
    ) {
        for key in d.keys().filter(|k| b.contains_key(*k)) {
            errs.push(FieldError::invalid(
                "data",
                Value::String(key.clone()),
                "duplicate of key present in binaryData",
            ));
        }
    }
    errs
}

/// Secret: keys are valid config keys.
pub(crate) fn secret(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    data_keys(v, "data", &mut errs);
    data_keys(v, "stringData", &mut errs);
    errs
}

fn port_number(path: String, v: Option<&Value>, errs: &mut Vec<FieldError>) {
    match v {
        None => errs.push(FieldError::required(path, "")),
        Some(p) => {
            let n = p.as_i64().unwrap_or(0);
            if !(1..=65535).contains(&n) {
                errs.push(FieldError::invalid(
                    path,
                    p.clone(),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
}

/// Service: ports in range, unique names when several.
pub(crate) fn service(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let type_ = str_at(v, &["spec", "type"]).unwrap_or("ClusterIP");
    let ports = at(v, &["spec", "ports"]).and_then(Value::as_array);
    let headless = str_at(v, &["spec", "clusterIP"]) == Some("None");
    if type_ != "ExternalName" && !headless && ports.is_none_or(Vec::is_empty) {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let many = ports.is_some_and(|p| p.len() > 1);
    let mut seen = BTreeSet::new();
    for (i, p) in ports.into_iter().flatten().enumerate() {
        port_number(format!("spec.ports[{i}].port"), p.get("port"), &mut errs);
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        if many && name.is_empty() {
            errs.push(FieldError::required(format!("spec.ports[{i}].name"), ""));
        } else if !name.is_empty() && !seen.insert(name.to_string()) {
            errs.push(FieldError::duplicate(
                format!("spec.ports[{i}].name"),
                Value::String(name.into()),
            ));
        }
    }
    errs
}

/// Containers of a pod spec at `prefix` (`spec` or `spec.template.spec`).
fn pod_spec(spec: Option<&Value>, prefix: &str, errs: &mut Vec<FieldError>) {
    let containers = spec
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    if containers.is_none_or(Vec::is_empty) {
        errs.push(FieldError::required(format!("{prefix}.containers"), ""));
        return;
    }
    let mut seen = BTreeSet::new();
    for (i, c) in containers.into_iter().flatten().enumerate() {
        let path = format!("{prefix}.containers[{i}]");
        match c.get("name").and_then(Value::as_str) {
            None | Some("") => errs.push(FieldError::required(format!("{path}.name"), "")),
            Some(name) => {
                for msg in mni_apimachinery::is_dns1123_label(name) {
                    errs.push(FieldError::invalid(
                        format!("{path}.name"),
                        Value::String(name.into()),
                        msg,
                    ));
                }
                if !seen.insert(name.to_string()) {
                    errs.push(FieldError::duplicate(
                        format!("{path}.name"),
                        Value::String(name.into()),
                    ));
                }
            }
        }
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errs.push(FieldError::required(format!("{path}.image"), ""));
        }
        for (j, p) in c
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            port_number(
                format!("{path}.ports[{j}].containerPort"),
                p.get("containerPort"),
                errs,
            );
        }
    }
}

/// Pod: at least one container, each named and with an image.
pub(crate) fn pod(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    pod_spec(v.get("spec"), "spec", &mut errs);
    errs
}

/// Selector present, valid, non-empty and matching the template's labels.
fn selector_and_template(v: &Value, errs: &mut Vec<FieldError>) {
    let replicas = at(v, &["spec", "replicas"]);
    if let Some(r) = replicas
        && r.as_i64().is_some_and(|n| n < 0)
    {
        errs.push(FieldError::invalid(
            "spec.replicas",
            r.clone(),
            "must be greater than or equal to 0",
        ));
    }
    let labels = at(v, &["spec", "template", "metadata", "labels"])
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    match at(v, &["spec", "selector"]) {
        None | Some(Value::Null) => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) => match Selector::from_label_selector(sel) {
            Err(e) => errs.push(FieldError::invalid(
                "spec.selector",
                sel.clone(),
                e.to_string(),
            )),
            Ok(s) if s.is_empty() => errs.push(FieldError::invalid(
                "spec.selector",
                sel.clone(),
                "empty selector is invalid for deployment",
            )),
            Ok(s) if !s.matches(&labels) => errs.push(FieldError::invalid(
                "spec.template.metadata.labels",
                at(v, &["spec", "template", "metadata", "labels"])
                    .cloned()
                    .unwrap_or(Value::Null),
                "`selector` does not match template `labels`",
            )),
            Ok(_) => {}
        },
    }
    pod_spec(
        at(v, &["spec", "template", "spec"]),
        "spec.template.spec",
        errs,
    );
}

/// Deployments, ReplicaSets, StatefulSets and DaemonSets: replicas, selector and template.
pub(crate) fn workload(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    selector_and_template(v, &mut errs);
    errs
}

fn non_negative(v: &Value, path: &[&str], errs: &mut Vec<FieldError>) {
    if let Some(n) = at(v, path).filter(|n| n.as_i64().is_some_and(|n| n < 0)) {
        errs.push(FieldError::invalid(
            path.join("."),
            n.clone(),
            "must be greater than or equal to 0",
        ));
    }
}

/// A Job's (or job template's) pods must not restart forever: `restartPolicy` is
/// `OnFailure` or `Never`.
fn job_restart_policy(spec: Option<&Value>, prefix: &str, errs: &mut Vec<FieldError>) {
    let path = format!("{prefix}.template.spec.restartPolicy");
    const SUPPORTED: &[&str] = &["OnFailure", "Never"];
    match spec.and_then(|s| str_at(s, &["template", "spec", "restartPolicy"])) {
        None | Some("") => errs.push(FieldError::required(
            path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        Some(p) if !SUPPORTED.contains(&p) => errs.push(FieldError::not_supported(
            path,
            Value::String(p.into()),
            SUPPORTED,
        )),
        Some(_) => {}
    }
}

/// The counts and deadlines of a Job spec.
fn job_spec_numbers(v: &Value, prefix: &[&str], errs: &mut Vec<FieldError>) {
    for field in [
        "parallelism",
        "completions",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        let path: Vec<&str> = prefix.iter().copied().chain([field]).collect();
        non_negative(v, &path, errs);
    }
    let deadline: Vec<&str> = prefix
        .iter()
        .copied()
        .chain(["activeDeadlineSeconds"])
        .collect();
    if let Some(d) = at(v, &deadline).filter(|d| d.as_i64().is_some_and(|n| n <= 0)) {
        errs.push(FieldError::invalid(
            deadline.join("."),
            d.clone(),
            "must be greater than 0",
        ));
    }
    let spec = at(v, prefix);
    let mode = spec.and_then(|s| str_at(s, &["completionMode"]));
    if let Some(m) = mode.filter(|m| !["NonIndexed", "Indexed"].contains(m)) {
        errs.push(FieldError::not_supported(
            format!("{}.completionMode", prefix.join(".")),
            Value::String(m.into()),
            &["NonIndexed", "Indexed"],
        ));
    }
    if mode == Some("Indexed")
        && spec
            .and_then(|s| s.get("completions"))
            .is_none_or(Value::is_null)
    {
        errs.push(FieldError::required(
            format!("{}.completions", prefix.join(".")),
            "when completion mode is Indexed",
        ));
    }
}

/// Job: the pod template restarts `OnFailure` or `Never`, counts are not negative, and the
/// selector (generated unless `manualSelector`) matches the template.
pub(crate) fn job(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    job_spec_numbers(v, &["spec"], &mut errs);
    job_restart_policy(v.get("spec"), "spec", &mut errs);
    selector_and_template(v, &mut errs);
    errs
}

/// CronJob: a schedule robfig/cron parses (without `TZ=`), a known time zone, a supported
/// concurrency policy, non-negative limits, a name short enough for its Jobs' names, and a
/// job template as for a Job.
pub(crate) fn cron_job(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(name) = str_at(v, &["metadata", "name"]).filter(|n| n.len() > 52) {
        errs.push(FieldError::invalid(
            "metadata.name",
            Value::String(name.into()),
            "must be no more than 52 characters",
        ));
    }
    match str_at(v, &["spec", "schedule"]) {
        None | Some("") => errs.push(FieldError::required("spec.schedule", "")),
        Some(s) if s.starts_with("TZ=") || s.starts_with("CRON_TZ=") => {
            errs.push(FieldError::invalid(
                "spec.schedule",
                Value::String(s.into()),
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
        Some(s) => {
            if let Err(e) = mni_formats::cron::Schedule::parse(s) {
                errs.push(FieldError::invalid(
                    "spec.schedule",
                    Value::String(s.into()),
                    e.to_string(),
                ));
            }
        }
    }
    if let Some(tz) = str_at(v, &["spec", "timeZone"])
        && jiff::tz::TimeZone::get(tz).is_err()
    {
        errs.push(FieldError::invalid(
            "spec.timeZone",
            Value::String(tz.into()),
            format!("unknown time zone {tz}"),
        ));
    }
    const POLICIES: &[&str] = &["Allow", "Forbid", "Replace"];
    match str_at(v, &["spec", "concurrencyPolicy"]) {
        None | Some("") => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        Some(p) if !POLICIES.contains(&p) => errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            Value::String(p.into()),
            POLICIES,
        )),
        Some(_) => {}
    }
    for field in [
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
        "startingDeadlineSeconds",
    ] {
        non_negative(v, &["spec", field], &mut errs);
    }
    let job_spec = at(v, &["spec", "jobTemplate", "spec"]);
    job_spec_numbers(v, &["spec", "jobTemplate", "spec"], &mut errs);
    job_restart_policy(job_spec, "spec.jobTemplate.spec", &mut errs);
    pod_spec(
        job_spec.and_then(|s| at(s, &["template", "spec"])),
        "spec.jobTemplate.spec.template.spec",
        &mut errs,
    );
    errs
}

/// Role and ClusterRole rules: verbs always; resources and groups, or non-resource URLs.
pub(crate) fn rbac_rules(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let namespaced = v.get("kind").and_then(Value::as_str) == Some("Role");
    for (i, rule) in v
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let has = |k: &str| {
            rule.get(k)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        };
        if !has("verbs") {
            errs.push(FieldError::required(format!("rules[{i}].verbs"), ""));
        }
        if has("nonResourceURLs") {
            if namespaced {
                errs.push(FieldError::invalid(
                    format!("rules[{i}].nonResourceURLs"),
                    rule["nonResourceURLs"].clone(),
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            if has("resources") || has("apiGroups") {
                errs.push(FieldError::invalid(
                    format!("rules[{i}].nonResourceURLs"),
                    rule["nonResourceURLs"].clone(),
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
        } else {
            if !rule.get("apiGroups").is_some_and(Value::is_array) {
                errs.push(FieldError::required(format!("rules[{i}].apiGroups"), ""));
            }
            if !has("resources") {
                errs.push(FieldError::required(format!("rules[{i}].resources"), ""));
            }
        }
    }
    errs
}

/// RoleBinding and ClusterRoleBinding: a well-formed roleRef and subjects.
pub(crate) fn role_binding(v: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cluster = v.get("kind").and_then(Value::as_str) == Some("ClusterRoleBinding");
    match v.get("roleRef") {
        None | Some(Value::Null) => errs.push(FieldError::required("roleRef", "")),
        Some(r) => {
            let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
            let allowed: &[&str] = if cluster {
                &["ClusterRole"]
            } else {
                &["Role", "ClusterRole"]
            };
            if !allowed.contains(&kind) {
                errs.push(FieldError::not_supported(
                    "roleRef.kind",
                    Value::String(kind.into()),
                    allowed,
                ));
            }
            if r.get("apiGroup").and_then(Value::as_str) != Some("rbac.authorization.k8s.io") {
                errs.push(FieldError::not_supported(
                    "roleRef.apiGroup",
                    r.get("apiGroup").cloned().unwrap_or(Value::Null),
                    &["rbac.authorization.k8s.io"],
                ));
            }
            if r.get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                errs.push(FieldError::required("roleRef.name", ""));
            }
        }
    }
    for (i, s) in v
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
        if !["ServiceAccount", "User", "Group"].contains(&kind) {
            errs.push(FieldError::not_supported(
                format!("subjects[{i}].kind"),
                Value::String(kind.into()),
                &["ServiceAccount", "User", "Group"],
            ));
        }
        if s.get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errs.push(FieldError::required(format!("subjects[{i}].name"), ""));
        }
        if kind == "ServiceAccount"
            && cluster
            && s.get("namespace")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            errs.push(FieldError::required(format!("subjects[{i}].namespace"), ""));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(errs: Vec<FieldError>) -> Vec<String> {
        errs.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn deployment_selector_must_match_template() {
        let d = json!({"spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        assert_eq!(paths(workload(&d)), vec!["spec.template.metadata.labels"]);
        let ok = json!({"spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        assert!(workload(&ok).is_empty());
    }

    #[test]
    fn containers_need_names_and_images() {
        let p = json!({"spec": {"containers": [{"name": "Bad_Name"}, {"image": "x"}]}});
        assert_eq!(
            paths(pod(&p)),
            vec![
                "spec.containers[0].name",
                "spec.containers[0].image",
                "spec.containers[1].name"
            ]
        );
    }

    #[test]
    fn rbac_rules_need_verbs_and_resources() {
        let r = json!({"kind": "Role", "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert_eq!(
            paths(rbac_rules(&r)),
            vec!["rules[0].verbs", "rules[1].nonResourceURLs"]
        );
    }

    #[test]
    fn service_ports_checked() {
        let s = json!({"spec": {"ports": [{"name": "a", "port": 0}, {"name": "a", "port": 80}]}});
        assert_eq!(
            paths(service(&s)),
            vec!["spec.ports[0].port", "spec.ports[1].name"]
        );
    }
}
