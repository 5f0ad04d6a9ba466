//! PodDisruptionBudget status and HorizontalPodAutoscalers without metrics, against a real
//! API server over HTTP with the simulator running.

use crate::common;

use common::{Env, deployment, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use serde_json::json;

fn pdb(name: &str, app: &str, rule: serde_json::Value) -> serde_json::Value {
    let mut spec = rule;
    spec["selector"] = json!({"matchLabels": {"app": app}});
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disruption_budgets_count_healthy_pods() {
    let env = Env::start().await;
    env.create::<Deployment>(deployment("web", 3, "nginx:1.27"))
        .await;
    env.create::<PodDisruptionBudget>(pdb("web-min", "web", json!({"minAvailable": 1})))
        .await;
    env.create::<PodDisruptionBudget>(pdb("web-max", "web", json!({"maxUnavailable": "50%"})))
        .await;
    let budgets: Api<PodDisruptionBudget> = env.api();
    let counts = |name: &'static str| {
        let budgets = budgets.clone();
        async move {
            let s = budgets.get(name).await.ok()?.status?;
            Some((
                s.current_healthy?,
                s.desired_healthy?,
                s.disruptions_allowed?,
                s.expected_pods?,
                s.conditions?.first()?.reason.clone(),
            ))
        }
    };
    let min = wait_for("web-min with three healthy pods", || async {
        counts("web-min").await.filter(|c| c.0 == 3)
    })
    .await;
    assert_eq!(min, (3, 1, 2, 3, "SufficientPods".to_string()));
    // 50% of 3 rounds up to 2 unavailable: 1 must stay healthy.
    let max = wait_for("web-max with three healthy pods", || async {
        counts("web-max").await.filter(|c| c.0 == 3)
    })
    .await;
    assert_eq!(max, (3, 1, 2, 3, "SufficientPods".to_string()));

    env.create::<PodDisruptionBudget>(pdb("none", "nothing", json!({"minAvailable": 1})))
        .await;
    let none = wait_for("an empty budget", || async { counts("none").await }).await;
    assert_eq!(none, (0, 1, 0, 0, "InsufficientPods".to_string()));
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autoscalers_keep_the_bounds_and_report_missing_metrics() {
    let env = Env::start().await;
    env.create::<Deployment>(deployment("api", 1, "nginx:1.27"))
        .await;
    let hpa = |name: &str, target: &str| {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                        "minReplicas": 2, "maxReplicas": 5}})
    };
    env.create::<HorizontalPodAutoscaler>(hpa("api", "api"))
        .await;
    let deployments: Api<Deployment> = env.api();
    wait_for("the target scaled up to minReplicas", || async {
        let d = deployments.get("api").await.ok()?;
        (d.spec.replicas == Some(2)).then_some(())
    })
    .await;
    let autoscalers: Api<HorizontalPodAutoscaler> = env.api();
    let reason = |h: &HorizontalPodAutoscaler, t: &str| {
        h.status
            .as_ref()?
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == t)
            .and_then(|c| c.reason.clone())
    };
    let settled = wait_for("the metrics failure reported", || async {
        let h = autoscalers.get("api").await.ok()?;
        (reason(&h, "ScalingActive").as_deref() == Some("FailedGetResourceMetric")).then_some(h)
    })
    .await;
    assert_eq!(
        settled.status.as_ref().and_then(|s| s.current_replicas),
        Some(2)
    );
    assert_eq!(
        reason(&settled, "AbleToScale").as_deref(),
        Some("SucceededGetScale")
    );

    env.create::<HorizontalPodAutoscaler>(hpa("lost", "missing"))
        .await;
    let lost = wait_for("the missing target reported", || async {
        let h = autoscalers.get("lost").await.ok()?;
        reason(&h, "AbleToScale").map(|_| h)
    })
    .await;
    assert_eq!(
        reason(&lost, "AbleToScale").as_deref(),
        Some("FailedGetScale")
    );
    env.stop().await;
}
