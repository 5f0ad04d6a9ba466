//! The Deployment controller, after kube-controller-manager's `pkg/controller/deployment`.
//!
//! One ReplicaSet per pod template, named `<deployment>-<pod-template-hash>`, with the
//! `pod-template-hash` label on its selector, template and pods, and the
//! `deployment.kubernetes.io/{revision,desired-replicas,max-replicas}` annotations. Rolling
//! updates follow kube's arithmetic (`maxSurge` rounds up, `maxUnavailable` down; the new
//! ReplicaSet grows within the surge, old ones shrink while enough pods stay available);
//! `Recreate` scales old ReplicaSets to zero and waits for their pods before the new one
//! grows. Old ReplicaSets beyond `revisionHistoryLimit` are deleted once the rollout is
//! complete.
//!
//! The status is what kube writes: counts (zero omitted), `Available`
//! (`MinimumReplicasAvailable` / `MinimumReplicasUnavailable`) and `Progressing`
//! (`NewReplicaSetCreated`, `FoundNewReplicaSet`, `ReplicaSetUpdated`,
//! `NewReplicaSetAvailable`, `ProgressDeadlineExceeded`, `DeploymentPaused`,
//! `DeploymentResumed`) with kube's `lastUpdateTime` / `lastTransitionTime` rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use serde_json::{Value, json};

use crate::cache::Snapshot;
use crate::ops::{self, Outcome};
use crate::scope::Scope;
use crate::util;

mod conditions;
mod rollout;

use conditions::{complete, condition, get_condition, progress, set_condition};
use rollout::{fenceposts, plan_new, plan_old, plan_recreate};

/// Errors of the Deployment controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing a ReplicaSet or the Deployment failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

/// The label that ties a ReplicaSet and its pods to one pod template.
pub(crate) const HASH_LABEL: &str = "pod-template-hash";
const REVISION: &str = "deployment.kubernetes.io/revision";
const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
const MAX: &str = "deployment.kubernetes.io/max-replicas";

/// Deployment annotations kube does not copy onto ReplicaSets (plus ours, which are read
/// through the owner chain instead so that removing them takes effect).
fn skip_copy(key: &str) -> bool {
    matches!(
        key,
        "kubectl.kubernetes.io/last-applied-configuration"
            | REVISION
            | REVISION_HISTORY
            | DESIRED
            | MAX
            | "deprecated.deployment.rollback.to"
    ) || key.starts_with("simulate.mni.dev/")
}

const MANAGED: &[&str] = &[
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
    "conditions",
    "collisionCount",
];

/// Reconciles every Deployment in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    snap: &Snapshot,
    scope: &Scope,
    now: Timestamp,
    out: &mut Outcome,
) {
    ops::each_controller("deployment", &snap.deployments, scope, out, |d, mut out| {
        Box::pin(async move {
            let result = sync_one(client, snap, d, now, &mut out).await;
            (out, result)
        })
    })
    .await;
}

/// A ReplicaSet of the deployment and the size this pass wants for it.
pub(super) struct Rs {
    /// The ReplicaSet as cached.
    pub(super) obj: Arc<ReplicaSet>,
    /// Its `spec.replicas` after this pass.
    pub(super) want: i32,
}

impl Rs {
    /// Its current `spec.replicas`.
    pub(super) fn spec(&self) -> i32 {
        self.obj.spec.replicas.unwrap_or(1)
    }
    /// A status count (zero when unset).
    pub(super) fn status(
        &self,
        f: impl Fn(&k8s_openapi::api::apps::v1::ReplicaSetStatus) -> Option<i32>,
    ) -> i32 {
        self.obj.status.as_ref().and_then(f).unwrap_or(0)
    }
    /// Its available replicas.
    pub(super) fn available(&self) -> i32 {
        self.status(|s| s.available_replicas)
    }
    /// Its `deployment.kubernetes.io/revision`.
    pub(super) fn revision(&self) -> i64 {
        revision(&self.obj.metadata)
    }
}

fn revision(meta: &ObjectMeta) -> i64 {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(REVISION))
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// Whether a ReplicaSet's template is the deployment's, ignoring the hash label.
fn same_template(rs: &ReplicaSet, template: &PodTemplateSpec) -> bool {
    let Some(mut t) = rs.spec.template.clone() else {
        return false;
    };
    if let Some(labels) = t.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        labels.remove(HASH_LABEL);
    }
    &t == template
}

