//! Writes to the API server, the bookkeeping of one reconcile pass ([`Outcome`]) and the
//! create/delete expectations that keep a stale cache from creating pods twice.
//!
//! Every write is a plain create, a JSON merge patch (of the object or its `status`
//! subresource) or a delete; `404 Not Found` and `409 Conflict` are not errors: the pass
//! records a retry and the next pass (triggered by the watch event that follows) redoes
//! the work from fresh state.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{StreamExt, stream};

use jiff::Timestamp;
use k8s_openapi::serde::Serialize;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, Resource};
use serde_json::{Map, Value};

use crate::scope::Scope;
use crate::util;

/// Errors of API writes that are worth reporting (not 404 or 409).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// The API server refused or failed a request.
    #[error("{verb} {kind} {name}: {source}")]
    Api {
        /// What was attempted.
        verb: &'static str,
        /// The kind written.
        kind: String,
        /// The object's name.
        name: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// An object could not be serialized.
    #[error("serializing a patch: {0}")]
    Json(#[from] serde_json::Error),
}

/// What one pass did and when the next one is due.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Writes that reached the server.
    pub(crate) writes: usize,
    /// A write was skipped (conflict, gone) or failed: run again soon.
    pub(crate) retry: bool,
    /// The earliest time a timed transition (readiness, crash, deadline) is due.
    pub(crate) wake: Option<Timestamp>,
    /// The objects to look at again in the next pass (a write was skipped or failed).
    pub(crate) redo: Scope,
}

impl Outcome {
    /// Asks for a pass no later than `at`.
    pub(crate) fn wake_at(&mut self, at: Timestamp) {
        self.wake = util::earliest(self.wake, Some(at));
    }

    /// Adds what another reconcile did.
    pub(crate) fn merge(&mut self, other: Outcome) {
        self.writes += other.writes;
        self.retry |= other.retry;
        self.wake = util::earliest(self.wake, other.wake);
        self.redo.merge(other.redo);
    }

    /// Records a failed reconcile of one object.
    pub(crate) fn failed(&mut self, what: &str, e: &dyn std::error::Error) {
        tracing::warn!(object = what, error = %e, "reconcile failed; will retry");
        self.retry = true;
    }
}

/// How many objects of one kind a pass reconciles at once. Their writes overlap, so the API
/// server commits them in shared batches instead of one round trip and fsync after another.
const CONCURRENCY: usize = 32;

/// Runs the reconciles `todo`, up to [`CONCURRENCY`] at once, each into an [`Outcome`] of
/// its own that is merged into `out`. The controllers' objects are independent of each other
/// within one kind (each writes only itself and what it owns), so the order does not matter.
///
/// The futures come boxed and collected: a lazy iterator of closures held across the `await`
/// would trip the compiler's `Send` check of the simulator's future (higher-ranked lifetimes).
pub(crate) async fn each(todo: Vec<BoxFuture<'_, Outcome>>, out: &mut Outcome) {
    let mut outcomes = stream::iter(todo).buffer_unordered(CONCURRENCY);
    while let Some(o) = outcomes.next().await {
        out.merge(o);
    }
}

/// Reconciles, like [`each`], every controller of `controllers` that `scope` names with
/// `sync_one` (given the controller and a fresh [`Outcome`], it hands back that outcome and
/// the result): a failure is logged (as `<kind> <name>`) and, like any write skipped for a
/// retry, queues the controller for the next pass.
pub(crate) async fn each_controller<'a, K, E>(
    kind: &'static str,
    controllers: &'a [Arc<K>],
    scope: &Scope,
    out: &mut Outcome,
    sync_one: impl Fn(&'a K, Outcome) -> BoxFuture<'a, (Outcome, Result<(), E>)>,
) where
    K: Resource + Send + Sync,
    E: std::error::Error + Send + 'a,
{
    let todo: Vec<BoxFuture<'a, Outcome>> = controllers
        .iter()
        .filter(|c| scope.controller(c.meta().uid.as_deref()))
        .map(|c| -> BoxFuture<'a, Outcome> {
            let sync = sync_one(c, Outcome::default());
            Box::pin(async move {
                let (mut out, result) = sync.await;
                if let Err(e) = result {
                    let name = c.meta().name.as_deref().unwrap_or_default();
                    out.failed(&format!("{kind} {name}"), &e);
                }
                if out.retry {
                    out.redo.add_controller(c.meta().uid.as_deref());
                }
                out
            })
        })
        .collect();
    each(todo, out).await;
}

