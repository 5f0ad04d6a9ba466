// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `mni-console`: serves the platform's front page ([`mni_platform::console`]) against the
//! cluster of the current kubeconfig (or the in-cluster config), on `--listen` (default
//! `127.0.0.1:8070`) until SIGTERM or SIGINT.

use std::net::SocketAddr;

use clap::Parser;
use mni_web::ServeArgs;

/// The mNi console: the platform's tenants and installed services, with links to each
/// service's web UI.
#[derive(Debug, Parser)]
#[command(name = "mni-console", version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    cli.serve.init_tracing();
    let client = kube::Client::try_default().await?;
    let listener = cli
        .serve
        .bind(SocketAddr::from(([127, 0, 0, 1], 8070)))
        .await?;
    tracing::info!(address = %listener.local_addr()?, "serving the console");
    mni_web::run(listener, mni_platform::console::router(client)).await?;
    Ok(())
}