/// The ReplicaSet kube creates for a new template.
fn new_replica_set(
    d: &Deployment,
    hash: &str,
    replicas: i32,
    revision: i64,
    max_surge: i32,
) -> ReplicaSet {
    let spec = d.spec.clone();
    let d_replicas = spec.replicas.unwrap_or(1);
    let mut template = spec.template;
    let meta = template.metadata.get_or_insert_with(Default::default);
    let labels = meta.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(HASH_LABEL.into(), hash.into());
    let labels = labels.clone();
    let mut selector = spec.selector;
    let ml = selector.match_labels.get_or_insert_with(BTreeMap::new);
    ml.insert(HASH_LABEL.into(), hash.into());
    let mut annotations: BTreeMap<String, String> = d
        .metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| !skip_copy(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    annotations.insert(REVISION.into(), revision.to_string());
    annotations.insert(DESIRED.into(), d_replicas.to_string());
    annotations.insert(MAX.into(), (d_replicas + max_surge).to_string());
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}-{hash}",
                d.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: d.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: Some(vec![util::owner_ref("apps/v1", "Deployment", &d.metadata)]),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            min_ready_seconds: spec.min_ready_seconds,
            selector,
            template: Some(template),
        },
        status: None,
    }
}

/// The annotation changes kube's `SetNewReplicaSetAnnotations` (and the replica
/// annotations) would make to the current ReplicaSet, as a merge-patch map.
fn new_rs_annotation_patch(
    d: &Deployment,
    rs: &ReplicaSet,
    new_revision: i64,
    max_surge: i32,
) -> serde_json::Map<String, Value> {
    let cur = rs.metadata.annotations.clone().unwrap_or_default();
    let mut want = cur.clone();
    for (k, v) in d.metadata.annotations.iter().flatten() {
        if !skip_copy(k) {
            want.insert(k.clone(), v.clone());
        }
    }
    let old = cur.get(REVISION).cloned().unwrap_or_default();
    if old.parse::<i64>().unwrap_or(0) < new_revision {
        want.insert(REVISION.into(), new_revision.to_string());
        if !old.is_empty() {
            let history = match cur.get(REVISION_HISTORY).filter(|h| !h.is_empty()) {
                Some(h) => format!("{h},{old}"),
                None => old,
            };
            want.insert(REVISION_HISTORY.into(), history);
        }
    }
    let replicas = d.spec.replicas.unwrap_or(1);
    want.insert(DESIRED.into(), replicas.to_string());
    want.insert(MAX.into(), (replicas + max_surge).to_string());
    want.into_iter()
        .filter(|(k, v)| cur.get(k) != Some(v))
        .map(|(k, v)| (k, Value::String(v)))
        .collect()
}

