//! Server-side apply scenarios, checked against what kube-apiserver records.

use mni_fieldmanager::{Applied, Operation, TypeInfo, decode_managed_fields};
use serde_json::{Value, json};

use crate::common;
use common::*;

#[test]
fn apply_create_records_fields_and_time() {
    let types = deployment_types();
    let config = deployment(json!({
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25",
                "ports": [{"containerPort": 80}]}]}
        }
    }));
    let a = ok(step(None, &config, "kubectl", false, &types, T0));
    assert!(a.changed);
    assert_eq!(a.managed.len(), 1);
    let e = &a.managed[0];
    assert_eq!(
        (e.manager.as_str(), e.operation, e.api_version.as_str()),
        ("kubectl", Operation::Apply, "apps/v1")
    );
    assert_eq!(e.time.as_deref(), Some(T0));
    assert_eq!(e.subresource, None);
    assert_eq!(
        e.fields_v1.to_fields_v1(),
        json!({"f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                    ".": {}, "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:containerPort": {}}}}}}}}})
    );
    // The object carries the entries, exactly as they serialize.
    assert_eq!(decode_managed_fields(&a.object), Ok(a.managed.clone()));
    assert_eq!(a.object["spec"]["replicas"], json!(2));
}

#[test]
fn reapply_identical_is_a_no_op() {
    let types = cm_types();
    let config = cm(json!({"a": "1"}));
    let first = ok(step(None, &config, "m", false, &types, T0));
    let second = ok(step(Some(&first), &config, "m", false, &types, T1));
    assert!(!second.changed);
    assert_eq!(second.managed, first.managed);
    assert_eq!(second.object, first.object);
}

#[test]
fn dropping_a_field_removes_it() {
    let types = cm_types();
    let first = ok(step(
        None,
        &cm(json!({"a": "1", "b": "2"})),
        "m",
        false,
        &types,
        T0,
    ));
    let second = ok(step(
        Some(&first),
        &cm(json!({"a": "1"})),
        "m",
        false,
        &types,
        T1,
    ));
    assert!(second.changed);
    assert_eq!(second.object["data"], json!({"a": "1"}));
    assert_eq!(
        fields_of_manager(&second.managed, "m"),
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(second.managed[0].time.as_deref(), Some(T1));
    // Dropping everything removes the map.
    let third = ok(step(
        Some(&second),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
        "m",
        false,
        &types,
        T2,
    ));
    assert_eq!(third.object.get("data"), None);
    assert_eq!(third.object["metadata"]["name"], json!("c"));
    assert!(third.managed.is_empty());
    assert_eq!(third.object["metadata"].get("managedFields"), None);
}

#[test]
fn two_managers_co_own_the_same_value() {
    let types = cm_types();
    let a = ok(step(None, &cm(json!({"x": "1"})), "a", false, &types, T0));
    let b = ok(step(
        Some(&a),
        &cm(json!({"x": "1", "y": "2"})),
        "b",
        false,
        &types,
        T1,
    ));
    assert_eq!(
        fields_of_manager(&b.managed, "a"),
        json!({"f:data": {"f:x": {}}})
    );
    assert_eq!(
        fields_of_manager(&b.managed, "b"),
        json!({"f:data": {"f:x": {}, "f:y": {}}})
    );
    // a stops applying x: b still owns it, so it stays.
    let c = ok(step(
        Some(&b),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
        "a",
        false,
        &types,
        T2,
    ));
    assert_eq!(c.object["data"], json!({"x": "1", "y": "2"}));
    assert_eq!(fields_of_manager(&c.managed, "a"), Value::Null);
}

#[test]
fn containers_merge_by_name_between_managers() {
    let types = deployment_types();
    let with =
        |containers: Value| deployment(json!({"template": {"spec": {"containers": containers}}}));
    let a = ok(step(
        None,
        &with(json!([{"name": "a", "image": "a:1"}])),
        "ma",
        false,
        &types,
        T0,
    ));
    let b = ok(step(
        Some(&a),
        &with(json!([{"name": "b", "image": "b:1"}])),
        "mb",
        false,
        &types,
        T1,
    ));
    assert_eq!(
        b.object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}])
    );
    assert_eq!(
        fields_of_manager(&b.managed, "mb"),
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"b\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
    // ma changes its image: no conflict, b untouched.
    let c = ok(step(
        Some(&b),
        &with(json!([{"name": "a", "image": "a:2"}])),
        "ma",
        false,
        &types,
        T2,
    ));
    assert_eq!(
        c.object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a:2"}, {"name": "b", "image": "b:1"}])
    );
    // ma drops its container: only b's remains.
    let d = ok(replicas_step(Some(&c), 1, "ma", false, T2));
    assert_eq!(
        d.object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "b", "image": "b:1"}])
    );
    // mb setting a's image conflicts with nobody once a is gone, but with ma before.
    let r = step(
        Some(&c),
        &with(json!([{"name": "a", "image": "x"}])),
        "mb",
        false,
        &types,
        T2,
    );
    assert_eq!(
        conflict_message(r),
        "Apply failed with 1 conflict: conflict with \"ma\": .spec.template.spec.containers[name=\"a\"].image"
    );
}

