// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `metal-backend`: the metal service's HTTP API server.
//!
//! It talks to the cluster of the current kubeconfig (`KUBECONFIG`, or the in-cluster config
//! when run as a pod), so it runs the same outside a cluster against `mni-dev` as inside one.
//! Every flag has an environment variable, which is how the operator configures it (from the
//! ConfigMap `NAME-backend-settings`). SIGTERM or SIGINT stop it after in-flight requests.

use anyhow::Context as _;
use clap::Parser;
use mni_web::ServeArgs;

use metal_backend::router;

/// Where it listens unless `--listen` says otherwise.
const LISTEN: ([u8; 4], u16) = ([127, 0, 0, 1], 8090);

#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// The namespace whose Servers to serve (default: the kubeconfig's, or the pod's).
    #[arg(long, env = "NAMESPACE")]
    namespace: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    cli.serve.init_tracing();
    let client = kube::Client::try_default()
        .await
        .context("connecting to the Kubernetes API (set KUBECONFIG?)")?;
    let namespace = cli
        .namespace
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let listener = cli.serve.bind(LISTEN.into()).await?;
    let address = listener.local_addr().context("the bound address")?;
    tracing::info!(%address, %namespace, "serving");
    mni_web::run(listener, router(client, &namespace)).await?;
    Ok(())
}
