//! The Deployment's `Available` and `Progressing` conditions, with kube's update rules
//! (`SetDeploymentCondition`, `DeploymentComplete`, `DeploymentProgressing`,
//! `DeploymentTimedOut`).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::ops::Outcome;
use crate::util;

/// A new condition, both timestamps `now` (kube's `NewDeploymentCondition`).
pub(super) fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(type_.to_string()),
        status: Some(status.to_string()),
        reason: Some(reason.to_string()),
        message: Some(message),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    }
}

pub(super) fn get_condition<'a>(
    s: &'a DeploymentStatus,
    type_: &str,
) -> Option<&'a DeploymentCondition> {
    s.conditions
        .iter()
        .flatten()
        .find(|c| c.type_.as_deref() == Some(type_))
}

pub(super) fn remove_condition(s: &mut DeploymentStatus, type_: &str) {
    if let Some(cs) = s.conditions.as_mut() {
        cs.retain(|c| c.type_.as_deref() != Some(type_));
    }
}

/// kube's `SetDeploymentCondition`: no change for the same status and reason; the
/// transition time survives a reason change at the same status; the condition moves last.
pub(super) fn set_condition(s: &mut DeploymentStatus, mut c: DeploymentCondition) {
    let type_ = c.type_.clone().unwrap_or_default();
    if let Some(cur) = get_condition(s, &type_) {
        if cur.status == c.status && cur.reason == c.reason {
            return;
        }
        if cur.status == c.status {
            c.last_transition_time = cur.last_transition_time.clone();
        }
    }
    remove_condition(s, &type_);
    s.conditions.get_or_insert_with(Vec::new).push(c);
}

/// kube's `DeploymentComplete`.
pub(super) fn complete(d: &Deployment, s: &DeploymentStatus) -> bool {
    let replicas = d.spec.replicas.unwrap_or(1);
    s.updated_replicas.unwrap_or(0) == replicas
        && s.replicas.unwrap_or(0) == replicas
        && s.available_replicas.unwrap_or(0) == replicas
        && s.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// The `Progressing` condition (kube's syncRolloutStatus).
pub(super) fn progress(
    d: &Deployment,
    s: &mut DeploymentStatus,
    rs: Option<&str>,
    has_deadline: bool,
    now: Timestamp,
    out: &mut Outcome,
) {
    if !has_deadline {
        remove_condition(s, "Progressing");
        return;
    }
    let cur = get_condition(s, "Progressing").cloned();
    let is_complete = s.replicas == s.updated_replicas
        && cur.as_ref().and_then(|c| c.reason.as_deref()) == Some("NewReplicaSetAvailable");
    if is_complete {
        return;
    }
    let subject = match rs {
        Some(n) => format!("ReplicaSet \"{n}\""),
        None => format!(
            "Deployment \"{}\"",
            d.metadata.name.as_deref().unwrap_or_default()
        ),
    };
    let old = d.status.clone().unwrap_or_default();
    let old_old = old.replicas.unwrap_or(0) - old.updated_replicas.unwrap_or(0);
    let new_old = s.replicas.unwrap_or(0) - s.updated_replicas.unwrap_or(0);
    let progressed = s.updated_replicas.unwrap_or(0) > old.updated_replicas.unwrap_or(0)
        || new_old < old_old
        || s.ready_replicas.unwrap_or(0) > old.ready_replicas.unwrap_or(0)
        || s.available_replicas.unwrap_or(0) > old.available_replicas.unwrap_or(0);
    if complete(d, s) {
        let c = condition(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            format!("{subject} has successfully progressed."),
            now,
        );
        set_condition(s, c);
    } else if progressed {
        let mut c = condition(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            format!("{subject} is progressing."),
            now,
        );
        if let Some(cur) = cur.as_ref().filter(|c| c.status.as_deref() == Some("True")) {
            c.last_transition_time = cur.last_transition_time.clone();
        }
        remove_condition(s, "Progressing");
        set_condition(s, c);
    } else if let Some(cur) = cur {
        let deadline = d.spec.progress_deadline_seconds.unwrap_or(600);
        let timed_out = match cur.reason.as_deref() {
            Some("NewReplicaSetAvailable") => false,
            Some("ProgressDeadlineExceeded") => true,
            _ => cur.last_update_time.as_ref().is_some_and(|from| {
                let at = util::add(
                    from.0,
                    Duration::from_secs(u64::try_from(deadline).unwrap_or(0)),
                );
                if at < now {
                    true
                } else {
                    out.wake_at(util::add(at, Duration::from_secs(1)));
                    false
                }
            }),
        };
        if timed_out {
            let c = condition(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                format!("{subject} has timed out progressing."),
                now,
            );
            set_condition(s, c);
        }
    }
}
