//! What kube-runtime relies on: server-side apply round trips, the finalizer helper, the event
//! `Recorder` (events.k8s.io/v1 read back through core/v1), and Leases.

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, ObjectReference};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use serde_json::json;

use crate::support;
use support::start;

#[tokio::test]
async fn server_side_apply_round_trips() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let ssa = |mgr: &str| PatchParams::apply(mgr);
    let v1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "labels": {"a": "1"}}, "data": {"x": "1", "y": "2"}});
    let created = api
        .patch("applied", &ssa("op"), &Patch::Apply(&v1))
        .await
        .expect("apply creates");
    let rv = created.metadata.resource_version.clone();
    let managers: Vec<String> = created
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert_eq!(managers, vec!["op".to_string()]);
    // The same apply again changes nothing: no new resourceVersion.
    let again = api
        .patch("applied", &ssa("op"), &Patch::Apply(&v1))
        .await
        .expect("re-apply");
    assert_eq!(again.metadata.resource_version, rv);
    // Another manager setting an owned field to another value conflicts...
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"x": "9"}});
    match api
        .patch("applied", &ssa("other"), &Patch::Apply(&other))
        .await
    {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 409);
            assert!(
                s.message.contains(r#"conflict with "op""#) && s.message.contains(".data.x"),
                "{}",
                s.message
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    // ...unless forced, which moves ownership.
    api.patch("applied", &ssa("other").force(), &Patch::Apply(&other))
        .await
        .expect("force");
    // Dropping a field from the first manager's config removes it (nobody else owns it).
    let v2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "labels": {"a": "1"}}, "data": {"x": "9"}});
    let after = api
        .patch("applied", &ssa("op"), &Patch::Apply(&v2))
        .await
        .expect("apply without y");
    let data = after.data.unwrap_or_default();
    assert_eq!(data.get("x").map(String::as_str), Some("9"));
    assert!(
        !data.contains_key("y"),
        "y was dropped by its only manager: {data:?}"
    );
    // Apply without a field manager is rejected.
    match api
        .patch("applied", &PatchParams::default(), &Patch::Apply(&v2))
        .await
    {
        Err(kube::Error::Api(s)) => assert!(s.code == 400 || s.code == 422, "{s:?}"),
        Err(e) => assert!(e.to_string().contains("field_manager"), "{e}"),
        Ok(_) => panic!("apply without fieldManager accepted"),
    }
    server.shutdown().await;
}

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed")]
struct Failed;

#[tokio::test]
async fn the_kube_runtime_finalizer_helper_runs_cleanup() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let cm: ConfigMap = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fin"}}),
    )
    .expect("cm");
    api.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    const NAME: &str = "example.com/cleanup";
    let run = |obj: ConfigMap| {
        let api = api.clone();
        async move {
            finalizer(&api, NAME, Arc::new(obj), |event| async move {
                Ok::<_, Failed>(match event {
                    FinalizerEvent::Apply(_) => Action::await_change(),
                    FinalizerEvent::Cleanup(_) => Action::await_change(),
                })
            })
            .await
        }
    };
    run(api.get("fin").await.expect("get"))
        .await
        .expect("adds the finalizer");
    let with = api.get("fin").await.expect("get");
    assert_eq!(
        with.metadata.finalizers.clone().unwrap_or_default(),
        vec![NAME.to_string()]
    );
    run(with).await.expect("apply");
    api.delete("fin", &DeleteParams::default())
        .await
        .expect("delete");
    let deleting = api.get("fin").await.expect("still there while finalizing");
    assert!(deleting.metadata.deletion_timestamp.is_some());
    run(deleting).await.expect("cleanup removes the finalizer");
    assert!(
        api.get_opt("fin").await.expect("get").is_none(),
        "gone once cleaned up"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn recorder_events_are_readable_through_core_v1() {
    let (server, client) = start().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm: ConfigMap = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "evented"}}),
    )
    .expect("cm");
    let cm = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        name: cm.metadata.name.clone(),
        namespace: Some("default".into()),
        uid: cm.metadata.uid.clone(),
        ..Default::default()
    };
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "test-controller".into(),
            instance: Some("pod-1".into()),
        },
    );
    let ev = Event {
        type_: EventType::Normal,
        reason: "Reconciled".into(),
        note: Some("all good".into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    recorder.publish(&ev, &reference).await.expect("publish");
    recorder
        .publish(&ev, &reference)
        .await
        .expect("publish again (a series)");
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let found = core
        .list(
            &ListParams::default()
                .fields("involvedObject.name=evented,involvedObject.kind=ConfigMap"),
        )
        .await
        .expect("list core events");
    assert_eq!(found.items.len(), 1, "one event, counted as a series");
    let e = &found.items[0];
    assert_eq!(e.reason.as_deref(), Some("Reconciled"));
    assert_eq!(e.message.as_deref(), Some("all good"));
    assert_eq!(e.reporting_component.as_deref(), Some("test-controller"));
    assert!(
        core.list(&ListParams::default().fields("involvedObject.name=other"))
            .await
            .expect("list")
            .items
            .is_empty()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn leases_take_optimistic_concurrency() {
    let (server, client) = start().await;
    let leases: Api<Lease> = Api::namespaced(client, "default");
    let lease: Lease = serde_json::from_value(json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "leader"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:01.500000Z", "leaseTransitions": 0}}))
    .expect("lease");
    let held = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("acquire");
    assert_eq!(
        held.spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref()),
        Some("a")
    );
    let mut take = held.clone();
    take.spec.as_mut().expect("spec").holder_identity = Some("b".into());
    let taken = leases
        .replace("leader", &PostParams::default(), &take)
        .await
        .expect("b takes over");
    // A candidate working from the old version loses.
    let mut stale = held.clone();
    stale.spec.as_mut().expect("spec").holder_identity = Some("c".into());
    match leases
        .replace("leader", &PostParams::default(), &stale)
        .await
    {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 409),
        other => panic!("expected 409, got {other:?}"),
    }
    assert_eq!(
        leases
            .get("leader")
            .await
            .expect("get")
            .spec
            .and_then(|s| s.holder_identity),
        taken.spec.and_then(|s| s.holder_identity)
    );
    server.shutdown().await;
}
