//! `meta.k8s.io/v1` `Table` responses, which `kubectl get` asks for.
//!
//! Built-in kinds get the columns kube-apiserver's printers show for them (Deployment's
//! READY/UP-TO-DATE/AVAILABLE, Pod's READY/STATUS/RESTARTS, …); custom resources get NAME,
//! their `additionalPrinterColumns` (evaluated as JSONPath), and AGE when they declare none.
//! The storage, batch, autoscaling, policy and admission kinds' columns are in `kinds`.

mod kinds;

use serde_json::{Value, json};

use crate::object;
use crate::registry::ResourceInfo;
use crate::request::Query;

struct Column {
    name: &'static str,
    type_: &'static str,
    priority: i64,
}

const fn col(name: &'static str, type_: &'static str) -> Column {
    Column {
        name,
        type_,
        priority: 0,
    }
}

fn age(obj: &Value) -> String {
    let Some(ts) = object::meta_str(obj, "creationTimestamp") else {
        return "<unknown>".into();
    };
    let Ok(t) = ts.parse::<jiff::Timestamp>() else {
        return "<invalid>".into();
    };
    let secs = jiff::Timestamp::now().as_second() - t.as_second();
    mni_apimachinery::human_duration(secs.max(0))
}

fn int(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn s(obj: &Value, ptr: &str) -> String {
    obj.pointer(ptr)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn len(obj: &Value, ptr: &str) -> usize {
    match obj.pointer(ptr) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    }
}

/// A terminated container's reason as kubectl shows it: its reason, else its signal or exit
/// code.
fn terminated_reason(t: &Value, prefix: &str) -> String {
    match t
        .get("reason")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
    {
        Some(r) => format!("{prefix}{r}"),
        None => match t.get("signal").and_then(Value::as_i64).filter(|s| *s != 0) {
            Some(sig) => format!("{prefix}Signal:{sig}"),
            None => format!("{prefix}ExitCode:{}", int(t, "/exitCode")),
        },
    }
}

/// The READY, STATUS and RESTARTS cells of a pod, as kube-apiserver's `printPod` computes
/// them: the phase (or the pod's reason), then the first unfinished init container
/// (`Init:1/2`, `Init:CrashLoopBackOff`), else the last container that is waiting or
/// terminated (`CrashLoopBackOff`, `Completed`, `Error`, `ExitCode:2`), `Running`/`NotReady`
/// for a pod with completed and running containers, `Terminating` while it is deleted;
/// restarts with how long ago the last one was.
fn pod_cells(o: &Value) -> (String, String, String) {
    let empty = Vec::new();
    let statuses = o
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let init_statuses = o
        .pointer("/status/initContainerStatuses")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let total = len(o, "/spec/containers");
    let phase = s(o, "/status/phase");
    let mut reason = match s(o, "/status/reason") {
        r if r.is_empty() => phase.clone(),
        r => r,
    };
    let mut restarts = 0i64;
    let mut last_restart: Option<String> = None;
    let mut note_restart = |c: &Value, restarts: &mut i64| {
        *restarts += int(c, "/restartCount");
        if let Some(f) = c
            .pointer("/lastState/terminated/finishedAt")
            .and_then(Value::as_str)
            && last_restart.as_deref().is_none_or(|l| f > l)
        {
            last_restart = Some(f.to_string());
        }
    };
    let mut initializing = false;
    let init_count = len(o, "/spec/initContainers");
    for (i, c) in init_statuses.iter().enumerate() {
        note_restart(c, &mut restarts);
        let terminated = c.pointer("/state/terminated");
        let waiting = c
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty() && *r != "PodInitializing");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if c["started"] == true
            && o.pointer(&format!("/spec/initContainers/{i}/restartPolicy"))
                .and_then(Value::as_str)
                == Some("Always")
        {
            continue;
        }
        initializing = true;
        reason = match (terminated, waiting) {
            (Some(t), _) => terminated_reason(t, "Init:"),
            (None, Some(w)) => format!("Init:{w}"),
            (None, None) => format!("Init:{i}/{init_count}"),
        };
        break;
    }
    let initialized = o
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Initialized" && c["status"] == "True")
        });
    let mut ready = 0;
    if !initializing || initialized {
        restarts = 0;
        let mut running = false;
        for c in statuses.iter().rev() {
            note_restart(c, &mut restarts);
            let waiting = c
                .pointer("/state/waiting/reason")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty());
            if let Some(w) = waiting {
                reason = w.to_string();
            } else if let Some(t) = c.pointer("/state/terminated") {
                reason = terminated_reason(t, "");
            } else if c["ready"] == true && c.pointer("/state/running").is_some() {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            let pod_ready = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                });
            reason = if pod_ready { "Running" } else { "NotReady" }.into();
        }
    }
    if object::meta_str(o, "deletionTimestamp").is_some()
        && !matches!(phase.as_str(), "Succeeded" | "Failed")
    {
        reason = "Terminating".into();
    }
    let restarts = match last_restart.and_then(|t| t.parse::<jiff::Timestamp>().ok()) {
        Some(t) if restarts != 0 => {
            let secs = jiff::Timestamp::now().as_second() - t.as_second();
            format!(
                "{restarts} ({} ago)",
                mni_apimachinery::human_duration(secs.max(0))
            )
        }
        _ => restarts.to_string(),
    };
    (format!("{ready}/{total}"), reason, restarts)
}

