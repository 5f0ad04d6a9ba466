//! Shared fixtures: an in-process API server with the Widget CRD, clients, a manager builder
//! for tests, polling, and a tiny HTTP client for the probe and metrics endpoints.

use std::{future::Future, net::SocketAddr, time::Duration};

use k8s_openapi::{
    api::{authentication::v1::TokenRequest, core::v1::ServiceAccount},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, Config,
    api::{ListParams, PostParams},
};
use mni_apiserver::Server;
use mni_operator::{Manager, ManagerBuilder};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "../../examples/configmap-owner/widget.rs"]
pub(crate) mod widget;

pub(crate) use widget::{Widget, WidgetSpec};

/// A running API server and an admin client, with the Widget CRD installed.
pub(crate) struct Env {
    pub(crate) server: Server,
    pub(crate) client: Client,
}

impl Env {
    pub(crate) async fn start() -> Env {
        let server = Server::builder().start().await.expect("server starts");
        let client = client_with_token(&server, server.admin_token());
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in widget::crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("install CRD");
        }
        let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
        wait_for("the Widget API to be served", || async {
            widgets.list(&ListParams::default()).await.ok()
        })
        .await;
        Env { server, client }
    }

    pub(crate) fn widgets(&self) -> Api<Widget> {
        Api::namespaced(self.client.clone(), "default")
    }

    /// A client for ServiceAccount `default/<name>` bound to a Role with `rules`.
    pub(crate) async fn service_account_client(&self, name: &str, rules: Value) -> Client {
        let admin = &self.client;
        let create = |kind: &'static str, body: Value| {
            let gvk = match kind {
                "Role" | "RoleBinding" => ("rbac.authorization.k8s.io", "v1"),
                _ => ("", "v1"),
            };
            let resource = kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
                gvk.0, gvk.1, kind,
            ));
            let api: Api<kube::api::DynamicObject> =
                Api::namespaced_with(admin.clone(), "default", &resource);
            async move {
                let obj: kube::api::DynamicObject = serde_json::from_value(body).expect("object");
                api.create(&PostParams::default(), &obj).await.expect(kind);
            }
        };
        create(
            "ServiceAccount",
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}),
        )
        .await;
        create(
            "Role",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name}, "rules": rules}),
        )
        .await;
        create(
            "RoleBinding",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}]}),
        )
        .await;
        let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
        let req: TokenRequest = serde_json::from_value(json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": [], "expirationSeconds": 3600}}))
        .expect("token request");
        let token = sas
            .create_token_request(name, &PostParams::default(), &req)
            .await
            .expect("token")
            .status
            .and_then(|s| s.token)
            .expect("token");
        client_with_token(&self.server, &token)
    }

    /// A kubeconfig file for the admin, for child processes.
    pub(crate) fn kubeconfig(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: mni\n  cluster:\n    server: {}\nusers:\n- name: admin\n  user:\n    token: {}\ncontexts:\n- name: mni\n  context:\n    cluster: mni\n    user: admin\n    namespace: default\ncurrent-context: mni\n",
            self.server.url(),
            self.server.admin_token()
        );
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }
}

pub(crate) fn client_with_token(server: &Server, token: &str) -> Client {
    let mut config = Config::new(server.url().parse().expect("url"));
    config.auth_info.token = Some(token.to_string().into());
    Client::try_from(config).expect("client")
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
        c.status.clone(),
        c.reason.clone(),
        c.message.clone(),
        c.observed_generation,
    ))
}
