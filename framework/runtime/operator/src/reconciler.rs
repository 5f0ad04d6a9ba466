//! The [`Reconciler`] contract an operator implements, and the [`Relations`] it declares.
//!
//! A reconciler sees one object of its kind `K` at a time and drives the world towards it; it
//! must be idempotent, since it runs again on every change of the object, of an owned child, of
//! a watched object, after an error and after a requeue. [`Relations`] names what else triggers
//! it; [`ApiScope`] lets the runtime build the right [`Api`] for namespaced and cluster-scoped
//! kinds.

use std::{fmt::Debug, future::Future, sync::Arc};

use futures::StreamExt;
use kube::{
    Api, Client, Resource, ResourceExt,
    core::{ClusterResourceScope, NamespaceResourceScope},
    runtime::WatchStreamExt,
    runtime::{
        Controller,
        controller::Action,
        reflector::{self, ObjectRef},
        watcher,
    },
};
use serde::{Serialize, de::DeserializeOwned};

use crate::context::{Caches, Context};

/// Reconciles objects of one kind.
///
/// `name` becomes the controller's name: the label of its metrics, the field manager of its
/// server-side applies and the reporting controller of its events, so keep it stable and
/// DNS-like (`widgets.example.com` or `widget-controller`).
///
/// Return [`Action::await_change`] when the object is in its desired state, or
/// [`Action::requeue`] to look again later. An `Err` requeues the object with per-object
/// exponential backoff (see [`ControllerOptions`](crate::ControllerOptions)).
pub trait Reconciler: Send + Sync + 'static {
    /// The kind this reconciler is responsible for.
    type K: Resource<DynamicType = (), Scope: ApiScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Serialize
        + Send
        + Sync
        + 'static;
    /// What a failed reconcile reports; its message lands in an event and the `Ready` condition.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The controller name (metrics label, field manager, event reporter).
    fn name(&self) -> &str;

    /// Drives the world towards `obj`.
    fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// The finalizer guarding [`cleanup`](Self::cleanup), e.g. `widgets.example.com/cleanup`.
    ///
    /// `None` (the default) means no finalizer and no cleanup. With `Some`, the runtime adds the
    /// finalizer before the first `reconcile`, calls `cleanup` once the object is being deleted
    /// and removes the finalizer when `cleanup` succeeds.
    fn finalizer(&self) -> Option<&str> {
        None
    }

    /// Releases what `reconcile` acquired outside owner references; called only when
    /// [`finalizer`](Self::finalizer) is `Some`.
    fn cleanup(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        let _ = (obj, ctx);
        async { Ok(Action::await_change()) }
    }

    /// The other kinds that trigger this reconciler; none by default.
    fn relations(&self) -> Relations<Self::K> {
        Relations::default()
    }
}

/// How to reach a kind's API given the namespace the manager watches.
///
/// Implemented for both scopes of compile-time kinds; there is nothing to implement yourself.
pub trait ApiScope: kube::core::ResourceScope + 'static {
    /// An `Api` for `K` in `namespace`, or across all namespaces when `None`.
    ///
    /// Cluster-scoped kinds ignore the namespace.
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl ApiScope for NamespaceResourceScope {
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }
}

impl ApiScope for ClusterResourceScope {
    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}

/// Adds one related kind's watch (and cache) to a controller.
pub(crate) type RelationHook<K> =
    Box<dyn FnOnce(Controller<K>, &Client, Option<&str>, &mut Caches) -> Controller<K> + Send>;

/// The kinds besides `K` that trigger a reconcile of `K`, each cached for [`Context::store`].
///
/// ```no_run
/// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// # use kube::runtime::reflector::ObjectRef;
/// use mni_operator::Relations;
///
/// // A ConfigMap controller that owns Secrets and follows Secrets named after it.
/// let relations = Relations::<ConfigMap>::default()
///     .owns::<Secret>()
///     .watches::<Secret, _>(|secret| {
///         let ns = secret.metadata.namespace.clone().unwrap_or_default();
///         secret.metadata.name.map(|n| ObjectRef::new(&n).within(&ns))
///     });
/// ```
#[must_use]
pub struct Relations<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + 'static,
{
    pub(crate) hooks: Vec<RelationHook<K>>,
}

impl<K> Default for Relations<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + 'static,
{
    fn default() -> Self {
        Self { hooks: Vec::new() }
    }
}

impl<K> Relations<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    /// Children of kind `C` that carry a controller owner reference to a `K`: a change to one
    /// reconciles its owner.
    pub fn owns<C>(mut self) -> Self
    where
        C: Resource<DynamicType = (), Scope: ApiScope>
            + Clone
            + Debug
            + DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        self.hooks
            .push(Box::new(|controller, client, namespace, caches| {
                let api = C::Scope::api::<C>(client.clone(), namespace);
                controller.owns_stream(cached_stream(api, caches))
            }));
        self
    }

    /// Objects of kind `O` mapped to the `K`s they concern by `mapper`.
    pub fn watches<O, I>(mut self, mapper: impl Fn(O) -> I + Send + Sync + 'static) -> Self
    where
        O: Resource<DynamicType = (), Scope: ApiScope>
            + Clone
            + Debug
            + DeserializeOwned
            + Send
            + Sync
            + 'static,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
        I::IntoIter: Send,
    {
        self.hooks
            .push(Box::new(move |controller, client, namespace, caches| {
                let api = O::Scope::api::<O>(client.clone(), namespace);
                controller.watches_stream(cached_stream(api, caches), mapper)
            }));
        self
    }

    /// How many related kinds were declared.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// Whether no related kind was declared.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

/// A watch on `api` that keeps a reflector store registered in `caches`, as a trigger stream.
pub(crate) fn cached_stream<T>(
    api: Api<T>,
    caches: &mut Caches,
) -> impl futures::Stream<Item = Result<T, watcher::Error>> + Send + 'static
where
    T: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store::<T>();
    let (synced_tx, synced_rx) = tokio::sync::watch::channel(false);
    caches.insert(reader, synced_rx);
    // The reflector applies each event to the store before passing it on, so the store holds
    // the initial list when `InitDone` gets here. `managedFields` are dropped before the store
    // sees them: they are most of a typical object's size, and nothing reads them from a cache
    // (server-side apply computes them on the server).
    let events = watcher::watcher(api, watcher::Config::default())
        .modify(|obj: &mut T| obj.managed_fields_mut().clear());
    reflector::reflector(writer, events)
        .inspect(move |event| {
            if let Ok(watcher::Event::InitDone) = event {
                synced_tx.send_replace(true);
            }
        })
        .default_backoff()
        .applied_objects()
        .boxed()
}