async fn sync_one(
    client: &kube::Client,
    snap: &Snapshot,
    d: &Deployment,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    let (Some(name), Some(uid)) = (d.metadata.name.as_deref(), d.metadata.uid.as_deref()) else {
        return Ok(());
    };
    let spec = &d.spec;
    if d.metadata.deletion_timestamp.is_some() || util::selector_is_empty(&spec.selector) {
        return Ok(());
    }
    let ns = d.metadata.namespace.as_deref().unwrap_or_default();
    let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    let replicas = spec.replicas.unwrap_or(1);
    let paused = spec.paused == Some(true);
    let recreate = spec.strategy.as_ref().and_then(|s| s.type_.as_deref()) == Some("Recreate");
    let has_deadline = spec
        .progress_deadline_seconds
        .is_some_and(|s| s != i32::MAX);
    let (surge, max_unavailable) = fenceposts(d);
    let max_unavailable = if replicas == 0 { 0 } else { max_unavailable };
    let mut status = d.status.clone().unwrap_or_default();

    // Paused / resumed conditions (kube's checkPausedConditions).
    if has_deadline {
        let cur = get_condition(&status, "Progressing").and_then(|c| c.reason.clone());
        let paused_cond = cur.as_deref() == Some("DeploymentPaused");
        if cur.as_deref() != Some("ProgressDeadlineExceeded") {
            if paused && !paused_cond {
                let c = condition(
                    "Progressing",
                    "Unknown",
                    "DeploymentPaused",
                    "Deployment is paused".into(),
                    now,
                );
                set_condition(&mut status, c);
            } else if !paused && paused_cond {
                let c = condition(
                    "Progressing",
                    "Unknown",
                    "DeploymentResumed",
                    "Deployment is resumed".into(),
                    now,
                );
                set_condition(&mut status, c);
            }
        }
    }

    let mut owned = snap.replica_sets_of(uid);
    owned.retain(|rs| rs.metadata.deletion_timestamp.is_none());
    owned.sort_by(|a, b| {
        a.metadata
            .creation_timestamp
            .cmp(&b.metadata.creation_timestamp)
    });
    let new_obj = owned
        .iter()
        .find(|rs| same_template(rs, &spec.template))
        .cloned();
    let mut rss: Vec<Rs> = owned
        .into_iter()
        .filter(|rs| new_obj.as_ref().is_none_or(|n| !Arc::ptr_eq(n, rs)))
        .map(|obj| Rs { want: 0, obj })
        .collect();
    for r in &mut rss {
        r.want = r.spec();
    }
    let max_old_revision = rss.iter().map(Rs::revision).max().unwrap_or(0);
    let old_pods_running = rss.iter().any(|r| {
        r.status(|s| Some(s.replicas)) > 0
            || snap
                .pods_of(r.obj.metadata.uid.as_deref())
                .iter()
                .any(|p| util::is_active(p))
    });

    // The new ReplicaSet: found (and annotated) or created (Recreate: once old pods are gone).
    let wait_for_old_pods = recreate && old_pods_running;
    let mut new_rs: Option<Arc<ReplicaSet>> = None;
    if let Some(rs) = new_obj {
        let patch = new_rs_annotation_patch(d, &rs, max_old_revision + 1, surge);
        let min_ready = spec.min_ready_seconds;
        let min_ready_changed = rs.spec.min_ready_seconds != min_ready;
        let mut current = rs.clone();
        if !patch.is_empty() || min_ready_changed {
            let mut body = json!({"metadata": {"annotations": patch}});
            if min_ready_changed {
                body["spec"] = json!({"minReadySeconds": min_ready});
            }
            let rs_name = rs.metadata.name.as_deref().unwrap_or_default();
            match ops::patch(&rs_api, rs_name, &body, false, out).await? {
                Some(updated) => current = Arc::new(updated),
                None => return Ok(()),
            }
        }
        if has_deadline && get_condition(&status, "Progressing").is_none() {
            let msg = format!(
                "Found new replica set \"{}\"",
                current.metadata.name.as_deref().unwrap_or_default()
            );
            set_condition(
                &mut status,
                condition("Progressing", "True", "FoundNewReplicaSet", msg, now),
            );
        }
        new_rs = Some(current);
    } else if !paused && !wait_for_old_pods {
        let hash = util::template_hash(&spec.template, status.collision_count);
        let size = if recreate {
            replicas
        } else {
            let total: i32 = rss.iter().map(|r| r.want).sum();
            (replicas + surge - total).clamp(0, replicas)
        };
        let rs = new_replica_set(d, &hash, size, max_old_revision + 1, surge);
        match ops::create(&rs_api, &rs, out).await? {
            Some(created) => {
                if has_deadline {
                    let msg = format!(
                        "Created new replica set \"{}\"",
                        created.metadata.name.as_deref().unwrap_or_default()
                    );
                    set_condition(
                        &mut status,
                        condition("Progressing", "True", "NewReplicaSetCreated", msg, now),
                    );
                }
                new_rs = Some(Arc::new(created));
            }
            None => {
                // Already exists: either our cache is behind, or a hash collision.
                let rs_name = rs.metadata.name.as_deref().unwrap_or_default();
                let collided = snap.replica_sets.iter().any(|r| {
                    r.metadata.namespace.as_deref() == Some(ns)
                        && r.metadata.name.as_deref() == Some(rs_name)
                        && !(util::controlled_by(&r.metadata, uid)
                            && same_template(r, &spec.template))
                });
                if collided {
                    status.collision_count = Some(status.collision_count.unwrap_or(0) + 1);
                    write_status(client, d, status, out).await?;
                }
                return Ok(());
            }
        }
    }

    // The deployment carries its newest revision.
    if let Some(rs) = &new_rs {
        let rev = rs
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(REVISION))
            .cloned();
        let cur = d
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(REVISION));
        if let Some(rev) = rev.filter(|r| Some(r) != cur) {
            let d_api: Api<Deployment> = Api::namespaced(client.clone(), ns);
            let body = json!({"metadata": {"annotations": {REVISION: rev}}});
            ops::patch(&d_api, name, &body, false, out).await?;
        }
    }

    let new_idx = new_rs.map(|obj| {
        let want = obj.spec.replicas.unwrap_or(1);
        rss.push(Rs { obj, want });
        rss.len() - 1
    });

    if !paused {
        if recreate {
            plan_recreate(&mut rss, new_idx, replicas, old_pods_running);
        } else if !plan_new(&mut rss, new_idx, replicas, surge) {
            plan_old(&mut rss, new_idx, replicas, max_unavailable);
        }
        for r in rss.iter().filter(|r| r.want != r.spec()) {
            let body = json!({
                "metadata": {"annotations": {DESIRED: replicas.to_string(), MAX: (replicas + surge).to_string()}},
                "spec": {"replicas": r.want},
            });
            ops::patch(
                &rs_api,
                r.obj.metadata.name.as_deref().unwrap_or_default(),
                &body,
                false,
                out,
            )
            .await?;
        }
        let old_status = d.status.clone().unwrap_or_default();
        if complete(d, &old_status) {
            cleanup(&rs_api, spec.revision_history_limit, &rss, new_idx, out).await?;
        }
    }

    // Status (kube's calculateStatus + syncRolloutStatus).
    let sum = |f: &dyn Fn(&Rs) -> i32| rss.iter().map(f).sum::<i32>();
    let available = sum(&|r| r.available());
    let total = sum(&|r| r.want);
    status.observed_generation = d.metadata.generation;
    status.replicas = util::nz(sum(&|r| r.status(|s| Some(s.replicas))));
    status.updated_replicas = util::nz(new_idx.map_or(0, |i| rss[i].status(|s| Some(s.replicas))));
    status.ready_replicas = util::nz(sum(&|r| r.status(|s| s.ready_replicas)));
    status.available_replicas = util::nz(available);
    status.unavailable_replicas = util::nz((total - available).max(0));
    if available >= replicas - max_unavailable {
        let c = condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
            now,
        );
        set_condition(&mut status, c);
    } else {
        let c = condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
            now,
        );
        set_condition(&mut status, c);
    }
    // A ReplicaSet that cannot create its pods (kube's GetReplicaFailure).
    let failure = rss.iter().find_map(|r| {
        r.obj
            .status
            .as_ref()?
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_.as_deref() == Some("ReplicaFailure"))
            .cloned()
    });
    match failure {
        Some(f) => {
            let c = condition(
                "ReplicaFailure",
                f.status.as_deref().unwrap_or("True"),
                f.reason.as_deref().unwrap_or_default(),
                f.message.unwrap_or_default(),
                now,
            );
            set_condition(&mut status, c);
        }
        None => conditions::remove_condition(&mut status, "ReplicaFailure"),
    }
    if !paused {
        let rs_name = new_idx.and_then(|i| rss[i].obj.metadata.name.clone());
        progress(d, &mut status, rs_name.as_deref(), has_deadline, now, out);
    }
    if d.status.as_ref() != Some(&status) {
        write_status(client, d, status, out).await?;
    }
    Ok(())
}

