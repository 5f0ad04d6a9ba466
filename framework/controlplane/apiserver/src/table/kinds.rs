//! The printer columns of the storage, batch, autoscaling, policy, scheduling and admission
//! kinds, as kube-apiserver's printers show them (`kubectl get pvc`, `kubectl get jobs`, …).
//!
//! A row may place `Age` itself (a column named `Age`, cell from [`age`]) where upstream does
//! not show it last (Node, PriorityClass, CertificateSigningRequest).

use serde_json::{Value, json};

use super::{Column, age, col, int, len, s};
use crate::object;

/// `<none>` for an empty string, as kubectl prints unset fields.
fn or_none(v: String) -> String {
    if v.is_empty() { "<none>".into() } else { v }
}

/// `<unset>` for an empty string, as the storage printers show an unset class.
fn or_unset(v: String) -> String {
    if v.is_empty() { "<unset>".into() } else { v }
}

/// A persistent volume's access modes, abbreviated (`RWO,ROX`).
fn access_modes(o: &Value, ptr: &str) -> String {
    o.pointer(ptr)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// An int-or-string field (`minAvailable`), `N/A` when unset.
fn int_or_string(o: &Value, ptr: &str) -> String {
    match o.pointer(ptr) {
        Some(Value::String(v)) => v.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".into(),
    }
}

/// Seconds between two RFC 3339 timestamps (the second defaulting to now).
fn seconds_between(from: &str, to: Option<&str>) -> Option<i64> {
    let from = from.parse::<jiff::Timestamp>().ok()?;
    let to = match to {
        Some(t) => t.parse::<jiff::Timestamp>().ok()?,
        None => jiff::Timestamp::now(),
    };
    Some((to.as_second() - from.as_second()).max(0))
}

/// True if the object has a condition of `type_` with status `True`.
fn condition(o: &Value, type_: &str) -> bool {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == type_ && c["status"] == "True")
}

fn job_status(o: &Value) -> &'static str {
    if condition(o, "Complete") {
        "Complete"
    } else if condition(o, "Failed") {
        "Failed"
    } else if object::meta_str(o, "deletionTimestamp").is_some() {
        "Terminating"
    } else if condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else if condition(o, "FailureTarget") {
        "FailureTarget"
    } else if condition(o, "Suspended") {
        "Suspended"
    } else {
        "Running"
    }
}

fn job_completions(o: &Value) -> String {
    let succeeded = int(o, "/status/succeeded");
    match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match o.pointer("/spec/parallelism").and_then(Value::as_i64) {
            Some(p) if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

fn job_duration(o: &Value) -> String {
    let Some(start) = o.pointer("/status/startTime").and_then(Value::as_str) else {
        return String::new();
    };
    let end = o.pointer("/status/completionTime").and_then(Value::as_str);
    seconds_between(start, end)
        .map(mni_apimachinery::human_duration)
        .unwrap_or_default()
}

/// HPA targets as kubectl shows them: `cpu: <unknown>/80%`, one per metric. Upstream prints
/// every version from the internal form, so a v1 object is read in its v2 form.
fn hpa_targets(o: &Value) -> String {
    let v2;
    let o = if o.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
        v2 = crate::conversion::hpa_v1_to_v2(o.clone());
        &v2
    } else {
        o
    };
    let metrics: Vec<String> = o
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| {
            let type_ = m["type"].as_str().unwrap_or_default();
            let source = match type_ {
                "Resource" => &m["resource"],
                "ContainerResource" => &m["containerResource"],
                "Pods" => &m["pods"],
                "Object" => &m["object"],
                "External" => &m["external"],
                _ => &Value::Null,
            };
            let name = source["name"]
                .as_str()
                .or_else(|| source.pointer("/metric/name").and_then(Value::as_str))
                .unwrap_or(type_);
            let target = &source["target"];
            let target = match target["averageUtilization"].as_i64() {
                Some(u) => format!("{u}%"),
                None => target["averageValue"]
                    .as_str()
                    .or_else(|| target["value"].as_str())
                    .unwrap_or("<unknown>")
                    .to_string(),
            };
            format!("{name}: <unknown>/{target}")
        })
        .collect();
    if metrics.is_empty() {
        "<none>".into()
    } else {
        metrics.join(", ")
    }
}

