//! The HorizontalPodAutoscaler controller of a cluster without metrics-server, which is what
//! `mni-dev` is: every 15 seconds (kube-controller-manager's sync period) it reads the
//! target's `scale` subresource, keeps the replicas within `minReplicas`..`maxReplicas`
//! (scaling the target when they are outside, `ScalingLimited`), and otherwise reports,
//! word for word as upstream does there, that the metrics cannot be fetched:
//! `ScalingActive=False`, reason `FailedGetResourceMetric` (or `FailedGetPodsMetric`,
//! `FailedGetObjectMetric`, `FailedGetExternalMetric` for those metric types), so
//! `kubectl get hpa` shows `<unknown>` targets as it would there. A target that cannot be
//! read gives `AbleToScale=False` / `FailedGetScale`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::util;

/// Errors of the autoscaler.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing the status failed.
    #[error("writing the status of {name}: {source}")]
    Status {
        /// The autoscaler.
        name: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

/// kube-controller-manager's `--horizontal-pod-autoscaler-sync-period`.
const SYNC_PERIOD: Duration = Duration::from_secs(15);

/// Runs the controller until dropped.
pub(crate) async fn run(client: Client) {
    Controller::new(
        Api::<HorizontalPodAutoscaler>::all(client.clone()),
        watcher::Config::default(),
    )
    .run(reconcile, retry, Arc::new(client))
    .for_each(|_| async {})
    .await;
}

fn retry(_: Arc<HorizontalPodAutoscaler>, e: &Error, _: Arc<Client>) -> Action {
    tracing::debug!(error = %e, "autoscaler reconcile failed; will retry");
    Action::requeue(Duration::from_secs(1))
}

/// The message upstream gives when the first metric of `hpa` cannot be fetched, with the
/// condition reason.
fn metric_failure(hpa: &HorizontalPodAutoscaler) -> (&'static str, String) {
    let metrics = hpa.spec.metrics.clone().unwrap_or_default();
    let Some(first) = metrics.first() else {
        // No metrics: the default target of 80% CPU.
        return resource_failure("cpu");
    };
    match first.type_.as_str() {
        "Resource" => resource_failure(first.resource.as_ref().map_or("cpu", |r| r.name.as_str())),
        "ContainerResource" => resource_failure(
            first
                .container_resource
                .as_ref()
                .map_or("cpu", |r| r.name.as_str()),
        ),
        "Pods" => (
            "FailedGetPodsMetric",
            format!(
                "the HPA was unable to compute the replica count: unable to get metric {}: unable to fetch metrics from custom metrics API: the server could not find the requested resource (get pods.custom.metrics.k8s.io *)",
                first.pods.as_ref().map_or("", |p| p.metric.name.as_str())
            ),
        ),
        "Object" => (
            "FailedGetObjectMetric",
            format!(
                "the HPA was unable to compute the replica count: unable to get metric {}: unable to fetch metrics from custom metrics API: the server could not find the metric {} for {}",
                first.object.as_ref().map_or("", |o| o.metric.name.as_str()),
                first.object.as_ref().map_or("", |o| o.metric.name.as_str()),
                first
                    .object
                    .as_ref()
                    .map_or(String::new(), |o| o.described_object.kind.to_lowercase()),
            ),
        ),
        _ => (
            "FailedGetExternalMetric",
            format!(
                "the HPA was unable to compute the replica count: unable to get external metric {}: unable to fetch metrics from external metrics API: the server could not find the requested resource (get {}.external.metrics.k8s.io)",
                first
                    .external
                    .as_ref()
                    .map_or("", |e| e.metric.name.as_str()),
                first
                    .external
                    .as_ref()
                    .map_or("", |e| e.metric.name.as_str()),
            ),
        ),
    }
}

fn resource_failure(resource: &str) -> (&'static str, String) {
    (
        "FailedGetResourceMetric",
        format!(
            "the HPA was unable to compute the replica count: failed to get {resource} utilization: unable to get metrics for resource {resource}: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
        ),
    )
}

fn condition(
    old: &HorizontalPodAutoscalerStatus,
    type_: &str,
    ok: bool,
    reason: &str,
    message: String,
) -> HorizontalPodAutoscalerCondition {
    let status = if ok { "True" } else { "False" };
    let since = old
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_ && c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| Time(util::now()));
    HorizontalPodAutoscalerCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message),
        last_transition_time: Some(since),
        ..Default::default()
    }
}

