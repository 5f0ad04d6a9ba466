//! The webhook server's metrics under controller-runtime's names, registered into the
//! manager's registry ([`mni_operator::Metrics`]) so its `/metrics` serves them:
//!
//! - `controller_runtime_webhook_requests_total{webhook,code}`: requests by path and HTTP code;
//! - `controller_runtime_webhook_requests_in_flight{webhook}`: requests being served;
//! - `controller_runtime_webhook_latency_seconds{webhook}`: a histogram of how long they took.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
};

/// Prometheus' default buckets, which controller-runtime's latency histogram uses.
const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    webhook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    webhook: String,
    code: String,
}

type LatencyFamily = Family<WebhookLabels, Histogram, fn() -> Histogram>;

/// The webhook server's metric families; cheap to clone (clones share the values).
#[derive(Clone, Debug)]
pub(crate) struct WebhookMetrics {
    requests: Family<CodeLabels, Counter>,
    in_flight: Family<WebhookLabels, Gauge>,
    latency: LatencyFamily,
}

impl WebhookMetrics {
    pub(crate) fn new() -> Self {
        Self {
            requests: Family::default(),
            in_flight: Family::default(),
            latency: Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS)),
        }
    }

    /// Registers the families in `registry` (prometheus-client appends `_total` to counters).
    pub(crate) fn register(&self, registry: &mni_operator::Metrics) {
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code",
            self.requests.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served",
            self.in_flight.clone(),
        );
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            self.latency.clone(),
        );
    }

    /// Shows `webhook` at zero before its first request.
    pub(crate) fn webhook_added(&self, webhook: &str) {
        let _ = self.in_flight.get_or_create(&labels(webhook));
    }

    pub(crate) fn started(&self, webhook: &str) {
        self.in_flight.get_or_create(&labels(webhook)).inc();
    }

    pub(crate) fn finished(&self, webhook: &str, code: u16, seconds: f64) {
        let labels = labels(webhook);
        self.in_flight.get_or_create(&labels).dec();
        self.latency.get_or_create(&labels).observe(seconds);
        self.requests
            .get_or_create(&CodeLabels {
                webhook: webhook.to_string(),
                code: code.to_string(),
            })
            .inc();
    }
}

fn labels(webhook: &str) -> WebhookLabels {
    WebhookLabels {
        webhook: webhook.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_controller_runtime_names() {
        let registry = mni_operator::Metrics::new();
        let metrics = WebhookMetrics::new();
        metrics.register(&registry);
        metrics.webhook_added("/validate--v1-configmap");
        metrics.started("/validate--v1-configmap");
        metrics.finished("/validate--v1-configmap", 200, 0.003);
        metrics.started("/convert");
        let text = registry.encode();
        for line in [
            "controller_runtime_webhook_requests_total{webhook=\"/validate--v1-configmap\",code=\"200\"} 1",
            "controller_runtime_webhook_requests_in_flight{webhook=\"/validate--v1-configmap\"} 0",
            "controller_runtime_webhook_requests_in_flight{webhook=\"/convert\"} 1",
            "controller_runtime_webhook_latency_seconds_count{webhook=\"/validate--v1-configmap\"} 1",
            "controller_runtime_webhook_latency_seconds_bucket{le=\"0.005\",webhook=\"/validate--v1-configmap\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
        }
    }
}
