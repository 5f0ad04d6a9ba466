//! Conversions between the served and the stored version of built-in kinds that kube-apiserver
//! serves in two shapes: HorizontalPodAutoscaler at `autoscaling/v1` (stored as
//! `autoscaling/v2`).
//!
//! `autoscaling/v1` knows only a CPU utilisation target. As upstream, everything else a v2
//! object holds travels through v1 in annotations — the other metrics, the behaviour, the
//! current metrics and the conditions — so that a v1 client's read-modify-write keeps them:
//!
//! | v2 field | v1 |
//! |---|---|
//! | `spec.metrics[]` CPU `Utilization` | `spec.targetCPUUtilizationPercentage` |
//! | other `spec.metrics[]` | annotation `autoscaling.alpha.kubernetes.io/metrics` (v1 metric specs) |
//! | `spec.behavior` | annotation `autoscaling.alpha.kubernetes.io/behavior` |
//! | `status.currentMetrics[]` | annotation `autoscaling.alpha.kubernetes.io/current-metrics`; CPU utilisation also in `status.currentCPUUtilizationPercentage` |
//! | `status.conditions` | annotation `autoscaling.alpha.kubernetes.io/conditions` |

use serde_json::{Map, Value, json};

/// The annotation that carries v2 metrics v1 cannot express.
pub(crate) const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// The annotation that carries the v2 current metrics.
pub(crate) const CURRENT_METRICS_ANNOTATION: &str =
    "autoscaling.alpha.kubernetes.io/current-metrics";
/// The annotation that carries the v2 scaling behaviour.
pub(crate) const BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The annotation that carries the v2 conditions.
pub(crate) const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// Whether a served resource is the v1 HorizontalPodAutoscaler.
pub(crate) fn is_hpa_v1(group: &str, version: &str, kind: &str) -> bool {
    group == "autoscaling" && version == "v1" && kind == "HorizontalPodAutoscaler"
}

/// A stored `autoscaling/v2` HorizontalPodAutoscaler as `autoscaling/v1` shows it.
pub(crate) fn hpa_v2_to_v1(mut obj: Value) -> Value {
    let Some(o) = obj.as_object_mut() else {
        return obj;
    };
    o.insert("apiVersion".into(), "autoscaling/v1".into());
    let mut notes: Vec<(&str, Value)> = Vec::new();
    if let Some(Value::Object(spec)) = o.get_mut("spec") {
        let metrics = match spec.remove("metrics") {
            Some(Value::Array(m)) => m,
            _ => Vec::new(),
        };
        let mut other = Vec::new();
        for m in metrics {
            match cpu_utilization(&m, "target") {
                Some(pct) if !spec.contains_key("targetCPUUtilizationPercentage") => {
                    spec.insert("targetCPUUtilizationPercentage".into(), pct);
                }
                _ => other.push(metric_to_v1(&m, Part::Target)),
            }
        }
        if !other.is_empty() {
            notes.push((METRICS_ANNOTATION, Value::Array(other)));
        }
        if let Some(b) = spec.remove("behavior").filter(|b| !b.is_null()) {
            notes.push((BEHAVIOR_ANNOTATION, b));
        }
    }
    if let Some(Value::Object(status)) = o.get_mut("status") {
        if let Some(Value::Array(current)) = status.remove("currentMetrics") {
            let cpu = current.iter().find_map(|m| cpu_utilization(m, "current"));
            if let Some(pct) = cpu {
                status.insert("currentCPUUtilizationPercentage".into(), pct);
            }
            if !current.is_empty() {
                let v1: Vec<Value> = current
                    .iter()
                    .map(|m| metric_to_v1(m, Part::Current))
                    .collect();
                notes.push((CURRENT_METRICS_ANNOTATION, Value::Array(v1)));
            }
        }
        if let Some(Value::Array(conditions)) = status.remove("conditions")
            && !conditions.is_empty()
        {
            notes.push((CONDITIONS_ANNOTATION, Value::Array(conditions)));
        }
    }
    if !notes.is_empty() {
        let meta = o.entry("metadata").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            if let Some(a) = annotations.as_object_mut() {
                for (key, value) in notes {
                    a.insert(key.into(), Value::String(value.to_string()));
                }
            }
        }
    }
    obj
}

