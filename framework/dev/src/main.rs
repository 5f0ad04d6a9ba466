//! `mni-dev`: runs the embedded control plane for local development.
//!
//! `mni-dev up` serves the Kubernetes API on loopback, persists under `.mni/dev/`, writes a
//! kubeconfig, prints a line containing `ready`, and shuts down cleanly on SIGTERM/SIGINT.
//! Beside it run the workload simulator (controllers, scheduler, node registration) and a
//! runtime for pods: `--runtime simulated` (the default: the simulator plays the kubelet and
//! nothing runs), `--runtime process` (the `mni-node` agent runs containers as host
//! processes and the API server serves their logs) or `--runtime podman` (the same agent runs
//! them as OCI containers with podman and runc). With `--simulate-upstream`, fake controllers
//! of upstream projects (`kube-ovn`: `mni_kubeovn::simulator`; `kubevirt`:
//! `mni_kubevirt::simulator`; `metal3`: `mni_metal3::simulator`). With `--olm`, the Operator
//! Lifecycle Manager's catalog-operator and olm-operator (`mni_olm_lifecycle`). With
//! `--with vpc,vm,baremetal`, all of that at once for the chosen reference services: OLM, the
//! built-in catalog, a Subscription each, their upstream simulators, and a wait until every
//! ClusterServiceVersion has `Succeeded` (the `with` module).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

mod with;

/// mimalloc rather than the system allocator: serving the API builds and drops JSON trees all
/// the time, and glibc's malloc took a third of mni-dev's CPU in the 1,000-service bench.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "mni-dev",
    version,
    about = "The mNi embedded Kubernetes-compatible control plane"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start the control plane and serve until SIGTERM/SIGINT.
    Up(UpArgs),
}

#[derive(clap::Args, Debug)]
struct UpArgs {
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Directory for the durable store, the CA and the tokens.
    #[arg(long, default_value = ".mni/dev")]
    data_dir: PathBuf,
    /// Where to write the kubeconfig (default: DATA_DIR/kubeconfig).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Keep objects in memory (nothing survives a restart; the CA and tokens still do).
    #[arg(long)]
    in_memory: bool,
    /// Serve plain HTTP instead of HTTPS, for testing. Only allowed on loopback addresses; as
    /// kubectl sends no token over plain HTTP, requests without credentials act as the admin.
    #[arg(long)]
    insecure_http: bool,
    /// Do not simulate workloads (by default Deployments, StatefulSets and DaemonSets get pods
    /// that become ready, and Services get Endpoints; see the `simulate.mni.dev/fail`
    /// annotation to make a workload fail).
    #[arg(long)]
    no_simulate: bool,
    /// Also run a fake controller of an upstream project, which installs its CRDs and fills
    /// in the statuses it would (repeatable, or comma-separated). `kube-ovn`: kubeovn.io/v1
    /// Vpcs, Subnets, VPC NAT gateways, iptables EIPs and SNAT/DNAT rules become ready, with
    /// address counts and EIPs from 172.19.0.0/24 — no packets are forwarded. `kubevirt`:
    /// kubevirt.io/v1 VirtualMachines get instances that run on node mni-dev-kubevirt with
    /// addresses, and cdi.kubevirt.io DataVolumes import — no guest boots. `metal3`:
    /// metal3.io/v1alpha1 BareMetalHosts are registered, inspected, provisioned and powered
    /// through their BMCs over real Redfish (redfish://, redfish+http(s)://,
    /// redfish-virtualmedia://, idrac-redfish://, ilo5-redfish://; ipmi:// is refused) — no
    /// image is written.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "UPSTREAM")]
    simulate_upstream: Vec<Upstream>,
    /// Also run OLM's catalog-operator and olm-operator (`mni_olm_lifecycle`): installs
    /// OLM's operators.coreos.com CRDs unchanged, serves CatalogSources from file-based
    /// catalogs (`sourceType: configmap`, or the `olm.mni.dev/catalog-dir` annotation naming
    /// a directory on this host), resolves Subscriptions into InstallPlans and installs
    /// ClusterServiceVersions (RBAC, Deployments) and their upgrades.
    #[arg(long)]
    olm: bool,
    /// Install these services through OLM and wait for them (comma-separated: `vpc`, `vm`,
    /// `baremetal`, `platform`, the catalog's packages without their `mni-` prefix). Implies `--olm` and
    /// the upstream simulators the services drive (vpc: kube-ovn; vm: kubevirt and kube-ovn;
    /// baremetal: metal3). Creates the namespaces `olm` and `operators`, the CatalogSource
    /// `olm/mni-services` on the catalog, the OperatorGroup `operators/global-operators` and
    /// one Subscription per service (its default channel, automatic approval); dependencies
    /// come through OLM's resolver (`vm` brings `mni-vpc`). Prints each CSV once every one has
    /// `Succeeded`, the time taken, and where the web UIs are; exits with an error naming the
    /// CSV and its reason if one fails.
    #[arg(long, value_delimiter = ',', value_name = "SERVICE")]
    with: Option<Vec<String>>,
    /// The file-based catalog `--with` installs from (default: the reference services'
    /// catalog built into this binary, `services/catalog/catalog`, written to DATA_DIR/catalog).
    #[arg(long, value_name = "DIR", requires = "with")]
    catalog: Option<PathBuf>,
    /// How long `--with` waits for every ClusterServiceVersion to succeed, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120, requires = "with")]
    with_timeout: u64,
    /// How pods run. `simulated`: they are given the status of running containers and run
    /// nothing (fast, for tests). `process`: the node agent (`mni-node`) runs each container
    /// as a host process, with an address of its own in 127.1.0.0/16, probes, restarts and
    /// logs (`kubectl logs`); images map to executables through the image registry file.
    /// `podman`: the same agent runs each container with podman and runc, from podman's local
    /// images (`podman build -t NAME`), with limits and the securityContext enforced.
    #[arg(long, value_enum, default_value = "simulated")]
    runtime: RuntimeKind,
    /// The image registry of the `process` runtime: a YAML map from image names to
    /// executables (default: DATA_DIR/images.yaml).
    #[arg(long, env = "MNI_IMAGE_REGISTRY", value_name = "FILE")]
    image_registry: Option<PathBuf>,
}

