//! Shared test harness: an in-process mni-apiserver over real HTTP, a kube client, and the
//! simulator running beside them.

#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Config, Resource};
use mni_apiserver::Server;
use serde_json::Value;

/// A namespaced kind the tests create, patch and list.
pub trait Namespaced:
    Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
    + Clone
    + k8s_openapi::serde::de::DeserializeOwned
    + k8s_openapi::serde::Serialize
    + std::fmt::Debug
{
}

impl<K> Namespaced for K where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + k8s_openapi::serde::de::DeserializeOwned
        + k8s_openapi::serde::Serialize
        + std::fmt::Debug
{
}

/// A running API server and simulator.
pub struct Env {
    pub server: Server,
    pub client: Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), mni_workloads::Error>>>,
}

impl Env {
    pub async fn start() -> Env {
        Env::start_with(Server::builder()).await
    }

    /// Serves HTTPS with a CA generated in `pki` (kubectl sends tokens only over TLS).
    pub async fn start_tls(pki: &std::path::Path) -> Env {
        let identity = mni_apiserver::tls::TlsIdentity::load_or_create(pki, None).expect("pki");
        Env::start_with(Server::builder().with_tls(identity)).await
    }

    async fn start_with(builder: mni_apiserver::ServerBuilder) -> Env {
        let server = builder.start().await.expect("server starts");
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).expect("kubeconfig");
        let config = Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("config");
        let client = Client::try_from(config).expect("client");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let sim = mni_workloads::Simulator::new(client.clone());
        let task = tokio::spawn(sim.run(async move {
            let _ = rx.await;
        }));
        Env {
            server,
            client,
            stop: Some(tx),
            task: Some(task),
        }
    }

    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), "default")
    }

    pub async fn create<K: Namespaced>(&self, obj: Value) -> K {
        let typed: K = serde_json::from_value(obj).expect("valid object");
        self.api::<K>()
            .create(&PostParams::default(), &typed)
            .await
            .expect("create")
    }

    pub async fn patch<K: Namespaced>(&self, name: &str, body: Value) -> K {
        self.api::<K>()
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .expect("patch")
    }

    pub async fn list<K: Namespaced>(&self) -> Vec<K> {
        self.api::<K>()
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let res = task.await.expect("simulator task");
            res.expect("simulator ran cleanly");
        }
        self.server.shutdown().await;
    }
}

/// Polls `f` until it returns `Some`, for at most 30 seconds.
pub async fn wait_for<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A Deployment manifest.
pub fn deployment(name: &str, replicas: i32, image: &str) -> Value {
    workload(
        "Deployment",
        name,
        serde_json::json!({"replicas": replicas}),
        serde_json::json!({"containers": [{"name": "app", "image": image,
            "ports": [{"name": "http", "containerPort": 8080}]}]}),
    )
}

/// An `apps/v1` manifest of `kind` named `name` in `default`: `spec` plus a selector and a
/// pod template labelled `app: <name>` whose pod spec is `pod_spec`.
pub fn workload(kind: &str, name: &str, spec: Value, pod_spec: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = serde_json::json!({"matchLabels": {"app": name}});
    spec["template"] = serde_json::json!({"metadata": {"labels": {"app": name}}, "spec": pod_spec});
    serde_json::json!({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec
    })
}

/// The resourceVersions of everything the simulator writes, keyed by kind/name.
pub async fn versions(env: &Env) -> Vec<(String, String)> {
    use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
    use k8s_openapi::api::batch::v1::{CronJob, Job};
    use k8s_openapi::api::core::v1::{Endpoints, Pod};
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    let mut out = Vec::new();
    macro_rules! collect {
        ($k:ty) => {
            for o in env.list::<$k>().await {
                out.push((
                    format!(
                        "{}/{}",
                        stringify!($k),
                        o.metadata.name.clone().unwrap_or_default()
                    ),
                    o.metadata.resource_version.clone().unwrap_or_default(),
                ));
            }
        };
    }
    collect!(Deployment);
    collect!(ReplicaSet);
    collect!(StatefulSet);
    collect!(DaemonSet);
    collect!(Pod);
    collect!(Endpoints);
    collect!(EndpointSlice);
    collect!(Job);
    collect!(CronJob);
    out.sort();
    out
}

/// Asserts nothing is written for a while once converged.
pub async fn assert_quiet(env: &Env) {
    let before = versions(env).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    let after = versions(env).await;
    assert_eq!(before, after, "a converged cluster saw writes");
}

/// A condition of the deployment.
pub fn cond<'a>(d: &'a Deployment, t: &str) -> Option<&'a DeploymentCondition> {
    d.status
        .as_ref()?
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_.as_deref() == Some(t))
}

/// Whether the deployment has the condition with this status and reason.
pub fn cond_is(d: &Deployment, t: &str, status: &str, reason: &str) -> bool {
    cond(d, t)
        .is_some_and(|c| c.status.as_deref() == Some(status) && c.reason.as_deref() == Some(reason))
}

/// The uid of an object's controller.
pub fn controller_uid(meta: &kube::api::ObjectMeta) -> Option<String> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.clone())
}

/// Reads a deployment.
pub async fn get_deploy(env: &Env, name: &str) -> Deployment {
    env.api::<Deployment>()
        .get(name)
        .await
        .expect("get deployment")
}

/// Waits until the deployment reports a complete rollout of `n` replicas.
pub async fn wait_rolled_out(env: &Env, name: &str, n: i32) -> Deployment {
    wait_for("rollout complete", || async {
        let d = get_deploy(env, name).await;
        let s = d.status.clone()?;
        let done = s.observed_generation == d.metadata.generation
            && s.updated_replicas.unwrap_or(0) == n
            && s.replicas.unwrap_or(0) == n
            && s.available_replicas.unwrap_or(0) == n
            && s.ready_replicas.unwrap_or(0) == n
            && cond_is(&d, "Available", "True", "MinimumReplicasAvailable")
            && (n == 0 || cond_is(&d, "Progressing", "True", "NewReplicaSetAvailable"));
        done.then_some(d)
    })
    .await
}

/// The pods controlled by `uid`.
pub async fn pods_of(env: &Env, uid: &str) -> Vec<Pod> {
    env.list::<Pod>()
        .await
        .into_iter()
        .filter(|p| controller_uid(&p.metadata).as_deref() == Some(uid))
        .collect()
}

/// Runs kubectl (from PATH) against the server with its admin kubeconfig; returns
/// (success, stdout + stderr).
pub async fn kubectl(env: &Env, args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, env.server.kubeconfig()).expect("write kubeconfig");
    let mut cmd = std::process::Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("kubectl on PATH");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
