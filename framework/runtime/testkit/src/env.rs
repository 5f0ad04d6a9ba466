//! [`TestEnv`] and its builder: one in-process API server per test, its admin client, CRD
//! installation, an optional workload simulator and the optional fake Kube-OVN, KubeVirt and
//! Metal3.
//!
//! The server is `mni-apiserver` in memory on an ephemeral loopback port, speaking plain HTTP;
//! it starts in milliseconds, so every test gets its own. Clients made here talk to it like
//! to any cluster: kube-rs over HTTP, with bearer tokens, RBAC enforced for everyone but the
//! admin. When [`KUBE_APISERVER_VAR`] names the directory of a real kube-apiserver and etcd,
//! each environment starts those instead ([`ReferenceServer`], over HTTPS), and everything
//! else — clients, CRDs, simulators, ServiceAccounts — works the same against it.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, Config, CustomResourceExt};
use mni_apiserver::Server;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::reference::{KUBE_APISERVER_VAR, ReferenceServer};
use crate::wait::wait_for_condition;

/// How long [`TestEnv::install_crds`] and [`TestEnv::assert_event`] wait unless
/// [`TestEnvBuilder::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The field manager of everything the test kit writes.
pub(crate) const FIELD_MANAGER: &str = "mni-testkit";

/// Configures a [`TestEnv`]; start with [`TestEnv::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until .start() is awaited"]
pub struct TestEnvBuilder {
    simulator: bool,
    kube_ovn: bool,
    kubevirt: bool,
    metal3: bool,
    crds: Vec<CustomResourceDefinition>,
    timeout: Duration,
    tls: bool,
}

impl Default for TestEnvBuilder {
    fn default() -> Self {
        TestEnvBuilder {
            simulator: false,
            kube_ovn: false,
            kubevirt: false,
            metal3: false,
            crds: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            tls: false,
        }
    }
}

impl TestEnvBuilder {
    /// Runs `mni-workloads` in the background (default: off), so Deployments, ReplicaSets,
    /// StatefulSets and DaemonSets get pods that become ready, and report `Available`.
    pub fn with_simulator(mut self, enabled: bool) -> Self {
        self.simulator = enabled;
        self
    }

    /// Installs the `kubeovn.io/v1` CRDs of `mni-kubeovn` and runs its fake Kube-OVN
    /// controller in the background (default: off), so Vpcs, Subnets, NAT gateways, EIPs
    /// and NAT rules get the status Kube-OVN would give them.
    pub fn with_kube_ovn(mut self, enabled: bool) -> Self {
        self.kube_ovn = enabled;
        self
    }

    /// Installs the KubeVirt and CDI CRDs of `mni-kubevirt` and runs its fake
    /// virt-controller and CDI in the background (default: off), so VirtualMachines get
    /// running instances with addresses and DataVolumes import. Its DataVolumes' claims are
    /// bound by the workload simulator: enable [`with_simulator`](Self::with_simulator) too.
    pub fn with_kubevirt(mut self, enabled: bool) -> Self {
        self.kubevirt = enabled;
        self
    }

    /// Installs the `metal3.io/v1alpha1` CRDs of `mni-metal3` and runs its Metal3 simulator in
    /// the background (default: off), so BareMetalHosts are registered, inspected, provisioned
    /// and powered through their BMCs over Redfish (in tests, `mni_redfish::testing::Emulator`).
    /// It polls the BMCs every 100 ms while it waits for them and gives up on a request after
    /// 5 s, so tests wait little.
    pub fn with_metal3(mut self, enabled: bool) -> Self {
        self.metal3 = enabled;
        self
    }

    /// CRDs to install (and wait for) before [`start`](Self::start) returns.
    pub fn with_crds(mut self, crds: impl IntoIterator<Item = CustomResourceDefinition>) -> Self {
        self.crds.extend(crds);
        self
    }

    /// Adds the CRD of `K` (a `#[derive(CustomResource)]` type), like
    /// [`with_crds`](Self::with_crds).
    pub fn with_crd<K: CustomResourceExt>(mut self) -> Self {
        self.crds.push(K::crd());
        self
    }

    /// How long CRD installation and [`TestEnv::assert_event`] wait (default
    /// [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Serve HTTPS, with a CA and serving certificate made for this environment, instead
    /// of plain HTTP (default: off). kubectl sends bearer tokens only over TLS: a test that
    /// runs kubectl as an identity other than the admin needs it. A real kube-apiserver
    /// (`MNI_TESTKIT_KUBE_APISERVER`) serves HTTPS anyway.
    pub fn with_tls(mut self, enabled: bool) -> Self {
        self.tls = enabled;
        self
    }

