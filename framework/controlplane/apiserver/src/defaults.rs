//! Defaulting for built-in kinds, after kube-apiserver's `SetDefaults_*` functions.
//!
//! Only the defaults operators observe are applied (replicas, strategies, pod-template fields,
//! protocols), so that an object read back looks like one read from a real cluster and a
//! server-side apply of the same manifest twice changes nothing.

use serde_json::{Map, Value, json};

/// Sets `obj[key] = value` when the key is missing or null.
fn set_default(obj: &mut Map<String, Value>, key: &str, value: Value) {
    match obj.get(key) {
        Some(v) if !v.is_null() => {}
        _ => {
            obj.insert(key.to_string(), value);
        }
    }
}

/// The object at `path`, created as an empty object when missing.
fn object_at<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    for key in path {
        let obj = cur.as_object_mut()?;
        if !obj.get(*key).is_some_and(Value::is_object) {
            obj.insert((*key).to_string(), Value::Object(Map::new()));
        }
        cur = obj.get_mut(*key)?;
    }
    cur.as_object_mut()
}

fn existing_object<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    for key in path {
        cur = cur.as_object_mut()?.get_mut(*key)?;
    }
    cur.as_object_mut()
}

fn default_ports(ports: Option<&mut Value>) {
    if let Some(ports) = ports.and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", json!("TCP"));
        }
    }
}

fn default_container(c: &mut Map<String, Value>) {
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let last = image.rsplit('/').next().unwrap_or_default();
    let policy = if image.contains('@') || (last.contains(':') && !last.ends_with(":latest")) {
        "IfNotPresent"
    } else {
        "Always"
    };
    set_default(c, "imagePullPolicy", json!(policy));
    default_ports(c.get_mut("ports"));
}

/// Pod-spec defaults, shared by pods and every pod template.
pub(crate) fn pod_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c);
            }
        }
    }
}

fn template(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec", "template", "spec"]) {
        pod_spec(spec);
    }
}

/// Namespace: `Active` phase, the `kubernetes` finalizer, and the label
/// `kubernetes.io/metadata.name` set to the name (always: upstream overwrites it).
pub(crate) fn namespace(v: &mut Value) {
    if let Some(name) = v.pointer("/metadata/name").and_then(Value::as_str) {
        let name = json!(name);
        if let Some(labels) = object_at(v, &["metadata", "labels"]) {
            labels.insert("kubernetes.io/metadata.name".into(), name);
        }
    }
    if let Some(spec) = object_at(v, &["spec"]) {
        set_default(spec, "finalizers", json!(["kubernetes"]));
    }
    if let Some(status) = object_at(v, &["status"]) {
        set_default(status, "phase", json!("Active"));
    }
}

/// PersistentVolume and PersistentVolumeClaim: a `Pending` phase until a binder sets one.
pub(crate) fn pending_phase(v: &mut Value) {
    if let Some(status) = object_at(v, &["status"]) {
        set_default(status, "phase", json!("Pending"));
    }
}

/// Secret: type `Opaque`, and `stringData` merged into `data` (base64, over keys of the same
/// name) and dropped, as upstream's conversion does: it is write-only.
pub(crate) fn secret(v: &mut Value) {
    use base64::Engine as _;
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    set_default(obj, "type", json!("Opaque"));
    if let Some(Value::Object(strings)) = obj.remove("stringData") {
        let data = obj
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if data.is_null() {
            *data = Value::Object(Map::new());
        }
        if let Some(data) = data.as_object_mut() {
            for (key, value) in strings {
                if let Some(text) = value.as_str() {
                    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
                    data.insert(key, Value::String(encoded));
                }
            }
        }
    }
}

/// Service: type, affinity, protocols, target ports, traffic policy.
pub(crate) fn service(v: &mut Value) {
    let Some(spec) = object_at(v, &["spec"]) else {
        return;
    };
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    if spec.get("type").and_then(Value::as_str) != Some("ExternalName") {
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", json!("TCP"));
            if let Some(port) = p.get("port").cloned() {
                set_default(p, "targetPort", port);
            }
        }
    }
}

