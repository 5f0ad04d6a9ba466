//! A validator and a defaulter for ConfigMaps, registered with the API server by Validating-
//! and MutatingWebhookConfigurations: denials, defaults, warnings and dry runs reach the
//! client through the real admission chain; the manager's `/readyz` waits for the server and
//! its `/metrics` counts the requests.

use std::{net::SocketAddr, sync::Arc};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use mni_webhook::WebhookServer;
use serde_json::json;

use crate::support::{Ca, api_server, configure, http_get, wait_for};

// ANCHOR: webhooks (shown in book/src/operator-runtime.md)
use mni_webhook::{Defaulter, Denial, Request, Validator, Warnings};

/// Refuses ConfigMaps holding a `password` key; warns about names starting with `tmp-`.
struct NoPasswords;

impl Validator<ConfigMap> for NoPasswords {
    async fn validate_create(&self, req: &Request, cm: &ConfigMap) -> Result<Warnings, Denial> {
        check(req, cm)
    }

    async fn validate_update(
        &self,
        req: &Request,
        _old: &ConfigMap,
        new: &ConfigMap,
    ) -> Result<Warnings, Denial> {
        check(req, new)
    }
}

fn check(req: &Request, cm: &ConfigMap) -> Result<Warnings, Denial> {
    if cm.data.as_ref().is_some_and(|d| d.contains_key("password")) {
        return Err(Denial::invalid("data.password: put passwords in a Secret"));
    }
    let mut warnings = Warnings::new();
    if cm
        .metadata
        .name
        .as_deref()
        .is_some_and(|n| n.starts_with("tmp-"))
    {
        warnings.push("a tmp- ConfigMap is deleted by the nightly cleanup".into());
    }
    if req.dry_run {
        warnings.push("validated a dry run".into());
    }
    Ok(warnings)
}

/// Gives every ConfigMap a `team` label, `platform` unless it has one.
struct TeamLabel;

impl Defaulter<ConfigMap> for TeamLabel {
    async fn default(&self, _req: &Request, cm: &mut ConfigMap) -> Result<Warnings, Denial> {
        let labels = cm.metadata.labels.get_or_insert_default();
        labels
            .entry("team".into())
            .or_insert_with(|| "platform".into());
        Ok(Warnings::new())
    }
}

/// The server with both, its metrics in the manager's registry (Kubebuilder's paths:
/// `/validate--v1-configmap` and `/mutate--v1-configmap`).
pub(crate) fn webhook_server(metrics: &mni_operator::Metrics) -> mni_webhook::WebhookServerBuilder {
    WebhookServer::builder()
        .with_validator(NoPasswords)
        .with_defaulter(TeamLabel)
        .with_metrics(metrics)
}
// ANCHOR_END: webhooks

fn config_map(name: &str, key: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {key: "v"}})).expect("cm")
}

