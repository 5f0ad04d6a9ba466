//! `mni-dev`: runs the embedded control plane for local development.
//!
//! `mni-dev up` serves the Kubernetes API on loopback, persists under `.mni/dev/`, writes a
//! kubeconfig, prints a line containing `ready`, and shuts down cleanly on SIGTERM/SIGINT.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

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
    /// Directory for the durable store.
    #[arg(long, default_value = ".mni/dev")]
    data_dir: PathBuf,
    /// Where to write the kubeconfig (default: DATA_DIR/kubeconfig).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Keep everything in memory (nothing survives a restart).
    #[arg(long)]
    in_memory: bool,
}

async fn up(args: UpArgs) -> anyhow::Result<()> {
    let mut builder = mni_apiserver::Server::builder().with_listen(args.listen);
    if !args.in_memory {
        builder = builder.with_data_dir(&args.data_dir);
    }
    let server = builder
        .start()
        .await
        .context("starting the control plane")?;
    let kubeconfig = args
        .kubeconfig
        .unwrap_or_else(|| args.data_dir.join("kubeconfig"));
    let token = uuid::Uuid::new_v4().simple().to_string();
    mni_apiserver::kubeconfig::write(
        &kubeconfig,
        &mni_apiserver::kubeconfig::render(&server.url(), &token, "default"),
    )
    .with_context(|| format!("writing kubeconfig {}", kubeconfig.display()))?;
    println!(
        "mni-dev ready: serving {} (kubeconfig: {})",
        server.url(),
        kubeconfig.display()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
    server.shutdown().await;
    println!("mni-dev stopped");
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Up(args) => up(args).await,
    }
}
