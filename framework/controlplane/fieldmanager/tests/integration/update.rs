//! Update bookkeeping (create, PUT, non-apply PATCH) and managedFields as kube writes them.

use mni_fieldmanager::{
    FieldSet, ManagedFieldsEntry, Operation, TypeInfo, apply, builtin, managed_fields_for_update,
    try_update, update,
};
use serde_json::{Value, json};

use crate::common;
use common::{T0, T1, T2, deployment_types};

fn entry<'a>(entries: &'a [ManagedFieldsEntry], manager: &str) -> Option<&'a ManagedFieldsEntry> {
    entries.iter().find(|e| e.manager == manager)
}

fn fields(entries: &[ManagedFieldsEntry], manager: &str) -> Value {
    entry(entries, manager)
        .map(|e| e.fields_v1.to_fields_v1())
        .unwrap_or(Value::Null)
}

fn check_round_trip(raw: Value) {
    let decoded: Result<Vec<ManagedFieldsEntry>, _> = serde_json::from_value(raw.clone());
    assert!(decoded.is_ok(), "{decoded:?}");
    let encoded = decoded.ok().and_then(|d| serde_json::to_string(&d).ok());
    assert_eq!(encoded, serde_json::to_string(&raw).ok());
}

#[test]
fn real_managed_fields_round_trip() {
    // As kube-apiserver writes them for `kubectl apply` (client side) of a Deployment and the
    // deployment controller's status updates.
    check_round_trip(json!([
        {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
         "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}},
                "f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {},
                "f:selector": {}, "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {},
                    "f:maxUnavailable": {}}, "f:type": {}},
                "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {},
                        "f:imagePullPolicy": {}, "f:name": {},
                        "f:ports": {".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                            ".": {}, "f:containerPort": {}, "f:protocol": {}}},
                        "f:resources": {}, "f:terminationMessagePath": {},
                        "f:terminationMessagePolicy": {}}},
                    "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                    "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
         "time": "2024-05-01T10:00:05Z", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
            "f:status": {"f:availableReplicas": {}, "f:conditions": {".": {},
                "k:{\"type\":\"Available\"}": {".": {}, "f:lastTransitionTime": {},
                    "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}}},
                "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {},
                "f:updatedReplicas": {}}},
         "subresource": "status"},
        {"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
         "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:data": {"f:key": {}},
            "f:metadata": {"f:finalizers": {"v:\"example.com/cleanup\"": {}},
                "f:ownerReferences": {"k:{\"uid\":\"0c7d6d7a-1b0e-4a4e-9d8e-2f1d5b6c7a8b\"}": {}}}}}
    ]));
}

#[test]
fn create_records_the_whole_object_like_kubectl_create() {
    let types = deployment_types();
    let new = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}}}});
    let entries = update(
        None,
        &new,
        "kubectl-create",
        &[],
        &types,
        T0,
        "apps/v1",
        None,
    );
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].operation, Operation::Update);
    assert_eq!(entries[0].time.as_deref(), Some(T0));
    // Non-pointer structs (spec, strategy, template) exist in the zero object: no "." marker.
    assert_eq!(
        fields(&entries, "kubectl-create"),
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:replicas": {}, "f:selector": {},
                "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}, "f:type": {}},
                "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {},
                        "f:image": {}, "f:name": {}, "f:resources": {}}}}}}})
    );
}

#[test]
fn create_of_a_custom_resource_marks_new_structs() {
    let entries = update(
        None,
        &json!({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
            "spec": {"a": {"b": 1}}}),
        "kubectl-create",
        &[],
        &TypeInfo::deduced(),
        T0,
        "example.com/v1",
        None,
    );
    assert_eq!(
        fields(&entries, "kubectl-create"),
        json!({"f:spec": {".": {}, "f:a": {".": {}, "f:b": {}}}})
    );
}

#[test]
fn update_after_apply_takes_the_changed_field() {
    let types = deployment_types();
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "paused": false}});
    let applied = apply(
        None,
        &config,
        "kubectl",
        &[],
        false,
        &types,
        T0,
        "apps/v1",
        None,
    );
    assert!(applied.is_ok());
    let Ok(applied) = applied else { return };
    let mut edited = applied.object.clone();
    edited["spec"]["replicas"] = json!(3);
    let managed = managed_fields_for_update(Some(&applied.object), &edited, None);
    assert_eq!(managed, applied.managed);
    let entries = update(
        Some(&applied.object),
        &edited,
        "kubectl-edit",
        &managed,
        &types,
        T1,
        "apps/v1",
        None,
    );
    assert_eq!(
        fields(&entries, "kubectl"),
        json!({"f:spec": {"f:paused": {}}})
    );
    assert_eq!(
        fields(&entries, "kubectl-edit"),
        json!({"f:spec": {"f:replicas": {}}})
    );
    // Apply entries sort before Update entries.
    assert_eq!(entries[0].operation, Operation::Apply);
    // The applier now conflicts with the editor.
    let mut live = edited.clone();
    mni_fieldmanager::set_managed_fields(&mut live, &entries);
    let r = apply(
        Some(&live),
        &config,
        "kubectl",
        &entries,
        false,
        &types,
        T2,
        "apps/v1",
        None,
    );
    assert_eq!(
        r.err().map(|e| e.to_string()).as_deref(),
        Some(
            "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: .spec.replicas"
        )
    );
    // An update that changes nothing keeps entries and times.
    let same = update(
        Some(&live),
        &live,
        "kubectl-edit",
        &entries,
        &types,
        T2,
        "apps/v1",
        None,
    );
    assert_eq!(same, entries);
}