#[tokio::test]
async fn validators_and_defaulters_act_through_the_api_servers_admission_chain() {
    let (_server, client) = api_server().await;
    let ca = Ca::new();
    let cert_dir = tempfile::tempdir().expect("tempdir");
    ca.write_serving_cert(cert_dir.path());

    // The manager's probes include the webhook server's started check.
    let metrics = Arc::new(mni_operator::Metrics::new());
    let webhooks = webhook_server(&metrics)
        .with_cert_dir(cert_dir.path())
        .with_bind_address(SocketAddr::from(([127, 0, 0, 1], 0)));
    assert_eq!(
        webhooks.paths(),
        ["/mutate--v1-configmap", "/validate--v1-configmap"]
    );
    let manager = mni_operator::Manager::builder(client.clone())
        .with_signal_handling(false)
        .with_metrics(metrics)
        .with_metrics_address(Some(SocketAddr::from(([127, 0, 0, 1], 0))))
        .with_health_probe_address(Some(SocketAddr::from(([127, 0, 0, 1], 0))))
        .with_readyz_check("webhook", webhooks.started_checker())
        .build()
        .start()
        .await
        .expect("manager starts");
    let health = manager.health_probe_address().expect("probe address");
    let (status, body) = http_get(health, "/readyz").await;
    assert_eq!(status, 503);
    assert!(body.contains("\"webhook\""), "{body}");
    let running = webhooks.start().await.expect("webhook server starts");
    wait_for("readyz", || async {
        (http_get(health, "/readyz").await.0 == 200).then_some(())
    })
    .await;

    let address = running.local_addr();
    configure(
        &client,
        "Mutating",
        "team-label",
        ca.client_config(address, "/mutate--v1-configmap"),
    )
    .await;
    configure(
        &client,
        "Validating",
        "no-passwords",
        ca.client_config(address, "/validate--v1-configmap"),
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    // Denied: the client gets the validator's code and message, nothing is stored.
    let denied = cms
        .create(&PostParams::default(), &config_map("creds", "password"))
        .await
        .expect_err("denied");
    let kube::Error::Api(status) = denied else {
        panic!("expected an API error, got {denied}")
    };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        "admission webhook \"no-passwords.example.com\" denied the request: data.password: put passwords in a Secret"
    );
    assert!(cms.get_opt("creds").await.expect("get").is_none());

    // Defaulted: stored with the label; one set by the user is kept.
    let created = cms
        .create(&PostParams::default(), &config_map("settings", "mode"))
        .await
        .expect("created");
    assert_eq!(created.metadata.labels.expect("labels")["team"], "platform");
    let stored = cms.get("settings").await.expect("stored");
    assert_eq!(stored.metadata.labels.expect("labels")["team"], "platform");
    let relabelled = cms
        .patch(
            "settings",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "storage"}}})),
        )
        .await
        .expect("updated");
    assert_eq!(
        relabelled.metadata.labels.expect("labels")["team"],
        "storage"
    );
    // An update the validator refuses.
    let refused = cms
        .patch(
            "settings",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"password": "x"}})),
        )
        .await
        .expect_err("update denied");
    assert!(
        refused.to_string().contains("put passwords in a Secret"),
        "{refused}"
    );

    // Warnings reach the client as `Warning` headers, also on a dry run, which the validator
    // sees (and nothing is stored).
    let body = serde_json::to_vec(&config_map("tmp-scratch", "k")).expect("body");
    let request = http::Request::post("/api/v1/namespaces/default/configmaps?dryRun=All")
        .header("content-type", "application/json")
        .body(body)
        .expect("request");
    let response = client
        .send(request.map(Into::into))
        .await
        .expect("dry-run create");
    assert_eq!(response.status(), 201);
    let warnings: Vec<String> = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().expect("ascii").to_string())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("a tmp- ConfigMap is deleted by the nightly cleanup")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("validated a dry run")),
        "{warnings:?}"
    );
    assert!(cms.get_opt("tmp-scratch").await.expect("get").is_none());

    // The counters moved, under controller-runtime's names, on the manager's /metrics.
    let (status, text) = http_get(manager.metrics_address().expect("metrics"), "/metrics").await;
    assert_eq!(status, 200);
    let value = |line_start: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(line_start))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {line_start} in\n{text}"))
    };
    // Five calls each: the denied create, the create, the two patches, the dry run.
    assert_eq!(
        value(
            "controller_runtime_webhook_requests_total{webhook=\"/validate--v1-configmap\",code=\"200\"}"
        ),
        5.0
    );
    assert_eq!(
        value(
            "controller_runtime_webhook_requests_total{webhook=\"/mutate--v1-configmap\",code=\"200\"}"
        ),
        5.0
    );
    assert_eq!(
        value("controller_runtime_webhook_requests_in_flight{webhook=\"/validate--v1-configmap\"}"),
        0.0
    );
    assert_eq!(
        value(
            "controller_runtime_webhook_latency_seconds_count{webhook=\"/validate--v1-configmap\"}"
        ),
        5.0
    );

    // Malformed reviews are a 400 naming the problem; other paths a 404.
    let (code, body) = ca
        .post(
            address,
            "/validate--v1-configmap",
            b"{\"kind\": 1}".to_vec(),
        )
        .await;
    assert_eq!(code, 400);
    assert!(
        body.contains("not an admission.k8s.io/v1 AdmissionReview"),
        "{body}"
    );
    let (code, body) = ca
        .post(address, "/validate-apps-v1-deployment", b"{}".to_vec())
        .await;
    assert_eq!(code, 404, "{body}");
    let (_, text) = http_get(manager.metrics_address().expect("metrics"), "/metrics").await;
    assert!(
        text.contains("controller_runtime_webhook_requests_total{webhook=\"/validate--v1-configmap\",code=\"400\"} 1"),
        "{text}"
    );

    running.shutdown().await.expect("webhook server stops");
    let (status, _) = http_get(health, "/readyz").await;
    assert_eq!(status, 503, "not ready once the webhook server stopped");
    manager.shutdown().await.expect("manager stops");
}