#[test]
fn set_lists_merge_and_prune_per_value() {
    let types = cm_types();
    let with = |f: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "finalizers": f}})
    };
    let a = ok(step(None, &with(json!(["x"])), "a", false, &types, T0));
    let b = ok(step(Some(&a), &with(json!(["y"])), "b", false, &types, T1));
    assert_eq!(b.object["metadata"]["finalizers"], json!(["x", "y"]));
    assert_eq!(
        fields_of_manager(&b.managed, "b"),
        json!({"f:metadata": {"f:finalizers": {"v:\"y\"": {}}}})
    );
    let c = ok(step(
        Some(&b),
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}}),
        "a",
        false,
        &types,
        T2,
    ));
    assert_eq!(c.object["metadata"]["finalizers"], json!(["y"]));
}

#[test]
fn null_and_empty_values_are_owned() {
    let types = deployment_types();
    let a = ok(step(
        None,
        &deployment(json!({"paused": null, "strategy": {}})),
        "a",
        false,
        &types,
        T0,
    ));
    assert_eq!(
        fields_of_manager(&a.managed, "a"),
        json!({"f:spec": {"f:paused": {}, "f:strategy": {}}})
    );
}

#[test]
fn custom_resource_with_schema() {
    let types = TypeInfo::from_schema(&json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
                "items": {"type": "object", "properties": {
                    "port": {"type": "integer"},
                    "protocol": {"type": "string", "default": "TCP"},
                    "name": {"type": "string"}}}},
            "config": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"v": {"type": "string"}}}}
        }}}
    }))
    .unwrap_or_default()
    .into_builder()
    .status_subresource()
    .build();
    let cr = |spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": spec, "status": {"ready": true}})
    };
    let a = ok(step(
        None,
        &cr(json!({"ports": [{"port": 80, "name": "http"}],
        "config": {"k": {"v": "1"}}})),
        "a",
        false,
        &types,
        T0,
    ));
    assert_eq!(
        fields_of_manager(&a.managed, "a"),
        json!({"f:spec": {
            "f:config": {"f:k": {".": {}, "f:v": {}}},
            "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
    let b = ok(step(
        Some(&a),
        &cr(json!({"ports": [{"port": 80, "protocol": "UDP"}]})),
        "b",
        false,
        &types,
        T1,
    ));
    assert_eq!(
        b.object["spec"]["ports"],
        json!([{"port": 80, "name": "http"}, {"port": 80, "protocol": "UDP"}])
    );
}

#[test]
fn dropping_a_struct_removes_it_unless_someone_owns_inside() {
    let types = deployment_types();
    let with_strategy = deployment(json!({"replicas": 1,
        "strategy": {"rollingUpdate": {"maxSurge": 1}}}));
    let a = ok(step(None, &with_strategy, "a", false, &types, T0));
    let without = deployment(json!({"replicas": 1}));
    let b = ok(step(Some(&a), &without, "a", false, &types, T1));
    assert_eq!(b.object["spec"], json!({"replicas": 1}));
    // With an updater owning a sibling field, only a's leaf goes.
    let mut edited = a.object.clone();
    edited["spec"]["strategy"]["type"] = json!("RollingUpdate");
    let managed = mni_fieldmanager::update(
        Some(&a.object),
        &edited,
        "editor",
        &a.managed,
        &types,
        T1,
        "apps/v1",
        None,
    );
    mni_fieldmanager::set_managed_fields(&mut edited, &managed);
    let prev = Applied {
        object: edited,
        managed,
        changed: true,
    };
    let c = ok(step(Some(&prev), &without, "a", false, &types, T2));
    assert_eq!(
        c.object["spec"],
        json!({"replicas": 1, "strategy": {"type": "RollingUpdate"}})
    );
}