/// The container runtimes `--runtime` chooses from.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum RuntimeKind {
    /// Nothing runs; the workload simulator writes the statuses a kubelet would.
    Simulated,
    /// Containers run as host processes (`mni_node::ProcessRuntime`).
    Process,
    /// Containers run as OCI containers with podman and runc (`mni_node::PodmanRuntime`).
    Podman,
}

/// The upstream projects `--simulate-upstream` can fake.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Upstream {
    /// Kube-OVN's kube-ovn-controller (`mni_kubeovn::simulator`).
    KubeOvn,
    /// KubeVirt's virt-controller and virt-handler and CDI (`mni_kubevirt::simulator`).
    Kubevirt,
    /// Metal3's baremetal-operator and Ironic, over Redfish (`mni_metal3::simulator`).
    Metal3,
}

async fn up(mut args: UpArgs, started: std::time::Instant) -> anyhow::Result<()> {
    if args.insecure_http && !args.listen.ip().is_loopback() {
        anyhow::bail!(
            "--insecure-http is only allowed on loopback addresses, not --listen {}",
            args.listen
        );
    }
    if args.no_simulate && args.runtime != RuntimeKind::Simulated {
        anyhow::bail!(
            "--runtime {:?} needs the scheduler of the workload simulator: drop --no-simulate",
            args.runtime
        );
    }
    // `--with`: the catalog is read and the names checked before anything starts.
    let selection = match &args.with {
        Some(names) => Some(select(names, &args)?),
        None => None,
    };
    if let Some(selection) = &selection {
        args.olm = true;
        args.simulate_upstream.extend(selection.upstreams());
    }
    let node_dir = args.data_dir.join("node");
    // podman is checked before anything starts: a missing runtime is the command's error.
    let podman = if args.runtime == RuntimeKind::Podman {
        Some(
            mni_node::PodmanRuntime::new(&node_dir)
                .await
                .context("--runtime podman")?,
        )
    } else {
        None
    };
    let mut builder = mni_apiserver::Server::builder().with_listen(args.listen);
    if args.runtime != RuntimeKind::Simulated {
        // The API server serves `pods/log` from the files the node agent writes.
        builder = builder.with_pod_logs_dir(node_dir.join("logs"));
    }
    if !args.in_memory {
        builder = builder.with_data_dir(&args.data_dir);
    } else {
        // Tokens and the CA live in the data directory even when objects do not.
        builder = builder.with_secrets_dir(&args.data_dir);
    }
    if args.insecure_http {
        builder = builder.with_unauthenticated_admin(true);
    } else {
        let identity = mni_apiserver::tls::TlsIdentity::load_or_create(
            &args.data_dir.join("pki"),
            Some(args.listen.ip()),
        )
        .context("setting up TLS")?;
        builder = builder.with_tls(identity);
    }
    let server = builder
        .start()
        .await
        .context("starting the control plane")?;
    // The simulators are in this process: they reach the server through its loopback client
    // (no TLS or sockets), as kube-apiserver's own controllers do.
    let client = if args.no_simulate && args.simulate_upstream.is_empty() && !args.olm {
        None
    } else {
        Some(server.loopback_client())
    };
    let mut upstreams = args.simulate_upstream.clone();
    // Each upstream once, in the order first given (`dedup` alone keeps `a,b,a`).
    let mut seen = Vec::new();
    upstreams.retain(|u| {
        let first = !seen.contains(u);
        seen.push(*u);
        first
    });
    // The upstream CRDs are there before we say ready, so `kubectl apply` works at once.
    for upstream in &upstreams {
        let Some(client) = client.clone() else {
            break;
        };
        match upstream {
            Upstream::KubeOvn => mni_kubeovn::simulator::Simulator::new(client)
                .install_crds()
                .await
                .context("installing the Kube-OVN CRDs")?,
            Upstream::Kubevirt => mni_kubevirt::simulator::Simulator::new(client)
                .install_crds()
                .await
                .context("installing the KubeVirt and CDI CRDs")?,
            Upstream::Metal3 => mni_metal3::simulator::Simulator::new(client)
                .install_crds()
                .await
                .context("installing the Metal3 CRDs")?,
        }
    }
    if let Some(client) = client.clone().filter(|_| args.olm) {
        mni_olm_lifecycle::Lifecycle::new(client)
            .install_crds()
            .await
            .context("installing the OLM CRDs")?;
    }
    let kubeconfig = args
        .kubeconfig
        .unwrap_or_else(|| args.data_dir.join("kubeconfig"));
    mni_apiserver::kubeconfig::write(&kubeconfig, &server.kubeconfig())
        .with_context(|| format!("writing kubeconfig {}", kubeconfig.display()))?;
    // The readiness line; a reader that went away (`| head -1`) must not take us down.
    say(&format!(
        "mni-dev ready: serving {} (kubeconfig: {})",
        server.url(),
        kubeconfig.display()
    ));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut simulators = Vec::new();
    let agent = match (args.runtime, client.clone()) {
        (RuntimeKind::Process | RuntimeKind::Podman, Some(client)) => {
            let agent = if let Some(runtime) = podman {
                // Containers of a previous run that did not stop cleanly: none may leak.
                let reaped = runtime.reap().await;
                if reaped > 0 {
                    tracing::info!(reaped, "removed the containers of a previous run");
                }
                mni_node::Agent::new(client, runtime)
            } else {
                let runtime = mni_node::ProcessRuntime::new(node_dir.join("pids"));
                // Processes of a previous run that did not stop cleanly: none may leak.
                let reaped = runtime.reap();
                if reaped > 0 {
                    tracing::info!(reaped, "killed the processes of a previous run");
                }
                mni_node::Agent::new(client, runtime)
            };
            let mut agent = agent
                .with_data_dir(&node_dir)
                .with_api_access(mni_node::ApiAccess {
                    url: server.url(),
                    ca_pem: server.ca_pem().map(str::to_string),
                });
            if let Some(registry) = &args.image_registry {
                agent = agent.with_registry(registry);
            } else {
                agent = agent.with_registry(args.data_dir.join("images.yaml"));
            }
            Some(agent)
        }
        _ => None,
    };
    let runtime_version = agent.as_ref().map(mni_node::Agent::runtime_version);
    if let Some(client) = client.clone().filter(|_| !args.no_simulate) {
        let mut stop = stop_rx.clone();
        simulators.push(tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            let mut sim = mni_workloads::Simulator::new(client);
            if let Some(version) = runtime_version {
                sim = sim
                    .with_kubelet(false)
                    .with_runtime_version(version)
                    .with_node_ip("127.0.0.1");
            }
            if let Err(e) = sim.run(shutdown).await {
                tracing::error!(error = %e, "workload simulator stopped");
            }
        }));
    }
    if let Some(agent) = agent {
        let mut stop = stop_rx.clone();
        simulators.push(tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            if let Err(e) = agent.run(shutdown).await {
                tracing::error!(error = %e, "node agent stopped");
            }
        }));
    }
    for upstream in upstreams {
        let Some(client) = client.clone() else {
            break;
        };
        let mut stop = stop_rx.clone();
        simulators.push(tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            let result = match upstream {
                Upstream::KubeOvn => mni_kubeovn::simulator::Simulator::new(client)
                    .run(shutdown)
                    .await
                    .map_err(anyhow::Error::from),
                Upstream::Kubevirt => mni_kubevirt::simulator::Simulator::new(client)
                    .run(shutdown)
                    .await
                    .map_err(anyhow::Error::from),
                Upstream::Metal3 => mni_metal3::simulator::Simulator::new(client)
                    .run(shutdown)
                    .await
                    .map_err(anyhow::Error::from),
            };
            if let Err(e) = result {
                tracing::error!(error = %e, ?upstream, "upstream simulator stopped");
            }
        }));
    }
    if let Some(client) = client.clone().filter(|_| args.olm) {
        let mut stop = stop_rx.clone();
        simulators.push(tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            let olm = mni_olm_lifecycle::Lifecycle::new(client).with_crd_install(false);
            if let Err(e) = olm.run(shutdown).await {
                tracing::error!(error = %e, "OLM controllers stopped");
            }
        }));
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut failure = None;
    let mut signalled = false;
    if let (Some(selection), Some(client)) = (&selection, &client) {
        let limit = std::time::Duration::from_secs(args.with_timeout);
        let install = async {
            selection.subscribe(client).await?;
            selection.wait(client, limit).await
        };
        tokio::select! {
            result = install => match result {
                Ok(installed) => report(selection, &installed, started),
                Err(e) => failure = Some(e),
            },
            _ = tokio::signal::ctrl_c() => signalled = true,
            _ = term.recv() => signalled = true,
        }
    }
    if failure.is_none() && !signalled {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    let _ = stop_tx.send(true);
    for sim in simulators {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), sim).await;
    }
    tracing::info!("shutting down");
    server.shutdown().await;
    say("mni-dev stopped");
    match failure {
        Some(e) => Err(e).context("--with"),
        None => Ok(()),
    }
}

