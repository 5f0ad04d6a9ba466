//! Runs one [`Reconciler`] in a kube-runtime [`Controller`]: caches, finalizer, backoff,
//! metrics, tracing and error reporting around the user's `reconcile`.
//!
//! The manager keeps a list of type-erased [`ControllerRun`]s and starts them all once it may
//! reconcile (at once, or after winning the leader election).

use std::{error::Error as StdError, sync::Arc, time::Duration};

use futures::{FutureExt, StreamExt, future::BoxFuture};
use kube::{
    Client, Resource, ResourceExt,
    runtime::{
        Controller,
        controller::{self, Action},
        events::EventType,
        finalizer::{self, finalizer},
        reflector::ObjectRef,
    },
};
use mni_core::{ConditionStatus, READY, reasons};
use tokio::time::Instant;
use tracing::Instrument;

use crate::{
    backoff::ObjectBackoff,
    context::{Caches, Context, ContextError},
    manager::ShutdownHandle,
    metrics::{Metrics, Outcome},
    reconciler::{ApiScope, Reconciler, cached_stream},
};

/// How one controller runs (controller-runtime's `controller.Options`).
#[derive(Clone, Debug)]
#[must_use]
pub struct ControllerOptions {
    max_concurrent_reconciles: u16,
    backoff_base: Duration,
    backoff_max: Duration,
    report_errors: bool,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        Self {
            max_concurrent_reconciles: 1,
            backoff_base: ObjectBackoff::<()>::DEFAULT_BASE,
            backoff_max: ObjectBackoff::<()>::DEFAULT_MAX,
            report_errors: true,
        }
    }
}

impl ControllerOptions {
    /// How many objects reconcile at once (default 1, like controller-runtime); one object is
    /// never reconciled twice at the same time.
    pub fn with_max_concurrent_reconciles(mut self, n: u16) -> Self {
        self.max_concurrent_reconciles = n.max(1);
        self
    }

    /// The per-object error backoff: `base` doubling per consecutive failure up to `max`
    /// (default 5 ms to 1000 s).
    pub fn with_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff_base = base;
        self.backoff_max = max;
        self
    }

    /// Whether a failed reconcile records a `Warning` event `ReconcileFailed` and sets
    /// `Ready=False` (reason `ReconcileFailed`, or `Forbidden` for a missing permission) on the
    /// object's status (default true). Turn it off for kinds without `status.conditions`.
    pub fn with_error_reporting(mut self, report: bool) -> Self {
        self.report_errors = report;
        self
    }
}

