//! Prometheus metrics under controller-runtime's names, served on `/metrics`.
//!
//! Dashboards and alerts written for kubebuilder operators work unchanged:
//! `controller_runtime_reconcile_total{controller,result}`,
//! `controller_runtime_reconcile_errors_total{controller}`,
//! `controller_runtime_reconcile_time_seconds{controller}` (histogram),
//! `controller_runtime_active_workers{controller}`,
//! `controller_runtime_max_concurrent_reconciles{controller}` and
//! `leader_election_master_status{name}`. The text is prometheus-client's encoding.

use std::sync::Mutex;

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

/// controller-runtime's reconcile-time buckets, in seconds.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

type HistogramFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

/// The manager's metric registry.
///
/// [`Metrics::register`] adds an operator's own metrics next to the runtime's.
pub struct Metrics {
    registry: Mutex<Registry>,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_time: HistogramFamily,
    active_workers: Family<ControllerLabels, Gauge>,
    max_concurrent: Family<ControllerLabels, Gauge>,
    leader: Family<NameLabels, Gauge>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// How a reconcile ended, as the `result` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    Error,
    Requeue,
    RequeueAfter,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Requeue => "requeue",
            Self::RequeueAfter => "requeue_after",
        }
    }
}

impl Metrics {
    /// A registry holding the runtime's metrics, all at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let reconcile_total = Family::<ResultLabels, Counter>::default();
        let reconcile_errors = Family::<ControllerLabels, Counter>::default();
        let reconcile_time: HistogramFamily =
            Family::new_with_constructor(|| Histogram::new(RECONCILE_TIME_BUCKETS));
        let active_workers = Family::<ControllerLabels, Gauge>::default();
        let max_concurrent = Family::<ControllerLabels, Gauge>::default();
        let leader = Family::<NameLabels, Gauge>::default();
        // prometheus-client appends `_total` to counters.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active_workers.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            max_concurrent.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            leader.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            reconcile_total,
            reconcile_errors,
            reconcile_time,
            active_workers,
            max_concurrent,
            leader,
        }
    }

    /// Registers an operator's own metric (see prometheus-client's `Registry::register`).
    pub fn register(
        &self,
        name: &str,
        help: &str,
        metric: impl prometheus_client::registry::Metric,
    ) {
        self.registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .register(name, help, metric);
    }

    /// The metrics in the text exposition format (what `/metrics` serves).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &registry);
        out
    }

    pub(crate) fn controller_started(&self, controller: &str, max_concurrent: u16) {
        let labels = controller_labels(controller);
        self.max_concurrent
            .get_or_create(&labels)
            .set(i64::from(max_concurrent));
        self.active_workers.get_or_create(&labels).set(0);
        for outcome in [
            Outcome::Success,
            Outcome::Error,
            Outcome::Requeue,
            Outcome::RequeueAfter,
        ] {
            let _ = self.reconcile_total.get_or_create(&ResultLabels {
                controller: controller.to_string(),
                result: outcome.label().to_string(),
            });
        }
        let _ = self.reconcile_errors.get_or_create(&labels);
    }

    pub(crate) fn worker_started(&self, controller: &str) {
        self.active_workers
            .get_or_create(&controller_labels(controller))
            .inc();
    }

    pub(crate) fn reconciled(&self, controller: &str, outcome: Outcome, seconds: f64) {
        let labels = controller_labels(controller);
        self.active_workers.get_or_create(&labels).dec();
        self.reconcile_time.get_or_create(&labels).observe(seconds);
        self.reconcile_total
            .get_or_create(&ResultLabels {
                controller: controller.to_string(),
                result: outcome.label().to_string(),
            })
            .inc();
        if outcome == Outcome::Error {
            self.reconcile_errors.get_or_create(&labels).inc();
        }
    }

    pub(crate) fn set_leader(&self, lease: &str, leading: bool) {
        self.leader
            .get_or_create(&NameLabels {
                name: lease.to_string(),
            })
            .set(i64::from(leading));
    }
}

fn controller_labels(controller: &str) -> ControllerLabels {
    ControllerLabels {
        controller: controller.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_controller_runtime_names() {
        let m = Metrics::new();
        m.controller_started("widgets", 2);
        m.worker_started("widgets");
        m.reconciled("widgets", Outcome::Error, 0.002);
        m.set_leader("widgets-lock", true);
        let text = m.encode();
        for line in [
            "controller_runtime_reconcile_total{controller=\"widgets\",result=\"error\"} 1",
            "controller_runtime_reconcile_total{controller=\"widgets\",result=\"success\"} 0",
            "controller_runtime_reconcile_errors_total{controller=\"widgets\"} 1",
            "controller_runtime_max_concurrent_reconciles{controller=\"widgets\"} 2",
            "controller_runtime_active_workers{controller=\"widgets\"} 0",
            "controller_runtime_reconcile_time_seconds_count{controller=\"widgets\"} 1",
            "leader_election_master_status{name=\"widgets-lock\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
        }
    }
}
