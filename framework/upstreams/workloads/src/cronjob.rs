//! The CronJob controller: creates a CronJob's Jobs on schedule, as kube-controller-manager's
//! (v2) does.
//!
//! At each scheduled time (in `spec.timeZone`, UTC without one) after the last one it ran,
//! it creates the Job `<cronjob>-<scheduled time in minutes since the epoch>` from
//! `jobTemplate` (its labels and annotations, plus
//! `batch.kubernetes.io/cronjob-scheduled-timestamp`), controlled by the CronJob. Only the most
//! recent missed time runs; one later than `startingDeadlineSeconds` is skipped.
//! `concurrencyPolicy` `Forbid` waits while a Job runs, `Replace` deletes the running ones
//! first; `suspend` stops new runs. Finished Jobs beyond `successfulJobsHistoryLimit` and
//! `failedJobsHistoryLimit` are deleted, oldest first, with their pods. The status lists the
//! `active` Jobs, `lastScheduleTime` and `lastSuccessfulTime`.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use k8s_openapi::api::batch::v1::{CronJob, CronJobStatus, Job};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Api;
use mni_formats::cron::{DateTime, Schedule};

use crate::cache::Snapshot;
use crate::ops::{self, Outcome};
use crate::scope::Scope;
use crate::util;

/// Errors of the CronJob controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing a Job or the status failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

/// Status keys the controller owns.
const MANAGED: &[&str] = &["active", "lastScheduleTime", "lastSuccessfulTime"];

/// The annotation recording when a Job was scheduled to run.
const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// How many scheduled times are stepped through to find the most recent missed one.
const MAX_STEPS: usize = 100_000;

/// Reconciles every CronJob in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    snap: &Snapshot,
    scope: &Scope,
    now: Timestamp,
    out: &mut Outcome,
) {
    ops::each_controller("cronjob", &snap.cron_jobs, scope, out, |cj, mut out| {
        Box::pin(async move {
            let result = sync_one(client, snap, cj, now, &mut out).await;
            (out, result)
        })
    })
    .await;
}

fn civil(t: Timestamp, tz: &TimeZone) -> DateTime {
    let d = t.to_zoned(tz.clone()).datetime();
    let small = |v: i8| u8::try_from(v).unwrap_or(0);
    DateTime::new(
        i32::from(d.year()),
        small(d.month()),
        small(d.day()),
        small(d.hour()),
        small(d.minute()),
        small(d.second()),
    )
}

fn instant(d: DateTime, tz: &TimeZone) -> Option<Timestamp> {
    let c = jiff::civil::DateTime::new(
        i16::try_from(d.year).ok()?,
        i8::try_from(d.month).ok()?,
        i8::try_from(d.day).ok()?,
        i8::try_from(d.hour).ok()?,
        i8::try_from(d.minute).ok()?,
        i8::try_from(d.second).ok()?,
        0,
    )
    .ok()?;
    c.to_zoned(tz.clone()).ok().map(|z| z.timestamp())
}

/// The most recent scheduled time in `(after, now]`, and the next one after `now`.
fn scheduled(
    schedule: &Schedule,
    tz: &TimeZone,
    after: Timestamp,
    now: Timestamp,
) -> (Option<Timestamp>, Option<Timestamp>) {
    let mut last = None;
    let mut cursor = civil(after, tz);
    for _ in 0..MAX_STEPS {
        let Some(next) = schedule.next_after(cursor) else {
            return (last, None);
        };
        let Some(at) = instant(next, tz) else {
            return (last, None);
        };
        if at > now {
            return (last, Some(at));
        }
        last = Some(at);
        cursor = next;
    }
    (last, None)
}

fn finished(job: &Job) -> Option<&str> {
    job.status
        .as_ref()?
        .conditions
        .iter()
        .flatten()
        .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        .map(|c| c.type_.as_str())
}