/// A failed reconcile, as logged and reported on the object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// The reconciler (or its cleanup) returned an error.
    #[error("{0}")]
    Reconciler(#[source] Box<dyn StdError + Send + Sync>),
    /// Adding or removing the finalizer failed.
    #[error("finalizer {finalizer}: {source}")]
    Finalizer {
        /// The finalizer's name.
        finalizer: String,
        /// kube-runtime's finalizer error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}

impl ReconcileError {
    /// Whether the API server refused a request with 403 Forbidden somewhere in the cause chain.
    pub fn is_forbidden(&self) -> bool {
        let mut cause: Option<&(dyn StdError + 'static)> = Some(self);
        while let Some(err) = cause {
            if let Some(kube::Error::Api(status)) = err.downcast_ref::<kube::Error>()
                && status.is_forbidden()
            {
                return true;
            }
            if err
                .downcast_ref::<ContextError>()
                .is_some_and(ContextError::is_forbidden)
            {
                return true;
            }
            cause = err.source();
        }
        false
    }

    /// The message with its causes, `a: b: c`, without repeating causes already in the text.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = self.source();
        while let Some(err) = cause {
            let part = err.to_string();
            if !text.contains(&part) {
                text = format!("{text}: {part}");
            }
            cause = err.source();
        }
        text
    }
}

/// Everything a running controller shares between its reconciles.
struct Shared<R: Reconciler> {
    reconciler: R,
    context: Context<R::K>,
    backoff: ObjectBackoff<ObjectRef<R::K>>,
    options: ControllerOptions,
    metrics: Arc<Metrics>,
    name: String,
}

/// A controller waiting to be started by the manager.
pub(crate) trait ControllerRun: Send {
    /// The controller name.
    fn name(&self) -> &str;

    /// Builds the controller; returns its run future (ends after `shutdown` resolves and
    /// in-flight reconciles finished) and a future that resolves once its caches are synced.
    fn start(self: Box<Self>, run: StartParams)
    -> (BoxFuture<'static, ()>, BoxFuture<'static, ()>);
}

/// What the manager hands a controller to start.
pub(crate) struct StartParams {
    pub(crate) client: Client,
    pub(crate) namespace: Option<String>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) instance: Option<String>,
    pub(crate) shutdown: ShutdownHandle,
}

pub(crate) struct Registered<R: Reconciler> {
    pub(crate) reconciler: R,
    pub(crate) options: ControllerOptions,
}

impl<R: Reconciler> ControllerRun for Registered<R> {
    fn name(&self) -> &str {
        self.reconciler.name()
    }

    fn start(
        self: Box<Self>,
        params: StartParams,
    ) -> (BoxFuture<'static, ()>, BoxFuture<'static, ()>) {
        let Registered {
            reconciler,
            options,
        } = *self;
        let name = reconciler.name().to_string();
        let namespace = params.namespace.as_deref();
        let mut caches = Caches::default();
        let api = <R::K as Resource>::Scope::api::<R::K>(params.client.clone(), namespace);
        let main = cached_stream(api, &mut caches);
        let store = caches
            .get::<R::K>()
            .expect("the main kind's store was just registered");
        let main_synced = caches
            .synced::<R::K>()
            .expect("the main kind's store was just registered");
        let mut controller = Controller::for_stream(main, store).with_config(
            controller::Config::default().concurrency(options.max_concurrent_reconciles),
        );
        for hook in reconciler.relations().hooks {
            controller = hook(controller, &params.client, namespace, &mut caches);
        }
        let ready = futures::future::join_all(caches.ready.iter().map(|ready| ready()))
            .map(|_| ())
            .boxed();
        params
            .metrics
            .controller_started(&name, options.max_concurrent_reconciles);
        let shared = Arc::new(Shared {
            context: Context::new(params.client, &name, params.instance, caches),
            backoff: ObjectBackoff::new(options.backoff_base, options.backoff_max),
            reconciler,
            options,
            metrics: params.metrics,
            name,
        });
        let name = shared.name.clone();
        let shutdown = into_sync_future(params.shutdown.wait());
        let run = controller
            .graceful_shutdown_on(shutdown)
            .run(reconcile::<R>, error_policy::<R>, shared)
            .for_each(|result| async move {
                match result {
                    Ok(_) => {}
                    Err(controller::Error::ReconcilerFailed(..)) => {} // logged in `reconcile`
                    Err(controller::Error::ObjectNotFound(obj)) => {
                        tracing::debug!(object = %obj, "object gone before its reconcile")
                    }
                    Err(error) => tracing::warn!(%error, "controller stream error"),
                }
            });
        // kube-runtime holds reconciles until the main store has synced, and a graceful shutdown
        // waits for that hold too: a controller whose first list never succeeds (its kind is
        // not served, its RBAC is missing) would never stop. Unsynced at shutdown means no
        // reconcile ever started, so there is nothing in flight to wait for.
        let unsynced_at_shutdown = {
            let stop = params.shutdown.wait();
            async move {
                stop.await;
                if *main_synced.borrow() {
                    futures::future::pending::<()>().await;
                }
                tracing::warn!(
                    controller = %name,
                    "stopping a controller whose cache never synced"
                );
            }
        };
        let run = futures::future::select(run.boxed(), unsynced_at_shutdown.boxed())
            .map(|_| ())
            .boxed();
        (run, ready)
    }
}

/// kube-runtime wants a `Sync` shutdown trigger; a oneshot receiver is, our future may not be.
fn into_sync_future(
    shutdown: BoxFuture<'static, ()>,
) -> impl std::future::Future<Output = ()> + Send + Sync + 'static {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(());
    });
    rx.map(|_| ())
}

