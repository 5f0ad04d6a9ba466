//! The Job controller: runs a Job's pods to completion as kube-controller-manager does.
//!
//! - Up to `parallelism` pods at once (named `<job>-<5 chars>`, or `<job>-<index>-<5 chars>`
//!   with `completionMode: Indexed`, carrying the completion-index annotation and label),
//!   until `completions` pods succeeded (or, without `completions`, until one succeeded and
//!   none is left running).
//! - Failed pods are replaced after kube's pod-failure back-off (10 s doubling, at most
//!   6 min); more failures than `backoffLimit` (for `restartPolicy: OnFailure`, as many
//!   container restarts) fail the Job with `BackoffLimitExceeded`, as does
//!   `activeDeadlineSeconds` with `DeadlineExceeded`; the running pods are then deleted.
//! - `suspend: true` deletes the running pods and reports `Suspended`; resuming restarts
//!   the clock.
//! - Status as upstream writes it: `active`, `ready`, `terminating`, `succeeded`, `failed`,
//!   `startTime`, `completionTime`, `completedIndexes`, `uncountedTerminatedPods`, and the
//!   terminal pairs of conditions (`SuccessCriteriaMet` + `Complete`, `FailureTarget` +
//!   `Failed`).
//!
//! Finished pods are counted as they are found, as kube's legacy tracking did (no
//! `batch.kubernetes.io/job-tracking` finalizer): deleting a finished pod of a running Job
//! before the Job ends loses its count.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;

use crate::cache::Snapshot;
use crate::ops::{self, Expectations, Outcome};
use crate::replicaset::{BURST, pod_from_template};
use crate::scope::Scope;
use crate::util;

/// Errors of the Job controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing a pod or the status failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

/// Status keys the controller owns.
const MANAGED: &[&str] = &[
    "active",
    "ready",
    "terminating",
    "succeeded",
    "failed",
    "startTime",
    "completionTime",
    "completedIndexes",
    "uncountedTerminatedPods",
    "conditions",
];

/// The annotation and label carrying an Indexed Job pod's completion index.
pub(crate) const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// kube's pod-failure back-off: 10 s, doubled per further failure, at most 6 min.
fn failure_backoff(failures: i32) -> Duration {
    let exp = u32::try_from(failures.saturating_sub(1).clamp(0, 6)).unwrap_or(0);
    Duration::from_secs(10 * 2u64.pow(exp)).min(Duration::from_secs(360))
}

/// Reconciles every Job in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    snap: &Snapshot,
    scope: &Scope,
    exp: &Expectations,
    now: Timestamp,
    out: &mut Outcome,
) {
    ops::each_controller("job", &snap.jobs, scope, out, |job, mut out| {
        Box::pin(async move {
            let result = sync_one(client, snap, exp, job, now, &mut out).await;
            (out, result)
        })
    })
    .await;
}

fn phase(p: &Pod) -> Option<&str> {
    p.status.as_ref().and_then(|s| s.phase.as_deref())
}

fn index_of(p: &Pod) -> Option<i32> {
    p.metadata
        .annotations
        .as_ref()?
        .get(COMPLETION_INDEX)?
        .parse()
        .ok()
}

fn restarts(p: &Pod) -> i32 {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map_or(0, |cs| cs.iter().map(|c| c.restart_count).sum())
}

/// When the pod's last container finished, if it has.
fn finished_at(p: &Pod) -> Option<Timestamp> {
    let statuses = p.status.as_ref()?.container_statuses.as_ref()?;
    statuses
        .iter()
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.as_ref())
        .map(|t| t.0)
        .max()
}

fn has_condition(status: &JobStatus, type_: &str) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// A condition that keeps its times when it already says the same.
fn condition(
    old: &JobStatus,
    type_: &str,
    ok: bool,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> JobCondition {
    let status = if ok { "True" } else { "False" };
    let prev = old.conditions.iter().flatten().find(|c| c.type_ == type_);
    let same = prev.filter(|c| {
        c.status == status
            && c.reason.as_deref() == Some(reason)
            && c.message.as_deref() == Some(message)
    });
    JobCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_probe_time: same
            .and_then(|c| c.last_probe_time.clone())
            .or(Some(Time(now))),
        last_transition_time: same
            .and_then(|c| c.last_transition_time.clone())
            .or(Some(Time(now))),
    }
}

/// Sets (or replaces) a condition in `conditions`.
fn set_condition(conditions: &mut Vec<JobCondition>, c: JobCondition) {
    match conditions.iter_mut().find(|x| x.type_ == c.type_) {
        Some(x) => *x = c,
        None => conditions.push(c),
    }
}