    /// Starts the API server (and the simulator, if asked) and installs the CRDs.
    pub async fn start(self) -> Result<TestEnv> {
        let mut tls_dir = None;
        let backend = match std::env::var_os(KUBE_APISERVER_VAR).filter(|v| !v.is_empty()) {
            Some(bin) => Backend::Reference(Box::new(
                ReferenceServer::start(std::path::Path::new(&bin))
                    .await
                    .map_err(Error::Reference)?,
            )),
            None => {
                let mut builder = Server::builder();
                if self.tls {
                    let dir = tempfile::tempdir().map_err(|e| tls_error(e.to_string()))?;
                    let identity =
                        mni_apiserver::tls::TlsIdentity::load_or_create(dir.path(), None)
                            .map_err(|e| tls_error(e.to_string()))?;
                    builder = builder.with_tls(identity);
                    tls_dir = Some(dir);
                }
                Backend::Embedded(builder.start().await.map_err(Error::Start)?)
            }
        };
        let (url, admin_token, kubeconfig, config) = match &backend {
            Backend::Embedded(server) if server.ca_pem().is_some() => {
                let kubeconfig = server.kubeconfig();
                let parsed = kube::config::Kubeconfig::from_yaml(&kubeconfig)
                    .map_err(|e| tls_error(e.to_string()))?;
                let mut config = Config::from_custom_kubeconfig(
                    parsed,
                    &kube::config::KubeConfigOptions::default(),
                )
                .await
                .map_err(|e| tls_error(e.to_string()))?;
                config.auth_info = kube::config::AuthInfo::default();
                (
                    server.url(),
                    server.admin_token().to_string(),
                    kubeconfig,
                    config,
                )
            }
            Backend::Embedded(server) => {
                let url = server.url();
                let config = Config::new(url.parse().map_err(|e| Error::Client {
                    identity: mni_apiserver::ADMIN_USER.to_string(),
                    source: Box::new(e),
                })?);
                (
                    url,
                    server.admin_token().to_string(),
                    server.kubeconfig(),
                    config,
                )
            }
            Backend::Reference(reference) => {
                let path = reference.kubeconfig();
                let kubeconfig = std::fs::read_to_string(path).map_err(|source| {
                    Error::Reference(crate::reference::ReferenceError::Io {
                        path: path.display().to_string(),
                        source,
                    })
                })?;
                (
                    reference.url().to_owned(),
                    reference.admin_token().to_owned(),
                    kubeconfig,
                    reference.config().clone(),
                )
            }
        };
        let client = token_client(&config, &admin_token, "default", mni_apiserver::ADMIN_USER)?;
        let mut env = TestEnv {
            _tls_dir: tls_dir,
            kubeconfig,
            backend: Some(backend),
            config,
            url,
            admin_token,
            client,
            simulator: None,
            kube_ovn: None,
            kubevirt: None,
            metal3: None,
            timeout: self.timeout,
        };
        if self.simulator {
            if env.is_reference() {
                env.default_service_account().await?;
            }
            env.simulator = Some(SimulatorTask::spawn(env.client.clone()));
        }
        if self.kube_ovn {
            env.install_crds(&mni_kubeovn::v1::crds()).await?;
            env.kube_ovn = Some(SimulatorTask::spawn_kube_ovn(env.client.clone()));
        }
        if self.kubevirt {
            env.install_crds(&mni_kubevirt::crds()).await?;
            env.kubevirt = Some(SimulatorTask::spawn_kubevirt(env.client.clone()));
        }
        if self.metal3 {
            env.install_crds(&mni_metal3::crds()).await?;
            env.metal3 = Some(SimulatorTask::spawn_metal3(env.client.clone()));
        }
        if !self.crds.is_empty() {
            env.install_crds(&self.crds).await?;
        }
        Ok(env)
    }
}

/// A running test environment: an in-process, RBAC-enforcing API server and clients for it.
///
/// ```no_run
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, ListParams};
///
/// # async fn run() -> mni_testkit::Result<()> {
/// let env = mni_testkit::TestEnv::start().await?;
/// let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
/// let _ = cms.list(&ListParams::default()).await;
/// env.shutdown().await;
/// # Ok(()) }
/// ```
///
/// Dropping a `TestEnv` stops it too, in the background; [`shutdown`](Self::shutdown) waits
/// until it has stopped.
pub struct TestEnv {
    backend: Option<Backend>,
    /// The admin's configuration without its credentials' specifics: clients for other
    /// identities are made from it.
    config: Config,
    url: String,
    kubeconfig: String,
    admin_token: String,
    client: Client,
    simulator: Option<SimulatorTask>,
    kube_ovn: Option<SimulatorTask>,
    kubevirt: Option<SimulatorTask>,
    metal3: Option<SimulatorTask>,
    timeout: Duration,
    /// The CA and serving certificate of an HTTPS server ([`TestEnvBuilder::with_tls`]).
    _tls_dir: Option<tempfile::TempDir>,
}

