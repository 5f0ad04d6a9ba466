//! The StatefulSet controller: pods `<sts>-0 … <sts>-N-1` with stable names, hostnames
//! (`hostname`, `subdomain` = `spec.serviceName`), the `statefulset.kubernetes.io/pod-name`,
//! `apps.kubernetes.io/pod-index` and `controller-revision-hash` labels, and one
//! `persistentVolumeClaim` volume per claim template (the claims themselves are not
//! created).
//!
//! `OrderedReady` creates one pod at a time, each after the previous is Running and
//! Ready, and removes surplus pods from the highest ordinal down; `Parallel` does it all at
//! once. `RollingUpdate` replaces out-of-date pods from the highest ordinal down to
//! `partition`, one at a time; `OnDelete` waits for the user. The status mirrors kube's
//! (`replicas`, `readyReplicas`, `currentReplicas`, `updatedReplicas`, `availableReplicas`,
//! `currentRevision`, `updateRevision`, `collisionCount`, `observedGeneration`). Each template
//! is recorded as a ControllerRevision (see `history`), so `kubectl rollout history` and
//! `kubectl rollout undo` work.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaimVolumeSource, Pod, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;

use crate::cache::Snapshot;
use crate::history;
use crate::ops::{self, Outcome};
use crate::scope::Scope;
use crate::util;

/// Errors of the StatefulSet controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing a pod or the status failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

const REVISION_LABEL: &str = "controller-revision-hash";
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

const MANAGED: &[&str] = &[
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
];

/// Reconciles every StatefulSet in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    snap: &Snapshot,
    scope: &Scope,
    now: Timestamp,
    out: &mut Outcome,
) {
    ops::each_controller(
        "statefulset",
        &snap.stateful_sets,
        scope,
        out,
        |sts, mut out| {
            Box::pin(async move {
                let result = sync_one(client, snap, sts, now, &mut out).await;
                (out, result)
            })
        },
    )
    .await;
}

fn revision_of(p: &Pod) -> Option<&str> {
    p.metadata
        .labels
        .as_ref()?
        .get(REVISION_LABEL)
        .map(String::as_str)
}

fn running_and_ready(p: &Pod) -> bool {
    p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running") && util::is_ready(p)
}

/// The pod for ordinal `i` at revision `rev`.
fn new_pod(sts: &StatefulSet, i: i32, rev: &str) -> Pod {
    let name = sts.metadata.name.as_deref().unwrap_or_default();
    let spec = sts.spec.clone();
    let meta = spec.template.metadata.unwrap_or_default();
    let pod_name = format!("{name}-{i}");
    let mut labels = meta.labels.unwrap_or_default();
    labels.insert(REVISION_LABEL.into(), rev.into());
    labels.insert(POD_NAME_LABEL.into(), pod_name.clone());
    labels.insert(POD_INDEX_LABEL.into(), i.to_string());
    let mut pod_spec = spec.template.spec.unwrap_or_default();
    pod_spec.hostname = Some(pod_name.clone());
    if let Some(svc) = spec.service_name.filter(|s| !s.is_empty()) {
        pod_spec.subdomain = Some(svc);
    }
    for claim in spec.volume_claim_templates.iter().flatten() {
        let Some(cname) = claim.metadata.name.as_deref() else {
            continue;
        };
        let volumes = pod_spec.volumes.get_or_insert_with(Vec::new);
        if volumes.iter().any(|v| v.name == cname) {
            continue;
        }
        volumes.push(Volume {
            name: cname.to_string(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: format!("{cname}-{pod_name}"),
                read_only: None,
            }),
            ..Default::default()
        });
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(pod_name),
            namespace: sts.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: meta.annotations,
            owner_references: Some(vec![util::owner_ref(
                "apps/v1",
                "StatefulSet",
                &sts.metadata,
            )]),
            ..Default::default()
        },
        spec: Some(pod_spec),
        status: None,
    }
}

