//! What a reconcile can do besides reading its object: the [`Context`].
//!
//! Every write helper here is idempotent so that a reconcile can run any number of times:
//! [`Context::apply_owned`] is a server-side apply (identical content is a no-op on the server),
//! [`Context::update_conditions`] writes only when a condition changed, and events are deduplicated
//! into series by kube-runtime's [`Recorder`].

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    fmt::Debug,
    marker::PhantomData,
    sync::Arc,
};

use futures::future::BoxFuture;
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{
        events::{Event, EventType, Recorder, Reporter},
        reflector::Store,
    },
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};
use tokio::sync::watch;

use mni_core::{Condition, ConditionStatus, Conditions};

use crate::reconciler::ApiScope;

/// Errors of the [`Context`] helpers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// The API server refused or failed a request (a `Forbidden` names the missing permission).
    #[error("{action} {kind} {name:?}: {source}")]
    Api {
        /// What was being done (`apply`, `patch status of`, ...).
        action: &'static str,
        /// The kind of the object written.
        kind: String,
        /// The object's name.
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// Recording an event failed.
    #[error("record event {reason} on {kind} {name:?}: {source}")]
    Event {
        /// The event's reason.
        reason: String,
        /// The kind of the object the event is about.
        kind: String,
        /// The object's name.
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// An object could not be turned into or read from JSON.
    #[error("serialize {kind}: {source}")]
    Json {
        /// The kind of the object.
        kind: String,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The owner has no name or uid yet, so it cannot own anything.
    #[error(
        "{kind} has no name or uid, so it cannot own children; apply children only to objects read from the API server"
    )]
    OwnerIncomplete {
        /// The owner's kind.
        kind: String,
    },
}

impl ContextError {
    /// Whether the API server answered 403 Forbidden (the operator's role misses a permission).
    pub fn is_forbidden(&self) -> bool {
        match self {
            Self::Api { source, .. } | Self::Event { source, .. } => {
                matches!(source, kube::Error::Api(status) if status.is_forbidden())
            }
            _ => false,
        }
    }
}

/// Reflector stores of the kinds a controller watches, by type.
#[derive(Default)]
pub(crate) struct Caches {
    stores: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    synced: HashMap<TypeId, watch::Receiver<bool>>,
    /// Makers of futures that resolve once each store has synced.
    pub(crate) ready: Vec<Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>>,
}

impl Caches {
    /// Registers `store`, whose reflector flips `synced` to `true` once its first list is in.
    ///
    /// Readiness is tracked with a channel of our own rather than `Store::wait_until_ready`:
    /// that one sits on a oneshot receiver which keeps only the last waker, so a second task
    /// waiting on it (kube's controller already does) may never be woken.
    pub(crate) fn insert<T>(&mut self, store: Store<T>, synced: watch::Receiver<bool>)
    where
        T: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        self.synced.insert(TypeId::of::<T>(), synced.clone());
        self.ready.push(Box::new(move || {
            let mut synced = synced.clone();
            Box::pin(async move {
                let _ = synced.wait_for(|done| *done).await;
            })
        }));
        self.stores.insert(TypeId::of::<T>(), Box::new(store));
    }

    /// Whether the store of `T` has synced (its first list is in), as it changes.
    pub(crate) fn synced<T>(&self) -> Option<watch::Receiver<bool>>
    where
        T: Resource<DynamicType = ()> + Clone + 'static,
    {
        self.synced.get(&TypeId::of::<T>()).cloned()
    }

    pub(crate) fn get<T>(&self) -> Option<Store<T>>
    where
        T: Resource<DynamicType = ()> + Clone + 'static,
    {
        self.stores
            .get(&TypeId::of::<T>())
            .and_then(|s| s.downcast_ref::<Store<T>>())
            .cloned()
    }
}

struct Shared {
    client: Client,
    name: String,
    recorder: Recorder,
    caches: Caches,
}