/// `0,2-4` for the indexes given (kube's compressed interval list).
fn compress(indexes: &BTreeSet<i32>) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = indexes.iter().copied().peekable();
    while let Some(first) = iter.next() {
        let mut last = first;
        while iter.peek() == Some(&(last + 1)) {
            last = iter.next().unwrap_or(last);
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
    }
    (!parts.is_empty()).then(|| parts.join(","))
}

#[allow(clippy::too_many_lines)]
async fn sync_one(
    client: &kube::Client,
    snap: &Snapshot,
    exp: &Expectations,
    job: &Job,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let (Some(name), Some(uid)) = (job.metadata.name.as_deref(), job.metadata.uid.as_deref())
    else {
        return Ok(());
    };
    let ns = job.metadata.namespace.as_deref().unwrap_or_default();
    let spec = job.spec.clone().unwrap_or_default();
    let old = job.status.clone().unwrap_or_default();
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let pods: Vec<&Arc<Pod>> = snap.pods_of(Some(uid)).iter().collect();
    let active: Vec<&Arc<Pod>> = pods
        .iter()
        .copied()
        .filter(|p| util::is_active(p))
        .collect();
    let terminating = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_some() && util::is_active(p))
        .count();
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    let succeeded_pods: Vec<&Arc<Pod>> = pods
        .iter()
        .copied()
        .filter(|p| phase(p) == Some("Succeeded"))
        .collect();
    let completed: BTreeSet<i32> = succeeded_pods.iter().filter_map(|p| index_of(p)).collect();
    let succeeded = if indexed {
        util::count(completed.len())
    } else {
        util::count(succeeded_pods.len())
    }
    .max(old.succeeded.unwrap_or(0));
    let failed_pods: Vec<&Arc<Pod>> = pods
        .iter()
        .copied()
        .filter(|p| phase(p) == Some("Failed"))
        .collect();
    let failed = util::count(failed_pods.len()).max(old.failed.unwrap_or(0));
    let finished = has_condition(&old, "Complete") || has_condition(&old, "Failed");
    let suspended = spec.suspend == Some(true);

    let mut status = old.clone();
    let mut conditions = old.conditions.clone().unwrap_or_default();
    let mut delete_active = finished || suspended;

    if !finished {
        if suspended {
            set_condition(
                &mut conditions,
                condition(
                    &old,
                    "Suspended",
                    true,
                    "JobSuspended",
                    "Job suspended",
                    now,
                ),
            );
        } else {
            if has_condition(&old, "Suspended") {
                set_condition(
                    &mut conditions,
                    condition(&old, "Suspended", false, "JobResumed", "Job resumed", now),
                );
                status.start_time = None;
            }
            if status.start_time.is_none() {
                status.start_time = Some(Time(now));
            }
        }
        let start = status.start_time.as_ref().map_or(now, |t| t.0);
        let backoff_limit = spec.backoff_limit.unwrap_or(6);
        let on_failure = spec
            .template
            .spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref())
            == Some("OnFailure");
        let restarted: i32 = pods.iter().map(|p| restarts(p)).sum();
        let too_many = failed > backoff_limit || (on_failure && restarted > backoff_limit);
        let deadline = spec
            .active_deadline_seconds
            .filter(|_| !suspended)
            .map(|s| util::add(start, Duration::from_secs(u64::try_from(s).unwrap_or(0))));
        let done = match spec.completions {
            Some(c) => succeeded >= c,
            None => succeeded > 0 && active.is_empty(),
        };
        let failure = if too_many {
            Some((
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ))
        } else if deadline.is_some_and(|d| d <= now) {
            Some((
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            ))
        } else {
            if let Some(d) = deadline {
                out.wake_at(d);
            }
            None
        };
        if let Some((reason, message)) = failure {
            set_condition(
                &mut conditions,
                condition(&old, "FailureTarget", true, reason, message, now),
            );
            set_condition(
                &mut conditions,
                condition(&old, "Failed", true, reason, message, now),
            );
            delete_active = true;
        } else if done {
            let message = "Reached expected number of succeeded pods";
            set_condition(
                &mut conditions,
                condition(
                    &old,
                    "SuccessCriteriaMet",
                    true,
                    "CompletionsReached",
                    message,
                    now,
                ),
            );
            set_condition(
                &mut conditions,
                condition(&old, "Complete", true, "CompletionsReached", message, now),
            );
            status.completion_time = Some(Time(now));
            delete_active = true;
        } else if !suspended {
            create_pods(
                &CreateContext {
                    api: &pods_api,
                    job,
                    name,
                    uid,
                    exp,
                    now,
                },
                &spec,
                &active,
                &completed,
                succeeded,
                &failed_pods,
                out,
            )
            .await?;
        }
    }

    let mut remaining = active.len();
    if delete_active {
        for p in &active {
            if p.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let pname = p.metadata.name.as_deref().unwrap_or_default();
            ops::delete(&pods_api, pname, p.metadata.uid.as_deref(), out).await?;
            exp.deleted(uid, pname);
            remaining -= 1;
        }
    }

    status.active = util::nz(util::count(remaining));
    status.ready = Some(util::count(
        active
            .iter()
            .filter(|p| !delete_active && util::is_ready(p))
            .count(),
    ));
    status.terminating = Some(util::count(terminating + active.len() - remaining));
    status.succeeded = util::nz(succeeded);
    status.failed = util::nz(failed);
    status.completed_indexes = if indexed { compress(&completed) } else { None };
    status.uncounted_terminated_pods = Some(UncountedTerminatedPods::default());
    status.conditions = (!conditions.is_empty()).then_some(conditions);
    if job.status.is_none() || status != old {
        let api: Api<Job> = Api::namespaced(client.clone(), ns);
        let body = ops::status_patch(&status, MANAGED)?;
        ops::patch(&api, name, &body, true, out).await?;
    }
    Ok(())
}