/// Columns and cells of the kinds this module knows (after NAME); `None` for others.
pub(super) fn row(kind: &str, o: &Value) -> Option<(Vec<Column>, Vec<Value>)> {
    let row = match kind {
        "PersistentVolumeClaim" => (
            vec![
                col("Status", "string"),
                col("Volume", "string"),
                col("Capacity", "string"),
                col("Access Modes", "string"),
                col("StorageClass", "string"),
                col("VolumeAttributesClass", "string"),
            ],
            vec![
                json!(s(o, "/status/phase")),
                json!(s(o, "/spec/volumeName")),
                json!(s(o, "/status/capacity/storage")),
                json!(access_modes(o, "/status/accessModes")),
                json!(s(o, "/spec/storageClassName")),
                json!(or_unset(s(o, "/spec/volumeAttributesClassName"))),
            ],
        ),
        "PersistentVolume" => {
            let claim = match s(o, "/spec/claimRef/name") {
                n if n.is_empty() => String::new(),
                n => format!("{}/{n}", s(o, "/spec/claimRef/namespace")),
            };
            (
                vec![
                    col("Capacity", "string"),
                    col("Access Modes", "string"),
                    col("Reclaim Policy", "string"),
                    col("Status", "string"),
                    col("Claim", "string"),
                    col("StorageClass", "string"),
                    col("VolumeAttributesClass", "string"),
                    col("Reason", "string"),
                ],
                vec![
                    json!(s(o, "/spec/capacity/storage")),
                    json!(access_modes(o, "/spec/accessModes")),
                    json!(s(o, "/spec/persistentVolumeReclaimPolicy")),
                    json!(s(o, "/status/phase")),
                    json!(claim),
                    json!(s(o, "/spec/storageClassName")),
                    json!(or_unset(s(o, "/spec/volumeAttributesClassName"))),
                    json!(s(o, "/status/reason")),
                ],
            )
        }
        "ReplicationController" => (
            vec![
                col("Desired", "integer"),
                col("Current", "integer"),
                col("Ready", "integer"),
            ],
            vec![
                json!(int(o, "/spec/replicas")),
                json!(int(o, "/status/replicas")),
                json!(int(o, "/status/readyReplicas")),
            ],
        ),
        "Node" => {
            let ready = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Ready")
                .map(|c| {
                    if c["status"] == "True" {
                        "Ready"
                    } else {
                        "NotReady"
                    }
                })
                .unwrap_or("Unknown");
            let status = if o.pointer("/spec/unschedulable") == Some(&Value::Bool(true)) {
                format!("{ready},SchedulingDisabled")
            } else {
                ready.to_string()
            };
            let roles: Vec<&str> = o
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
                .filter(|r| !r.is_empty())
                .collect();
            (
                vec![
                    col("Status", "string"),
                    col("Roles", "string"),
                    col("Age", "string"),
                    col("Version", "string"),
                ],
                vec![
                    json!(status),
                    json!(or_none(roles.join(","))),
                    json!(age(o)),
                    json!(s(o, "/status/nodeInfo/kubeletVersion")),
                ],
            )
        }
        "ControllerRevision" => {
            let controller = o
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|r| r["controller"] == true)
                .map(|r| {
                    let group = r["apiVersion"]
                        .as_str()
                        .and_then(|v| v.split_once('/'))
                        .map(|(g, _)| format!(".{g}"))
                        .unwrap_or_default();
                    format!(
                        "{}{group}/{}",
                        r["kind"].as_str().unwrap_or_default().to_lowercase(),
                        r["name"].as_str().unwrap_or_default()
                    )
                })
                .unwrap_or_else(|| "<none>".into());
            (
                vec![col("Controller", "string"), col("Revision", "integer")],
                vec![json!(controller), json!(int(o, "/revision"))],
            )
        }
        "Job" => (
            vec![
                col("Status", "string"),
                col("Completions", "string"),
                col("Duration", "string"),
            ],
            vec![
                json!(job_status(o)),
                json!(job_completions(o)),
                json!(job_duration(o)),
            ],
        ),
        "CronJob" => {
            let last = o
                .pointer("/status/lastScheduleTime")
                .and_then(Value::as_str)
                .and_then(|t| seconds_between(t, None))
                .map(mni_apimachinery::human_duration)
                .unwrap_or_else(|| "<none>".into());
            let suspend = o.pointer("/spec/suspend") == Some(&Value::Bool(true));
            (
                vec![
                    col("Schedule", "string"),
                    col("Timezone", "string"),
                    col("Suspend", "boolean"),
                    col("Active", "integer"),
                    col("Last Schedule", "string"),
                ],
                vec![
                    json!(s(o, "/spec/schedule")),
                    json!(or_none(s(o, "/spec/timeZone"))),
                    json!(if suspend { "True" } else { "False" }),
                    json!(len(o, "/status/active")),
                    json!(last),
                ],
            )
        }
        "HorizontalPodAutoscaler" => (
            vec![
                col("Reference", "string"),
                col("Targets", "string"),
                col("MinPods", "string"),
                col("MaxPods", "integer"),
                col("Replicas", "integer"),
            ],
            vec![
                json!(format!(
                    "{}/{}",
                    s(o, "/spec/scaleTargetRef/kind"),
                    s(o, "/spec/scaleTargetRef/name")
                )),
                json!(hpa_targets(o)),
                json!(
                    o.pointer("/spec/minReplicas")
                        .and_then(Value::as_i64)
                        .unwrap_or(1)
                        .to_string()
                ),
                json!(int(o, "/spec/maxReplicas")),
                json!(int(o, "/status/currentReplicas")),
            ],
        ),
        "PodDisruptionBudget" => (
            vec![
                col("Min Available", "string"),
                col("Max Unavailable", "string"),
                col("Allowed Disruptions", "integer"),
            ],
            vec![
                json!(int_or_string(o, "/spec/minAvailable")),
                json!(int_or_string(o, "/spec/maxUnavailable")),
                json!(int(o, "/status/disruptionsAllowed")),
            ],
        ),
        "ResourceQuota" => {
            let pairs = |ptr_hard: &str, ptr_used: &str, limits: bool| {
                let hard = o.pointer(ptr_hard).and_then(Value::as_object);
                let used = o.pointer(ptr_used).and_then(Value::as_object);
                hard.into_iter()
                    .flatten()
                    .filter(|(k, _)| k.starts_with("limits.") == limits)
                    .map(|(k, h)| {
                        let u = used
                            .and_then(|u| u.get(k))
                            .and_then(Value::as_str)
                            .unwrap_or("0");
                        format!("{k}: {u}/{}", h.as_str().unwrap_or_default())
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            (
                vec![
                    col("Age", "string"),
                    col("Request", "string"),
                    col("Limit", "string"),
                ],
                vec![
                    json!(age(o)),
                    json!(pairs("/spec/hard", "/status/used", false)),
                    json!(pairs("/spec/hard", "/status/used", true)),
                ],
            )
        }
        "EndpointSlice" => {
            let ports: Vec<String> = o
                .pointer("/ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p["port"].as_i64().map(|p| p.to_string()))
                .collect();
            let addresses: Vec<&str> = o
                .pointer("/endpoints")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .collect();
            let endpoints = match addresses.len() {
                0 => "<unset>".to_string(),
                n if n > 3 => format!("{} + {} more...", addresses[..3].join(","), n - 3),
                _ => addresses.join(","),
            };
            (
                vec![
                    col("AddressType", "string"),
                    col("Ports", "string"),
                    col("Endpoints", "string"),
                ],
                vec![
                    json!(s(o, "/addressType")),
                    json!(if ports.is_empty() {
                        "<unset>".into()
                    } else {
                        ports.join(",")
                    }),
                    json!(endpoints),
                ],
            )
        }
        "StorageClass" => {
            let policy = o
                .pointer("/reclaimPolicy")
                .and_then(Value::as_str)
                .unwrap_or("Delete");
            let mode = o
                .pointer("/volumeBindingMode")
                .and_then(Value::as_str)
                .unwrap_or("Immediate");
            let expand = o.pointer("/allowVolumeExpansion") == Some(&Value::Bool(true));
            (
                vec![
                    col("Provisioner", "string"),
                    col("ReclaimPolicy", "string"),
                    col("VolumeBindingMode", "string"),
                    col("AllowVolumeExpansion", "string"),
                ],
                vec![
                    json!(s(o, "/provisioner")),
                    json!(policy),
                    json!(mode),
                    json!(expand.to_string()),
                ],
            )
        }
        "PriorityClass" => {
            let global = o.pointer("/globalDefault") == Some(&Value::Bool(true));
            (
                vec![
                    col("Value", "integer"),
                    col("Global-Default", "boolean"),
                    col("Age", "string"),
                    col("PreemptionPolicy", "string"),
                ],
                vec![
                    json!(int(o, "/value")),
                    json!(global),
                    json!(age(o)),
                    json!(
                        o.pointer("/preemptionPolicy")
                            .and_then(Value::as_str)
                            .unwrap_or("PreemptLowerPriority")
                    ),
                ],
            )
        }
        "ComponentStatus" => {
            let healthy = o
                .pointer("/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Healthy");
            let status = match healthy {
                Some(c) if c["status"] == "True" => "Healthy",
                Some(_) => "Unhealthy",
                None => "Unknown",
            };
            let field = |k: &str| {
                healthy
                    .and_then(|c| c[k].as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            (
                vec![
                    col("Status", "string"),
                    col("Message", "string"),
                    col("Error", "string"),
                ],
                vec![
                    json!(status),
                    json!(field("message")),
                    json!(field("error")),
                ],
            )
        }
        "APIService" => {
            let available = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Available");
            let cell = match available {
                Some(c) if c["status"] == "True" => "True".to_string(),
                Some(c) => format!(
                    "{} ({})",
                    c["status"].as_str().unwrap_or("Unknown"),
                    c["reason"].as_str().unwrap_or_default()
                ),
                None => "Unknown".into(),
            };
            let service = match o.pointer("/spec/service") {
                Some(svc) if svc.is_object() => format!(
                    "{}/{}",
                    svc["namespace"].as_str().unwrap_or_default(),
                    svc["name"].as_str().unwrap_or_default()
                ),
                _ => "Local".into(),
            };
            (
                vec![col("Service", "string"), col("Available", "string")],
                vec![json!(service), json!(cell)],
            )
        }
        "FlowSchema" => (
            vec![
                col("PriorityLevel", "string"),
                col("MatchingPrecedence", "string"),
                col("DistinguisherMethod", "string"),
                col("Age", "string"),
                col("MissingPL", "string"),
            ],
            vec![
                json!(s(o, "/spec/priorityLevelConfiguration/name")),
                json!(int(o, "/spec/matchingPrecedence").to_string()),
                json!(or_none(s(o, "/spec/distinguisherMethod/type"))),
                json!(age(o)),
                json!(
                    o.pointer("/status/conditions")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .find(|c| c["type"] == "Dangling")
                        .and_then(|c| c["status"].as_str())
                        .unwrap_or("?")
                ),
            ],
        ),
        "PriorityLevelConfiguration" => {
            let limited = o.pointer("/spec/limited");
            let shares = o
                .pointer("/spec/limited/nominalConcurrencyShares")
                .or_else(|| o.pointer("/spec/exempt/nominalConcurrencyShares"))
                .and_then(Value::as_i64)
                .map_or("<none>".to_string(), |n| n.to_string());
            let queuing = limited.and_then(|l| l.pointer("/limitResponse/queuing"));
            let q = |k: &str| {
                queuing
                    .and_then(|q| q.get(k))
                    .and_then(Value::as_i64)
                    .map_or("<none>".to_string(), |n| n.to_string())
            };
            (
                vec![
                    col("Type", "string"),
                    col("NominalConcurrencyShares", "string"),
                    col("Queues", "string"),
                    col("HandSize", "string"),
                    col("QueueLengthLimit", "string"),
                    col("Age", "string"),
                ],
                vec![
                    json!(s(o, "/spec/type")),
                    json!(shares),
                    json!(q("queues")),
                    json!(q("handSize")),
                    json!(q("queueLengthLimit")),
                    json!(age(o)),
                ],
            )
        }
        "RuntimeClass" => (
            vec![col("Handler", "string")],
            vec![json!(s(o, "/handler"))],
        ),
        "IngressClass" => {
            let params = match s(o, "/spec/parameters/name") {
                n if n.is_empty() => "<none>".to_string(),
                n => format!("{}/{n}", s(o, "/spec/parameters/kind")),
            };
            (
                vec![col("Controller", "string"), col("Parameters", "string")],
                vec![json!(s(o, "/spec/controller")), json!(params)],
            )
        }
        "CertificateSigningRequest" => {
            let mut conditions: Vec<&str> = Vec::new();
            for c in o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(t) = c["type"].as_str() {
                    conditions.push(t);
                }
            }
            let condition = if conditions.is_empty() {
                "Pending".to_string()
            } else {
                conditions.join(",")
            };
            let duration = o
                .pointer("/spec/expirationSeconds")
                .and_then(Value::as_i64)
                .map(mni_apimachinery::human_duration)
                .unwrap_or_else(|| "<none>".into());
            (
                vec![
                    col("Age", "string"),
                    col("SignerName", "string"),
                    col("Requestor", "string"),
                    col("RequestedDuration", "string"),
                    col("Condition", "string"),
                ],
                vec![
                    json!(age(o)),
                    json!(s(o, "/spec/signerName")),
                    json!(s(o, "/spec/username")),
                    json!(duration),
                    json!(condition),
                ],
            )
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => (
            vec![col("Webhooks", "integer")],
            vec![json!(len(o, "/webhooks"))],
        ),
        _ => return None,
    };
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_columns() {
        let o = json!({"spec": {"completions": 3},
            "status": {"succeeded": 1, "startTime": "2026-01-01T00:00:00Z",
                "completionTime": "2026-01-01T00:01:30Z",
                "conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(job_status(&o), "Complete");
        assert_eq!(job_completions(&o), "1/3");
        assert_eq!(job_duration(&o), "90s");
        let running = json!({"spec": {"parallelism": 2}, "status": {}});
        assert_eq!(job_status(&running), "Running");
        assert_eq!(job_completions(&running), "0/1 of 2");
        assert_eq!(job_duration(&running), "");
    }

    #[test]
    fn pvc_and_pdb_columns() {
        let pvc = json!({"spec": {"storageClassName": "standard"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                "capacity": {"storage": "1Gi"}}});
        let (cols, cells) = row("PersistentVolumeClaim", &pvc).expect("known kind");
        assert_eq!(cols.len(), cells.len());
        assert_eq!(cells[0], "Bound");
        assert_eq!(cells[3], "RWO,ROX");
        assert_eq!(cells[5], "<unset>");
        let pdb = json!({"spec": {"minAvailable": "50%"}});
        let (_, cells) = row("PodDisruptionBudget", &pdb).expect("known kind");
        assert_eq!(cells, vec![json!("50%"), json!("N/A"), json!(0)]);
    }

    #[test]
    fn hpa_targets_per_metric() {
        let o = json!({"spec": {"metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}});
        assert_eq!(hpa_targets(&o), "cpu: <unknown>/80%");
        assert_eq!(hpa_targets(&json!({})), "<none>");
    }
}
