//! Running a service's web binary: [`ServeArgs`] (the flags every one of them has, to flatten
//! into its own `clap` struct), tracing set up from them, the listener bound, and [`run`],
//! which serves a router until SIGTERM (what Kubernetes sends) or SIGINT (Ctrl-C) and lets
//! in-flight requests finish.
//!
//! Every flag has an environment variable, which is how the operator configures the binary
//! (from the ConfigMap of the workload's settings).

use std::future::Future;
use std::net::SocketAddr;

use axum::Router;
use clap::{Args, ValueEnum};
use tokio::net::TcpListener;
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// Why a web binary could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The listen address could not be bound (in use, or not an address of this host).
    #[error("listening on {address} (--listen, LISTEN_ADDRESS): {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("serving: {0}")]
    Serve(#[source] std::io::Error),
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The flags of every web binary; `#[command(flatten)]` them into the binary's own.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct ServeArgs {
    /// The address to serve on (default: the binary's own, e.g. 127.0.0.1:8090 for a backend).
    #[arg(long, env = "LISTEN_ADDRESS")]
    pub listen: Option<SocketAddr>,
    /// Log format; filter with RUST_LOG (default "info").
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

impl ServeArgs {
    /// Installs the global tracing subscriber: [`Self::log_format`], filtered by `RUST_LOG`
    /// (default `info`). Does nothing when one is already installed.
    pub fn init_tracing(&self) {
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        let registry = tracing_subscriber::registry().with(filter);
        let _ = match self.log_format {
            LogFormat::Text => registry.with(fmt::layer()).try_init(),
            LogFormat::Json => registry
                .with(fmt::layer().json().flatten_event(true))
                .try_init(),
        };
    }

    /// The address to serve on: `--listen`, else `default`.
    #[must_use]
    pub fn address(&self, default: SocketAddr) -> SocketAddr {
        self.listen.unwrap_or(default)
    }

    /// Binds [`Self::address`].
    ///
    /// # Errors
    ///
    /// [`RunError::Bind`] naming the address.
    pub async fn bind(&self, default: SocketAddr) -> Result<TcpListener, RunError> {
        let address = self.address(default);
        TcpListener::bind(address)
            .await
            .map_err(|source| RunError::Bind { address, source })
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets in-flight requests
/// finish.
///
/// # Errors
///
/// What the server fails with.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Serves `router` on `listener` until SIGTERM or SIGINT, logging when it stops.
///
/// # Errors
///
/// [`RunError::Serve`] when the server fails.
pub async fn run(listener: TcpListener, router: Router) -> Result<(), RunError> {
    serve(listener, router, shutdown_signal())
        .await
        .map_err(RunError::Serve)?;
    tracing::info!("stopped");
    Ok(())
}

/// Completes on SIGTERM (what Kubernetes sends) or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = match signal(SignalKind::terminate()) {
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn the_listen_address_defaults_to_the_binary_s_own() {
        let default: SocketAddr = "127.0.0.1:8090".parse().expect("address");
        let cli = Cli::try_parse_from(["x"]).expect("no flags");
        assert_eq!(cli.serve.address(default), default);
        assert_eq!(cli.serve.log_format, LogFormat::Text);
        let cli = Cli::try_parse_from(["x", "--listen", "0.0.0.0:1", "--log-format", "json"])
            .expect("flags");
        assert_eq!(cli.serve.address(default).port(), 1);
        assert_eq!(cli.serve.log_format, LogFormat::Json);
    }

    #[tokio::test]
    async fn a_taken_address_is_an_error_naming_it() {
        let taken = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = taken.local_addr().expect("address");
        let args = ServeArgs {
            listen: Some(address),
            ..ServeArgs::default()
        };
        let e = args.bind(address).await.expect_err("in use");
        assert!(e.to_string().contains(&address.to_string()), "{e}");
    }
}