/// Pod: pod-spec defaults and a `Pending` phase until something runs it.
pub(crate) fn pod(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        pod_spec(spec);
        set_default(spec, "enableServiceLinks", json!(true));
    }
    if let Some(status) = object_at(v, &["status"]) {
        set_default(status, "phase", json!("Pending"));
    }
}

/// Deployment: replicas, rolling-update strategy, history and progress deadline.
pub(crate) fn deployment(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(spec, "replicas", json!(1));
        // SetDefaults_Deployment: field by field, so `strategy: {}` (what `kubectl create
        // deployment` sends) gets the rolling update too.
        let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
        if !strategy.is_object() {
            *strategy = json!({});
        }
        if let Some(strategy) = strategy.as_object_mut() {
            set_default(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
                if !rolling.is_object() {
                    *rolling = json!({});
                }
                if let Some(rolling) = rolling.as_object_mut() {
                    set_default(rolling, "maxUnavailable", json!("25%"));
                    set_default(rolling, "maxSurge", json!("25%"));
                }
            }
        }
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "progressDeadlineSeconds", json!(600));
    }
    template(v);
}

/// ReplicaSet: replicas and template.
pub(crate) fn replica_set(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(spec, "replicas", json!(1));
    }
    template(v);
}

/// StatefulSet: replicas, policies, update strategy.
pub(crate) fn stateful_set(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(spec, "replicas", json!(1));
        set_default(spec, "podManagementPolicy", json!("OrderedReady"));
        set_default(
            spec,
            "updateStrategy",
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
        );
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(
            spec,
            "persistentVolumeClaimRetentionPolicy",
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
        );
    }
    template(v);
}

/// DaemonSet: update strategy and history.
pub(crate) fn daemon_set(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(
            spec,
            "updateStrategy",
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
        );
        set_default(spec, "revisionHistoryLimit", json!(10));
    }
    template(v);
}

/// The labels the Job controller finds its pods by (`batch/v1` `JobNameLabel` and
/// `ControllerUidLabel`, and the legacy unprefixed names kube-apiserver still writes).
pub(crate) const JOB_NAME_LABELS: &[&str] = &["job-name", "batch.kubernetes.io/job-name"];
/// See [`JOB_NAME_LABELS`].
pub(crate) const CONTROLLER_UID_LABELS: &[&str] =
    &["controller-uid", "batch.kubernetes.io/controller-uid"];

