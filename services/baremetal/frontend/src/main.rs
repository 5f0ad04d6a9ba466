// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `metal-frontend`: serves the metal service's web UI and proxies `/api` to the backend.
//!
//! Every flag has an environment variable, which is how the operator configures it. SIGTERM or
//! SIGINT stop it after in-flight requests.

use anyhow::Context as _;
use clap::Parser;
use mni_web::ServeArgs;

use metal_frontend::{Backend, router};

/// Where it listens unless `--listen` says otherwise.
const LISTEN: ([u8; 4], u16) = ([127, 0, 0, 1], 8091);

#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// The backend that `/api` requests go to.
    #[arg(long, env = "BACKEND_URL", default_value = "http://127.0.0.1:8090")]
    backend_url: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    cli.serve.init_tracing();
    let backend = Backend::new(&cli.backend_url).context("--backend-url")?;
    let listener = cli.serve.bind(LISTEN.into()).await?;
    let address = listener.local_addr().context("the bound address")?;
    tracing::info!(%address, backend = %cli.backend_url, "serving");
    mni_web::run(listener, router(backend)).await?;
    Ok(())
}
