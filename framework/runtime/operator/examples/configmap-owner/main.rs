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

mod widget;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let command = mni_operator::command!().about("Reconciles Widgets into ConfigMaps");
    mni_operator::run(command, widget::crds(), |manager| {
        manager.with_controller(widget::WidgetReconciler)
    })
    .await?;
    Ok(())
}
