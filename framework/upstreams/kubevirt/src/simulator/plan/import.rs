//! CDI's part of the plan: a DataVolume's claim and importer pod, and its import, one phase
//! (or 25 %) per step; `.invalid` hosts fail.

use super::*;

/// Why a DataVolume's spec cannot be imported, naming the field.
pub(super) fn data_volume_error(spec: &DataVolumeSpec) -> Option<String> {
    let Some(claim) = spec.claim() else {
        return Some("spec.storage: required (the size of the claim to import into)".into());
    };
    match claim.size() {
        None => {
            return Some("spec.storage.resources.requests.storage: required".into());
        }
        Some(q) => {
            if let Err(e) = quantity::value(q) {
                return Some(format!("spec.storage.resources.requests.storage: {e}"));
            }
        }
    }
    let source = spec.source.clone().unwrap_or_default();
    let set = [
        source.http.is_some(),
        source.registry.is_some(),
        source.blank.is_some(),
    ]
    .iter()
    .filter(|s| **s)
    .count();
    if set != 1 {
        return Some("spec.source: exactly one of http, registry or blank is required".into());
    }
    if let Some(http) = &source.http
        && !(http.url.starts_with("http://") || http.url.starts_with("https://"))
    {
        return Some(format!(
            "spec.source.http.url: {:?} is not an http:// or https:// URL",
            http.url
        ));
    }
    None
}

/// The host of a URL or image reference (`scheme://host:port/path`, `host/repo:tag`).
pub(super) fn host_of(reference: &str) -> &str {
    let rest = reference
        .split_once("://")
        .map_or(reference, |(_, rest)| rest);
    let host = rest.split('/').next().unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    host.split(':').next().unwrap_or_default()
}

/// The failure an import from `spec` runs into: hosts under `.invalid` (RFC 2606) do not
/// resolve.
pub(super) fn import_failure(spec: &DataVolumeSpec) -> Option<String> {
    let source = spec.source.as_ref()?;
    let url = source
        .http
        .as_ref()
        .map(|h| h.url.clone())
        .or_else(|| source.registry.as_ref().and_then(|r| r.url.clone()))?;
    let host = host_of(&url);
    host.ends_with(".invalid").then(|| {
        format!(
            "Unable to connect to http data source: Get {url:?}: dial tcp: lookup {host}: no such host"
        )
    })
}

pub(super) fn plan_data_volume(
    dv: &DataVolume,
    pvcs: &BTreeMap<Key, &PersistentVolumeClaim>,
    importers: &BTreeMap<Key, &Pod>,
    settings: &Settings,
    now: &Time,
    writes: &mut Vec<Write>,
) {
    if dv.metadata.deletion_timestamp.is_some() {
        return;
    }
    let (namespace, name) = key(dv);
    let current = dv.status.clone().unwrap_or_default();
    let existing = current.conditions.as_slice();
    let cond = |type_: &str, status: bool, reason: &str, message: &str| {
        dv_condition(existing, type_, status, reason, message, now)
    };
    let mut desired = DataVolumeStatus {
        claim_name: Some(name.clone()),
        restart_count: Some(current.restart_count.unwrap_or(0)),
        ..DataVolumeStatus::default()
    };
    if let Some(message) = data_volume_error(&dv.spec) {
        desired.phase = Some(DataVolumePhase::Failed);
        desired.progress = Some("N/A".into());
        desired.conditions = vec![
            cond(cdi::BOUND, false, "InvalidSpec", &message),
            cond(cdi::READY, false, "InvalidSpec", &message),
            cond(cdi::RUNNING, false, "InvalidSpec", &message),
        ];
        push_status(writes, Kind::DataVolume, dv, &current, &desired, false);
        return;
    }
    let pvc = pvcs.get(&(namespace.clone(), name.clone()));
    let importer_name = format!("importer-{name}");
    let importer = importers.get(&(namespace.clone(), importer_name.clone()));
    let phase = current.phase;
    let done = matches!(
        phase,
        Some(DataVolumePhase::Succeeded | DataVolumePhase::Failed)
    );
    if pvc.is_none() && !done {
        writes.push(Write::Create {
            kind: Kind::PersistentVolumeClaim,
            namespace: namespace.clone(),
            body: claim_for(dv),
        });
    }
    if importer.is_none() && !done {
        writes.push(Write::Create {
            kind: Kind::Pod,
            namespace: namespace.clone(),
            body: importer_for(dv, &importer_name, settings),
        });
    }
    if importer.is_some_and(|p| p.metadata.deletion_timestamp.is_none()) && done {
        writes.push(Write::Delete {
            kind: Kind::Pod,
            namespace: namespace.clone(),
            name: importer_name,
        });
    }
    let bound = pvc
        .and_then(|p| p.status.as_ref())
        .and_then(|s| s.phase.as_deref())
        == Some("Bound");
    let bound_cond = if bound || phase == Some(DataVolumePhase::Succeeded) {
        cond(cdi::BOUND, true, "Bound", &format!("PVC {name} Bound"))
    } else {
        cond(cdi::BOUND, false, "Pending", &format!("PVC {name} Pending"))
    };
    let failure = import_failure(&dv.spec);
    let (next, progress) = match phase {
        Some(DataVolumePhase::Succeeded) => (DataVolumePhase::Succeeded, "100.0%".to_string()),
        Some(DataVolumePhase::Failed) => (DataVolumePhase::Failed, "N/A".to_string()),
        _ if !bound => (DataVolumePhase::Pending, "N/A".to_string()),
        Some(DataVolumePhase::ImportScheduled) if failure.is_some() => {
            (DataVolumePhase::Failed, "N/A".to_string())
        }
        Some(DataVolumePhase::ImportScheduled) => {
            (DataVolumePhase::ImportInProgress, "0.00%".to_string())
        }
        Some(DataVolumePhase::ImportInProgress) => {
            let at = current
                .progress
                .as_deref()
                .and_then(|p| p.trim_end_matches('%').parse::<f64>().ok())
                .unwrap_or(0.0);
            let next = at + PROGRESS_STEP;
            if next >= 100.0 {
                (DataVolumePhase::Succeeded, "100.0%".to_string())
            } else {
                (DataVolumePhase::ImportInProgress, format!("{next:.2}%"))
            }
        }
        _ => (DataVolumePhase::ImportScheduled, "N/A".to_string()),
    };
    desired.phase = Some(next);
    desired.progress = Some(progress);
    desired.conditions = match next {
        DataVolumePhase::Succeeded => vec![
            bound_cond,
            cond(cdi::READY, true, "", ""),
            cond(cdi::RUNNING, false, "Completed", "Import Complete"),
        ],
        DataVolumePhase::Failed => {
            let message = failure.unwrap_or_else(|| "Import failed".into());
            vec![
                bound_cond,
                cond(cdi::READY, false, "", ""),
                cond(cdi::RUNNING, false, "Error", &message),
            ]
        }
        DataVolumePhase::ImportInProgress => vec![
            bound_cond,
            cond(cdi::READY, false, "", ""),
            cond(cdi::RUNNING, true, "Pod is running", ""),
        ],
        _ => vec![
            bound_cond,
            cond(cdi::READY, false, "", ""),
            cond(cdi::RUNNING, false, "", ""),
        ],
    };
    let step = phase != Some(next) || current.progress != desired.progress;
    push_status(writes, Kind::DataVolume, dv, &current, &desired, step);
}