impl TestEnv {
    /// Starts an environment with the defaults: no simulator, no CRDs.
    pub async fn start() -> Result<TestEnv> {
        TestEnvBuilder::default().start().await
    }

    /// A builder, to add the simulator or CRDs.
    pub fn builder() -> TestEnvBuilder {
        TestEnvBuilder::default()
    }

    /// A client authenticating as the admin (`mni:admin`, in `system:masters`: RBAC allows
    /// everything). Its default namespace is `default`.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The API server's `/metrics` (Prometheus text: `apiserver_request_total` by verb,
    /// resource and code, as kube-apiserver names it), read as the admin. Tests count requests
    /// with it, e.g. that a converged operator sends no writes.
    ///
    /// # Errors
    ///
    /// [`Error::Api`] when the request fails.
    pub async fn api_server_metrics(&self) -> Result<String, Error> {
        let request = http::Request::get("/metrics")
            .body(Vec::new())
            .expect("a GET of a fixed path is a valid request");
        self.client
            .request_text(request)
            .await
            .map_err(|source| Error::Api {
                action: "reading the API server's /metrics".to_string(),
                source,
            })
    }

    /// The server's base URL, `http://127.0.0.1:PORT` (`https://` with
    /// [`TestEnvBuilder::with_tls`] and for a real kube-apiserver).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A kubeconfig (YAML) for the admin identity, for kubectl or a child process.
    pub fn kubeconfig(&self) -> &str {
        &self.kubeconfig
    }

    /// The admin's bearer token.
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// The admin's client configuration (server URL and CA), from which clients for other
    /// identities are made.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// How long CRD installation and [`assert_event`](Self::assert_event) wait.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A client authenticating with a bearer token (a ServiceAccount token, or any token the
    /// server issued); its default namespace is `namespace`.
    pub fn client_with_token(&self, token: &str, namespace: &str) -> Result<Client> {
        token_client(&self.config, token, namespace, "a bearer token")
    }

    /// A bare kube-apiserver has no controller-manager, whose ServiceAccount controller gives
    /// each namespace its `default` ServiceAccount; without one, the ServiceAccount admission
    /// plugin refuses every Pod (`error looking up service account default/default`). The
    /// workload simulator stands in for the controller-manager, so its environment gets the
    /// account `default/default`, as `mni-dev`'s own controllers give it.
    async fn default_service_account(&self) -> Result<()> {
        let api: Api<k8s_openapi::api::core::v1::ServiceAccount> =
            Api::namespaced(self.client.clone(), "default");
        let account = k8s_openapi::api::core::v1::ServiceAccount {
            metadata: ObjectMeta {
                name: Some("default".to_string()),
                ..ObjectMeta::default()
            },
            ..Default::default()
        };
        api.patch(
            "default",
            &PatchParams::apply(FIELD_MANAGER),
            &Patch::Apply(&account),
        )
        .await
        .map(drop)
        .map_err(|source| Error::Api {
            action: "creating the ServiceAccount default/default".to_string(),
            source,
        })
    }

    /// Whether this environment runs against a real kube-apiserver ([`KUBE_APISERVER_VAR`]),
    /// for the few assertions that hold only for the embedded server (its own metrics names,
    /// simulated kubelet behaviour).
    pub fn is_reference(&self) -> bool {
        matches!(self.backend, Some(Backend::Reference(_)))
    }

    /// Installs CRDs with server-side apply (so installing again is harmless) and waits until
    /// each is `Established`.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<()> {
        let api: Api<CustomResourceDefinition> = Api::all(self.client());
        let params = PatchParams::apply(FIELD_MANAGER).force();
        for crd in crds {
            let name = crd.metadata.name.clone().ok_or_else(|| {
                Error::Invalid(
                    "a CustomResourceDefinition to install has no metadata.name".to_string(),
                )
            })?;
            // Only what the author wrote: a CRD read back from a server carries
            // resourceVersion, managedFields and status, which apply rejects or ignores.
            let clean = CustomResourceDefinition {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    labels: crd.metadata.labels.clone(),
                    annotations: crd.metadata.annotations.clone(),
                    ..ObjectMeta::default()
                },
                spec: crd.spec.clone(),
                status: None,
            };
            api.patch(&name, &params, &Patch::Apply(&clean))
                .await
                .map_err(|source| Error::Api {
                    action: format!("installing CustomResourceDefinition {name}"),
                    source,
                })?;
        }
        for crd in crds {
            if let Some(name) = &crd.metadata.name {
                wait_for_condition(&api, name, "Established", "True", self.timeout).await?;
            }
        }
        Ok(())
    }

    /// Installs the CRD of `K` (a `#[derive(CustomResource)]` type) and waits until it is
    /// `Established`.
    pub async fn install<K: CustomResourceExt>(&self) -> Result<()> {
        self.install_crds(&[K::crd()]).await
    }

    /// Stops the simulators and the server, and waits until they have stopped.
    pub async fn shutdown(mut self) {
        if let Some(simulator) = self.simulator.take() {
            simulator.stop().await;
        }
        if let Some(kube_ovn) = self.kube_ovn.take() {
            kube_ovn.stop().await;
        }
        if let Some(kubevirt) = self.kubevirt.take() {
            kubevirt.stop().await;
        }
        if let Some(metal3) = self.metal3.take() {
            metal3.stop().await;
        }
        match self.backend.take() {
            Some(Backend::Embedded(server)) => server.shutdown().await,
            // Dropping it kills the processes.
            Some(Backend::Reference(reference)) => drop(reference),
            None => {}
        }
    }
}

