//! A service installation's status from what its Deployments (and, when one is not available,
//! its pods) report — pure functions, unit-tested below.
//!
//! - `Ready` is `True` only when both Deployments are `Available` for their current
//!   generation.
//! - `Progressing` is `True` while a rollout is under way: a new generation not yet observed,
//!   replicas not yet updated or available.
//! - `Degraded` is `True` when a workload fails — its rollout exceeded its progress deadline or
//!   a container of its pods cannot run (crash loop, image pull error, …) — and its message
//!   names the workload.
//!
//! Messages carry no counters that change on their own (restart counts, back-off times), so
//! a converged installation gets no status writes.

use k8s_openapi::api::{apps::v1 as apps, core::v1 as corev1};
use k8s_openapi::jiff::Timestamp;
use mni_core::{
    ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY, ServiceStatus, WorkloadStatus,
    reasons,
};

use super::Component;

/// The `Degraded=True` reason: a workload fails.
pub const WORKLOAD_FAILING: &str = "WorkloadFailing";

/// Container waiting reasons that do not go away without a change: the workload fails.
const FAILING_REASONS: &[&str] = &[
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "RunContainerError",
];

/// What one workload's Deployment says, summed up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// Which workload.
    pub component: Component,
    /// `Available=True` for the current generation.
    pub available: bool,
    /// Every replica is updated and available, and no old one is left.
    pub rolled_out: bool,
    /// Why the workload fails, if it does.
    pub failure: Option<String>,
    /// How many replicas are available, e.g. `1/3 replicas available`.
    pub summary: String,
    /// The counts for the status.
    pub counts: WorkloadStatus,
}

/// Whether `deployment`'s pods may say why its rollout is not complete: it has created every
/// pod of its current template, yet the rollout is not done. Before that, the Deployment's own
/// status tells how it progresses; after it, nothing is wrong.
#[must_use]
pub fn waits_for_pods(deployment: &apps::Deployment) -> bool {
    let want = deployment.spec.replicas.unwrap_or(1);
    let updated = deployment
        .status
        .as_ref()
        .and_then(|s| s.updated_replicas)
        .unwrap_or(0);
    updated >= want && !rolled_out(deployment)
}

/// Whether `deployment`'s rollout is complete: its current generation is observed, every
/// replica it asks for is updated and available, and no old one is left.
#[must_use]
pub fn rolled_out(deployment: &apps::Deployment) -> bool {
    let want = deployment.spec.replicas.unwrap_or(1);
    let Some(status) = deployment.status.as_ref() else {
        return false;
    };
    status.observed_generation.unwrap_or(0) >= deployment.metadata.generation.unwrap_or(0)
        && status.replicas.unwrap_or(0) == want
        && status.updated_replicas.unwrap_or(0) == want
        && status.available_replicas.unwrap_or(0) >= want
}

/// Sums up `deployment` of `component`; `pod_failure` is what [`pod_failure`] found among its
/// pods, if anything.
#[must_use]
pub fn observe(
    component: Component,
    deployment: &apps::Deployment,
    pod_failure: Option<String>,
) -> Observed {
    let name = component.as_str();
    let want = deployment.spec.replicas.unwrap_or(1);
    let status = deployment.status.clone().unwrap_or_default();
    let current =
        status.observed_generation.unwrap_or(0) >= deployment.metadata.generation.unwrap_or(0);
    let condition = |type_: &str| {
        status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_.as_deref() == Some(type_))
    };
    let is_true = |c: &&apps::DeploymentCondition| c.status.as_deref() == Some("True");
    let available = current && condition("Available").is_some_and(|c| is_true(&c));
    let (updated, ready, free) = (
        status.updated_replicas.unwrap_or(0),
        status.ready_replicas.unwrap_or(0),
        status.available_replicas.unwrap_or(0),
    );
    let deadline = condition("Progressing")
        .filter(|c| {
            c.status.as_deref() == Some("False")
                && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
        })
        .map(|_| format!("{name}: the rollout exceeded its progress deadline"));
    Observed {
        component,
        available,
        rolled_out: rolled_out(deployment),
        failure: deadline.or(pod_failure.map(|f| format!("{name}: {f}"))),
        summary: format!("{free}/{want} replicas available"),
        counts: WorkloadStatus {
            replicas: want,
            ready_replicas: ready,
            updated_replicas: updated,
        },
    }
}

