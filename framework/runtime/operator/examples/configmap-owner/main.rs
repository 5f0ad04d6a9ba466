//! `configmap-owner`: the smallest complete mNi operator.
//!
//! It reconciles `Widget`s (see `widget.rs`) into owned ConfigMaps with kubebuilder's flags:
//!
//! ```text
//! cargo run -p mni-operator --example configmap-owner -- crd | kubectl apply -f -
//! cargo run -p mni-operator --example configmap-owner -- --health-probe-bind-address :8081
//! ```
//!
//! It talks to the cluster of the current kubeconfig (`KUBECONFIG`, or in-cluster config), logs
//! per `RUST_LOG` and `--log-format`, and exits 0 after SIGTERM once in-flight reconciles finish.

use clap::Parser;
use mni_operator::{Manager, OperatorArgs, OperatorCommand, telemetry, write_crds};

mod widget;

#[derive(Parser)]
#[command(about = "Reconciles Widgets into ConfigMaps")]
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
        write_crds(&widget::crds(), std::io::stdout().lock())?;
        return Ok(());
    }
    telemetry::init(cli.operator.log_format);
    let client = kube::Client::try_default().await?;
    Manager::builder(client)
        .with_args(&cli.operator)
        .with_controller(widget::WidgetReconciler)
        .build()
        .run()
        .await?;
    Ok(())
}
