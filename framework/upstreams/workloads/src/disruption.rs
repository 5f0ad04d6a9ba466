//! The disruption controller: the status of every PodDisruptionBudget, as
//! kube-controller-manager writes it, so `kubectl get pdb` shows ALLOWED DISRUPTIONS and
//! `kubectl drain`-style clients can ask whether a pod may go.
//!
//! The pods are those of the budget's namespace its selector matches. `currentHealthy`
//! counts the ready ones not being deleted. With an integer `minAvailable`, `expectedPods` is
//! the number of pods and `desiredHealthy` is `minAvailable`; with a percentage or with
//! `maxUnavailable`, `expectedPods` is the sum of the scales (`spec.replicas`) of the pods'
//! controllers (a ReplicaSet counts through its Deployment), and the percentage rounds up, as
//! upstream's `GetScaledValueFromIntOrPercent`. `disruptionsAllowed` is
//! `currentHealthy - desiredHealthy` (never negative), with the `DisruptionAllowed`
//! condition (`SufficientPods` / `InsufficientPods`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::util;

/// Errors of the disruption controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// The API server refused a read or write.
    #[error("{what}: {source}")]
    Api {
        /// What was attempted.
        what: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let what = what.into();
    move |e| Error::Api {
        what,
        source: Box::new(e),
    }
}

/// Whether `labels` match the budget's selector (`matchLabels` and `matchExpressions`).
fn selects(pdb: &PodDisruptionBudget, labels: &BTreeMap<String, String>) -> bool {
    let Some(sel) = pdb.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return false;
    };
    let by_labels = sel
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let by_expressions = sel.match_expressions.iter().flatten().all(|e| {
        let values = e.values.clone().unwrap_or_default();
        let have = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => have.is_some_and(|v| values.contains(v)),
            "NotIn" => have.is_none_or(|v| !values.contains(v)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            _ => false,
        }
    });
    by_labels && by_expressions
}

/// Runs the controller until dropped.
pub(crate) async fn run(client: Client) {
    let controller = Controller::new(
        Api::<PodDisruptionBudget>::all(client.clone()),
        watcher::Config::default(),
    );
    let budgets = controller.store();
    controller
        .watches(
            Api::<Pod>::all(client.clone()),
            watcher::Config::default(),
            move |pod: Pod| {
                let ns = pod.namespace();
                let labels = pod.labels().clone();
                budgets
                    .state()
                    .into_iter()
                    .filter(|b| b.namespace() == ns && selects(b, &labels))
                    .map(|b| ObjectRef::from_obj(&*b))
                    .collect::<Vec<_>>()
            },
        )
        .run(reconcile, retry, Arc::new(client))
        .for_each(|_| async {})
        .await;
}

fn retry(_: Arc<PodDisruptionBudget>, e: &Error, _: Arc<Client>) -> Action {
    tracing::debug!(error = %e, "disruption budget reconcile failed; will retry");
    Action::requeue(Duration::from_secs(1))
}

/// The scale of the controller of `pod` (through a ReplicaSet to its Deployment), keyed by
/// that controller's uid.
async fn scale_of(client: &Client, ns: &str, pod: &Pod) -> Result<Option<(String, i32)>, Error> {
    let Some(owner) = util::controller_of(&pod.metadata) else {
        return Ok(None);
    };
    let name = owner.name.as_str();
    let read = |what: &str| format!("reading {what} {ns}/{name}");
    Ok(match owner.kind.as_str() {
        "ReplicaSet" => {
            let rs = Api::<ReplicaSet>::namespaced(client.clone(), ns)
                .get_opt(name)
                .await
                .map_err(api_err(read("ReplicaSet")))?;
            let Some(rs) = rs else { return Ok(None) };
            match util::controller_of(&rs.metadata).filter(|r| r.kind == "Deployment") {
                Some(d) => Api::<Deployment>::namespaced(client.clone(), ns)
                    .get_opt(&d.name)
                    .await
                    .map_err(api_err(read("Deployment")))?
                    .map(|d| (d.uid().unwrap_or_default(), d.spec.replicas.unwrap_or(1))),
                None => Some((owner.uid.clone(), rs.spec.replicas.unwrap_or(1))),
            }
        }
        "StatefulSet" => Api::<StatefulSet>::namespaced(client.clone(), ns)
            .get_opt(name)
            .await
            .map_err(api_err(read("StatefulSet")))?
            .map(|s| (owner.uid.clone(), s.spec.replicas.unwrap_or(1))),
        "ReplicationController" => Api::<ReplicationController>::namespaced(client.clone(), ns)
            .get_opt(name)
            .await
            .map_err(api_err(read("ReplicationController")))?
            .map(|s| {
                (
                    owner.uid.clone(),
                    s.spec.and_then(|s| s.replicas).unwrap_or(1),
                )
            }),
        _ => None,
    })
}

