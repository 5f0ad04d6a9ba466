// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `network-frontend`: serves the network service's web UI and proxies `/api` to the backend.
//!
//! Every flag has an environment variable, which is how the operator configures it. SIGTERM or
//! SIGINT stop it after in-flight requests.

use std::net::SocketAddr;

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

use network_frontend::{Backend, serve};

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// The address to serve the UI on.
    #[arg(long, env = "LISTEN_ADDRESS", default_value = "127.0.0.1:8091")]
    listen: SocketAddr,
    /// The backend that `/api` requests go to.
    #[arg(long, env = "BACKEND_URL", default_value = "http://127.0.0.1:8090")]
    backend_url: String,
    /// Log format; filter with RUST_LOG (default "info").
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let registry = tracing_subscriber::registry().with(filter);
    match cli.log_format {
        LogFormat::Text => registry.with(fmt::layer()).init(),
        LogFormat::Json => registry
            .with(fmt::layer().json().flatten_event(true))
            .init(),
    }

    let backend = Backend::new(&cli.backend_url).context("--backend-url")?;
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("listening on {}", cli.listen))?;
    let address = listener.local_addr().context("the bound address")?;
    tracing::info!(%address, backend = %cli.backend_url, "serving");
    serve(listener, backend, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Completes on SIGTERM (what Kubernetes sends) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM; stop with Ctrl-C");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    tracing::info!("shutting down");
}
