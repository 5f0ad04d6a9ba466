//! Shared fixtures: an in-process API server with the Widget CRD, clients, a manager builder
//! for tests, polling, and a tiny HTTP client for the probe and metrics endpoints.

use std::{future::Future, net::SocketAddr, time::Duration};

use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::{Api, Client};
use mni_operator::{Manager, ManagerBuilder};
use mni_testkit::TestEnv;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "../../examples/configmap-owner/widget.rs"]
pub(crate) mod widget;

pub(crate) use widget::{Widget, WidgetSpec};

/// A test environment (mni-testkit: in-process API server) with the Widget CRD installed.
pub(crate) struct Env {
    pub(crate) env: TestEnv,
    pub(crate) client: Client,
}

impl Env {
    pub(crate) async fn start() -> Env {
        let env = TestEnv::builder()
            .with_crds(widget::crds())
            .start()
            .await
            .expect("test environment starts");
        let client = env.client();
        Env { env, client }
    }

    pub(crate) fn widgets(&self) -> Api<Widget> {
        Api::namespaced(self.client.clone(), "default")
    }

    /// A client for ServiceAccount `default/<name>` bound to a Role with `rules`.
    pub(crate) async fn service_account_client(&self, name: &str, rules: Value) -> Client {
        let rules: Vec<PolicyRule> = serde_json::from_value(rules).expect("policy rules");
        self.env
            .service_account_client("default", name, rules)
            .await
            .expect("service account client")
    }

    /// A kubeconfig file for the admin, for child processes.
    pub(crate) fn kubeconfig(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(&path, self.env.kubeconfig()).expect("write kubeconfig");
        path
    }
}

/// A manager builder on ephemeral loopback ports, without signal handling.
pub(crate) fn manager(client: Client) -> ManagerBuilder {
    let local = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    Manager::builder(client)
        .with_metrics_address(local)
        .with_health_probe_address(local)
        .with_signal_handling(false)
}

pub(crate) fn widget(name: &str, data: &[(&str, &str)]) -> Widget {
    Widget::new(
        name,
        WidgetSpec {
            data: data
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        },
    )
}

/// Polls `check` every 25 ms until it returns `Some`, for at most 20 s.
pub(crate) async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// `GET path` over HTTP/1.0; returns the status code and body.
pub(crate) async fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// The `Ready` condition of a widget, if any: (status, reason, message, observedGeneration).
pub(crate) fn ready_condition(w: &Widget) -> Option<(String, String, String, Option<i64>)> {
    let c = w
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")?;
    Some((
        c.status.to_string(),
        c.reason.clone(),
        c.message.clone(),
        c.observed_generation,
    ))
}
