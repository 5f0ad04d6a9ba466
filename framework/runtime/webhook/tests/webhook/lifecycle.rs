//! Graceful shutdown: once asked to stop, the server accepts no new connection and the
//! request in flight still gets its answer before `shutdown` returns.

use std::{net::SocketAddr, sync::Arc};

use k8s_openapi::api::core::v1::ConfigMap;
use mni_webhook::{Denial, Request, Validator, Warnings, WebhookServer};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::{Ca, wait_for};

/// Says when a request arrived, answers when released.
struct Held {
    entered: Arc<Notify>,
    release: Arc<Notify>,
}

impl Validator<ConfigMap> for Held {
    async fn validate_create(&self, _: &Request, _: &ConfigMap) -> Result<Warnings, Denial> {
        self.entered.notify_one();
        self.release.notified().await;
        Ok(Warnings::new())
    }
}

#[tokio::test]
async fn shutdown_lets_the_request_in_flight_finish() {
    let ca = Arc::new(Ca::new());
    let dir = tempfile::tempdir().expect("tempdir");
    ca.write_serving_cert(dir.path());
    let (entered, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let running = WebhookServer::builder()
        .with_validator(Held {
            entered: entered.clone(),
            release: release.clone(),
        })
        .with_cert_dir(dir.path())
        .with_bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .start()
        .await
        .expect("starts");
    let address = running.local_addr();
    let review = serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "in-flight", "operation": "CREATE",
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}},
    }))
    .expect("review");
    let in_flight = tokio::spawn({
        let ca = ca.clone();
        async move { ca.post(address, "/validate--v1-configmap", review).await }
    });
    entered.notified().await;

    let shutdown = tokio::spawn(running.shutdown());
    wait_for("the listener to close", || async {
        tokio::net::TcpStream::connect(address)
            .await
            .err()
            .map(drop)
    })
    .await;
    assert!(!shutdown.is_finished(), "waits for the request in flight");

    release.notify_one();
    let (code, body) = in_flight.await.expect("request task");
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(answer["response"]["uid"], "in-flight");
    assert_eq!(answer["response"]["allowed"], true);
    shutdown
        .await
        .expect("shutdown task")
        .expect("stops gracefully");
}