async fn sync_one(
    client: &kube::Client,
    snap: &Snapshot,
    sts: &StatefulSet,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    let (Some(name), Some(uid)) = (sts.metadata.name.as_deref(), sts.metadata.uid.as_deref())
    else {
        return Ok(());
    };
    if sts.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let ns = sts.metadata.namespace.as_deref().unwrap_or_default();
    let spec = sts.spec.clone();
    let replicas = spec.replicas.unwrap_or(1).max(0);
    let parallel = spec.pod_management_policy.as_deref() == Some("Parallel");
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    let on_delete = strategy.type_.as_deref() == Some("OnDelete");
    let partition = strategy
        .rolling_update
        .and_then(|r| r.partition)
        .unwrap_or(0);
    let old = sts.status.clone().unwrap_or_default();
    let hash = util::template_hash(&spec.template, old.collision_count);
    let update_rev = format!("{name}-{hash}");

    // Pods by ordinal.
    let prefix = format!("{name}-");
    let mut by_ordinal: BTreeMap<i32, Arc<Pod>> = BTreeMap::new();
    for p in snap.pods_of(Some(uid)) {
        let ordinal = p
            .metadata
            .name
            .as_deref()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|s| s.parse::<i32>().ok());
        if let Some(i) = ordinal.filter(|i| *i >= 0) {
            by_ordinal.insert(i, p.clone());
        }
    }
    let mut in_use: BTreeSet<String> = by_ordinal
        .values()
        .filter_map(|p| revision_of(p).map(str::to_string))
        .collect();
    in_use.extend(old.current_revision.clone());
    let owner = history::Owner {
        kind: "StatefulSet",
        meta: &sts.metadata,
        template: &spec.template,
        history_limit: spec.revision_history_limit,
    };
    history::record(client, &owner, &update_rev, &hash, &in_use, out).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);

    let mut blocked = false;
    for i in 0..replicas {
        match by_ordinal.get(&i) {
            None => {
                ops::create(&pods, &new_pod(sts, i, &update_rev), out).await?;
                if !parallel {
                    blocked = true;
                    break;
                }
            }
            Some(p) if !util::is_active(p) => {
                if p.metadata.deletion_timestamp.is_none() {
                    let pname = p.metadata.name.as_deref().unwrap_or_default();
                    ops::delete(&pods, pname, p.metadata.uid.as_deref(), out).await?;
                }
                if !parallel {
                    blocked = true;
                    break;
                }
            }
            Some(p) if !parallel && !running_and_ready(p) => {
                blocked = true;
                break;
            }
            Some(_) => {}
        }
    }
    if !blocked {
        let condemned: Vec<&Arc<Pod>> =
            by_ordinal.range(replicas..).rev().map(|(_, p)| p).collect();
        let take = if parallel {
            condemned.len()
        } else {
            condemned.len().min(1)
        };
        for p in condemned.iter().take(take) {
            let pname = p.metadata.name.as_deref().unwrap_or_default();
            ops::delete(&pods, pname, p.metadata.uid.as_deref(), out).await?;
        }
        let all_ready =
            (0..replicas).all(|i| by_ordinal.get(&i).is_some_and(|p| running_and_ready(p)));
        if condemned.is_empty() && all_ready && !on_delete {
            let stale = (partition.max(0)..replicas)
                .rev()
                .filter_map(|i| by_ordinal.get(&i))
                .find(|p| revision_of(p) != Some(update_rev.as_str()));
            if let Some(p) = stale {
                let pname = p.metadata.name.as_deref().unwrap_or_default();
                ops::delete(&pods, pname, p.metadata.uid.as_deref(), out).await?;
            }
        }
    }

    // Status.
    let active: Vec<&Arc<Pod>> = by_ordinal.values().filter(|p| util::is_active(p)).collect();
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let mut wake = None;
    let ready = active.iter().filter(|p| util::is_ready(p)).count();
    let available = active
        .iter()
        .filter(|p| util::is_available(p, min_ready, now, &mut wake))
        .count();
    if let Some(w) = wake {
        out.wake_at(w);
    }
    let updated = util::count(
        active
            .iter()
            .filter(|p| revision_of(p) == Some(update_rev.as_str()))
            .count(),
    );
    let count = util::count(active.len());
    let ready = util::count(ready);
    let mut current_rev = old
        .current_revision
        .clone()
        .unwrap_or_else(|| update_rev.clone());
    if !on_delete && updated == count && ready == count {
        current_rev = update_rev.clone();
    }
    let current = util::count(
        active
            .iter()
            .filter(|p| revision_of(p) == Some(current_rev.as_str()))
            .count(),
    );
    let desired = StatefulSetStatus {
        observed_generation: sts.metadata.generation,
        replicas: count,
        ready_replicas: util::nz(ready),
        current_replicas: util::nz(current),
        updated_replicas: util::nz(updated),
        available_replicas: Some(util::count(available)),
        current_revision: Some(current_rev),
        update_revision: Some(update_rev),
        collision_count: Some(old.collision_count.unwrap_or(0)),
        ..old.clone()
    };
    if sts.status.as_ref() != Some(&desired) {
        let api: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
        let body = ops::status_patch(&desired, MANAGED)?;
        ops::patch(&api, name, &body, true, out).await?;
    }
    Ok(())
}
