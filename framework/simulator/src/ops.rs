//! Writes to the API server, the bookkeeping of one reconcile pass ([`Outcome`]) and the
//! create/delete expectations that keep a stale cache from creating pods twice.
//!
//! Every write is a plain create, a JSON merge patch (of the object or its `status`
//! subresource) or a delete; `404 Not Found` and `409 Conflict` are not errors: the pass
//! records a retry and the next pass (triggered by the watch event that follows) redoes
//! the work from fresh state.

use std::collections::HashMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

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

    /// Starts the reconcile of one object: returns (and clears) the pass's retry flag, to be
    /// handed back to [`Outcome::end`].
    pub(crate) fn begin(&mut self) -> bool {
        std::mem::take(&mut self.retry)
    }

    /// Ends the reconcile of one object begun with [`Outcome::begin`]: whether it asked for
    /// a retry.
    pub(crate) fn end(&mut self, before: bool) -> bool {
        let retry = self.retry;
        self.retry |= before;
        retry
    }

    /// Records a failed reconcile of one object.
    pub(crate) fn failed(&mut self, what: &str, e: &dyn std::error::Error) {
        tracing::warn!(object = what, error = %e, "reconcile failed; will retry");
        self.retry = true;
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
/// per controller uid (kube's `ControllerExpectations`, by name).
#[derive(Debug, Default)]
pub(crate) struct Expectations {
    creates: HashMap<String, HashMap<String, Instant>>,
    deletes: HashMap<String, HashMap<String, Instant>>,
}

impl Expectations {
    /// Drops the expectations the cache now satisfies (or that are too old).
    pub(crate) fn observe(&mut self, snap: &crate::cache::Snapshot) {
        let now = Instant::now();
        for (owner, names) in &mut self.creates {
            let pods = snap.pods_of(Some(owner));
            names.retain(|n, at| {
                now.duration_since(*at) < EXPECTATION_TTL
                    && !pods.iter().any(|p| p.metadata.name.as_deref() == Some(n))
            });
        }
        for (owner, names) in &mut self.deletes {
            let pods = snap.pods_of(Some(owner));
            names.retain(|n, at| {
                now.duration_since(*at) < EXPECTATION_TTL
                    && pods.iter().any(|p| p.metadata.name.as_deref() == Some(n))
            });
        }
        self.creates.retain(|_, v| !v.is_empty());
        self.deletes.retain(|_, v| !v.is_empty());
    }

    /// Records a pod created for `owner`.
    pub(crate) fn created(&mut self, owner: &str, name: &str) {
        let m = self.creates.entry(owner.to_string()).or_default();
        m.insert(name.to_string(), Instant::now());
    }

    /// Records a pod of `owner` deleted.
    pub(crate) fn deleted(&mut self, owner: &str, name: &str) {
        let m = self.deletes.entry(owner.to_string()).or_default();
        m.insert(name.to_string(), Instant::now());
    }

    /// Pods created for `owner` that the cache does not show yet.
    pub(crate) fn pending_creates(&self, owner: &str) -> usize {
        self.creates.get(owner).map_or(0, HashMap::len)
    }

    /// Whether this pod of `owner` was deleted though the cache still shows it.
    pub(crate) fn is_deleting(&self, owner: &str, name: &str) -> bool {
        self.deletes
            .get(owner)
            .is_some_and(|m| m.contains_key(name))
    }
}
