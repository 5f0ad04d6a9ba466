//! The admission plugins that read the namespace, as kube-apiserver runs them: LimitRanger
//! (defaults, then min/max), DefaultStorageClass, and ResourceQuota with its usage kept in
//! `status.used` — refusals with upstream's 403 messages, nothing stored, and concurrent
//! creates never exceeding a quota.

use k8s_openapi::api::core::v1::{
    ConfigMap, LimitRange, PersistentVolumeClaim, Pod, ResourceQuota,
};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::support;
use support::start;

async fn namespace(client: &Client, name: &str) {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": name}})).expect("ns"),
    )
    .await
    .expect("namespace");
}

fn pod(name: &str, resources: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "resources": resources}]},
    }))
    .expect("pod")
}

async fn quota(client: &Client, ns: &str, name: &str, spec: Value) -> Api<ResourceQuota> {
    let api: Api<ResourceQuota> = Api::namespaced(client.clone(), ns);
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("quota"),
    )
    .await
    .expect("create quota");
    api
}

/// The status of a refused write, after checking it is a 403.
fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 403, "{s:?}");
            assert_eq!(s.reason, "Forbidden", "{s:?}");
            s.message
        }
        other => panic!("expected a 403, got {other:?}"),
    }
}

fn used(q: &ResourceQuota, name: &str) -> String {
    q.status
        .as_ref()
        .and_then(|s| s.used.as_ref())
        .and_then(|u| u.get(name))
        .map(|q| q.0.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_pod_quota_refuses_the_pod_too_many_and_tracks_usage() {
    let (_server, client) = start().await;
    namespace(&client, "team").await;
    let quotas = quota(
        &client,
        "team",
        "pods-quota",
        json!({"hard": {"pods": "2"}}),
    )
    .await;
    let q = quotas.get("pods-quota").await.expect("quota");
    assert_eq!(used(&q, "pods"), "0", "status computed at once: {q:?}");
    assert_eq!(
        q.status
            .as_ref()
            .and_then(|s| s.hard.as_ref())
            .map(|h| h["pods"].0.clone()),
        Some("2".into())
    );

    let pods: Api<Pod> = Api::namespaced(client.clone(), "team");
    for name in ["a", "b"] {
        pods.create(&PostParams::default(), &pod(name, json!({})))
            .await
            .expect("within quota");
    }
    let message = forbidden(
        pods.create(&PostParams::default(), &pod("c", json!({})))
            .await,
    );
    assert_eq!(
        message,
        "pods \"c\" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=2, limited: pods=2"
    );
    assert!(
        pods.get_opt("c").await.expect("get").is_none(),
        "nothing stored"
    );
    assert_eq!(
        used(&quotas.get("pods-quota").await.expect("quota"), "pods"),
        "2"
    );

    // A finished pod stops counting; a deleted one too.
    pods.patch_status(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Succeeded"}})),
    )
    .await
    .expect("finish a");
    assert_eq!(
        used(&quotas.get("pods-quota").await.expect("quota"), "pods"),
        "1"
    );
    pods.create(&PostParams::default(), &pod("c", json!({})))
        .await
        .expect("room again");
    pods.delete("b", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        used(&quotas.get("pods-quota").await.expect("quota"), "pods"),
        "1"
    );

    // Dry runs are checked but not counted.
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    pods.create(&dry, &pod("d", json!({})))
        .await
        .expect("dry run fits");
    assert_eq!(
        used(&quotas.get("pods-quota").await.expect("quota"), "pods"),
        "1"
    );
    pods.create(&PostParams::default(), &pod("e", json!({})))
        .await
        .expect("the last room");
    let message = forbidden(pods.create(&dry, &pod("f", json!({}))).await);
    assert!(message.contains("exceeded quota: pods-quota"), "{message}");
}

#[tokio::test]
async fn compute_quotas_need_stated_requests_and_limit_ranges_supply_them() {
    let (_server, client) = start().await;
    namespace(&client, "compute").await;
    let quotas = quota(
        &client,
        "compute",
        "compute",
        json!({"hard": {"requests.cpu": "1", "limits.memory": "1Gi"}}),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "compute");
    let message = forbidden(
        pods.create(&PostParams::default(), &pod("bare", json!({})))
            .await,
    );
    assert_eq!(
        message,
        "pods \"bare\" is forbidden: failed quota: compute: must specify limits.memory for: app; requests.cpu for: app"
    );

    let ranges: Api<LimitRange> = Api::namespaced(client.clone(), "compute");
    let range = ranges
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "defaults"},
                "spec": {"limits": [{"type": "Container",
                    "default": {"memory": "256Mi"},
                    "defaultRequest": {"cpu": "400m"},
                    "max": {"cpu": "2"}}]},
            }))
            .expect("limit range"),
        )
        .await
        .expect("create limit range");
    // The LimitRange's own defaults: the default limit falls back to max, the request to it.
    let item = &range.spec.expect("spec").limits[0];
    assert_eq!(item.default.as_ref().expect("default")["cpu"].0, "2");
    assert_eq!(
        item.default_request.as_ref().expect("request")["memory"].0,
        "256Mi"
    );

    let created = pods
        .create(&PostParams::default(), &pod("web", json!({})))
        .await
        .expect("defaults make it fit");
    let resources = created.spec.expect("spec").containers[0]
        .resources
        .clone()
        .expect("resources");
    assert_eq!(resources.requests.expect("requests")["cpu"].0, "400m");
    assert_eq!(resources.limits.expect("limits")["memory"].0, "256Mi");
    assert_eq!(
        created.metadata.annotations.expect("annotations")["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
    );
    let q = quotas.get("compute").await.expect("quota");
    assert_eq!(used(&q, "requests.cpu"), "400m");
    assert_eq!(used(&q, "limits.memory"), "256Mi");

    pods.create(&PostParams::default(), &pod("web2", json!({})))
        .await
        .expect("800m of 1");
    let message = forbidden(
        pods.create(&PostParams::default(), &pod("web3", json!({})))
            .await,
    );
    assert!(
        message.contains(
            "exceeded quota: compute, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1"
        ),
        "{message}"
    );

    let message = forbidden(
        pods.create(
            &PostParams::default(),
            &pod(
                "big",
                json!({"limits": {"cpu": "3", "memory": "64Mi"}, "requests": {"cpu": "100m"}}),
            ),
        )
        .await,
    );
    assert_eq!(
        message,
        "pods \"big\" is forbidden: maximum cpu usage per Container is 2, but limit is 3"
    );
}