/// The `--with` selection: the catalog (built in, or `--catalog`) and the chosen packages.
fn select(names: &[String], args: &UpArgs) -> anyhow::Result<with::Selection> {
    if args.no_simulate {
        anyhow::bail!(
            "--with needs the workload simulator (the operators' Deployments must become \
             available for their CSVs to succeed): drop --no-simulate"
        );
    }
    let dir = match &args.catalog {
        Some(dir) => dir
            .canonicalize()
            .with_context(|| format!("--catalog {}", dir.display()))?,
        None => {
            let dir = args.data_dir.join("catalog");
            with::write_embedded(&dir)?;
            dir.canonicalize()
                .with_context(|| format!("{}", dir.display()))?
        }
    };
    let catalog = mni_olm::Catalog::load(&dir).map_err(with::Error::from)?;
    Ok(with::Selection::new(names, dir, &catalog)?)
}

/// Prints what `--with` installed, how long it took and where the web UIs are.
fn report(selection: &with::Selection, installed: &[with::Installed], started: std::time::Instant) {
    let elapsed = started.elapsed();
    say(&format!(
        "mni-dev: {} ClusterServiceVersions Succeeded in {:.2}s since start:",
        installed.len(),
        elapsed.as_secs_f64()
    ));
    for i in installed {
        say(&format!(
            "  {}/{}  Succeeded  (Subscription {}{})",
            with::OPERATORS_NAMESPACE,
            i.csv,
            i.subscription,
            if i.chosen { "" } else { ", a dependency" }
        ));
    }
    for line in with::console_lines(selection, installed) {
        say(&line);
    }
    say("mni-dev: serving until SIGTERM or SIGINT");
}

/// Prints a line to stdout, ignoring a closed pipe.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colours for a terminal, plain text for a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match Cli::parse().command {
        Command::Up(args) => up(args, started).await,
    }
}
