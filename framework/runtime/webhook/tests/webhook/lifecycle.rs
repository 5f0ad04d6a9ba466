//! Graceful shutdown: once asked to stop, the server accepts no new connection and the
//! request in flight still gets its answer before `shutdown` returns. And the server as one of
//! the manager's runnables (`WebhookServerBuilder::add_to`): started and stopped with it, its
//! readiness and metrics the manager's, a failure to start the manager's failure.

use std::{net::SocketAddr, sync::Arc};

use k8s_openapi::api::core::v1::ConfigMap;
use mni_webhook::{Denial, Request, Validator, Warnings, WebhookServer};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::{Ca, api_server, http_get, wait_for};

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

/// A port nothing listens on now (the kernel's choice, released at once).
fn free_port() -> SocketAddr {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
}

#[tokio::test]
async fn add_to_runs_the_server_as_one_of_the_managers_runnables() {
    let (_server, client) = api_server().await;
    let ca = Ca::new();
    let dir = tempfile::tempdir().expect("tempdir");
    ca.write_serving_cert(dir.path());
    let address = free_port();
    let loopback = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    let running = WebhookServer::builder()
        .with_validator(Held {
            entered: Arc::new(Notify::new()),
            release: Arc::new(Notify::new()),
        })
        .with_cert_dir(dir.path())
        .with_bind_address(address)
        .add_to(
            mni_operator::Manager::builder(client.clone())
                .with_signal_handling(false)
                .with_metrics_address(loopback)
                .with_health_probe_address(loopback),
        )
        .build()
        .start()
        .await
        .expect("manager starts");

    // Ready once the server listens, which the manager started without being asked.
    let health = running.health_probe_address().expect("probe address");
    wait_for("readyz", || async {
        (http_get(health, "/readyz").await.0 == 200).then_some(())
    })
    .await;
    // A request reaches the server and is counted in the manager's metrics (a DELETE: `Held`
    // holds only creates, so it is allowed at once).
    let review = serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "counted", "operation": "DELETE",
            "oldObject": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}},
    }))
    .expect("review");
    let (code, body) = ca.post(address, "/validate--v1-configmap", review).await;
    assert_eq!(code, 200, "{body}");
    let metrics = running.metrics_address().expect("metrics address");
    let (code, exposition) = http_get(metrics, "/metrics").await;
    assert_eq!(code, 200);
    assert!(
        exposition.lines().any(|line| line
            .starts_with("controller_runtime_webhook_requests_total{")
            && line.contains("webhook=\"/validate--v1-configmap\"")
            && line.contains("code=\"200\"")
            && line.ends_with(" 1")),
        "{exposition}"
    );

    // Stopped with the manager: nothing listens on the port any more. (Connecting, not
    // binding, is the check: once released, the kernel may hand the port to another test's
    // outgoing connection, and a bind would then fail for a reason that is not the server's.)
    running.shutdown().await.expect("graceful shutdown");
    let refused = tokio::net::TcpStream::connect(address)
        .await
        .expect_err("the webhook server still listens after the manager stopped");
    assert_eq!(
        refused.kind(),
        std::io::ErrorKind::ConnectionRefused,
        "{refused}"
    );

    // Without its certificate the server cannot start, and the manager stops with that error.
    let empty = tempfile::tempdir().expect("tempdir");
    let running = WebhookServer::builder()
        .with_validator(Held {
            entered: Arc::new(Notify::new()),
            release: Arc::new(Notify::new()),
        })
        .with_cert_dir(empty.path())
        .with_bind_address(free_port())
        .add_to(mni_operator::Manager::builder(client).for_tests())
        .build()
        .start()
        .await
        .expect("manager starts");
    let error = running
        .wait()
        .await
        .expect_err("the server's failure stops the manager");
    assert!(
        matches!(&error, mni_operator::Error::Runnable { name, .. } if name == "webhook server"),
        "{error:?}"
    );
}