impl Error {
    /// The server's message when it refused the write outright (a 4xx other than 404 and
    /// 409: a quota, a limit range, validation); `None` for other failures.
    pub(crate) fn refusal(&self) -> Option<&str> {
        match self {
            Error::Api { source, .. } => match source.as_ref() {
                kube::Error::Api(s) if (400..500).contains(&s.code) => Some(&s.message),
                _ => None,
            },
            Error::Json(_) => None,
        }
    }
}

/// Records a Warning event about `involved` from `component`, as kube's event recorder does
/// (best effort: a failed event is logged, never an error of the reconcile).
pub(crate) async fn warn(
    client: &kube::Client,
    involved: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    (api_version, kind): (&str, &str),
    reason: &str,
    message: &str,
    component: &str,
) {
    let ns = involved
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = involved.name.clone().unwrap_or_default();
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(util::now());
    let event = k8s_openapi::api::core::v1::Event {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            generate_name: Some(format!("{name}.")),
            namespace: Some(ns.clone()),
            ..Default::default()
        },
        involved_object: k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
            name: Some(name),
            namespace: Some(ns.clone()),
            uid: involved.uid.clone(),
            resource_version: involved.resource_version.clone(),
            field_path: None,
        },
        reason: Some(reason.into()),
        message: Some(message.into()),
        type_: Some("Warning".into()),
        source: Some(k8s_openapi::api::core::v1::EventSource {
            component: Some(component.into()),
            host: None,
        }),
        reporting_component: Some(component.into()),
        count: Some(1),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        ..Default::default()
    };
    let api: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), &ns);
    if let Err(e) = api.create(&PostParams::default(), &event).await {
        tracing::warn!(reason, error = %e, "event not recorded");
    }
}

fn skip(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404 || s.code == 409)
}

fn api_err<K: Resource<DynamicType = ()>>(verb: &'static str, name: &str, e: kube::Error) -> Error {
    Error::Api {
        verb,
        kind: K::kind(&()).into_owned(),
        name: name.to_string(),
        source: Box::new(e),
    }
}

/// Creates `obj`; `Ok(None)` when it already exists.
pub(crate) async fn create<K>(api: &Api<K>, obj: &K, out: &mut Outcome) -> Result<Option<K>, Error>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug,
{
    match api.create(&PostParams::default(), obj).await {
        Ok(o) => {
            out.writes += 1;
            Ok(Some(o))
        }
        Err(e) if skip(&e) => {
            out.retry = true;
            Ok(None)
        }
        Err(e) => Err(api_err::<K>(
            "create",
            obj.meta().name.as_deref().unwrap_or_default(),
            e,
        )),
    }
}

/// Merge-patches the object (or its status when `status`); `Ok(None)` when it is gone.
pub(crate) async fn patch<K>(
    api: &Api<K>,
    name: &str,
    body: &Value,
    status: bool,
    out: &mut Outcome,
) -> Result<Option<K>, Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let pp = PatchParams::default();
    let res = if status {
        api.patch_status(name, &pp, &Patch::Merge(body)).await
    } else {
        api.patch(name, &pp, &Patch::Merge(body)).await
    };
    match res {
        Ok(o) => {
            out.writes += 1;
            Ok(Some(o))
        }
        Err(e) if skip(&e) => {
            out.retry = true;
            Ok(None)
        }
        Err(e) => Err(api_err::<K>("patch", name, e)),
    }
}

