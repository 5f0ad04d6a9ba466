//! The ReplicaSet controller: keeps `spec.replicas` pods (named `<rs>-<5 chars>` by the
//! server's `generateName`, controlled by the ReplicaSet) and writes the status the kube
//! controller writes (`replicas`, `fullyLabeledReplicas`, `readyReplicas`,
//! `availableReplicas`, `observedGeneration`).
//!
//! Scale-down deletes the least useful pods first, as kube's `ActivePods` ordering does:
//! unscheduled before scheduled, not ready before ready, more restarts before fewer,
//! newer before older.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::Api;

use crate::cache::Snapshot;
use crate::ops::{self, Expectations, Outcome};
use crate::scope::Scope;
use crate::util;

/// Errors of the ReplicaSet controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing a pod or the status failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

/// Status keys the controller owns.
const MANAGED: &[&str] = &[
    "replicas",
    "fullyLabeledReplicas",
    "readyReplicas",
    "availableReplicas",
    "observedGeneration",
    "conditions",
];

/// How many pods one pass creates or deletes for one controller at most.
pub(crate) const BURST: usize = 100;

/// Reconciles every ReplicaSet in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    snap: &Snapshot,
    scope: &Scope,
    exp: &Expectations,
    now: Timestamp,
    out: &mut Outcome,
) {
    ops::each_controller(
        "replicaset",
        &snap.replica_sets,
        scope,
        out,
        |rs, mut out| {
            Box::pin(async move {
                let result = sync_one(client, snap, exp, rs, now, &mut out).await;
                (out, result)
            })
        },
    )
    .await;
}

/// A pod built from a template, controlled by `owner` (shared with the DaemonSet
/// controller).
pub(crate) fn pod_from_template(
    template: Option<&PodTemplateSpec>,
    generate_name: String,
    namespace: Option<String>,
    owner: OwnerReference,
) -> Pod {
    let t = template.cloned().unwrap_or_default();
    let meta = t.metadata.unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(generate_name),
            namespace,
            labels: meta.labels,
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: t.spec,
        status: None,
    }
}

/// kube's `ActivePods` ordering, least useful first.
fn deletion_rank(p: &Arc<Pod>) -> impl Ord + use<> {
    let scheduled = p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some();
    let phase = match p.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Pending") | None => 0,
        Some("Running") => 2,
        _ => 1,
    };
    let restarts: i32 = p
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map_or(0, |cs| cs.iter().map(|c| c.restart_count).sum());
    let created = p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    (
        scheduled,
        phase,
        util::is_ready(p),
        std::cmp::Reverse(restarts),
        std::cmp::Reverse(created),
        std::cmp::Reverse(p.metadata.name.clone()),
    )
}

async fn sync_one(
    client: &kube::Client,
    snap: &Snapshot,
    exp: &Expectations,
    rs: &ReplicaSet,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    if rs.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let (Some(name), Some(uid)) = (rs.metadata.name.as_deref(), rs.metadata.uid.as_deref()) else {
        return Ok(());
    };
    let ns = rs.metadata.namespace.as_deref().unwrap_or_default();
    let spec = rs.spec.clone();
    let active: Vec<Arc<Pod>> = snap
        .pods_of(Some(uid))
        .iter()
        .filter(|p| util::is_active(p))
        .cloned()
        .collect();

    let mut live: Vec<Arc<Pod>> = active
        .iter()
        .filter(|p| !exp.is_deleting(uid, p.metadata.name.as_deref().unwrap_or_default()))
        .cloned()
        .collect();
    let have = live.len() + exp.pending_creates(uid);
    let want = usize::try_from(spec.replicas.unwrap_or(1)).unwrap_or(0);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut create_failure: Option<String> = None;
    if have < want {
        let owner = util::owner_ref("apps/v1", "ReplicaSet", &rs.metadata);
        for _ in 0..(want - have).min(BURST) {
            let pod = pod_from_template(
                spec.template.as_ref(),
                format!("{name}-"),
                Some(ns.to_string()),
                owner.clone(),
            );
            match ops::create(&pods, &pod, out).await {
                Ok(Some(created)) => {
                    exp.created(uid, created.metadata.name.as_deref().unwrap_or_default());
                }
                Ok(None) => {}
                Err(e) => match e.refusal() {
                    // Refused (a quota, a limit range): say so on the ReplicaSet and try
                    // again later, as kube's replicaset controller does.
                    Some(message) => {
                        create_failure = Some(message.to_string());
                        out.retry = true;
                        break;
                    }
                    None => return Err(e.into()),
                },
            }
        }
    } else if have > want {
        live.sort_by_key(deletion_rank);
        for p in live.iter().take((have - want).min(BURST)) {
            let pname = p.metadata.name.as_deref().unwrap_or_default();
            ops::delete(&pods, pname, p.metadata.uid.as_deref(), out).await?;
            exp.deleted(uid, pname);
        }
    }

    let template_labels = spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let mut wake = None;
    let fully = active
        .iter()
        .filter(|p| {
            let l = p.metadata.labels.as_ref();
            template_labels
                .iter()
                .all(|(k, v)| l.and_then(|l| l.get(k)) == Some(v))
        })
        .count();
    let ready = active.iter().filter(|p| util::is_ready(p)).count();
    let available = active
        .iter()
        .filter(|p| util::is_available(p, min_ready, now, &mut wake))
        .count();
    if let Some(w) = wake {
        out.wake_at(w);
    }
    let old = rs.status.clone().unwrap_or_default();
    let mut desired = ReplicaSetStatus {
        replicas: util::count(active.len()),
        fully_labeled_replicas: util::nz(util::count(fully)),
        ready_replicas: util::nz(util::count(ready)),
        available_replicas: util::nz(util::count(available)),
        observed_generation: rs.metadata.generation,
        ..old.clone()
    };
    let failing = old
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_.as_deref() == Some("ReplicaFailure"));
    match create_failure {
        Some(message) if !failing => {
            ops::warn(
                client,
                &rs.metadata,
                ("apps/v1", "ReplicaSet"),
                "FailedCreate",
                &format!("Error creating: {message}"),
                "replicaset-controller",
            )
            .await;
            desired
                .conditions
                .get_or_insert_with(Vec::new)
                .push(ReplicaSetCondition {
                    type_: Some("ReplicaFailure".into()),
                    status: Some("True".into()),
                    reason: Some("FailedCreate".into()),
                    message: Some(message),
                    last_transition_time: Some(Time(now)),
                });
        }
        Some(_) => {}
        None if failing => {
            if let Some(cs) = desired.conditions.as_mut() {
                cs.retain(|c| c.type_.as_deref() != Some("ReplicaFailure"));
            }
            if desired.conditions.as_ref().is_some_and(Vec::is_empty) {
                desired.conditions = None;
            }
        }
        None => {}
    }
    if rs.status.is_none() || desired != old {
        let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
        let body = ops::status_patch(&desired, MANAGED)?;
        ops::patch(&rs_api, name, &body, true, out).await?;
    }
    Ok(())
}
