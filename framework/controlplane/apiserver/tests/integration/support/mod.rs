//! Shared test setup: an in-process server and kube-rs clients for its identities.

#![allow(dead_code, unreachable_pub)]

use kube::{Client, Config};
use mni_apiserver::{Server, ServerBuilder};

/// A kube-rs client authenticating with `token`.
pub fn client_with_token(server: &Server, token: &str) -> Client {
    let mut config = Config::new(server.url().parse().expect("url"));
    config.auth_info.token = Some(token.to_string().into());
    Client::try_from(config).expect("client")
}

/// Starts a server and returns it with an admin client.
pub async fn start_with(builder: ServerBuilder) -> (Server, Client) {
    let server = builder.start().await.expect("server starts");
    let client = client_with_token(&server, server.admin_token());
    (server, client)
}

/// Starts an in-memory server on an ephemeral port with an admin client.
pub async fn start() -> (Server, Client) {
    start_with(Server::builder()).await
}

/// `curl` arguments that authenticate as the admin.
pub fn curl_auth(server: &Server) -> [String; 2] {
    [
        "-H".to_string(),
        format!("Authorization: Bearer {}", server.admin_token()),
    ]
}

/// A server over TLS (kubectl sends its token over TLS only, as against a cluster), a client
/// from its kubeconfig, and [`Kubectl`] pointed at it; `dir` holds the certificates, the
/// kubeconfig and kubectl's cache.
pub async fn start_tls(dir: &std::path::Path) -> (Server, Client, Kubectl) {
    let tls = mni_apiserver::tls::TlsIdentity::load_or_create(dir, None).expect("tls");
    let server = Server::builder()
        .with_tls(tls)
        .start()
        .await
        .expect("server starts");
    let client = Client::try_from(
        Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).expect("kubeconfig"),
            &kube::config::KubeConfigOptions::default(),
        )
        .await
        .expect("config"),
    )
    .expect("client");
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).expect("kubeconfig");
    let kubectl = Kubectl {
        kubeconfig,
        cache: dir.join("cache"),
    };
    (server, client, kubectl)
}

/// kubectl against a test server.
pub struct Kubectl {
    kubeconfig: std::path::PathBuf,
    cache: std::path::PathBuf,
}

impl Kubectl {
    /// Runs kubectl with `args`, off the runtime's thread (the server answers it on this
    /// runtime). Returns whether it succeeded, its stdout and its stderr.
    pub async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let (kubeconfig, cache) = (self.kubeconfig.clone(), self.cache.clone());
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        tokio::task::spawn_blocking(move || {
            let out = std::process::Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .arg("--cache-dir")
                .arg(&cache)
                .args(&args)
                .output()
                .expect("kubectl runs");
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .await
        .expect("kubectl joined")
    }
}

/// Creates a Namespace with `labels`.
pub async fn create_namespace(client: &Client, name: &str, labels: serde_json::Value) {
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name, "labels": labels}}))
            .expect("ns");
    kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
        .create(&kube::api::PostParams::default(), &ns)
        .await
        .expect("namespace");
}