/// Columns and cells of a built-in kind (after the NAME column, before AGE).
fn builtin_row(kind: &str, o: &Value) -> (Vec<Column>, Vec<Value>) {
    match kind {
        "Namespace" => (
            vec![col("Status", "string")],
            vec![json!(s(o, "/status/phase"))],
        ),
        "ConfigMap" => (
            vec![col("Data", "integer")],
            vec![json!(len(o, "/data") + len(o, "/binaryData"))],
        ),
        "Secret" => (
            vec![col("Type", "string"), col("Data", "integer")],
            vec![json!(s(o, "/type")), json!(len(o, "/data"))],
        ),
        "ServiceAccount" => (
            vec![col("Secrets", "integer")],
            vec![json!(len(o, "/secrets"))],
        ),
        "Service" => {
            let ports: Vec<String> = o
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
                .collect();
            let ext = o
                .pointer("/status/loadBalancer/ingress/0/ip")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            (
                vec![
                    col("Type", "string"),
                    col("Cluster-IP", "string"),
                    col("External-IP", "string"),
                    col("Port(s)", "string"),
                ],
                vec![
                    json!(s(o, "/spec/type")),
                    json!(
                        o.pointer("/spec/clusterIP")
                            .and_then(Value::as_str)
                            .unwrap_or("<none>")
                    ),
                    json!(ext),
                    json!(if ports.is_empty() {
                        "<none>".into()
                    } else {
                        ports.join(",")
                    }),
                ],
            )
        }
        "Pod" => {
            let (ready, status, restarts) = pod_cells(o);
            (
                vec![
                    col("Ready", "string"),
                    col("Status", "string"),
                    col("Restarts", "string"),
                ],
                vec![json!(ready), json!(status), json!(restarts)],
            )
        }
        "Deployment" => (
            vec![
                col("Ready", "string"),
                col("Up-to-date", "integer"),
                col("Available", "integer"),
            ],
            vec![
                json!(format!(
                    "{}/{}",
                    int(o, "/status/readyReplicas"),
                    int(o, "/spec/replicas")
                )),
                json!(int(o, "/status/updatedReplicas")),
                json!(int(o, "/status/availableReplicas")),
            ],
        ),
        "ReplicaSet" => (
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
        "StatefulSet" => (
            vec![col("Ready", "string")],
            vec![json!(format!(
                "{}/{}",
                int(o, "/status/readyReplicas"),
                int(o, "/spec/replicas")
            ))],
        ),
        "DaemonSet" => (
            vec![
                col("Desired", "integer"),
                col("Current", "integer"),
                col("Ready", "integer"),
                col("Up-to-date", "integer"),
                col("Available", "integer"),
            ],
            vec![
                json!(int(o, "/status/desiredNumberScheduled")),
                json!(int(o, "/status/currentNumberScheduled")),
                json!(int(o, "/status/numberReady")),
                json!(int(o, "/status/updatedNumberScheduled")),
                json!(int(o, "/status/numberAvailable")),
            ],
        ),
        "Endpoints" => {
            let mut eps = Vec::new();
            for subset in o
                .pointer("/subsets")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let ports: Vec<i64> = subset["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["port"].as_i64())
                    .collect();
                for a in subset["addresses"].as_array().into_iter().flatten() {
                    let ip = a["ip"].as_str().unwrap_or_default();
                    if ports.is_empty() {
                        eps.push(ip.to_string());
                    }
                    eps.extend(ports.iter().map(|p| format!("{ip}:{p}")));
                }
            }
            let shown = match eps.len() {
                0 => "<none>".to_string(),
                n if n > 3 => format!("{} + {} more...", eps[..3].join(","), n - 3),
                _ => eps.join(","),
            };
            (vec![col("Endpoints", "string")], vec![json!(shown)])
        }
        "Lease" => (
            vec![col("Holder", "string")],
            vec![json!(s(o, "/spec/holderIdentity"))],
        ),
        "Event" => (
            vec![
                col("Type", "string"),
                col("Reason", "string"),
                col("Object", "string"),
                col("Message", "string"),
            ],
            vec![
                json!(s(o, "/type")),
                json!(s(o, "/reason")),
                json!(format!(
                    "{}/{}",
                    s(o, "/involvedObject/kind").to_lowercase(),
                    s(o, "/involvedObject/name")
                )),
                json!(s(o, "/message")),
            ],
        ),
        _ => kinds::row(kind, o).unwrap_or_default(),
    }
}

/// True if a built-in kind's columns place AGE themselves.
/// Whether the kind's columns place AGE themselves (or, as ComponentStatus, have none).
fn places_age(kind: &str, cols: &[Column]) -> bool {
    kind == "ComponentStatus" || cols.iter().any(|c| c.name == "Age")
}

/// The NAME cell: a default StorageClass is marked `(default)`, as upstream's printer does.
fn name_cell(kind: &str, o: &Value) -> String {
    let name = object::name(o);
    let default = |key: &str| {
        o.pointer(&format!("/metadata/annotations/{}", key.replace('/', "~1")))
            .and_then(Value::as_str)
            == Some("true")
    };
    if kind == "StorageClass"
        && (default("storageclass.kubernetes.io/is-default-class")
            || default("storageclass.beta.kubernetes.io/is-default-class"))
    {
        format!("{name} (default)")
    } else {
        name.to_string()
    }
}

/// Builds a `Table` of `items` (served form).
pub(crate) fn table(info: &ResourceInfo, items: &[Value], metadata: Value, q: &Query) -> Value {
    let include = q.get("includeObject").unwrap_or("Metadata");
    let mut defs = vec![json!({"name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace.", "priority": 0})];
    let mut rows = Vec::new();
    let custom = info.custom();
    let custom_cols = custom.map(|c| c.columns.clone()).unwrap_or_default();
    let kind = if info.group == "events.k8s.io" {
        ""
    } else {
        info.kind.as_str()
    };
    for (i, o) in items.iter().enumerate() {
        let mut cells = vec![json!(name_cell(kind, o))];
        let mut extra_defs = Vec::new();
        let mut has_age = custom.is_some_and(|_| !custom_cols.is_empty());
        if custom.is_some() {
            for c in &custom_cols {
                let value = mni_apimachinery::JsonPath::parse(&c.json_path)
                    .ok()
                    .and_then(|p| p.first(o).cloned());
                cells.push(mni_apimachinery::format_cell(
                    &c.type_,
                    value.as_ref(),
                    jiff::Timestamp::now().as_second(),
                ));
                extra_defs.push(json!({"name": c.name, "type": c.type_, "format": c.format,
                    "description": c.description, "priority": c.priority}));
            }
        } else {
            let (cols, values) = builtin_row(kind, o);
            has_age = places_age(kind, &cols);
            cells.extend(values);
            extra_defs = cols
                .iter()
                .map(|c| json!({"name": c.name, "type": c.type_, "format": "", "description": "", "priority": c.priority}))
                .collect();
        }
        if !has_age {
            cells.push(json!(age(o)));
            extra_defs.push(json!({"name": "Age", "type": "string", "format": "",
                "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}));
        }
        if i == 0 {
            defs.extend(extra_defs);
        }
        let object = match include {
            "None" => Value::Null,
            "Object" => o.clone(),
            _ => object::partial_metadata(o),
        };
        rows.push(json!({"cells": cells, "object": object}));
    }
    if items.is_empty() {
        let (cols, _) = if custom.is_some() {
            (Vec::new(), Vec::new())
        } else {
            builtin_row(&info.kind, &Value::Null)
        };
        defs.extend(cols.iter().map(|c| json!({"name": c.name, "type": c.type_, "format": "", "description": "", "priority": c.priority})));
        for c in &custom_cols {
            defs.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority}));
        }
        if custom_cols.is_empty() && !places_age(&info.kind, &cols) {
            defs.push(json!({"name": "Age", "type": "string", "format": "", "description": "", "priority": 0}));
        }
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": defs,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn pods_show_kubectls_status() {
        let completed = json!({
            "metadata": {"name": "pi"},
            "spec": {"containers": [{"name": "pi"}]},
            "status": {"phase": "Succeeded", "containerStatuses": [{"name": "pi", "ready": false,
                "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
        });
        let (ready, status, restarts) = super::pod_cells(&completed);
        assert_eq!(
            (ready.as_str(), status.as_str(), restarts.as_str()),
            ("0/1", "Completed", "0")
        );
        let init = json!({
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "c"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "a", "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                {"name": "b", "restartCount": 0, "state": {"running": {}}}]},
        });
        assert_eq!(super::pod_cells(&init).1, "Init:1/2");
        let crashing = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "c", "ready": false,
                "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2020-01-01T00:00:00Z"}}}]},
        });
        let (_, status, restarts) = super::pod_cells(&crashing);
        assert_eq!(status, "CrashLoopBackOff");
        assert!(
            restarts.starts_with("3 (") && restarts.ends_with(" ago)"),
            "{restarts}"
        );
        let exited = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Failed", "containerStatuses": [{"name": "c", "restartCount": 0,
                "state": {"terminated": {"exitCode": 2}}}]},
        });
        assert_eq!(super::pod_cells(&exited).1, "ExitCode:2");
    }
}