/// What creating a Job's pods needs to know.
struct CreateContext<'a> {
    api: &'a Api<Pod>,
    job: &'a Job,
    name: &'a str,
    uid: &'a str,
    exp: &'a Expectations,
    now: Timestamp,
}

/// Creates the pods that bring the Job to `parallelism` running pods, after the failure
/// back-off.
#[allow(clippy::too_many_arguments)]
async fn create_pods(
    cx: &CreateContext<'_>,
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    active: &[&Arc<Pod>],
    completed: &BTreeSet<i32>,
    succeeded: i32,
    failed_pods: &[&Arc<Pod>],
    out: &mut Outcome,
) -> Result<(), Error> {
    let parallelism = spec.parallelism.unwrap_or(1).max(0);
    let want = match spec.completions {
        Some(c) => parallelism.min(c - succeeded).max(0),
        None if succeeded > 0 => 0,
        None => parallelism,
    };
    let have = util::count(active.len() + cx.exp.pending_creates(cx.uid));
    if have >= want {
        return Ok(());
    }
    if let Some(last) = failed_pods.iter().filter_map(|p| finished_at(p)).max() {
        let failures = util::count(failed_pods.len());
        let at = util::add(last, failure_backoff(failures));
        if at > cx.now {
            out.wake_at(at);
            return Ok(());
        }
    }
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    let running: BTreeSet<i32> = active.iter().filter_map(|p| index_of(p)).collect();
    let mut free = (0..spec.completions.unwrap_or(0))
        .filter(|i| !completed.contains(i) && !running.contains(i));
    let owner = util::owner_ref("batch/v1", "Job", &cx.job.metadata);
    let ns = cx.job.metadata.namespace.clone();
    let count = usize::try_from(want - have).unwrap_or(0).min(BURST);
    for _ in 0..count {
        let (generate_name, index) = if indexed {
            match free.next() {
                Some(i) => (format!("{}-{i}-", cx.name), Some(i)),
                None => break,
            }
        } else {
            (format!("{}-", cx.name), None)
        };
        let mut pod = pod_from_template(
            Some(&spec.template),
            generate_name,
            ns.clone(),
            owner.clone(),
        );
        if let Some(i) = index {
            let i = i.to_string();
            pod.metadata
                .annotations
                .get_or_insert_default()
                .insert(COMPLETION_INDEX.into(), i.clone());
            pod.metadata
                .labels
                .get_or_insert_default()
                .insert(COMPLETION_INDEX.into(), i.clone());
            if let Some(s) = pod.spec.as_mut() {
                s.hostname = Some(format!("{}-{i}", cx.name));
            }
        }
        if let Some(created) = ops::create(cx.api, &pod, out).await? {
            let pname = created.metadata.name.as_deref().unwrap_or_default();
            cx.exp.created(cx.uid, pname);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_to_six_minutes() {
        assert_eq!(failure_backoff(1), Duration::from_secs(10));
        assert_eq!(failure_backoff(2), Duration::from_secs(20));
        assert_eq!(failure_backoff(6), Duration::from_secs(320));
        assert_eq!(failure_backoff(7), Duration::from_secs(360));
        assert_eq!(failure_backoff(50), Duration::from_secs(360));
    }

    #[test]
    fn completed_indexes_are_compressed() {
        let set: BTreeSet<i32> = [0, 2, 3, 4, 7].into_iter().collect();
        assert_eq!(compress(&set).as_deref(), Some("0,2-4,7"));
        assert_eq!(compress(&BTreeSet::new()), None);
    }
}
