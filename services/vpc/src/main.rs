// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `mni-vpc`: the operator binary.
//!
//! It runs the controllers registered below against the cluster of the current kubeconfig (or
//! the in-cluster config), with Kubebuilder's flags (`--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`); `mni-vpc crd` prints its CRDs.
//!
//! The runtime records Events for the objects it reconciles:
// +mni:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use clap::Parser;
use mni_operator::{Manager, OperatorArgs, OperatorCommand, telemetry, write_crds};

use mni_vpc::api;
// +mni:scaffold:imports

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    operator: OperatorArgs,
    #[command(subcommand)]
    command: Option<OperatorCommand>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(OperatorCommand::Crd) = cli.command {
        write_crds(&api::crds(), std::io::stdout().lock())?;
        return Ok(());
    }
    telemetry::init(cli.operator.log_format);
    let client = kube::Client::try_default().await?;
    let manager = Manager::builder(client).with_args(&cli.operator);
    // +mni:scaffold:controllers
    manager.build().run().await?;
    Ok(())
}