async fn write_status(
    client: &kube::Client,
    d: &Deployment,
    status: DeploymentStatus,
    out: &mut Outcome,
) -> Result<(), Error> {
    let ns = d.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let body = ops::status_patch(&status, MANAGED)?;
    ops::patch(
        &api,
        d.metadata.name.as_deref().unwrap_or_default(),
        &body,
        true,
        out,
    )
    .await?;
    Ok(())
}

/// Deletes the oldest empty ReplicaSets beyond `revisionHistoryLimit`.
async fn cleanup(
    api: &Api<ReplicaSet>,
    limit: Option<i32>,
    rss: &[Rs],
    new: Option<usize>,
    out: &mut Outcome,
) -> Result<(), Error> {
    let Some(limit) = limit.and_then(|l| usize::try_from(l).ok()) else {
        return Ok(());
    };
    let mut old: Vec<&Rs> = rss
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != new)
        .map(|(_, r)| r)
        .collect();
    if old.len() <= limit {
        return Ok(());
    }
    old.sort_by_key(|r| {
        (
            r.revision(),
            r.obj.metadata.creation_timestamp.clone().map(|t| t.0),
        )
    });
    let excess = old.len() - limit;
    for r in old.into_iter().take(excess) {
        let st = r.obj.status.as_ref();
        let observed = st.and_then(|s| s.observed_generation).unwrap_or(0);
        if st.is_some_and(|s| s.replicas != 0)
            || r.spec() != 0
            || r.want != 0
            || observed < r.obj.metadata.generation.unwrap_or(0)
        {
            continue;
        }
        let meta = &r.obj.metadata;
        ops::delete(
            api,
            meta.name.as_deref().unwrap_or_default(),
            meta.uid.as_deref(),
            out,
        )
        .await?;
    }
    Ok(())
}