fn job_ref(job: &Job, old: &[ObjectReference]) -> ObjectReference {
    let uid = job.metadata.uid.clone();
    // The resourceVersion of the first sighting, so a running Job's updates do not rewrite
    // the CronJob's status.
    let rv = old
        .iter()
        .find(|r| r.uid == uid)
        .and_then(|r| r.resource_version.clone())
        .or_else(|| job.metadata.resource_version.clone());
    ObjectReference {
        api_version: Some("batch/v1".into()),
        kind: Some("Job".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid,
        resource_version: rv,
        ..Default::default()
    }
}

/// The Job a CronJob runs at `at`.
fn job_for(cj: &CronJob, at: Timestamp, tz: &TimeZone) -> Job {
    let name = cj.metadata.name.clone().unwrap_or_default();
    let template = cj.spec.job_template.clone();
    let meta = template.metadata.unwrap_or_default();
    let mut annotations = meta.annotations.unwrap_or_default();
    // Go's RFC 3339: `Z` for a zero offset.
    let stamp = at
        .to_zoned(tz.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string();
    let stamp = match stamp.strip_suffix("+00:00") {
        Some(local) => format!("{local}Z"),
        None => stamp,
    };
    annotations.insert(SCHEDULED_TIMESTAMP.into(), stamp);
    Job {
        metadata: ObjectMeta {
            name: Some(format!("{name}-{}", at.as_second().div_euclid(60))),
            namespace: cj.metadata.namespace.clone(),
            labels: meta.labels,
            annotations: Some(annotations),
            owner_references: Some(vec![util::owner_ref("batch/v1", "CronJob", &cj.metadata)]),
            ..Default::default()
        },
        spec: template.spec,
        status: None,
    }
}

async fn sync_one(
    client: &kube::Client,
    snap: &Snapshot,
    cj: &CronJob,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    if cj.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let Some(name) = cj.metadata.name.as_deref() else {
        return Ok(());
    };
    let ns = cj.metadata.namespace.as_deref().unwrap_or_default();
    let jobs_api: Api<Job> = Api::namespaced(client.clone(), ns);
    let spec = &cj.spec;
    let old = cj.status.clone().unwrap_or_default();
    let old_active = old.active.clone().unwrap_or_default();
    let jobs: Vec<&Arc<Job>> = snap.jobs_of(cj.metadata.uid.as_deref()).iter().collect();
    let mut active: Vec<&Arc<Job>> = jobs
        .iter()
        .copied()
        .filter(|j| finished(j).is_none() && j.metadata.deletion_timestamp.is_none())
        .collect();
    let mut status = CronJobStatus {
        last_successful_time: jobs
            .iter()
            .filter(|j| finished(j) == Some("Complete"))
            .filter_map(|j| j.status.as_ref()?.completion_time.clone())
            .max_by_key(|t| t.0)
            .or(old.last_successful_time.clone()),
        ..old.clone()
    };

    let tz = spec
        .time_zone
        .as_deref()
        .and_then(|z| TimeZone::get(z).ok())
        .unwrap_or(TimeZone::UTC);
    let schedule = Schedule::parse(&spec.schedule).ok();
    if let (Some(schedule), false) = (schedule, spec.suspend == Some(true)) {
        let created = cj.metadata.creation_timestamp.as_ref().map_or(now, |t| t.0);
        let mut after = old.last_schedule_time.as_ref().map_or(created, |t| t.0);
        if let Some(deadline) = spec.starting_deadline_seconds {
            let earliest =
                now - Duration::from_secs(u64::try_from(deadline).unwrap_or(0).saturating_add(1));
            after = after.max(earliest);
        }
        let (due, next) = scheduled(&schedule, &tz, after, now);
        if let Some(next) = next {
            out.wake_at(next);
        }
        if let Some(at) = due {
            let job = job_for(cj, at, &tz);
            let job_name = job.metadata.name.clone().unwrap_or_default();
            let exists = jobs
                .iter()
                .any(|j| j.metadata.name.as_deref() == Some(job_name.as_str()));
            let policy = spec.concurrency_policy.as_deref().unwrap_or("Allow");
            let blocked = policy == "Forbid" && !active.is_empty();
            if !exists && !blocked {
                if policy == "Replace" {
                    for j in active.drain(..) {
                        let jname = j.metadata.name.as_deref().unwrap_or_default();
                        ops::delete(&jobs_api, jname, j.metadata.uid.as_deref(), out).await?;
                    }
                }
                if let Some(created) = ops::create(&jobs_api, &job, out).await? {
                    status.last_schedule_time = Some(Time(at));
                    status.active = Some(
                        active
                            .iter()
                            .map(|j| job_ref(j, &old_active))
                            .chain([job_ref(&created, &old_active)])
                            .collect(),
                    );
                    return write_status(client, cj, name, ns, &status, out).await;
                }
            }
        }
    }
    let refs: Vec<ObjectReference> = active.iter().map(|j| job_ref(j, &old_active)).collect();
    status.active = (!refs.is_empty()).then_some(refs);
    clean_history(&jobs_api, cj, &jobs, out).await?;
    write_status(client, cj, name, ns, &status, out).await
}

/// Deletes the oldest finished Jobs beyond the history limits, with their pods.
async fn clean_history(
    api: &Api<Job>,
    cj: &CronJob,
    jobs: &[&Arc<Job>],
    out: &mut Outcome,
) -> Result<(), Error> {
    let limits = [
        (
            "Complete",
            cj.spec.successful_jobs_history_limit.unwrap_or(3),
        ),
        ("Failed", cj.spec.failed_jobs_history_limit.unwrap_or(1)),
    ];
    for (kind, limit) in limits {
        let mut done: Vec<&Arc<Job>> = jobs
            .iter()
            .copied()
            .filter(|j| finished(j) == Some(kind) && j.metadata.deletion_timestamp.is_none())
            .collect();
        let keep = usize::try_from(limit).unwrap_or(0);
        if done.len() <= keep {
            continue;
        }
        done.sort_by_key(|j| {
            let s = j.status.as_ref();
            let started = s.and_then(|s| s.start_time.as_ref()).map(|t| t.0);
            (started, j.metadata.creation_timestamp.as_ref().map(|t| t.0))
        });
        let excess = done.len() - keep;
        for j in done.into_iter().take(excess) {
            let jname = j.metadata.name.as_deref().unwrap_or_default();
            ops::delete(api, jname, j.metadata.uid.as_deref(), out).await?;
        }
    }
    Ok(())
}

async fn write_status(
    client: &kube::Client,
    cj: &CronJob,
    name: &str,
    ns: &str,
    status: &CronJobStatus,
    out: &mut Outcome,
) -> Result<(), Error> {
    if cj.status.as_ref() != Some(status) {
        let api: Api<CronJob> = Api::namespaced(client.clone(), ns);
        let body = ops::status_patch(status, MANAGED)?;
        ops::patch(&api, name, &body, true, out).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_recent_missed_time_and_the_next_one() {
        let schedule = Schedule::parse("*/10 * * * *").expect("schedule");
        let after: Timestamp = "2026-12-02T10:03:00Z".parse().expect("time");
        let now: Timestamp = "2026-12-02T10:35:00Z".parse().expect("time");
        let (due, next) = scheduled(&schedule, &TimeZone::UTC, after, now);
        assert_eq!(due, Some("2026-12-02T10:30:00Z".parse().expect("time")));
        assert_eq!(next, Some("2026-12-02T10:40:00Z".parse().expect("time")));
        let (due, _) = scheduled(&schedule, &TimeZone::UTC, now, now);
        assert_eq!(due, None);
    }

    #[test]
    fn schedules_follow_the_time_zone() {
        let schedule = Schedule::parse("0 9 * * *").expect("schedule");
        let tz = TimeZone::get("Europe/Paris").expect("zone");
        let after: Timestamp = "2026-12-02T00:00:00Z".parse().expect("time");
        let (_, next) = scheduled(&schedule, &tz, after, after);
        // 09:00 in Paris is 08:00 UTC in winter.
        assert_eq!(next, Some("2026-12-02T08:00:00Z".parse().expect("time")));
    }

    #[test]
    fn jobs_are_named_by_their_scheduled_minute() {
        let cj: CronJob = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "backup", "namespace": "default", "uid": "u"},
            "spec": {"schedule": "@hourly", "jobTemplate": {
                "metadata": {"labels": {"app": "backup"}},
                "spec": {"template": {"spec": {"containers": []}}}}},
        }))
        .expect("cronjob");
        let at: Timestamp = "2026-12-02T10:00:00Z".parse().expect("time");
        let job = job_for(&cj, at, &TimeZone::UTC);
        assert_eq!(job.metadata.name.as_deref(), Some("backup-29936760"));
        let annotations = job.metadata.annotations.expect("annotations");
        assert_eq!(annotations[SCHEDULED_TIMESTAMP], "2026-12-02T10:00:00Z");
        assert_eq!(job.metadata.labels.expect("labels")["app"], "backup");
    }
}