/// An `autoscaling/v1` HorizontalPodAutoscaler in its stored `autoscaling/v2` form. Metrics,
/// behaviour, current metrics and conditions kept in annotations come back as fields, and the
/// annotations go.
pub(crate) fn hpa_v1_to_v2(mut obj: Value) -> Value {
    let Some(o) = obj.as_object_mut() else {
        return obj;
    };
    o.insert("apiVersion".into(), "autoscaling/v2".into());
    let mut take = |key: &str| -> Option<Value> {
        let meta = o.get_mut("metadata")?.as_object_mut()?;
        let annotations = meta.get_mut("annotations")?.as_object_mut()?;
        let raw = annotations.remove(key)?;
        if annotations.is_empty() {
            meta.remove("annotations");
        }
        raw.as_str().and_then(|s| serde_json::from_str(s).ok())
    };
    let other_metrics = take(METRICS_ANNOTATION);
    let behavior = take(BEHAVIOR_ANNOTATION);
    let current_metrics = take(CURRENT_METRICS_ANNOTATION);
    let conditions = take(CONDITIONS_ANNOTATION);
    if let Some(Value::Object(spec)) = o.get_mut("spec") {
        // As upstream: the metrics v1 cannot express first, then the CPU target.
        let mut metrics: Vec<Value> = match other_metrics {
            Some(Value::Array(m)) => m.iter().map(|m| metric_to_v2(m, Part::Target)).collect(),
            _ => Vec::new(),
        };
        if let Some(pct) = spec.remove("targetCPUUtilizationPercentage")
            && !pct.is_null()
        {
            metrics.push(json!({
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": pct}},
            }));
        }
        if !metrics.is_empty() {
            spec.insert("metrics".into(), Value::Array(metrics));
        }
        if let Some(b) = behavior {
            spec.insert("behavior".into(), b);
        }
    }
    if let Some(Value::Object(status)) = o.get_mut("status") {
        let cpu = status
            .remove("currentCPUUtilizationPercentage")
            .filter(|v| !v.is_null());
        let current: Vec<Value> = match current_metrics {
            Some(Value::Array(m)) => m.iter().map(|m| metric_to_v2(m, Part::Current)).collect(),
            _ => cpu
                .map(|pct| {
                    vec![json!({
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": pct}},
                    })]
                })
                .unwrap_or_default(),
        };
        if !current.is_empty() {
            status.insert("currentMetrics".into(), Value::Array(current));
        }
        if let Some(c) = conditions {
            status.insert("conditions".into(), c);
        }
    }
    obj
}

/// The CPU utilisation of a v2 Resource metric's `target` or `current`, when that is what it
/// measures.
fn cpu_utilization(metric: &Value, field: &str) -> Option<Value> {
    if metric.get("type").and_then(Value::as_str) != Some("Resource") {
        return None;
    }
    let resource = metric.get("resource")?;
    if resource.get("name").and_then(Value::as_str) != Some("cpu") {
        return None;
    }
    let value = resource.get(field)?;
    if field == "target" && value.get("type").and_then(Value::as_str) != Some("Utilization") {
        return None;
    }
    value
        .get("averageUtilization")
        .filter(|v| !v.is_null())
        .cloned()
}

/// Copies `from[a]` to `to[b]` for each pair, when present.
fn copy(from: Option<&Value>, to: &mut Map<String, Value>, pairs: &[(&str, &str)]) {
    let Some(from) = from else { return };
    for (a, b) in pairs {
        if let Some(v) = from.get(*a).filter(|v| !v.is_null()) {
            to.insert((*b).into(), v.clone());
        }
    }
}

/// The source (`resource`, `pods`, …) a metric's `type` names, by its JSON field.
fn source_field(kind: &str) -> &'static str {
    match kind {
        "Object" => "object",
        "Pods" => "pods",
        "ContainerResource" => "containerResource",
        "External" => "external",
        _ => "resource",
    }
}

/// Whether a metric is converted as a spec (its `target`) or a status (its `current`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Target,
    Current,
}

impl Part {
    /// The v2 field holding the values.
    fn field(self) -> &'static str {
        match self {
            Part::Target => "target",
            Part::Current => "current",
        }
    }
}

/// `(v2 field, v1 field)` pairs of the values of one metric source, for a spec or a status.
fn value_names(kind: &str, part: Part) -> Vec<(&'static str, String)> {
    let p = part.field();
    match kind {
        "Object" => vec![
            ("value", format!("{p}Value")),
            ("averageValue", "averageValue".into()),
        ],
        "Pods" => vec![("averageValue", format!("{p}AverageValue"))],
        "External" => vec![
            ("value", format!("{p}Value")),
            ("averageValue", format!("{p}AverageValue")),
        ],
        _ => vec![
            ("averageUtilization", format!("{p}AverageUtilization")),
            ("averageValue", format!("{p}AverageValue")),
        ],
    }
}

/// `(v2 field of the source or its metric, v1 field)` pairs naming what a metric measures.
fn identity_names(kind: &str) -> (&'static [(&'static str, &'static str)], bool) {
    match kind {
        // (pairs, whether the v2 side is under `metric`)
        "Object" => (&[("name", "metricName"), ("selector", "selector")], true),
        "Pods" => (&[("name", "metricName"), ("selector", "selector")], true),
        "External" => (
            &[("name", "metricName"), ("selector", "metricSelector")],
            true,
        ),
        _ => (&[("name", "name"), ("container", "container")], false),
    }
}