/// Job: `SetDefaults_Job` plus the create strategy's generated selector. Unless
/// `manualSelector` is true, the pod template is labelled with the Job's name and uid and the
/// selector matches the uid; a Job without labels of its own takes its template's.
pub(crate) fn job(v: &mut Value) {
    let name = at_str(v, &["metadata", "name"]);
    let uid = at_str(v, &["metadata", "uid"]);
    let Some(spec) = existing_object(v, &["spec"]) else {
        return;
    };
    let completions_unset = spec.get("completions").is_none_or(Value::is_null);
    if completions_unset && spec.get("parallelism").is_none_or(Value::is_null) {
        spec.insert("completions".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|v| !v.is_null());
    set_default(
        spec,
        "backoffLimit",
        json!(if per_index { i32::MAX } else { 6 }),
    );
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|v| !v.is_null());
    set_default(
        spec,
        "podReplacementPolicy",
        json!(if failure_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    if !manual && !uid.is_empty() {
        if let Some(labels) = object_at(v, &["spec", "template", "metadata", "labels"]) {
            for key in JOB_NAME_LABELS {
                set_default(labels, key, json!(name));
            }
            for key in CONTROLLER_UID_LABELS {
                set_default(labels, key, json!(uid));
            }
        }
        if let Some(match_labels) = object_at(v, &["spec", "selector", "matchLabels"]) {
            set_default(match_labels, CONTROLLER_UID_LABELS[1], json!(uid));
        }
    }
    let template_labels = existing_object(v, &["spec", "template", "metadata", "labels"])
        .map(|m| Value::Object(m.clone()));
    if let (Some(labels), Some(meta)) = (template_labels, existing_object(v, &["metadata"]))
        && meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
    {
        meta.insert("labels".into(), labels);
    }
    template(v);
}

/// CronJob: `SetDefaults_CronJob` (concurrency, suspension, history limits) and pod-spec
/// defaults in the job template.
pub(crate) fn cron_job(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(spec, "concurrencyPolicy", json!("Allow"));
        set_default(spec, "suspend", json!(false));
        set_default(spec, "successfulJobsHistoryLimit", json!(3));
        set_default(spec, "failedJobsHistoryLimit", json!(1));
    }
    if let Some(spec) = existing_object(v, &["spec", "jobTemplate", "spec", "template", "spec"]) {
        pod_spec(spec);
    }
}

/// HorizontalPodAutoscaler at `autoscaling/v2`: `SetDefaults_HorizontalPodAutoscaler` — one
/// minimum replica, CPU at 80% when no metric is given, and a given `behavior` completed with
/// the default scale-up and scale-down rules.
pub(crate) fn hpa_v2(v: &mut Value) {
    let Some(spec) = existing_object(v, &["spec"]) else {
        return;
    };
    set_default(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) else {
        return;
    };
    let rules = [
        (
            "scaleUp",
            0,
            json!([{"type": "Pods", "value": 4, "periodSeconds": 15},
                   {"type": "Percent", "value": 100, "periodSeconds": 15}]),
        ),
        (
            "scaleDown",
            300,
            json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
        ),
    ];
    for (direction, window, policies) in rules {
        let slot = behavior.entry(direction).or_insert_with(|| json!({}));
        if slot.is_null() {
            *slot = json!({});
        }
        if let Some(r) = slot.as_object_mut() {
            set_default(r, "stabilizationWindowSeconds", json!(window));
            set_default(r, "selectPolicy", json!("Max"));
            set_default(r, "policies", policies);
        }
    }
}

/// HorizontalPodAutoscaler at `autoscaling/v1`: one minimum replica. As upstream, no CPU
/// target is defaulted here: an HPA without one is stored without metrics.
pub(crate) fn hpa_v1(v: &mut Value) {
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(spec, "minReplicas", json!(1));
    }
}

/// PersistentVolumeClaim: `Pending` and the `Filesystem` volume mode.
pub(crate) fn persistent_volume_claim(v: &mut Value) {
    pending_phase(v);
    if let Some(spec) = existing_object(v, &["spec"]) {
        set_default(spec, "volumeMode", json!("Filesystem"));
    }
}