/// The reconcile-time view of one controller: client, caches, and helpers that write children,
/// status and events on behalf of the controller named by [`Reconciler::name`](crate::Reconciler::name).
pub struct Context<K> {
    shared: Arc<Shared>,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Context<K> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> Context<K>
where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
{
    pub(crate) fn new(
        client: Client,
        name: &str,
        instance: Option<String>,
        caches: Caches,
    ) -> Self {
        let reporter = Reporter {
            controller: name.to_string(),
            instance,
        };
        Self {
            shared: Arc::new(Shared {
                recorder: Recorder::new(client.clone(), reporter),
                client,
                name: name.to_string(),
                caches,
            }),
            _kind: PhantomData,
        }
    }

    /// The manager's client (with the operator's identity).
    pub fn client(&self) -> &Client {
        &self.shared.client
    }

    /// The field manager of this controller's server-side applies: its name.
    pub fn field_manager(&self) -> &str {
        &self.shared.name
    }

    /// The cache of kind `T`, if this controller watches it (its own kind, an owned or a
    /// watched kind). Reads from a store never hit the API server.
    pub fn store<T>(&self) -> Option<Store<T>>
    where
        T: Resource<DynamicType = ()> + Clone + 'static,
    {
        self.shared.caches.get::<T>()
    }

    /// An `Api` for `K` in `obj`'s namespace.
    pub fn api_for(&self, obj: &K) -> Api<K> {
        K::Scope::api::<K>(self.client().clone(), obj.meta().namespace.as_deref())
    }

    /// Server-side applies `child`, owned by `owner`, and returns the object the server holds.
    ///
    /// Sets the child's namespace to the owner's (if it has none) and a controller owner
    /// reference (`controller: true`, `blockOwnerDeletion: true`), applies with this
    /// controller's field manager and `force` (the controller is the authority on its children,
    /// as controller-runtime's `client.ForceOwnership`). Applying identical content twice does
    /// not write: the resourceVersion stays.
    pub async fn apply_owned<C>(&self, owner: &K, mut child: C) -> Result<C, ContextError>
    where
        C: Resource<DynamicType = (), Scope: ApiScope>
            + Clone
            + Debug
            + DeserializeOwned
            + Serialize,
    {
        let mut owner_ref =
            owner
                .controller_owner_ref(&())
                .ok_or_else(|| ContextError::OwnerIncomplete {
                    kind: K::kind(&()).into_owned(),
                })?;
        // Like controller-runtime's SetControllerReference: deleting the owner in the
        // foreground waits for its children.
        owner_ref.block_owner_deletion = Some(true);
        let meta = child.meta_mut();
        if meta.namespace.is_none() {
            meta.namespace = owner.meta().namespace.clone();
        }
        let refs = meta.owner_references.get_or_insert_with(Vec::new);
        refs.retain(|r| r.uid != owner_ref.uid);
        refs.push(owner_ref);
        let name = child.name_any();
        let api = C::Scope::api::<C>(self.client().clone(), child.meta().namespace.as_deref());
        let params = PatchParams::apply(self.field_manager()).force();
        api.patch(&name, &params, &Patch::Apply(&child))
            .await
            .map_err(|source| ContextError::Api {
                action: "apply",
                kind: C::kind(&()).into_owned(),
                name,
                source,
            })
    }

    /// Sets one condition on `obj` for its current generation (see
    /// [`update_conditions`](Self::update_conditions)); `Ok(false)` when nothing changed.
    pub async fn set_condition(
        &self,
        obj: &K,
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
    ) -> Result<bool, ContextError> {
        self.update_conditions(obj, |conditions, generation| {
            conditions.set(
                type_,
                status,
                reason,
                message,
                generation,
                jiff::Timestamp::now(),
            );
        })
        .await
    }

    /// Lets `update` edit `obj`'s `status.conditions` (it gets the list and the object's
    /// generation, for [`Conditions::set`]), then writes the list and `status.observedGeneration`
    /// through the status subresource.
    ///
    /// Writes nothing (and returns `Ok(false)`) when the status already says exactly this, so a
    /// reconcile that sets the same conditions again causes no write and no watch event.
    pub async fn update_conditions(
        &self,
        obj: &K,
        update: impl FnOnce(&mut Vec<Condition>, Option<i64>),
    ) -> Result<bool, ContextError> {
        let kind = K::kind(&()).into_owned();
        let json_err = |source| ContextError::Json {
            kind: kind.clone(),
            source,
        };
        let value = serde_json::to_value(obj).map_err(json_err)?;
        let generation = obj.meta().generation;
        let mut list: Vec<Condition> = match value.pointer("/status/conditions") {
            Some(Value::Array(_)) => {
                serde_json::from_value(value["status"]["conditions"].clone()).map_err(json_err)?
            }
            _ => Vec::new(),
        };
        let before = list.clone();
        update(&mut list, generation);
        let same_generation = value
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64)
            == generation;
        if list == before && same_generation {
            return Ok(false);
        }
        let patch = json!({ "status": { "conditions": list, "observedGeneration": generation } });
        self.patch_status(obj, &patch).await?;
        Ok(true)
    }

    /// JSON-merge-patches `obj`'s status subresource with `patch` (`{"status": {...}}`).
    pub async fn patch_status(&self, obj: &K, patch: &Value) -> Result<K, ContextError> {
        let name = obj.name_any();
        self.api_for(obj)
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map_err(|source| ContextError::Api {
                action: "patch status of",
                kind: K::kind(&()).into_owned(),
                name,
                source,
            })
    }

    /// Records an `events.k8s.io/v1` event about `obj` from this controller.
    ///
    /// `reason` is CamelCase (`Applied`, `ReconcileError`), `action` what the controller did
    /// (`Reconcile`, `Cleanup`), `note` a human-readable message.
    pub async fn publish_event(
        &self,
        obj: &K,
        type_: EventType,
        reason: &str,
        action: &str,
        note: Option<String>,
    ) -> Result<(), ContextError> {
        let event = Event {
            type_,
            reason: reason.to_string(),
            note,
            action: action.to_string(),
            secondary: None,
        };
        self.shared
            .recorder
            .publish(&event, &obj.object_ref(&()))
            .await
            .map_err(|source| ContextError::Event {
                reason: reason.to_string(),
                kind: K::kind(&()).into_owned(),
                name: obj.name_any(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: T) {}

    // Compiles only if the helpers' futures can run on a multi-threaded runtime.
    #[allow(dead_code)]
    fn helpers_are_send(ctx: Context<k8s_openapi::api::core::v1::ConfigMap>) {
        let cm = k8s_openapi::api::core::v1::ConfigMap::default();
        assert_send(ctx.apply_owned(&cm, cm.clone()));
        assert_send(ctx.set_condition(&cm, "Ready", ConditionStatus::True, "R", ""));
        assert_send(ctx.publish_event(&cm, EventType::Normal, "R", "A", None));
    }
}