async fn reconcile<R: Reconciler>(
    obj: Arc<R::K>,
    shared: Arc<Shared<R>>,
) -> Result<Action, ReconcileError> {
    let oref = ObjectRef::from_obj(&*obj);
    let span = tracing::info_span!(
        "reconcile",
        controller = %shared.name,
        object.ref = %oref,
        object.name = %obj.name_any(),
        object.namespace = obj.namespace().unwrap_or_default(),
    );
    async move {
        shared.metrics.worker_started(&shared.name);
        let started = Instant::now();
        let result = run_reconciler(&shared, obj.clone()).await;
        let outcome = match &result {
            Ok(action) if *action == Action::await_change() => Outcome::Success,
            Ok(action) if *action == Action::requeue(Duration::ZERO) => Outcome::Requeue,
            Ok(_) => Outcome::RequeueAfter,
            Err(_) => Outcome::Error,
        };
        shared
            .metrics
            .reconciled(&shared.name, outcome, started.elapsed().as_secs_f64());
        match &result {
            Ok(action) => {
                shared.backoff.reset(&oref);
                tracing::debug!(?action, "reconciled");
            }
            Err(error) => {
                let message = error.chain();
                tracing::warn!(error = %message, "reconcile failed");
                if shared.options.report_errors {
                    report_error(&shared, &obj, error, message).await;
                }
            }
        }
        result
    }
    .instrument(span)
    .await
}

async fn run_reconciler<R: Reconciler>(
    shared: &Shared<R>,
    obj: Arc<R::K>,
) -> Result<Action, ReconcileError> {
    let ctx = &shared.context;
    let Some(name) = shared.reconciler.finalizer() else {
        return shared
            .reconciler
            .reconcile(obj, ctx)
            .await
            .map_err(|e| ReconcileError::Reconciler(Box::new(e)));
    };
    let api = ctx.api_for(&obj);
    finalizer(&api, name, obj, |event| async move {
        match event {
            finalizer::Event::Apply(obj) => shared.reconciler.reconcile(obj, ctx).await,
            finalizer::Event::Cleanup(obj) => shared.reconciler.cleanup(obj, ctx).await,
        }
    })
    .await
    .map_err(|error| match error {
        finalizer::Error::ApplyFailed(e) | finalizer::Error::CleanupFailed(e) => {
            ReconcileError::Reconciler(Box::new(e))
        }
        other => ReconcileError::Finalizer {
            finalizer: name.to_string(),
            source: Box::new(other),
        },
    })
}

/// Puts the failure where `kubectl describe` shows it: a Warning event and `Ready=False`.
async fn report_error<R: Reconciler>(
    shared: &Shared<R>,
    obj: &R::K,
    error: &ReconcileError,
    message: String,
) {
    let reason = if error.is_forbidden() {
        "Forbidden"
    } else {
        reasons::RECONCILE_FAILED
    };
    let ctx = &shared.context;
    let event = ctx
        .publish_event(
            obj,
            EventType::Warning,
            reasons::RECONCILE_FAILED,
            "Reconcile",
            Some(message.clone()),
        )
        .await;
    if let Err(error) = event {
        tracing::debug!(%error, "could not record the error event");
    }
    if obj.meta().deletion_timestamp.is_none() {
        let written = ctx
            .set_condition(obj, READY, ConditionStatus::False, reason, &message)
            .await;
        if let Err(error) = written {
            tracing::debug!(%error, "could not set Ready=False");
        }
    }
}

fn error_policy<R: Reconciler>(
    obj: Arc<R::K>,
    _error: &ReconcileError,
    shared: Arc<Shared<R>>,
) -> Action {
    Action::requeue(shared.backoff.next_delay(ObjectRef::from_obj(&*obj)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_is_found_through_the_cause_chain() {
        let status = kube::core::Status::failure(
            "configmaps \"a\" is forbidden: User \"x\" cannot patch resource \"configmaps\"",
            "Forbidden",
        )
        .with_code(403);
        let err = ContextError::Api {
            action: "apply",
            kind: "ConfigMap".into(),
            name: "a".into(),
            source: kube::Error::Api(status.boxed()),
        };
        let wrapped = ReconcileError::Reconciler(Box::new(err));
        assert!(wrapped.is_forbidden());
        assert!(wrapped.chain().contains("cannot patch resource"));
        let plain = ReconcileError::Reconciler("boom".into());
        assert!(!plain.is_forbidden());
    }
}