/// A v2 MetricSpec (`Part::Target`) or MetricStatus (`Part::Current`) as the v1 form upstream
/// keeps in the metrics or current-metrics annotation.
fn metric_to_v1(m: &Value, part: Part) -> Value {
    let kind = m.get("type").and_then(Value::as_str).unwrap_or("Resource");
    let field = source_field(kind);
    let src = m.get(field);
    let mut out = Map::new();
    if kind == "Object" {
        copy(src, &mut out, &[("describedObject", "target")]);
    }
    let (ids, under_metric) = identity_names(kind);
    let id_src = if under_metric {
        src.and_then(|s| s.get("metric"))
    } else {
        src
    };
    copy(id_src, &mut out, ids);
    let values = src.and_then(|s| s.get(part.field()));
    for (v2, v1) in value_names(kind, part) {
        copy(values, &mut out, &[(v2, v1.as_str())]);
    }
    json!({"type": kind, field: out})
}

/// A v1 metric from an annotation as the v2 MetricSpec or MetricStatus it stands for; a spec's
/// target gets the type its values imply, as upstream's conversion picks it.
fn metric_to_v2(m: &Value, part: Part) -> Value {
    let kind = m.get("type").and_then(Value::as_str).unwrap_or("Resource");
    let field = source_field(kind);
    let src = m.get(field);
    let mut out = Map::new();
    if kind == "Object" {
        copy(src, &mut out, &[("target", "describedObject")]);
    }
    let (ids, under_metric) = identity_names(kind);
    let flipped: Vec<(&str, &str)> = ids.iter().map(|(a, b)| (*b, *a)).collect();
    let mut metric = Map::new();
    copy(
        src,
        if under_metric { &mut metric } else { &mut out },
        &flipped,
    );
    let mut values = Map::new();
    for (v2, v1) in value_names(kind, part) {
        copy(src, &mut values, &[(v1.as_str(), v2)]);
    }
    if part == Part::Target {
        let ty = if values.contains_key("averageUtilization") {
            "Utilization"
        } else if values.contains_key("averageValue")
            || matches!(kind, "Pods" | "Resource" | "ContainerResource")
        {
            "AverageValue"
        } else {
            "Value"
        };
        values.insert("type".into(), ty.into());
    }
    if !metric.is_empty() {
        out.insert("metric".into(), Value::Object(metric));
    }
    out.insert(part.field().into(), Value::Object(values));
    json!({"type": kind, field: out})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Value {
        json!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2,
                "maxReplicas": 5,
                "metrics": [
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
                    {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}}},
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
            },
            "status": {
                "currentReplicas": 2,
                "desiredReplicas": 2,
                "currentMetrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 41, "averageValue": "120m"}}},
                ],
                "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}],
            },
        })
    }

    #[test]
    fn v2_shows_in_v1_with_the_rest_in_annotations() {
        let v1 = hpa_v2_to_v1(v2());
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
        assert!(v1["spec"].get("metrics").is_none());
        assert!(v1["spec"].get("behavior").is_none());
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 41);
        let notes = &v1["metadata"]["annotations"];
        assert_eq!(notes["team"], "a");
        let other: Value = serde_json::from_str(notes[METRICS_ANNOTATION].as_str().unwrap())
            .expect("metrics annotation");
        assert_eq!(
            other,
            json!([
                {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
                {"type": "External", "external": {"metricName": "queue", "targetValue": "30"}},
            ])
        );
        let current: Value =
            serde_json::from_str(notes[CURRENT_METRICS_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(
            current[0]["resource"],
            json!({"name": "cpu", "currentAverageUtilization": 41, "currentAverageValue": "120m"})
        );
        assert!(notes[CONDITIONS_ANNOTATION].is_string());
        assert!(notes[BEHAVIOR_ANNOTATION].is_string());
    }

    #[test]
    fn a_round_trip_through_v1_keeps_everything() {
        let back = hpa_v1_to_v2(hpa_v2_to_v1(v2()));
        let mut want = v2();
        // Upstream's order: the metrics v1 cannot express, then the CPU target.
        let metrics = want["spec"]["metrics"].as_array_mut().unwrap();
        let cpu = metrics.remove(1);
        metrics.push(cpu);
        assert_eq!(back, want);
    }

    #[test]
    fn a_plain_v1_object_becomes_a_cpu_metric() {
        let v1 = json!({
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50},
            "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 20},
        });
        let v2 = hpa_v1_to_v2(v1.clone());
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])
        );
        assert_eq!(
            v2["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"],
            20
        );
        assert!(v2["metadata"].get("annotations").is_none());
        // As upstream, the current metrics always travel in their annotation too (it keeps the
        // raw values a percentage loses).
        let mut back = hpa_v2_to_v1(v2);
        let notes = back["metadata"]
            .as_object_mut()
            .and_then(|m| m.remove("annotations"))
            .expect("annotations");
        assert!(notes[CURRENT_METRICS_ANNOTATION].is_string());
        assert_eq!(back, v1);
    }

    #[test]
    fn a_non_cpu_resource_and_value_targets_stay_in_the_annotation() {
        let obj = json!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "m"},
            "spec": {"maxReplicas": 3, "metrics": [
                {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
                {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"}, "target": {"type": "Value", "value": "5"}}},
            ]},
        });
        let v1 = hpa_v2_to_v1(obj.clone());
        assert!(v1["spec"].get("targetCPUUtilizationPercentage").is_none());
        assert_eq!(hpa_v1_to_v2(v1), obj);
    }
}
