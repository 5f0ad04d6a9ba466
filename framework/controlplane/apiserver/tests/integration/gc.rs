//! Deletion propagation and garbage collection, through kube-rs.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Service};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, PostParams, PropagationPolicy};

use crate::support;
use serde_json::{Value, json};

use support::start;

fn owned(name: &str, owner: &ConfigMap, block: bool) -> ConfigMap {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name,
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name,
            "uid": owner.metadata.uid, "blockOwnerDeletion": block}]}}),
    )
    .expect("configmap")
}

fn plain(name: &str, finalizers: Value) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "finalizers": finalizers}}))
    .expect("configmap")
}

/// Polls until `check` holds (the collector runs in the background), failing after 20 s.
async fn eventually<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for: {what}");
}

#[tokio::test]
async fn background_deletion_collects_dependents() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let parent = api
        .create(&PostParams::default(), &plain("parent", json!([])))
        .await
        .expect("parent");
    api.create(&PostParams::default(), &owned("child", &parent, false))
        .await
        .expect("child");
    let grandchild_owner = api.get("child").await.expect("child");
    api.create(
        &PostParams::default(),
        &owned("grandchild", &grandchild_owner, false),
    )
    .await
    .expect("grandchild");
    api.delete("parent", &DeleteParams::background())
        .await
        .expect("delete");
    eventually("child and grandchild collected", || async {
        api.get_opt("child").await.expect("get").is_none()
            && api.get_opt("grandchild").await.expect("get").is_none()
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let parent = api
        .create(&PostParams::default(), &plain("fg", json!([])))
        .await
        .expect("parent");
    // The dependent holds its own finalizer, so the owner must wait for it.
    let mut child = owned("fg-child", &parent, true);
    child.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &child)
        .await
        .expect("child");
    api.delete("fg", &DeleteParams::foreground())
        .await
        .expect("delete");
    let p = api.get("fg").await.expect("owner still there");
    assert!(p.metadata.deletion_timestamp.is_some());
    assert!(
        p.metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"foregroundDeletion".to_string())
    );
    eventually("dependent marked for deletion", || async {
        api.get("fg-child")
            .await
            .expect("child")
            .metadata
            .deletion_timestamp
            .is_some()
    })
    .await;
    assert!(
        api.get_opt("fg").await.expect("get").is_some(),
        "blocked by its dependent"
    );
    api.patch(
        "fg-child",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
    eventually("owner gone after its dependent", || async {
        api.get_opt("fg").await.expect("get").is_none()
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn orphaning_strips_owner_references() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let parent = api
        .create(&PostParams::default(), &plain("op", json!([])))
        .await
        .expect("parent");
    api.create(&PostParams::default(), &owned("op-child", &parent, false))
        .await
        .expect("child");
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..Default::default()
    };
    api.delete("op", &dp).await.expect("delete");
    eventually("owner gone", || async {
        api.get_opt("op").await.expect("get").is_none()
    })
    .await;
    let child = api.get("op-child").await.expect("child survives");
    assert!(
        child
            .metadata
            .owner_references
            .unwrap_or_default()
            .is_empty()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_owner_references_follow_upstream_rules() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = api
        .create(&PostParams::default(), &plain("ns-owner", json!([])))
        .await
        .expect("owner");
    // A cluster-scoped dependent naming a namespaced owner kind is unresolvable: left alone.
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let role: ClusterRole = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "dangling", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "ns-owner", "uid": owner.metadata.uid}]}}))
    .expect("role");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    // A namespaced dependent in another namespace names an owner that is not in its namespace.
    let ns: Api<Namespace> = Api::all(client.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}),
        )
        .expect("ns"),
    )
    .await
    .expect("namespace");
    let other: Api<ConfigMap> = Api::namespaced(client.clone(), "other");
    other
        .create(&PostParams::default(), &owned("stray", &owner, false))
        .await
        .expect("stray");
    eventually("cross-namespace dependent collected", || async {
        other.get_opt("stray").await.expect("get").is_none()
    })
    .await;
    assert!(
        roles.get_opt("dangling").await.expect("get").is_some(),
        "unresolvable owners are ignored"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn namespace_deletion_empties_it_and_forbids_new_content() {
    let (server, client) = start().await;
    let ns: Api<Namespace> = Api::all(client.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}),
        )
        .expect("ns"),
    )
    .await
    .expect("namespace");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    api.create(
        &PostParams::default(),
        &plain("held", json!(["example.com/hold"])),
    )
    .await
    .expect("held");
    ns.delete("doomed", &DeleteParams::default())
        .await
        .expect("delete namespace");
    let doomed = ns.get("doomed").await.expect("terminating");
    assert_eq!(
        doomed.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    match api
        .create(&PostParams::default(), &plain("late", json!([])))
        .await
    {
        Err(kube::Error::Api(s)) => assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden")),
        other => panic!("expected 403, got {other:?}"),
    }
    eventually("content marked for deletion", || async {
        api.get("held")
            .await
            .expect("held")
            .metadata
            .deletion_timestamp
            .is_some()
    })
    .await;
    api.patch(
        "held",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
    eventually("namespace removed", || async {
        ns.get_opt("doomed").await.expect("get").is_none()
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn services_get_a_cluster_ip_that_stays() {
    let (server, client) = start().await;
    let api: Api<Service> = Api::namespaced(client, "default");
    let svc: Service = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    )
    .expect("service");
    let created = api
        .create(&PostParams::default(), &svc)
        .await
        .expect("create");
    let ip = created
        .spec
        .as_ref()
        .and_then(|s| s.cluster_ip.clone())
        .expect("cluster IP");
    assert!(
        ip.starts_with("10.9") || ip.starts_with("10.10") || ip.starts_with("10.11"),
        "{ip}"
    );
    let mut again = svc.clone();
    again.metadata.resource_version = created.metadata.resource_version.clone();
    let updated = api
        .replace("web", &PostParams::default(), &again)
        .await
        .expect("replace without clusterIP");
    assert_eq!(updated.spec.and_then(|s| s.cluster_ip), Some(ip));
    server.shutdown().await;
}

#[tokio::test]
async fn deletion_preconditions_and_finalizer_rules() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let cm = api
        .create(
            &PostParams::default(),
            &plain("pre", json!(["example.com/a"])),
        )
        .await
        .expect("create");
    let wrong_uid = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("nope".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    match api.delete("pre", &wrong_uid).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 409);
            assert!(
                s.message
                    .contains("Precondition failed: UID in precondition: nope"),
                "{}",
                s.message
            );
        }
        other => panic!("expected 409, got {other:?}"),
    }
    let right = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: cm.metadata.uid.clone(),
            resource_version: cm.metadata.resource_version.clone(),
        }),
        ..Default::default()
    };
    api.delete("pre", &right)
        .await
        .expect("delete with matching preconditions");
    // Once deletion started, finalizers can be removed but not added.
    let add = kube::api::Patch::Merge(
        json!({"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}),
    );
    match api.patch("pre", &Default::default(), &add).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422);
            assert!(
                s.message
                    .contains("no new finalizers can be added if the object is being deleted"),
                "{}",
                s.message
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
    api.patch(
        "pre",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": []}})),
    )
    .await
    .expect("release");
    assert!(api.get_opt("pre").await.expect("get").is_none());
    server.shutdown().await;
}
