//! The DaemonSet controller for a one-node cluster: one pod (`<ds>-<5 chars>`) targeted at
//! the simulated node through required node affinity on `metadata.name`, with the
//! tolerations kube adds, the `controller-revision-hash` and `pod-template-generation`
//! labels; out-of-date pods are replaced (`RollingUpdate`) or left (`OnDelete`). Each template
//! is recorded as a ControllerRevision (see `history`) for `kubectl rollout history/undo`.
//!
//! A `nodeSelector` is matched against the node's well-known labels
//! (`kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`); when it does not
//! match, nothing is scheduled. The status mirrors kube's (`desiredNumberScheduled`,
//! `currentNumberScheduled`, `numberMisscheduled`, `numberReady`, `numberAvailable`,
//! `numberUnavailable`, `updatedNumberScheduled`, `observedGeneration`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetStatus};
use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    Toleration,
};
use kube::Api;

use crate::cache::Snapshot;
use crate::history;
use crate::ops::{self, Expectations, Outcome};
use crate::replicaset::pod_from_template;
use crate::scope::Scope;
use crate::util;

/// Errors of the DaemonSet controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing a pod or the status failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

const MANAGED: &[&str] = &[
    "observedGeneration",
    "desiredNumberScheduled",
    "currentNumberScheduled",
    "numberMisscheduled",
    "numberReady",
    "numberAvailable",
    "numberUnavailable",
    "updatedNumberScheduled",
];

/// The labels the simulated node would carry.
pub(crate) fn node_labels(node: &str) -> BTreeMap<String, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    [
        ("kubernetes.io/hostname", node),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", arch),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Reconciles every DaemonSet in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    node: &str,
    snap: &Snapshot,
    scope: &Scope,
    exp: &Expectations,
    now: Timestamp,
    out: &mut Outcome,
) {
    ops::each_controller("daemonset", &snap.daemon_sets, scope, out, |ds, mut out| {
        Box::pin(async move {
            let result = sync_one(client, node, snap, exp, ds, now, &mut out).await;
            (out, result)
        })
    })
    .await;
}

/// The tolerations kube's DaemonSet controller adds to every daemon pod.
fn daemon_tolerations() -> Vec<Toleration> {
    let t = |key: &str, effect: &str| Toleration {
        key: Some(key.to_string()),
        operator: Some("Exists".into()),
        effect: Some(effect.to_string()),
        ..Default::default()
    };
    vec![
        t("node.kubernetes.io/not-ready", "NoExecute"),
        t("node.kubernetes.io/unreachable", "NoExecute"),
        t("node.kubernetes.io/disk-pressure", "NoSchedule"),
        t("node.kubernetes.io/memory-pressure", "NoSchedule"),
        t("node.kubernetes.io/pid-pressure", "NoSchedule"),
        t("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
}

fn new_pod(ds: &DaemonSet, node: &str, hash: &str) -> Pod {
    let spec = ds.spec.clone();
    let name = ds.metadata.name.as_deref().unwrap_or_default();
    let owner = util::owner_ref("apps/v1", "DaemonSet", &ds.metadata);
    let mut pod = pod_from_template(
        Some(&spec.template),
        format!("{name}-"),
        ds.metadata.namespace.clone(),
        owner,
    );
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert("controller-revision-hash".into(), hash.into());
    labels.insert(
        "pod-template-generation".into(),
        ds.metadata.generation.unwrap_or(1).to_string(),
    );
    let pod_spec = pod.spec.get_or_insert_with(Default::default);
    let affinity = pod_spec.affinity.get_or_insert_with(Affinity::default);
    let na = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    na.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_fields: Some(vec![NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: Some(vec![node.to_string()]),
            }]),
            ..Default::default()
        }],
    });
    let tolerations = pod_spec.tolerations.get_or_insert_with(Vec::new);
    for t in daemon_tolerations() {
        if !tolerations
            .iter()
            .any(|x| x.key == t.key && x.effect == t.effect)
        {
            tolerations.push(t);
        }
    }
    pod
}

async fn sync_one(
    client: &kube::Client,
    node: &str,
    snap: &Snapshot,
    exp: &Expectations,
    ds: &DaemonSet,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    let (Some(name), Some(uid)) = (ds.metadata.name.as_deref(), ds.metadata.uid.as_deref()) else {
        return Ok(());
    };
    if ds.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
    let spec = ds.spec.clone();
    let old = ds.status.clone().unwrap_or_default();
    let hash = util::template_hash(&spec.template, old.collision_count);
    let labels = node_labels(node);
    let should_run = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.node_selector.as_ref())
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let on_delete = spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        == Some("OnDelete");
    let is_current = |p: &Pod| {
        p.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("controller-revision-hash"))
            == Some(&hash)
    };

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
    // Keep the best pod: current revision first, then ready, then oldest.
    live.sort_by_key(|p| {
        (
            !is_current(p),
            !util::is_ready(p),
            p.metadata.creation_timestamp.clone().map(|t| t.0),
        )
    });
    let in_use: BTreeSet<String> = active
        .iter()
        .filter_map(|p| {
            p.metadata
                .labels
                .as_ref()?
                .get("controller-revision-hash")
                .cloned()
        })
        .collect();
    let owner = history::Owner {
        kind: "DaemonSet",
        meta: &ds.metadata,
        template: &spec.template,
        history_limit: spec.revision_history_limit,
    };
    history::record(
        client,
        &owner,
        &format!("{name}-{hash}"),
        &hash,
        &in_use,
        out,
    )
    .await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut delete: Vec<&Arc<Pod>> = Vec::new();
    if should_run {
        delete.extend(live.iter().skip(1));
        if let Some(keep) = live.first()
            && !is_current(keep)
            && !on_delete
        {
            delete.push(keep);
        }
        if live.is_empty()
            && exp.pending_creates(uid) == 0
            && let Some(created) = ops::create(&pods, &new_pod(ds, node, &hash), out).await?
        {
            exp.created(uid, created.metadata.name.as_deref().unwrap_or_default());
        }
    } else {
        delete.extend(live.iter());
    }
    for p in delete {
        let pname = p.metadata.name.as_deref().unwrap_or_default();
        ops::delete(&pods, pname, p.metadata.uid.as_deref(), out).await?;
        exp.deleted(uid, pname);
    }

    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let mut wake = None;
    let scheduled = !active.is_empty();
    let ready = active.iter().any(|p| util::is_ready(p));
    let available = active
        .iter()
        .any(|p| util::is_available(p, min_ready, now, &mut wake));
    if let Some(w) = wake {
        out.wake_at(w);
    }
    let updated = active.iter().any(|p| is_current(p));
    let desired_n = i32::from(should_run);
    let desired = DaemonSetStatus {
        observed_generation: ds.metadata.generation,
        desired_number_scheduled: desired_n,
        current_number_scheduled: i32::from(should_run && scheduled),
        number_misscheduled: i32::from(!should_run && scheduled),
        number_ready: i32::from(should_run && ready),
        number_available: util::nz(i32::from(should_run && available)),
        number_unavailable: util::nz(desired_n - i32::from(should_run && available)),
        updated_number_scheduled: util::nz(i32::from(should_run && updated)),
        ..old.clone()
    };
    if ds.status.as_ref() != Some(&desired) {
        let api: Api<DaemonSet> = Api::namespaced(client.clone(), ns);
        let body = ops::status_patch(&desired, MANAGED)?;
        ops::patch(&api, name, &body, true, out).await?;
    }
    Ok(())
}
