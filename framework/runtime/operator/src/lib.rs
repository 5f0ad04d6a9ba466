//! The operator runtime every mNi service operator links against, kept thin over kube-runtime.
//!
//! A generated operator's `main` calls [`run`] with its CRDs and a closure that registers one
//! [`Reconciler`] per custom resource kind on a [`ManagerBuilder`]; [`run`] parses
//! [`OperatorArgs`], answers the `crd` subcommand, builds a [`Manager`] from a kube
//! [`Client`](https://docs.rs/kube/5/kube/struct.Client.html) and calls [`Manager::run`]. Start reading at [`Reconciler`] (what you implement), then [`Context`] (what
//! a reconcile can do) and [`Manager`] (what runs it all).
//!
//! What the runtime does for you, in controller-runtime's terms:
//!
//! - **Controllers**: each [`Reconciler`] runs in a kube-runtime
//!   [`Controller`](https://docs.rs/kube/5/kube/runtime/struct.Controller.html), triggered by its kind, the kinds it owns
//!   ([`Relations::owns`]) and the kinds it watches ([`Relations::watches`]). Every watched kind
//!   is cached in a reflector store that reconciles read through [`Context::store`].
//! - **Errors** requeue the object with per-object exponential backoff (5 ms doubling to
//!   1000 s, reset on success), record a `Warning` event and set `Ready=False` with the error
//!   message, so a missing RBAC verb shows up on the object as a `Forbidden` condition.
//! - **Finalizers**: a reconciler that names a [`Reconciler::finalizer`] gets
//!   [`Reconciler::cleanup`] called before its object goes away (kube-runtime's `finalizer` helper).
//! - **Owned children**: [`Context::apply_owned`] server-side applies a child with the
//!   controller's field manager and a controller owner reference, so the API server garbage
//!   collects it with its owner and a second identical apply writes nothing.
//! - **Status**: [`Context::set_condition`] and [`Context::update_conditions`] keep mni-core
//!   [`Condition`]s with `observedGeneration` and write only when something changed; [`Context::publish_event`] records `events.k8s.io` events.
//! - **Leader election** on a `coordination.k8s.io/v1` Lease ([`LeaderElection`]): only the
//!   leader reconciles, a lost lease stops reconciling at once.
//! - **Probes and metrics**: `/healthz`, `/readyz` (ready once the caches are synced) and
//!   Prometheus `/metrics` under controller-runtime's metric names ([`Metrics`]).
//! - **Shutdown**: SIGTERM or SIGINT (or a [`ShutdownHandle`]) lets in-flight reconciles finish,
//!   releases the lease and returns `Ok(())`.
//! - **Logging**: [`telemetry::init`] sets up `tracing` with `RUST_LOG` filtering and text or
//!   JSON output; every reconcile runs in a `reconcile` span naming the object.
//!
//! ```no_run
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use mni_operator::prelude::*;
//!
//! struct Labeler;
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error(transparent)]
//! struct Failed(#[from] mni_operator::ContextError);
//!
//! impl Reconciler for Labeler {
//!     type K = ConfigMap;
//!     type Error = Failed;
//!
//!     fn name(&self) -> &str {
//!         "labeler"
//!     }
//!
//!     async fn reconcile(&self, cm: Arc<ConfigMap>, ctx: &Context<ConfigMap>) -> Result<Action, Failed> {
//!         ctx.publish_event(&cm, EventType::Normal, "Seen", "Reconcile", None).await?;
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = kube::Client::try_default().await?;
//! Manager::builder(client).with_controller(Labeler).build().run().await?;
//! # Ok(())
//! # }
//! ```

mod args;
mod backoff;
mod context;
mod controller;
mod leader;
mod manager;
mod metrics;
mod reconciler;
mod run;
pub mod telemetry;
pub mod workload;

pub use args::{ArgsError, BindAddress, LogFormat, OperatorArgs, OperatorCommand, write_crds};
pub use backoff::ObjectBackoff;
pub use context::{Context, ContextError};
pub use controller::{ControllerOptions, ReconcileError};
pub use kube::runtime::controller::Action;
pub use kube::runtime::events::EventType;
pub use leader::{LeaderElection, LeaderElectionError};
pub use manager::{
    BoxError, Error, Manager, ManagerBuilder, ReadyzCheck, RunningManager, ShutdownHandle,
};
pub use metrics::Metrics;
pub use mni_core::{Condition, ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY, reasons};
pub use reconciler::{ApiScope, Reconciler, Relations};
#[doc(hidden)]
pub use run::about_command;
pub use run::{OperatorCli, RunError, run};

/// The names an operator's `main` and reconcilers need in scope.
pub mod prelude {
    pub use crate::{
        Action, Condition, ConditionStatus, Conditions, Context, EventType, Manager, OperatorArgs,
        READY, Reconciler, Relations, reasons,
    };
    pub use kube::{Resource, ResourceExt};
}
