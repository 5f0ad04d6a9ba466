//! Fixtures shared by the apply tests: times, type tables, objects, and a step helper.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses part of it"
)]

use mni_fieldmanager::{Applied, ApplyError, ManagedFieldsEntry, TypeInfo, apply, builtin};
use serde_json::{Value, json};

pub const T0: &str = "2024-01-01T00:00:00Z";
pub const T1: &str = "2024-01-01T00:01:00Z";
pub const T2: &str = "2024-01-01T00:02:00Z";

pub fn deployment_types() -> TypeInfo {
    builtin("apps", "Deployment").unwrap_or_default()
}

pub fn cm_types() -> TypeInfo {
    builtin("", "ConfigMap").unwrap_or_default()
}

pub fn deployment(spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
}

pub fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data})
}

/// Applies on top of a previous result (or creates), panicking never: errors come back.
pub fn step(
    prev: Option<&Applied>,
    config: &Value,
    manager: &str,
    force: bool,
    types: &TypeInfo,
    now: &str,
) -> Result<Applied, ApplyError> {
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    apply(
        prev.map(|p| &p.object),
        config,
        manager,
        prev.map(|p| p.managed.as_slice()).unwrap_or(&[]),
        force,
        types,
        now,
        api_version,
        None,
    )
}

/// [`step`] with a Deployment whose spec is only `replicas`.
pub fn replicas_step(
    prev: Option<&Applied>,
    replicas: i64,
    manager: &str,
    force: bool,
    now: &str,
) -> Result<Applied, ApplyError> {
    let config = deployment(json!({ "replicas": replicas }));
    step(prev, &config, manager, force, &deployment_types(), now)
}

pub fn ok(r: Result<Applied, ApplyError>) -> Applied {
    assert!(r.is_ok(), "unexpected error: {r:?}");
    r.unwrap_or(Applied {
        object: Value::Null,
        managed: Vec::new(),
        changed: false,
    })
}

pub fn fields_of_manager(entries: &[ManagedFieldsEntry], manager: &str) -> Value {
    entries
        .iter()
        .find(|e| e.manager == manager)
        .map(|e| e.fields_v1.to_fields_v1())
        .unwrap_or(Value::Null)
}

/// The message of an apply conflict, or what came instead.
pub fn conflict_message(r: Result<Applied, ApplyError>) -> String {
    match r {
        Err(e @ ApplyError::Conflicts(_)) => e.to_string(),
        other => format!("no conflict: {other:?}"),
    }
}
