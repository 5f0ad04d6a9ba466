//! The policy, storage, scheduling and autoscaling kinds refuse the common mistakes with
//! kube-apiserver's 422 messages (a cause per field) and store nothing; their defaults are
//! upstream's.

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{LimitRange, PersistentVolumeClaim, ResourceQuota};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::support;
use support::start;

/// The message of a refused create, after checking it is a 422 Invalid that stored nothing.
async fn refused<K>(api: &Api<K>, body: Value) -> String
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let name = body["metadata"]["name"].as_str().expect("name").to_string();
    let obj: K = serde_json::from_value(body).expect("typed body");
    let message = match api.create(&PostParams::default(), &obj).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert_eq!(s.reason, "Invalid", "{s:?}");
            s.message
        }
        other => panic!("expected a 422, got {other:?}"),
    };
    assert!(api.get_opt(&name).await.expect("get").is_none(), "stored");
    message
}

#[tokio::test]
async fn common_mistakes_are_refused_with_upstreams_messages() {
    let (_server, client) = start().await;
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    let message = refused(
        &pdbs,
        json!({"metadata": {"name": "both"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}}),
    )
    .await;
    assert!(
        message.starts_with("PodDisruptionBudget.policy \"both\" is invalid: spec: Invalid value:")
            && message.ends_with("minAvailable and maxUnavailable cannot be both set"),
        "{message}"
    );

    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        refused(
            &claims,
            json!({"metadata": {"name": "nomodes"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}})
        )
        .await,
        "PersistentVolumeClaim \"nomodes\" is invalid: spec.accessModes: Required value: at least 1 access mode is required"
    );

    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        refused(
            &quotas,
            json!({"metadata": {"name": "neg"}, "spec": {"hard": {"pods": "-1"}}})
        )
        .await,
        "ResourceQuota \"neg\" is invalid: spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0"
    );

    let ranges: Api<LimitRange> = Api::namespaced(client.clone(), "default");
    // The item's own defaults (default from max, request from default) are checked too.
    assert_eq!(
        refused(
            &ranges,
            json!({"metadata": {"name": "upside-down"}, "spec": {"limits": [
                {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}})
        )
        .await,
        "LimitRange \"upside-down\" is invalid: [spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1, \
         spec.limits[0].defaultRequest[cpu]: Invalid value: \"1\": min value 2 is greater than default request value 1, \
         spec.limits[0].default[cpu]: Invalid value: \"1\": min value 2 is greater than default value 1]"
    );

    let hpas: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        refused(
            &hpas,
            json!({"metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "minReplicas": 5, "maxReplicas": 2}})
        )
        .await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"
    );

    let priorities: Api<PriorityClass> = Api::all(client.clone());
    assert_eq!(
        refused(
            &priorities,
            json!({"metadata": {"name": "huge"}, "value": 2_000_000_000})
        )
        .await,
        "PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    );

    let classes: Api<StorageClass> = Api::all(client.clone());
    assert_eq!(
        refused(
            &classes,
            json!({"metadata": {"name": "odd"}, "provisioner": "example.com/x", "reclaimPolicy": "Recycle"})
        )
        .await,
        "StorageClass.storage.k8s.io \"odd\" is invalid: reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\""
    );
}

#[tokio::test]
async fn classes_and_claims_get_upstreams_defaults() {
    let (_server, client) = start().await;
    let classes: Api<StorageClass> = Api::all(client.clone());
    let sc = classes
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": "plain"}, "provisioner": "example.com/x"}),
            )
            .expect("class"),
        )
        .await
        .expect("create class");
    assert_eq!(sc.reclaim_policy.as_deref(), Some("Delete"));
    assert_eq!(sc.volume_binding_mode.as_deref(), Some("Immediate"));

    let priorities: Api<PriorityClass> = Api::all(client.clone());
    let pc = priorities
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "high"}, "value": 1000}))
                .expect("priority"),
        )
        .await
        .expect("create priority class");
    assert_eq!(
        pc.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );

    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let pvc = claims
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))
            .expect("claim"),
        )
        .await
        .expect("create claim");
    assert_eq!(
        pvc.spec.expect("spec").volume_mode.as_deref(),
        Some("Filesystem")
    );
    assert_eq!(pvc.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
}