/// The API server a [`TestEnv`] runs against.
enum Backend {
    /// `mni-apiserver`, in this process.
    Embedded(Server),
    /// A real kube-apiserver and etcd, as child processes.
    Reference(Box<ReferenceServer>),
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("url", &self.url)
            .field("simulator", &self.simulator.is_some())
            .field("kube_ovn", &self.kube_ovn.is_some())
            .field("kubevirt", &self.kubevirt.is_some())
            .field("metal3", &self.metal3.is_some())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if let Some(simulator) = self.simulator.take() {
            simulator.abort();
        }
        if let Some(kube_ovn) = self.kube_ovn.take() {
            kube_ovn.abort();
        }
        if let Some(kubevirt) = self.kubevirt.take() {
            kubevirt.abort();
        }
        if let Some(metal3) = self.metal3.take() {
            metal3.abort();
        }
        if let Some(Backend::Embedded(server)) = self.backend.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(server.shutdown());
                }
                // Without a runtime, dropping the server closes its stop channel, which ends
                // its serving and background tasks wherever they run.
                Err(_) => drop(server),
            }
        }
    }
}

/// A simulator (workload, Kube-OVN, KubeVirt or Metal3) running in the background.
#[derive(Debug)]
struct SimulatorTask {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl SimulatorTask {
    fn spawn(client: Client) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(error) = mni_workloads::Simulator::new(client).run(shutdown).await {
                tracing::error!(%error, "the workload simulator stopped");
            }
        });
        SimulatorTask { stop, task }
    }

    /// The fake Kube-OVN controller; the CRDs are installed already.
    fn spawn_kube_ovn(client: Client) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            let simulator = mni_kubeovn::simulator::Simulator::new(client).with_crd_install(false);
            if let Err(error) = simulator.run(shutdown).await {
                tracing::error!(%error, "the Kube-OVN simulator stopped");
            }
        });
        SimulatorTask { stop, task }
    }

    /// The fake virt-controller and CDI; the CRDs are installed already. Phase changes are
    /// paced at 20 ms, so tests wait little.
    fn spawn_kubevirt(client: Client) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            let simulator = mni_kubevirt::simulator::Simulator::new(client)
                .with_crd_install(false)
                .with_step_interval(Duration::from_millis(20));
            if let Err(error) = simulator.run(shutdown).await {
                tracing::error!(%error, "the KubeVirt simulator stopped");
            }
        });
        SimulatorTask { stop, task }
    }

    /// The Metal3 simulator; the CRDs are installed already. It polls BMCs every 100 ms while
    /// waiting for them, reads power back every 2 s and times Redfish requests out after 5 s.
    fn spawn_metal3(client: Client) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            let simulator = mni_metal3::simulator::Simulator::new(client)
                .with_crd_install(false)
                .with_power_poll_interval(Duration::from_millis(100))
                .with_resync_interval(Duration::from_secs(2))
                .with_bmc_timeout(Duration::from_secs(5));
            if let Err(error) = simulator.run(shutdown).await {
                tracing::error!(%error, "the Metal3 simulator stopped");
            }
        });
        SimulatorTask { stop, task }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let mut task = self.task;
        if tokio::time::timeout(Duration::from_secs(5), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }

    fn abort(self) {
        let _ = self.stop.send(());
        self.task.abort();
    }
}

/// A failure to set up TLS for [`TestEnvBuilder::with_tls`].
fn tls_error(message: String) -> Error {
    Error::Client {
        identity: mni_apiserver::ADMIN_USER.to_string(),
        source: format!("serving HTTPS: {message}").into(),
    }
}

/// A kube-rs client for the server of `base` authenticating with `token` (and nothing else of
/// `base`'s credentials).
pub(crate) fn token_client(
    base: &Config,
    token: &str,
    namespace: &str,
    identity: &str,
) -> Result<Client> {
    let mut config = base.clone();
    config.default_namespace = namespace.to_string();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.to_string().into()),
        ..Default::default()
    };
    Client::try_from(config).map_err(|e| Error::Client {
        identity: identity.to_string(),
        source: Box::new(e),
    })
}