/// Deletes the object with this name if it still has `uid`.
pub(crate) async fn delete<K>(
    api: &Api<K>,
    name: &str,
    uid: Option<&str>,
    out: &mut Outcome,
) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let dp = DeleteParams {
        preconditions: uid.map(|u| Preconditions {
            uid: Some(u.to_string()),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    match api.delete(name, &dp).await {
        Ok(_) => {
            out.writes += 1;
            Ok(())
        }
        Err(e) if skip(&e) => Ok(()),
        Err(e) => Err(api_err::<K>("delete", name, e)),
    }
}

/// The merge patch that makes `status` equal `desired` on the `managed` keys: keys the
/// desired status leaves out are sent as `null`, so they are removed (kube's `omitempty`).
pub(crate) fn status_patch(desired: &impl Serialize, managed: &[&str]) -> Result<Value, Error> {
    let mut map = match serde_json::to_value(desired)? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    map.retain(|k, _| managed.contains(&k.as_str()));
    for k in managed {
        map.entry(k.to_string()).or_insert(Value::Null);
    }
    Ok(serde_json::json!({ "status": map }))
}

/// How long an expectation is trusted before the cache is believed instead.
const EXPECTATION_TTL: Duration = Duration::from_secs(30);

/// Pods this simulator created or deleted that the cache has not caught up with yet,
/// per controller uid (kube's `ControllerExpectations`, by name). Shared by the concurrent
/// reconciles of a pass, hence the lock (never held across an `await`).
#[derive(Debug, Default)]
pub(crate) struct Expectations(Mutex<Pending>);

#[derive(Debug, Default)]
struct Pending {
    creates: HashMap<String, HashMap<String, Instant>>,
    deletes: HashMap<String, HashMap<String, Instant>>,
}

impl Expectations {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops the expectations the cache now satisfies (or that are too old).
    pub(crate) fn observe(&self, snap: &crate::cache::Snapshot) {
        let now = Instant::now();
        let mut p = self.lock();
        for (owner, names) in &mut p.creates {
            let pods = snap.pods_of(Some(owner));
            names.retain(|n, at| {
                now.duration_since(*at) < EXPECTATION_TTL
                    && !pods.iter().any(|p| p.metadata.name.as_deref() == Some(n))
            });
        }
        for (owner, names) in &mut p.deletes {
            let pods = snap.pods_of(Some(owner));
            names.retain(|n, at| {
                now.duration_since(*at) < EXPECTATION_TTL
                    && pods.iter().any(|p| p.metadata.name.as_deref() == Some(n))
            });
        }
        p.creates.retain(|_, v| !v.is_empty());
        p.deletes.retain(|_, v| !v.is_empty());
    }

    /// Records a pod created for `owner`.
    pub(crate) fn created(&self, owner: &str, name: &str) {
        let mut p = self.lock();
        let m = p.creates.entry(owner.to_string()).or_default();
        m.insert(name.to_string(), Instant::now());
    }

    /// Records a pod of `owner` deleted.
    pub(crate) fn deleted(&self, owner: &str, name: &str) {
        let mut p = self.lock();
        let m = p.deletes.entry(owner.to_string()).or_default();
        m.insert(name.to_string(), Instant::now());
    }

    /// Pods created for `owner` that the cache does not show yet.
    pub(crate) fn pending_creates(&self, owner: &str) -> usize {
        self.lock().creates.get(owner).map_or(0, HashMap::len)
    }

    /// Whether this pod of `owner` was deleted though the cache still shows it.
    pub(crate) fn is_deleting(&self, owner: &str, name: &str) -> bool {
        self.lock()
            .deletes
            .get(owner)
            .is_some_and(|m| m.contains_key(name))
    }
}