#[tokio::test]
async fn concurrent_creates_never_exceed_a_quota() {
    let (_server, client) = start().await;
    namespace(&client, "race").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "race");
    // The namespace's CA bundle (kube-root-ca.crt) arrives just after the namespace and counts
    // against the quota too: wait for it, then leave room for exactly five more.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while maps
        .get_opt("kube-root-ca.crt")
        .await
        .expect("get")
        .is_none()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no CA bundle in the new namespace"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = maps
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .len();
    let limit = before + 5;
    quota(
        &client,
        "race",
        "maps",
        json!({"hard": {"count/configmaps": limit.to_string()}}),
    )
    .await;
    let creates = (0..24).map(|i| {
        let maps = maps.clone();
        async move {
            let cm: ConfigMap =
                serde_json::from_value(json!({"metadata": {"name": format!("cm-{i}")}}))
                    .expect("cm");
            maps.create(&PostParams::default(), &cm).await
        }
    });
    let results = futures::future::join_all(creates).await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    for r in results.into_iter().filter(Result::is_err) {
        let message = forbidden(r);
        assert!(message.contains("exceeded quota: maps"), "{message}");
    }
    assert_eq!(ok, 5, "exactly the quota's room");
    let stored = maps
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .len();
    assert_eq!(stored, limit);
}

#[tokio::test]
async fn claims_get_the_default_class_and_are_held_to_their_range_and_quota() {
    let (_server, client) = start().await;
    namespace(&client, "data").await;
    let classes: Api<StorageClass> = Api::all(client.clone());
    classes
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                "provisioner": "example.com/fast",
            }))
            .expect("class"),
        )
        .await
        .expect("class");
    let ranges: Api<LimitRange> = Api::namespaced(client.clone(), "data");
    ranges
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "storage"},
                "spec": {"limits": [{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]},
            }))
            .expect("range"),
        )
        .await
        .expect("range");
    let quotas = quota(
        &client,
        "data",
        "storage",
        json!({"hard": {"requests.storage": "12Gi", "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "5"}}),
    )
    .await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "data");
    let claim = |name: &str, size: &str| -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
        }))
        .expect("claim")
    };
    let created = claims
        .create(&PostParams::default(), &claim("db", "8Gi"))
        .await
        .expect("claim fits");
    assert_eq!(
        created.spec.expect("spec").storage_class_name.as_deref(),
        Some("fast"),
        "DefaultStorageClass"
    );
    let q = quotas.get("storage").await.expect("quota");
    assert_eq!(used(&q, "requests.storage"), "8Gi");
    assert_eq!(
        used(
            &q,
            "fast.storageclass.storage.k8s.io/persistentvolumeclaims"
        ),
        "1"
    );

    let message = forbidden(
        claims
            .create(&PostParams::default(), &claim("tiny", "500Mi"))
            .await,
    );
    assert_eq!(
        message,
        "persistentvolumeclaims \"tiny\" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"
    );
    let message = forbidden(
        claims
            .create(&PostParams::default(), &claim("more", "5Gi"))
            .await,
    );
    assert_eq!(
        message,
        "persistentvolumeclaims \"more\" is forbidden: exceeded quota: storage, requested: requests.storage=5Gi, used: requests.storage=8Gi, limited: requests.storage=12Gi"
    );
    assert!(claims.get_opt("more").await.expect("get").is_none());
}