async fn reconcile(
    hpa: Arc<HorizontalPodAutoscaler>,
    client: Arc<Client>,
) -> Result<Action, Error> {
    if hpa.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let ns = hpa.namespace().unwrap_or_default();
    let name = hpa.name_any();
    let spec = hpa.spec.clone();
    let old = hpa.status.clone().unwrap_or_default();
    let target = &spec.scale_target_ref;
    let (group, version) = match target
        .api_version
        .as_deref()
        .unwrap_or("v1")
        .split_once('/')
    {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (
            String::new(),
            target.api_version.clone().unwrap_or_else(|| "v1".into()),
        ),
    };
    let gvk = GroupVersionKind::gvk(&group, &version, &target.kind);
    let scale = match kube::discovery::pinned_kind(&client, &gvk).await {
        Ok((ar, _)) => {
            let api: Api<DynamicObject> = Api::namespaced_with((*client).clone(), &ns, &ar);
            api.get_scale(&target.name).await.map(|s| (api, s))
        }
        Err(e) => Err(e),
    };
    let min = spec.min_replicas.unwrap_or(1);
    let max = spec.max_replicas;
    let mut status = HorizontalPodAutoscalerStatus {
        observed_generation: hpa.metadata.generation,
        ..old.clone()
    };
    let mut conditions = Vec::new();
    match scale {
        Err(e) => {
            conditions.push(condition(
                &old,
                "AbleToScale",
                false,
                "FailedGetScale",
                format!("the HPA controller was unable to get the target's current scale: {e}"),
            ));
        }
        Ok((api, scale)) => {
            let current = scale.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0);
            status.current_replicas = Some(current);
            let limited = if current == 0 && min != 0 {
                conditions.push(condition(
                    &old,
                    "ScalingActive",
                    false,
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero".into(),
                ));
                None
            } else if current > max {
                Some((
                    max,
                    "TooManyReplicas",
                    "the desired replica count is more than the maximum replica count",
                ))
            } else if current < min {
                Some((
                    min,
                    "TooFewReplicas",
                    "the desired replica count is less than the minimum replica count",
                ))
            } else {
                let (reason, message) = metric_failure(&hpa);
                conditions.push(condition(&old, "ScalingActive", false, reason, message));
                None
            };
            let mut able = condition(
                &old,
                "AbleToScale",
                true,
                "SucceededGetScale",
                "the HPA controller was able to get the target's current scale".into(),
            );
            if let Some((desired, reason, message)) = limited {
                let body = json!({"spec": {"replicas": desired}});
                match api
                    .patch_scale(&target.name, &PatchParams::default(), &Patch::Merge(&body))
                    .await
                {
                    Ok(_) => {
                        able = condition(
                            &old,
                            "AbleToScale",
                            true,
                            "SucceededRescale",
                            format!(
                                "the HPA controller was able to update the target scale to {desired}"
                            ),
                        );
                        status.last_scale_time = Some(Time(util::now()));
                    }
                    Err(e) => {
                        able = condition(
                            &old,
                            "AbleToScale",
                            false,
                            "FailedUpdateScale",
                            format!(
                                "the HPA controller was unable to update the target scale: {e}"
                            ),
                        );
                    }
                }
                status.desired_replicas = desired;
                conditions.push(condition(
                    &old,
                    "ScalingActive",
                    true,
                    "ValidMetricFound",
                    "the HPA was able to successfully calculate a replica count".into(),
                ));
                conditions.push(condition(
                    &old,
                    "ScalingLimited",
                    true,
                    reason,
                    message.into(),
                ));
            }
            conditions.insert(0, able);
        }
    }
    status.conditions = Some(conditions);
    if hpa.status.as_ref() != Some(&status) {
        Api::<HorizontalPodAutoscaler>::namespaced((*client).clone(), &ns)
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": status})),
            )
            .await
            .map_err(|e| Error::Status {
                name: format!("{ns}/{name}"),
                source: Box::new(e),
            })?;
    }
    Ok(Action::requeue(SYNC_PERIOD))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_metrics_server_the_default_cpu_target_fails_as_upstream() {
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 5},
        }))
        .expect("hpa");
        let (reason, message) = metric_failure(&hpa);
        assert_eq!(reason, "FailedGetResourceMetric");
        assert!(message.starts_with(
            "the HPA was unable to compute the replica count: failed to get cpu utilization"
        ));
        assert!(message.ends_with("(get pods.metrics.k8s.io)"));
    }
}
