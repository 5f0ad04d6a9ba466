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
            let statuses = o
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array);
            let total = len(o, "/spec/containers");
            let ready = statuses
                .into_iter()
                .flatten()
                .filter(|c| c["ready"] == true)
                .count();
            let restarts: i64 = statuses
                .into_iter()
                .flatten()
                .map(|c| c["restartCount"].as_i64().unwrap_or(0))
                .sum();
            // As kubectl shows it: a waiting container's reason (CrashLoopBackOff) wins.
            let waiting = statuses
                .into_iter()
                .flatten()
                .find_map(|c| c.pointer("/state/waiting/reason").and_then(Value::as_str));
            let status = if object::meta_str(o, "deletionTimestamp").is_some() {
                "Terminating".to_string()
            } else if let Some(reason) = waiting {
                reason.to_string()
            } else {
                s(o, "/status/phase")
            };
            (
                vec![
                    col("Ready", "string"),
                    col("Status", "string"),
                    col("Restarts", "string"),
                ],
                vec![
                    json!(format!("{ready}/{total}")),
                    json!(status),
                    json!(restarts.to_string()),
                ],
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
fn places_age(cols: &[Column]) -> bool {
    cols.iter().any(|c| c.name == "Age")
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
        let mut cells = vec![json!(object::name(o))];
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
            has_age = places_age(&cols);
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
        if custom_cols.is_empty() && !places_age(&cols) {
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
