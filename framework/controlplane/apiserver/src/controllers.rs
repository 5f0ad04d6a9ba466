//! The built-in controllers: background loops that do what kube-controller-manager does where
//! clients depend on it.
//!
//! `namespaces` creates the system namespaces (and the default RBAC policy) at start-up and
//! finishes the deletion of terminating namespaces; `system` creates the server's own
//! APIServices and flow-control configuration at start-up; `gc` is the garbage collector. Both write
//! through the state layer's API, as the HTTP handlers do, and never through the handlers.
//! [`run`] drives them: the namespace finalizer on every deletion kick and every second, a
//! namespace's contents (its `default` ServiceAccount and CA bundle) on every Namespace write and
//! every second, the garbage collector on every kick and every minute.

mod gc;
mod namespaces;
mod system;

use std::sync::Arc;
use std::time::Duration;

use crate::state::State;

pub(crate) use namespaces::bootstrap;

/// Seconds between the garbage collector's safety-net sweeps.
const GC_SWEEP_SECONDS: u64 = 60;

/// Runs the namespace finalizer: on every deletion kick, and every second as a safety net.
pub(crate) async fn run(state: Arc<State>) {
    let mut stop = state.shutdown_signal();
    let mut ticks: u64 = 0;
    loop {
        // A deletion kicks both loops at once; otherwise the namespace finalizer (cheap: it
        // looks at namespaces only) runs every second and a full garbage-collection sweep,
        // which reads every object, every minute. The sweep is only a safety net: every write
        // that makes garbage (a removal, a reference to a gone owner) kicks it at once.
        let kicked = tokio::select! {
            _ = stop.changed() => return,
            () = state.wait_for_kick() => true,
            () = state.wait_for_namespace_kick() => {
                // A namespace was created or changed: only its contents are due.
                if let Err(e) = namespaces::ensure_namespace_contents(&state).await {
                    tracing::warn!(error = %e, "namespace contents");
                }
                continue;
            }
            () = tokio::time::sleep(Duration::from_secs(1)) => false,
        };
        ticks += 1;
        if let Err(e) = namespaces::finalize_namespaces(&state).await {
            tracing::warn!(error = %e, "namespace finalizer");
        }
        if let Err(e) = namespaces::ensure_namespace_contents(&state).await {
            tracing::warn!(error = %e, "namespace contents");
        }
        if (kicked || ticks.is_multiple_of(GC_SWEEP_SECONDS))
            && let Err(e) = gc::collect(&state).await
        {
            tracing::warn!(error = %e, "garbage collector");
        }
    }
}