/// `value` of `total`, a percentage rounded up, or an integer.
fn scaled(value: &IntOrString, total: i32) -> i32 {
    match value {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(p) => i32::try_from((p * i64::from(total) + 99) / 100).unwrap_or(i32::MAX),
            None => s.parse().unwrap_or(0),
        },
    }
}

async fn reconcile(pdb: Arc<PodDisruptionBudget>, client: Arc<Client>) -> Result<Action, Error> {
    if pdb.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let ns = pdb.namespace().unwrap_or_default();
    let name = pdb.name_any();
    let pods: Api<Pod> = Api::namespaced((*client).clone(), &ns);
    let list = pods
        .list(&ListParams::default())
        .await
        .map_err(api_err(format!("listing pods in {ns}")))?;
    let matched: Vec<&Pod> = list
        .items
        .iter()
        .filter(|p| selects(&pdb, p.labels()))
        .collect();
    let healthy = matched
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none() && util::is_ready(p))
        .count();
    let current = util::count(healthy);
    let spec = pdb.spec.clone().unwrap_or_default();
    let (expected, desired) = match (&spec.min_available, &spec.max_unavailable) {
        (Some(IntOrString::Int(n)), _) => (util::count(matched.len()), *n),
        (min, max) => {
            let mut scales = BTreeMap::new();
            for p in &matched {
                if let Some((uid, replicas)) = scale_of(&client, &ns, p).await? {
                    scales.insert(uid, replicas);
                }
            }
            let expected: i32 = scales.values().sum();
            let desired = match (min, max) {
                (Some(m), _) => scaled(m, expected),
                (None, Some(m)) => (expected - scaled(m, expected)).max(0),
                (None, None) => 0,
            };
            (expected, desired)
        }
    };
    let allowed = (current - desired).max(0);
    let old = pdb.status.clone().unwrap_or_default();
    let (status, reason) = if allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let prev = old
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "DisruptionAllowed" && c.status == status && c.reason == reason);
    let condition = Condition {
        type_: "DisruptionAllowed".into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        observed_generation: pdb.metadata.generation,
        last_transition_time: prev
            .map_or_else(|| Time(util::now()), |c| c.last_transition_time.clone()),
    };
    let desired_status = PodDisruptionBudgetStatus {
        current_healthy: Some(current),
        desired_healthy: Some(desired),
        disruptions_allowed: Some(allowed),
        expected_pods: Some(expected),
        observed_generation: pdb.metadata.generation,
        conditions: Some(vec![condition]),
        disrupted_pods: old.disrupted_pods.clone(),
    };
    if pdb.status.as_ref() != Some(&desired_status) {
        Api::<PodDisruptionBudget>::namespaced((*client).clone(), &ns)
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": desired_status})),
            )
            .await
            .map_err(api_err(format!("writing the status of {ns}/{name}")))?;
    }
    // Controllers' scales change without a pod event: look again now and then.
    Ok(Action::requeue(Duration::from_secs(30)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_up() {
        assert_eq!(scaled(&IntOrString::String("50%".into()), 3), 2);
        assert_eq!(scaled(&IntOrString::String("10%".into()), 5), 1);
        assert_eq!(scaled(&IntOrString::Int(2), 5), 2);
    }

    #[test]
    fn selectors_with_expressions() {
        let pdb: PodDisruptionBudget = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"selector": {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}},
        }))
        .expect("pdb");
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        assert!(selects(&pdb, &labels(&[("app", "web"), ("tier", "a")])));
        assert!(!selects(&pdb, &labels(&[("app", "web"), ("tier", "c")])));
        assert!(!selects(&pdb, &labels(&[("app", "db"), ("tier", "a")])));
    }
}