/// LimitRange: `SetDefaults_LimitRangeItem` for Container items — the default limit falls back
/// to `max`, the default request to the default limit, then to `min`.
pub(crate) fn limit_range(v: &mut Value) {
    let Some(items) = v.pointer_mut("/spec/limits").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items {
        if item["type"] != "Container" {
            continue;
        }
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        let read = |item: &Map<String, Value>, k: &str| -> Map<String, Value> {
            item.get(k)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let max = read(item, "max");
        let min = read(item, "min");
        let mut default = read(item, "default");
        for (k, q) in max {
            default.entry(k).or_insert(q);
        }
        let mut request = read(item, "defaultRequest");
        for (k, q) in default.iter().chain(min.iter()) {
            request.entry(k.clone()).or_insert_with(|| q.clone());
        }
        if !default.is_empty() {
            item.insert("default".into(), Value::Object(default));
        }
        if !request.is_empty() {
            item.insert("defaultRequest".into(), Value::Object(request));
        }
    }
}

fn at_str(v: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(v, |cur, k| cur.get(*k))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// NetworkPolicy: policy types derived from the rules given, protocols.
pub(crate) fn network_policy(v: &mut Value) {
    let Some(spec) = existing_object(v, &["spec"]) else {
        return;
    };
    if !spec.contains_key("policyTypes") {
        let mut types = vec![json!("Ingress")];
        if spec.contains_key("egress") {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
    for dir in ["ingress", "egress"] {
        if let Some(rules) = spec.get_mut(dir).and_then(Value::as_array_mut) {
            for r in rules.iter_mut().filter_map(Value::as_object_mut) {
                default_ports(r.get_mut("ports"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_strategy_gets_the_rolling_update() {
        let mut d = json!({"spec": {"strategy": {}}});
        deployment(&mut d);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        let mut r = json!({"spec": {"strategy": {"type": "Recreate"}}});
        deployment(&mut r);
        assert_eq!(r["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn namespaces_are_labelled_with_their_name() {
        let mut ns = json!({"metadata": {"name": "team-a", "labels": {
            "kubernetes.io/metadata.name": "spoofed", "x": "y"}}});
        namespace(&mut ns);
        assert_eq!(
            ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "team-a"
        );
        assert_eq!(ns["metadata"]["labels"]["x"], "y");
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    }

    #[test]
    fn secret_string_data_is_merged_into_data() {
        let mut s = json!({"data": {"user": "YWRtaW4=", "password": "b2xk"},
                           "stringData": {"password": "hunter2"}});
        secret(&mut s);
        assert_eq!(s["data"]["user"], "YWRtaW4=");
        assert_eq!(s["data"]["password"], "aHVudGVyMg==");
        assert!(s.get("stringData").is_none());
        assert_eq!(s["type"], "Opaque");
        let mut only = json!({"stringData": {"k": "v"}, "data": null});
        secret(&mut only);
        assert_eq!(only["data"], json!({"k": "dg=="}));
    }

    #[test]
    fn deployment_defaults_match_kube() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}}}});
        deployment(&mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        let cs = &d["spec"]["template"]["spec"]["containers"];
        assert_eq!(cs[0]["imagePullPolicy"], "Always");
        assert_eq!(cs[1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(cs[1]["ports"][0]["protocol"], "TCP");
        assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
    }

    #[test]
    fn jobs_get_a_generated_selector_and_kube_defaults() {
        let mut v = json!({
            "metadata": {"name": "pi", "uid": "u-1"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5"}]}}},
        });
        job(&mut v);
        assert_eq!(v["spec"]["completions"], 1);
        assert_eq!(v["spec"]["parallelism"], 1);
        assert_eq!(v["spec"]["backoffLimit"], 6);
        assert_eq!(v["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(
            v["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        let labels = &v["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], "u-1");
        assert_eq!(&v["metadata"]["labels"], labels);
        assert_eq!(v["spec"]["template"]["spec"]["restartPolicy"], "Never");

        // Parallelism alone leaves completions unset (a work queue).
        let mut v = json!({"metadata": {"name": "q", "uid": "u-2"}, "spec": {"parallelism": 3, "manualSelector": true, "template": {}}});
        job(&mut v);
        assert!(v["spec"].get("completions").is_none());
        assert!(v["spec"].get("selector").is_none());
    }

    #[test]
    fn explicit_values_are_kept() {
        let mut d =
            json!({"spec": {"replicas": 0, "template": {"spec": {"restartPolicy": "Never"}}}});
        deployment(&mut d);
        assert_eq!(d["spec"]["replicas"], 0);
        assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Never");
    }

    #[test]
    fn service_target_port_defaults_to_port() {
        let mut s = json!({"spec": {"ports": [{"port": 80}]}});
        service(&mut s);
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(s["spec"]["type"], "ClusterIP");
    }

    #[test]
    fn network_policy_types_follow_rules() {
        let mut p = json!({"spec": {"podSelector": {}, "egress": [{}]}});
        network_policy(&mut p);
        assert_eq!(p["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    }
}
