//! Admission overhead: the latency of one ConfigMap create against the in-process API server
//! (in-memory store) with no webhook, with one ValidatingAdmissionPolicy (a CEL rule on the
//! ConfigMap's data, bound cluster-wide), with one validating webhook, and with one mutating (a
//! JSONPatch adding a label) plus one validating webhook. The webhooks are real HTTPS servers in
//! this process (`tests/support/hooks.rs`), called by URL with a `caBundle`.
//!
//! Run with `cargo bench -p mni-apiserver --bench admission`. Creates are sequential, through
//! one kube-rs client; each scenario warms up, then reports p50 and p99 over 1,000 requests
//! (`-- --smoke`: 20), the webhook scenarios with the no-webhook figures as their anchor.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::core::DynamicObject;
use mni_bench::{Better, Mode, Report};
use serde_json::{Value, json};

#[path = "../tests/integration/support/hooks.rs"]
mod hooks;

use hooks::{HookServer, allow, patch};

/// (measured creates, unmeasured creates first) per scenario, in a full and a smoke run.
const FULL: (usize, usize) = (1000, 100);
const SMOKE: (usize, usize) = (20, 5);

fn webhook(name: &str, client_config: Value) -> Value {
    json!({
        "name": name,
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "clientConfig": client_config,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// The cluster-scoped `admissionregistration.k8s.io/v1` API of `kind`.
fn admission_api(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let lower = kind.to_lowercase();
    let plural = match lower.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{lower}s"),
    };
    let resource = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: kind.to_owned(),
        plural,
    };
    Api::all_with(client.clone(), &resource)
}

/// Creates a ValidatingAdmissionPolicy on ConfigMap creates (at most 10 data keys) and its
/// cluster-wide binding, and waits until it denies a ConfigMap that breaks it.
async fn policy(client: &kube::Client) {
    let policy: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bench-data-keys"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }]},
            "validations": [{
                "expression": "!has(object.data) || size(object.data) <= 10",
                "message": "at most 10 data keys",
            }],
        },
    }))
    .expect("policy");
    let binding: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "bench-data-keys"},
        "spec": {"policyName": "bench-data-keys", "validationActions": ["Deny"]},
    }))
    .expect("binding");
    let pp = PostParams::default();
    admission_api(client, "ValidatingAdmissionPolicy")
        .create(&pp, &policy)
        .await
        .expect("policy created");
    admission_api(client, "ValidatingAdmissionPolicyBinding")
        .create(&pp, &binding)
        .await
        .expect("binding created");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let data: serde_json::Map<String, Value> =
        (0..11).map(|i| (format!("k{i}"), json!("v"))).collect();
    for attempt in 0.. {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": format!("policy-probe-{attempt}")},
            "data": data,
        }))
        .expect("cm");
        match api.create(&pp, &cm).await {
            Err(kube::Error::Api(e)) if e.message.contains("at most 10 data keys") => break,
            Ok(_) if attempt < 100 => tokio::time::sleep(Duration::from_millis(20)).await,
            other => panic!("the policy does not deny: {other:?}"),
        }
    }
}

/// Removes the policy's binding, so later scenarios run without it.
async fn unbind(client: &kube::Client) {
    admission_api(client, "ValidatingAdmissionPolicyBinding")
        .delete("bench-data-keys", &Default::default())
        .await
        .expect("binding deleted");
}

async fn configure(client: &kube::Client, kind: &str, name: &str, hook: Value) {
    let api = admission_api(client, &format!("{kind}WebhookConfiguration"));
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

/// Creates `warmup + creates` ConfigMaps named `{prefix}-N`; the measured latencies, sorted.
async fn measure(
    client: &kube::Client,
    prefix: &str,
    (creates, warmup): (usize, usize),
) -> Vec<Duration> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut latencies = Vec::with_capacity(creates);
    for i in 0..warmup + creates {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": format!("{prefix}-{i}")},
            "data": {"key": "value"},
        }))
        .expect("cm");
        let start = Instant::now();
        api.create(&PostParams::default(), &cm)
            .await
            .expect("created");
        if i >= warmup {
            latencies.push(start.elapsed());
        }
    }
    latencies.sort();
    latencies
}

/// The p50 and p99 of sorted latencies, in milliseconds.
fn quantiles(l: &[Duration]) -> (f64, f64) {
    let at = |q: f64| l[((l.len() as f64 * q) as usize).min(l.len() - 1)].as_secs_f64() * 1e3;
    (at(0.50), at(0.99))
}

#[tokio::main]
async fn main() -> ExitCode {
    let mode = Mode::from_env();
    let sizes = mode.pick(FULL, SMOKE);
    let mut report = Report::new("admission", mode);
    let server = mni_apiserver::Server::builder()
        .start()
        .await
        .expect("server");
    let mut config = kube::Config::new(server.url().parse().expect("url"));
    config.auth_info.token = Some(server.admin_token().to_string().into());
    let client = kube::Client::try_from(config).expect("client");
    let (none_p50, none_p99) = quantiles(&measure(&client, "none", sizes).await);
    let label = |what: &str, q: &str| format!("ConfigMap create, {what}, {q} of {}", sizes.0);
    report.figure(
        label("no webhooks", "p50"),
        "ms",
        Some(none_p50),
        Better::Lower,
    );
    report.figure(
        label("no webhooks", "p99"),
        "ms",
        Some(none_p99),
        Better::Lower,
    );

    let anchor = "no webhooks";
    policy(&client).await;
    let (p50, p99) = quantiles(&measure(&client, "policy", sizes).await);
    let vap = "1 ValidatingAdmissionPolicy";
    report
        .figure(label(vap, "p50"), "ms", Some(p50), Better::Lower)
        .anchor("no policy, no webhooks", Some(none_p50));
    report
        .figure(label(vap, "p99"), "ms", Some(p99), Better::Lower)
        .anchor("no policy, no webhooks", Some(none_p99));
    unbind(&client).await;

    let validating = HookServer::start(|_| allow()).await;
    configure(
        &client,
        "Validating",
        "bench-validate",
        webhook("validate.bench.mni.dev", validating.url_config("/")),
    )
    .await;
    let (p50, p99) = quantiles(&measure(&client, "validated", sizes).await);
    report
        .figure(
            label("1 validating webhook", "p50"),
            "ms",
            Some(p50),
            Better::Lower,
        )
        .anchor(anchor, Some(none_p50));
    report
        .figure(
            label("1 validating webhook", "p99"),
            "ms",
            Some(p99),
            Better::Lower,
        )
        .anchor(anchor, Some(none_p99));

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
    let (p50, p99) = quantiles(&measure(&client, "both", sizes).await);
    let both = "1 mutating + 1 validating webhook";
    report
        .figure(label(both, "p50"), "ms", Some(p50), Better::Lower)
        .anchor(anchor, Some(none_p50));
    report
        .figure(label(both, "p99"), "ms", Some(p99), Better::Lower)
        .anchor(anchor, Some(none_p99));
    server.shutdown().await;
    report.finish()
}
