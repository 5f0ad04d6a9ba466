//! Apply conflicts, forcing, and rejected apply configurations, with kube's messages.

use mni_fieldmanager::{Applied, ApplyError, apply};
use serde_json::{Value, json};

use crate::common;
use common::*;

#[test]
fn conflict_then_force_transfers_ownership() {
    let a = ok(replicas_step(None, 1, "a", false, T0));
    let conflict = replicas_step(Some(&a), 2, "b", false, T1);
    assert_eq!(
        conflict_message(conflict.clone()),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.replicas"
    );
    if let Err(e) = &conflict {
        assert_eq!(e.code(), 409);
        assert_eq!(
            e.to_status()["details"]["causes"],
            json!([{"reason": "FieldManagerConflict", "message": "conflict with \"a\"",
                "field": ".spec.replicas"}])
        );
        assert_eq!(e.to_status()["reason"], json!("Conflict"));
    }
    let forced = ok(replicas_step(Some(&a), 2, "b", true, T1));
    assert_eq!(forced.object["spec"]["replicas"], json!(2));
    assert_eq!(fields_of_manager(&forced.managed, "a"), Value::Null);
    assert_eq!(
        fields_of_manager(&forced.managed, "b"),
        json!({"f:spec": {"f:replicas": {}}})
    );
    // a re-applying its old value now conflicts with b.
    let back = replicas_step(Some(&forced), 1, "a", false, T2);
    assert_eq!(
        conflict_message(back),
        "Apply failed with 1 conflict: conflict with \"b\": .spec.replicas"
    );
}

#[test]
fn plural_conflict_message() {
    let types = cm_types();
    let a = ok(step(
        None,
        &cm(json!({"a": "1", "b": "1"})),
        "m",
        false,
        &types,
        T0,
    ));
    let r = step(
        Some(&a),
        &cm(json!({"a": "2", "b": "2"})),
        "n",
        false,
        &types,
        T1,
    );
    assert_eq!(
        conflict_message(r),
        "Apply failed with 2 conflicts: conflicts with \"m\":\n- .data.a\n- .data.b"
    );
}

#[test]
fn atomic_lists_are_replaced_whole() {
    let types = deployment_types();
    let with = |t: Value| deployment(json!({"template": {"spec": {"tolerations": t}}}));
    let a = ok(step(
        None,
        &with(json!([{"key": "k1"}])),
        "a",
        false,
        &types,
        T0,
    ));
    assert_eq!(
        fields_of_manager(&a.managed, "a"),
        json!({"f:spec": {"f:template": {"f:spec": {"f:tolerations": {}}}}})
    );
    let r = step(
        Some(&a),
        &with(json!([{"key": "k2"}])),
        "b",
        false,
        &types,
        T1,
    );
    assert_eq!(
        conflict_message(r),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.template.spec.tolerations"
    );
    let b = ok(step(
        Some(&a),
        &with(json!([{"key": "k2"}])),
        "b",
        true,
        &types,
        T1,
    ));
    assert_eq!(
        b.object["spec"]["template"]["spec"]["tolerations"],
        json!([{"key": "k2"}])
    );
}

#[test]
fn invalid_apply_configurations() {
    let types = deployment_types();
    let check = |config: Value, expected: &str, code: u16| {
        let r = step(None, &config, "m", false, &types, T0);
        assert_eq!(
            r.as_ref().map_err(ToString::to_string).err().as_deref(),
            Some(expected)
        );
        assert_eq!(r.err().map(|e| e.code()), Some(code));
    };
    check(
        json!({"apiVersion": "apps/v1", "metadata": {"name": "x"}}),
        "invalid object type: apps/v1, Kind=",
        400,
    );
    check(
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "x", "managedFields": []}}),
        "metadata.managedFields must be nil",
        400,
    );
    check(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
            "spec": {"template": {"spec": {"containers": [{"image": "i"}]}}}}),
        "failed to create typed patch object (apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)",
        400,
    );
    check(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
            "spec": {"template": {"spec": {"containers": [{"name": "c"}, {"name": "c"}]}}}}),
        "failed to create typed patch object (apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name=\"c\"]",
        400,
    );
    let r = apply(
        None,
        &json!([]),
        "m",
        &[],
        false,
        &types,
        T0,
        "apps/v1",
        None,
    );
    assert!(matches!(r, Err(ApplyError::NotAnObject)));
    // A version other than the endpoint's.
    let r = apply(
        None,
        &deployment(json!({})),
        "m",
        &[],
        false,
        &types,
        T0,
        "apps/v1beta1",
        None,
    );
    assert_eq!(
        r.err().map(|e| e.to_string()).as_deref(),
        Some("invalid object type: apps/v1, Kind=Deployment")
    );
}

#[test]
fn first_apply_to_an_unmanaged_object_records_before_first_apply() {
    let types = deployment_types();
    let live = deployment(json!({"replicas": 3, "paused": false}));
    let r = apply(
        Some(&live),
        &deployment(json!({"replicas": 5})),
        "kubectl",
        &[],
        false,
        &types,
        T1,
        "apps/v1",
        None,
    );
    assert_eq!(
        conflict_message(r),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apps/v1: .spec.replicas"
    );
    let same = ok(apply(
        Some(&live),
        &deployment(json!({"replicas": 3})),
        "kubectl",
        &[],
        false,
        &types,
        T1,
        "apps/v1",
        None,
    ));
    assert_eq!(
        fields_of_manager(&same.managed, "before-first-apply"),
        json!({"f:spec": {"f:paused": {}, "f:replicas": {}}})
    );
    assert_eq!(
        fields_of_manager(&same.managed, "kubectl"),
        json!({"f:spec": {"f:replicas": {}}})
    );
    // Unchanged object: the new Apply entry has no time, as kube leaves it.
    assert!(!same.changed);
    let kubectl = same.managed.iter().find(|e| e.manager == "kubectl");
    assert_eq!(kubectl.map(|e| e.time.clone()), Some(None));
}

#[test]
fn kubectl_takes_over_fields_still_matching_last_applied() {
    let types = deployment_types();
    let last = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"paused":false,"replicas":1}}"#;
    let mut live = deployment(json!({"replicas": 1, "paused": false}));
    live["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": last});
    let csa = mni_fieldmanager::update(
        None,
        &live,
        "kubectl-client-side-apply",
        &[],
        &types,
        T0,
        "apps/v1",
        None,
    );
    mni_fieldmanager::set_managed_fields(&mut live, &csa);
    let prev = Applied {
        object: live,
        managed: csa,
        changed: true,
    };
    // Same manager name "kubectl": the conflict on .spec.replicas is forced.
    let a = ok(replicas_step(Some(&prev), 2, "kubectl", false, T1));
    assert_eq!(a.object["spec"]["replicas"], json!(2));
    assert_eq!(
        a.object["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        json!(concat!(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2}}"#,
            "\n"
        ))
    );
    // Any other manager name conflicts.
    let r = replicas_step(Some(&prev), 2, "other", false, T1);
    assert_eq!(
        conflict_message(r),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
    );
}