/// Why `pod` cannot run, if one of its containers waits for a reason that will not go away on
/// its own, e.g. `pod sample-backend-5d9f-x2x7k: container backend: CrashLoopBackOff`.
#[must_use]
pub fn pod_failure(pod: &corev1::Pod) -> Option<String> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    statuses.iter().find_map(|s| {
        let reason = s.state.as_ref()?.waiting.as_ref()?.reason.as_deref()?;
        FAILING_REASONS.contains(&reason).then(|| {
            format!(
                "pod {}: container {}: {reason}",
                pod.metadata.name.as_deref().unwrap_or_default(),
                s.name
            )
        })
    })
}

/// The status `current` becomes for `generation` given the two workloads and the frontend's
/// `url`; `now` stamps conditions that change. Fields other than those the engine owns (and
/// other conditions) are kept.
#[must_use]
pub fn desired(
    current: Option<&ServiceStatus>,
    generation: Option<i64>,
    frontend: &Observed,
    backend: &Observed,
    url: &str,
    now: Timestamp,
) -> ServiceStatus {
    let mut status = current.cloned().unwrap_or_default();
    let workloads = [frontend, backend];
    let join = |parts: Vec<String>| parts.join("; ");

    let unavailable: Vec<String> = workloads
        .iter()
        .filter(|w| !w.available)
        .map(|w| format!("{}: {}", w.component.as_str(), w.summary))
        .collect();
    let (ready, reason, message) = if unavailable.is_empty() {
        (
            ConditionStatus::True,
            reasons::RECONCILED,
            format!("the frontend and the backend are available at {url}"),
        )
    } else {
        (
            ConditionStatus::False,
            reasons::MINIMUM_REPLICAS_UNAVAILABLE,
            join(unavailable),
        )
    };
    status
        .conditions
        .set(READY, ready, reason, &message, generation, now);

    let rolling: Vec<String> = workloads
        .iter()
        .filter(|w| !w.rolled_out && w.failure.is_none())
        .map(|w| format!("{}: rolling out, {}", w.component.as_str(), w.summary))
        .collect();
    let (progressing, reason, message) = if rolling.is_empty() {
        (ConditionStatus::False, reasons::RECONCILED, String::new())
    } else {
        (ConditionStatus::True, reasons::RECONCILING, join(rolling))
    };
    status
        .conditions
        .set(PROGRESSING, progressing, reason, &message, generation, now);

    let failures: Vec<String> = workloads.iter().filter_map(|w| w.failure.clone()).collect();
    let (degraded, reason, message) = if failures.is_empty() {
        (ConditionStatus::False, reasons::AS_EXPECTED, String::new())
    } else {
        (ConditionStatus::True, WORKLOAD_FAILING, join(failures))
    };
    status
        .conditions
        .set(DEGRADED, degraded, reason, &message, generation, now);

    status.observed_generation = generation;
    status.frontend = Some(frontend.counts.clone());
    status.backend = Some(backend.counts.clone());
    status.url = Some(url.to_owned());
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentSpec, DeploymentStatus};

    fn deployment(want: i32, available: i32, condition: (&str, &str, &str)) -> apps::Deployment {
        apps::Deployment {
            spec: DeploymentSpec {
                replicas: Some(want),
                ..Default::default()
            },
            status: Some(DeploymentStatus {
                replicas: Some(want),
                updated_replicas: Some(want),
                ready_replicas: Some(available),
                available_replicas: Some(available),
                conditions: Some(vec![DeploymentCondition {
                    type_: Some(condition.0.to_owned()),
                    status: Some(condition.1.to_owned()),
                    reason: Some(condition.2.to_owned()),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn up() -> apps::Deployment {
        deployment(1, 1, ("Available", "True", "MinimumReplicasAvailable"))
    }

    fn now() -> Timestamp {
        Timestamp::from_second(1_700_000_000).expect("a valid time")
    }

    fn check(frontend: &Observed, backend: &Observed, expected: [(&str, &str, &str); 3]) {
        let status = desired(None, Some(2), frontend, backend, "http://x", now());
        for (type_, status_, message) in expected {
            let c = status.conditions.find(type_).expect(type_);
            assert_eq!(c.status.as_str(), status_, "{type_}: {c:?}");
            assert!(c.message.contains(message), "{type_}: {c:?}");
            assert_eq!(c.observed_generation, Some(2));
        }
        assert_eq!(status.observed_generation, Some(2));
        assert_eq!(status.url.as_deref(), Some("http://x"));
    }

    #[test]
    fn ready_only_when_both_are_available() {
        let down = deployment(2, 0, ("Available", "False", "MinimumReplicasUnavailable"));
        check(
            &observe(Component::Frontend, &up(), None),
            &observe(Component::Backend, &up(), None),
            [
                (READY, "True", "available"),
                (PROGRESSING, "False", ""),
                (DEGRADED, "False", ""),
            ],
        );
        check(
            &observe(Component::Frontend, &up(), None),
            &observe(Component::Backend, &down, None),
            [
                (READY, "False", "backend: 0/2 replicas available"),
                (PROGRESSING, "True", "backend: rolling out"),
                (DEGRADED, "False", ""),
            ],
        );
    }

    #[test]
    fn a_failing_workload_is_named_in_degraded() {
        let down = deployment(1, 0, ("Available", "False", "MinimumReplicasUnavailable"));
        let crashing = Some("pod b-1: container backend: CrashLoopBackOff".to_owned());
        check(
            &observe(Component::Frontend, &up(), None),
            &observe(Component::Backend, &down, crashing),
            [
                (READY, "False", "backend: 0/1"),
                (PROGRESSING, "False", ""),
                (DEGRADED, "True", "backend: pod b-1: container backend"),
            ],
        );
        let stuck = deployment(1, 0, ("Progressing", "False", "ProgressDeadlineExceeded"));
        check(
            &observe(Component::Frontend, &stuck, None),
            &observe(Component::Backend, &up(), None),
            [
                (READY, "False", "frontend"),
                (PROGRESSING, "False", ""),
                (DEGRADED, "True", "frontend: the rollout exceeded"),
            ],
        );
    }

    #[test]
    fn only_created_pods_are_waited_for() {
        let mut created = deployment(1, 0, ("Available", "False", "MinimumReplicasUnavailable"));
        assert!(!waits_for_pods(&up()), "rolled out");
        assert!(waits_for_pods(&created), "created, not available");
        if let Some(s) = created.status.as_mut() {
            s.updated_replicas = None;
        }
        assert!(!waits_for_pods(&created), "no pods yet");
    }

    #[test]
    fn an_unobserved_generation_is_not_available() {
        let mut d = up();
        d.metadata.generation = Some(3);
        if let Some(s) = d.status.as_mut() {
            s.observed_generation = Some(2);
        }
        let observed = observe(Component::Frontend, &d, None);
        assert!(!observed.available && !observed.rolled_out);
    }

    #[test]
    fn the_same_observation_changes_nothing() {
        let f = observe(Component::Frontend, &up(), None);
        let b = observe(Component::Backend, &up(), None);
        let first = desired(None, Some(1), &f, &b, "http://x", now());
        let later = Timestamp::from_second(1_800_000_000).expect("a valid time");
        let again = desired(Some(&first), Some(1), &f, &b, "http://x", later);
        assert_eq!(again, first);
    }

    #[test]
    fn only_lasting_waits_are_failures() {
        let pod = |reason: &str| corev1::Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("p".to_owned()),
                ..Default::default()
            },
            status: Some(corev1::PodStatus {
                container_statuses: Some(vec![corev1::ContainerStatus {
                    name: "backend".to_owned(),
                    state: Some(corev1::ContainerState {
                        waiting: Some(corev1::ContainerStateWaiting {
                            reason: Some(reason.to_owned()),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            pod_failure(&pod("ImagePullBackOff")).as_deref(),
            Some("pod p: container backend: ImagePullBackOff")
        );
        assert_eq!(pod_failure(&pod("ContainerCreating")), None);
    }
}
