//! HorizontalPodAutoscaler in both versions kube-apiserver serves: stored once as
//! `autoscaling/v2`, served at `autoscaling/v1` through upstream's conversion (the CPU target
//! as `targetCPUUtilizationPercentage`, everything else in `autoscaling.alpha.kubernetes.io/*`
//! annotations), with each version's defaults.

use k8s_openapi::api::autoscaling::{v1, v2};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::support;
use support::start;

fn v1_hpa(name: &str, cpu: Option<i32>) -> v1::HorizontalPodAutoscaler {
    let mut spec = json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 4,
    });
    if let Some(cpu) = cpu {
        spec["targetCPUUtilizationPercentage"] = json!(cpu);
    }
    serde_json::from_value(json!({
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("v1 hpa")
}

#[tokio::test]
async fn a_v1_autoscaler_is_stored_as_v2_and_read_back_in_both() {
    let (_server, client) = start().await;
    let old: Api<v1::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    let new: Api<v2::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    let created = old
        .create(&PostParams::default(), &v1_hpa("web", Some(50)))
        .await
        .expect("create at v1");
    let spec = created.spec;
    assert_eq!(spec.min_replicas, Some(1), "v1 defaults minReplicas");
    assert_eq!(spec.target_cpu_utilization_percentage, Some(50));
    assert!(created.metadata.annotations.is_none_or(|a| a.is_empty()));

    let at_v2 = new.get("web").await.expect("read at v2");
    let metrics = at_v2.spec.metrics.expect("metrics");
    assert_eq!(metrics.len(), 1);
    let cpu = metrics[0].resource.as_ref().expect("resource metric");
    assert_eq!(cpu.name, "cpu");
    assert_eq!(cpu.target.type_, "Utilization");
    assert_eq!(cpu.target.average_utilization, Some(50));

    // Without a target, v1 stores no metric (the controller's default applies), as upstream.
    old.create(&PostParams::default(), &v1_hpa("bare", None))
        .await
        .expect("create without a target");
    let bare = new.get("bare").await.expect("read at v2");
    assert!(bare.spec.metrics.is_none_or(|m| m.is_empty()));
}

#[tokio::test]
async fn a_v1_read_modify_write_keeps_what_only_v2_can_say() {
    let (_server, client) = start().await;
    let old: Api<v1::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    let new: Api<v2::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    let body: v2::HorizontalPodAutoscaler = serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 6,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
                {"type": "Pods", "pods": {"metric": {"name": "requests_per_second"}, "target": {"type": "AverageValue", "averageValue": "100"}}},
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        },
    }))
    .expect("v2 hpa");
    let created = new
        .create(&PostParams::default(), &body)
        .await
        .expect("create at v2");
    // v2 defaults: one minimum replica, the behaviour completed with upstream's rules.
    let spec = created.spec;
    assert_eq!(spec.min_replicas, Some(1));
    let behavior = spec.behavior.expect("behavior");
    let down = behavior.scale_down.expect("scaleDown");
    assert_eq!(down.stabilization_window_seconds, Some(60));
    assert_eq!(down.select_policy.as_deref(), Some("Max"));
    let up = behavior.scale_up.expect("scaleUp defaulted");
    assert_eq!(up.stabilization_window_seconds, Some(0));
    assert_eq!(up.policies.expect("policies").len(), 2);

    let mut at_v1 = old.get("web").await.expect("read at v1");
    let v1_spec = &at_v1.spec;
    assert_eq!(v1_spec.target_cpu_utilization_percentage, Some(70));
    let annotations = at_v1.metadata.annotations.clone().expect("annotations");
    let other: Value =
        serde_json::from_str(&annotations["autoscaling.alpha.kubernetes.io/metrics"])
            .expect("metrics annotation is JSON");
    assert_eq!(
        other,
        json!([{"type": "Pods", "pods": {"metricName": "requests_per_second", "targetAverageValue": "100"}}])
    );
    assert!(annotations.contains_key("autoscaling.alpha.kubernetes.io/behavior"));

    // A v1 client changes what it knows about and writes the whole object back.
    at_v1.spec.max_replicas = 8;
    let replaced = old
        .replace("web", &PostParams::default(), &at_v1)
        .await
        .expect("replace at v1");
    assert_eq!(replaced.spec.max_replicas, 8);

    let after = new.get("web").await.expect("read at v2");
    assert_eq!(after.spec.max_replicas, 8);
    let metrics = after.spec.metrics.expect("metrics kept");
    let names: Vec<String> = metrics
        .iter()
        .map(|m| {
            m.resource
                .as_ref()
                .map(|r| r.name.clone())
                .or_else(|| m.pods.as_ref().map(|p| p.metric.name.clone()))
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(names, ["requests_per_second", "cpu"], "upstream's order");
    assert_eq!(
        after
            .spec
            .behavior
            .and_then(|b| b.scale_down)
            .and_then(|d| d.stabilization_window_seconds),
        Some(60)
    );
    assert!(
        after
            .metadata
            .annotations
            .is_none_or(|a| !a.keys().any(|k| k.starts_with("autoscaling.alpha"))),
        "the carrier annotations are not stored"
    );
}

#[tokio::test]
async fn discovery_prefers_v2_and_lists_v1() {
    let (_server, client) = start().await;
    let group = client
        .list_api_group_resources("autoscaling/v1")
        .await
        .expect("autoscaling/v1");
    assert!(
        group
            .resources
            .iter()
            .any(|r| r.name == "horizontalpodautoscalers")
    );
    let groups = client.list_api_groups().await.expect("groups");
    let autoscaling = groups
        .groups
        .iter()
        .find(|g| g.name == "autoscaling")
        .expect("autoscaling group");
    assert_eq!(
        autoscaling
            .preferred_version
            .as_ref()
            .map(|v| v.version.as_str()),
        Some("v2")
    );
}