/// The claim CDI creates for a DataVolume: same name, owned by it.
pub(super) fn claim_for(dv: &DataVolume) -> Value {
    let claim = dv.spec.claim().cloned().unwrap_or_default();
    let source = dv.spec.source.clone().unwrap_or_default();
    let (kind, endpoint) = match (&source.http, &source.registry) {
        (Some(h), _) => ("http", h.url.clone()),
        (None, Some(r)) => ("registry", r.url.clone().unwrap_or_default()),
        _ => ("none", String::new()),
    };
    let mut modes = claim.access_modes.clone();
    if modes.is_empty() {
        modes.push("ReadWriteOnce".into());
    }
    let mut spec = json!({
        "accessModes": modes,
        "resources": {"requests": {"storage": claim.size().map(|q| q.0.clone())}},
    });
    if let Some(class) = &claim.storage_class_name {
        spec["storageClassName"] = json!(class);
    }
    if let Some(mode) = &claim.volume_mode {
        spec["volumeMode"] = json!(mode);
    }
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": dv.name_any(),
            "namespace": dv.namespace(),
            "labels": {CDI_APP_LABEL.0: CDI_APP_LABEL.1},
            "annotations": {
                "cdi.kubevirt.io/storage.import.source": kind,
                "cdi.kubevirt.io/storage.import.endpoint": endpoint,
                "cdi.kubevirt.io/storage.contentType":
                    dv.spec.content_type.clone().unwrap_or_else(|| "kubevirt".into()),
            },
            "ownerReferences": [owner_reference(dv)],
        },
        "spec": spec,
    })
}

/// CDI's importer pod: the claim's first consumer, bound to the simulated node, so a
/// `WaitForFirstConsumer` class provisions the volume there.
pub(super) fn importer_for(dv: &DataVolume, name: &str, settings: &Settings) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": dv.namespace(),
            "labels": {CDI_APP_LABEL.0: CDI_APP_LABEL.1, "cdi.kubevirt.io": "importer"},
            "ownerReferences": [owner_reference(dv)],
        },
        "spec": {
            "nodeName": settings.node_name,
            "restartPolicy": "OnFailure",
            "containers": [{
                "name": "importer",
                "image": "quay.io/kubevirt/cdi-importer:v1.61.0",
                "volumeMounts": [{"name": "cdi-data-vol", "mountPath": "/data"}],
            }],
            "volumes": [{
                "name": "cdi-data-vol",
                "persistentVolumeClaim": {"claimName": dv.name_any()},
            }],
        },
    })
}

/// `existing`'s condition `type_` if nothing about it changed, else a fresh one
/// (`lastTransitionTime` kept unless the status flips).
pub(super) fn dv_condition(
    existing: &[DataVolumeCondition],
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: &Time,
) -> DataVolumeCondition {
    let status = if status { "True" } else { "False" };
    let old = cdi::find_condition(existing, type_);
    if let Some(c) = old
        && c.status == status
        && c.reason.as_deref().unwrap_or("") == reason
        && c.message.as_deref().unwrap_or("") == message
    {
        return c.clone();
    }
    let transition = old
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.clone());
    DataVolumeCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
        last_heartbeat_time: Some(now.clone()),
        last_transition_time: Some(transition),
    }
}
