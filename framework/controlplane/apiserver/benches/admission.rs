//! Admission webhook overhead: the latency of one ConfigMap create against the in-process API
//! server (in-memory store) with no webhook, with one validating webhook, and with one
//! mutating (a JSONPatch adding a label) plus one validating webhook. The webhooks are real
//! HTTPS servers in this process (`tests/support/hooks.rs`), called by URL with a `caBundle`.
//!
//! Run with `cargo bench -p mni-apiserver --bench admission`. Creates are sequential, through
//! one kube-rs client; each scenario warms up, then reports p50, p99 and the mean over
//! `CREATES` requests.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::core::DynamicObject;
use serde_json::{Value, json};

#[path = "../tests/support/hooks.rs"]
mod hooks;

use hooks::{HookServer, allow, patch};

/// Measured creates per scenario.
const CREATES: usize = 1000;
/// Unmeasured creates first.
const WARMUP: usize = 100;

fn webhook(name: &str, client_config: Value) -> Value {
    json!({
        "name": name,
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "clientConfig": client_config,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

async fn configure(client: &kube::Client, kind: &str, name: &str, hook: Value) {
    let resource = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: format!("{kind}WebhookConfiguration"),
        plural: format!("{}webhookconfigurations", kind.to_lowercase()),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": format!("{kind}WebhookConfiguration"),
        "metadata": {"name": name},
        "webhooks": [hook],
    }))
    .expect("configuration");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("configured");
}

/// Creates `WARMUP + CREATES` ConfigMaps named `{prefix}-N`; the measured latencies, sorted.
async fn measure(client: &kube::Client, prefix: &str) -> Vec<Duration> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut latencies = Vec::with_capacity(CREATES);
    for i in 0..WARMUP + CREATES {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": format!("{prefix}-{i}")},
            "data": {"key": "value"},
        }))
        .expect("cm");
        let start = Instant::now();
        api.create(&PostParams::default(), &cm)
            .await
            .expect("created");
        if i >= WARMUP {
            latencies.push(start.elapsed());
        }
    }
    latencies.sort();
    latencies
}

fn report(scenario: &str, l: &[Duration]) {
    let at = |q: f64| l[((l.len() as f64 * q) as usize).min(l.len() - 1)];
    let mean = l.iter().sum::<Duration>() / l.len() as u32;
    println!(
        "{scenario:<40} p50 {:>8.3} ms  p99 {:>8.3} ms  mean {:>8.3} ms",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        mean.as_secs_f64() * 1e3,
    );
}

#[tokio::main]
async fn main() {
    let server = mni_apiserver::Server::builder()
        .start()
        .await
        .expect("server");
    let mut config = kube::Config::new(server.url().parse().expect("url"));
    config.auth_info.token = Some(server.admin_token().to_string().into());
    let client = kube::Client::try_from(config).expect("client");
    println!("{CREATES} sequential ConfigMap creates per scenario ({WARMUP} warm-up)");

    report("no webhooks", &measure(&client, "none").await);

    let validating = HookServer::start(|_| allow()).await;
    configure(
        &client,
        "Validating",
        "bench-validate",
        webhook("validate.bench.mni.dev", validating.url_config("/")),
    )
    .await;
    report("1 validating webhook", &measure(&client, "validated").await);

    let mutating = HookServer::start(|_| {
        patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]))
    })
    .await;
    configure(
        &client,
        "Mutating",
        "bench-mutate",
        webhook("mutate.bench.mni.dev", mutating.url_config("/")),
    )
    .await;
    report(
        "1 mutating + 1 validating webhook",
        &measure(&client, "both").await,
    );
    server.shutdown().await;
}