#[test]
fn update_time_moves_only_when_the_manager_takes_fields() {
    let types = builtin("", "ConfigMap").unwrap_or_default();
    let v1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    let e1 = update(None, &v1, "ctl", &[], &types, T0, "v1", None);
    let v2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
    let e2 = update(Some(&v1), &v2, "ctl", &e1, &types, T1, "v1", None);
    assert_eq!(entry(&e2, "ctl").and_then(|e| e.time.as_deref()), Some(T1));
    assert_eq!(
        fields(&e2, "ctl"),
        json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})
    );
    // Another manager removes b: ctl loses it, the remover gains nothing.
    let e3 = update(Some(&v2), &v1, "other", &e2, &types, T2, "v1", None);
    assert_eq!(fields(&e3, "ctl"), json!({"f:data": {".": {}, "f:a": {}}}));
    assert_eq!(entry(&e3, "ctl").and_then(|e| e.time.as_deref()), Some(T1));
    assert!(entry(&e3, "other").is_none());
}

#[test]
fn status_subresource_entries_are_separate() {
    let types = deployment_types();
    let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1}});
    let e0 = update(None, &obj, "ctl", &[], &types, T0, "apps/v1", None);
    let mut with_status = obj.clone();
    with_status["status"] =
        json!({"replicas": 1, "conditions": [{"type": "Available", "status": "True"}]});
    let e1 = update(
        Some(&obj),
        &with_status,
        "ctl",
        &e0,
        &types,
        T1,
        "apps/v1",
        Some("status"),
    );
    assert_eq!(e1.len(), 2);
    let status_entry = e1
        .iter()
        .find(|e| e.subresource.as_deref() == Some("status"));
    assert_eq!(
        status_entry.map(|e| e.fields_v1.to_fields_v1()),
        Some(
            json!({"f:status": {"f:conditions": {".": {}, "k:{\"type\":\"Available\"}": {
            ".": {}, "f:status": {}, "f:type": {}}}, "f:replicas": {}}})
        )
    );
    let main = e1.iter().find(|e| e.subresource.is_none());
    assert_eq!(
        main.map(|e| e.fields_v1.to_fields_v1()),
        Some(json!({"f:spec": {"f:replicas": {}}}))
    );
    // Through the main resource, status is reset by the strategy and never owned.
    let applied = apply(
        None,
        &with_status,
        "kubectl",
        &[],
        false,
        &types,
        T2,
        "apps/v1",
        None,
    );
    assert_eq!(
        applied.map(|a| a.managed[0].fields_v1.to_fields_v1()),
        Ok(json!({"f:spec": {"f:replicas": {}}}))
    );
    // Applying through status owns status only, under its own entry.
    let applied = apply(
        Some(&with_status),
        &with_status,
        "ctrl",
        &e1,
        false,
        &types,
        T2,
        "apps/v1",
        Some("status"),
    );
    let Ok(applied) = applied else { return };
    let ctrl = entry(&applied.managed, "ctrl");
    assert_eq!(ctrl.and_then(|e| e.subresource.as_deref()), Some("status"));
    assert!(ctrl.is_some_and(|e| {
        !e.fields_v1
            .has(&mni_fieldmanager::field_path("spec.replicas"))
    }));
}

#[test]
fn reset_and_invalid_objects() {
    let types = deployment_types();
    let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web",
        "managedFields": [{"manager": "m", "operation": "Update", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
        "spec": {"replicas": 1}});
    let reset = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "managedFields": []}, "spec": {"replicas": 1}});
    let managed = managed_fields_for_update(Some(&live), &reset, None);
    assert!(managed.is_empty());
    assert!(
        update(
            Some(&live),
            &reset,
            "x",
            &managed,
            &types,
            T1,
            "apps/v1",
            None
        )
        .is_empty()
    );
    // A keyed list without keys cannot be tracked: kube drops managedFields.
    let bad = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    assert!(update(Some(&live), &bad, "x", &[], &types, T1, "apps/v1", None).is_empty());
    assert!(try_update(Some(&live), &bad, "x", &[], &types, T1, "apps/v1", None).is_err());
    assert!(FieldSet::from_fields_v1(&json!({"f:a": []})).is_err());
}
