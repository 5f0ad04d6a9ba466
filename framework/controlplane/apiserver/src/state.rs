//! The state layer: everything a request or a background loop reads and changes, behind a
//! narrow API.
//!
//! [`State`] owns the store handle, the [`Registry`] of served resources, the watch fan-out
//! (the shared [`LineCache`]), the label cache, the ClusterIP allocator, the credentials and
//! the settings. Its methods are the storage operations every caller uses: read one object
//! ([`State::read`]), read a collection at one revision ([`State::collect`]), create
//! ([`State::create`]), read-modify-write ([`State::update`], [`State::patch`]) and delete
//! with preconditions and finalizers ([`State::delete`]). Each write runs the admission
//! pipeline and the work that follows it (CRDs served, RBAC snapshots dropped, controllers
//! woken), so the HTTP handlers and the built-in controllers write the same way.
//!
//! This layer knows nothing of HTTP routing or handlers: it depends only on the helper
//! modules below it (`registry`, `object`, `admission`, `crd`, `auth`, …).

mod collections;
mod deletion;
mod effects;
mod hooks;
mod lines;
mod objects;
mod owners;
mod plugins;
mod policies;
mod selectors;

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use http::HeaderMap;
use mni_rbac::{Attributes, Authorizer, UserInfo};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use crate::auth::Authn;
use crate::error::ApiResult;
use crate::registry::Registry;
use crate::request::{FieldValidation, Query};
use crate::{crd, object, openapi};

pub(crate) use deletion::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
pub(crate) use lines::LineCache;
pub(crate) use objects::bind_namespace;
pub(crate) use owners::Owner;
pub(crate) use selectors::{Filter, label_indexer};

/// State shared by every request handler and background loop.
#[derive(Debug)]
pub(crate) struct State {
    store: mni_store::Store,
    registry: RwLock<Registry>,
    openapi: openapi::Cache,
    shutdown: watch::Receiver<bool>,
    controllers: Notify,
    bookmark_interval: Duration,
    address: RwLock<String>,
    authn: Authn,
    /// The labels of stored objects, for label-selected lists.
    labels: selectors::LabelCache,
    /// Watch lines encoded once per event and shared among the watchers that send the same one.
    watch_lines: LineCache,
    /// The Services' allocated cluster IPs.
    cluster_ips: crate::ipalloc::ClusterIps,
    /// The configured admission webhooks and policies, read when first needed (see `hooks`).
    webhooks: RwLock<Option<std::sync::Arc<hooks::Admission>>>,
    /// Bumped by each write of a webhook configuration.
    webhook_generation: std::sync::atomic::AtomicU64,
    /// Held from a quota check to the write of the quotas' usage (see `plugins`).
    quota_lock: tokio::sync::Mutex<()>,
    /// Request counters, served at `/metrics`.
    metrics: crate::metrics::Metrics,
    /// The cluster's CA bundle (PEM; unset when serving plain HTTP), published in every
    /// namespace's `kube-root-ca.crt` ConfigMap.
    root_ca: std::sync::OnceLock<String>,
    /// Woken by each Namespace write: the namespace controller gives a new namespace its
    /// ServiceAccount and CA bundle at once, not at its next tick.
    namespaces: Notify,
    /// Where a node agent writes container logs (`pods/log`), when one runs.
    pod_logs: std::sync::OnceLock<std::path::PathBuf>,
}

/// The result of a write: the object as written (or as it would be, on a dry run) and the
/// admission warnings.
#[derive(Debug)]
pub(crate) struct Written {
    /// The object, in the served version.
    pub object: Value,
    /// Warnings for the `Warning: 299` header.
    pub warnings: Vec<String>,
}

impl Written {
    fn new(object: Value) -> Self {
        Written {
            object,
            warnings: Vec::new(),
        }
    }
}

/// Options common to writes.
#[derive(Debug, Clone)]
pub(crate) struct WriteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldValidation`.
    pub validation: FieldValidation,
    /// The field manager recorded in `managedFields`.
    pub manager: String,
    /// `force=true` (server-side apply only).
    pub force: bool,
    /// Whether the client named its field manager (server-side apply requires it).
    pub manager_given: bool,
    /// Who is writing, sent to admission webhooks; `None` for the server's own writes,
    /// which do not go through webhooks.
    pub user: Option<UserInfo>,
}

impl WriteOptions {
    /// Reads the options from the query and headers of a request by `user`.
    pub(crate) fn from_request(q: &Query, headers: &HeaderMap, user: &UserInfo) -> ApiResult<Self> {
        let user_agent = headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok());
        Ok(WriteOptions {
            dry_run: q.dry_run()?,
            validation: q.field_validation()?,
            manager: crate::fields::manager(q.get("fieldManager"), user_agent)?,
            force: q.flag("force"),
            manager_given: q.get("fieldManager").is_some(),
            user: Some(user.clone()),
        })
    }

    /// Options for the server's own writes (controllers), recorded under `manager`.
    pub(crate) fn internal(manager: &str) -> Self {
        WriteOptions {
            dry_run: false,
            validation: FieldValidation::Ignore,
            manager: manager.to_string(),
            force: false,
            manager_given: true,
            user: None,
        }
    }
}

impl State {
    /// Sets the CA bundle published in `kube-root-ca.crt` (once, before the controllers start).
    pub(crate) fn set_root_ca(&self, pem: &str) {
        let _ = self.root_ca.set(pem.to_string());
    }

    /// The CA bundle published in `kube-root-ca.crt` (empty on plain HTTP).
    pub(crate) fn root_ca(&self) -> &str {
        self.root_ca.get().map_or("", String::as_str)
    }

    /// The request counters served at `/metrics`.
    pub(crate) fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// The state over `store`, serving the built-in resources (CRDs come with
    /// [`load_crds`](Self::load_crds)).
    pub(crate) fn new(
        store: mni_store::Store,
        authn: Authn,
        bookmark_interval: Duration,
        address: String,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        State {
            authn,
            store,
            registry: RwLock::new(Registry::with_builtins()),
            openapi: openapi::Cache::default(),
            shutdown,
            controllers: Notify::new(),
            bookmark_interval,
            address: RwLock::new(address),
            labels: selectors::LabelCache::default(),
            watch_lines: LineCache::default(),
            cluster_ips: crate::ipalloc::ClusterIps::default(),
            webhooks: RwLock::new(None),
            webhook_generation: std::sync::atomic::AtomicU64::new(0),
            quota_lock: tokio::sync::Mutex::new(()),
            metrics: crate::metrics::Metrics::default(),
            root_ca: std::sync::OnceLock::new(),
            namespaces: Notify::new(),
            pod_logs: std::sync::OnceLock::new(),
        }
    }

    /// Serves `pods/log` from this directory (set once, at start).
    pub(crate) fn set_pod_logs_dir(&self, dir: std::path::PathBuf) {
        let _ = self.pod_logs.set(dir);
    }

    /// The directory of container logs, when a node agent writes them.
    pub(crate) fn pod_logs_dir(&self) -> Option<&std::path::Path> {
        self.pod_logs.get().map(std::path::PathBuf::as_path)
    }

    /// Serves every CRD found in the store (at start-up).
    pub(crate) fn load_crds(&self) -> ApiResult<()> {
        let listed = self.store.list(
            "/registry/apiextensions.k8s.io/customresourcedefinitions/",
            &mni_store::ListOptions::default(),
        )?;
        for kv in listed.items {
            crd::register(&mut self.registry_mut(), &object::from_stored(&kv)?)?;
        }
        Ok(())
    }

    /// The registry, for reading.
    pub(crate) fn registry(&self) -> RwLockReadGuard<'_, Registry> {
        self.registry.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The registry, for changing.
    fn registry_mut(&self) -> RwLockWriteGuard<'_, Registry> {
        self.registry.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached OpenAPI documents.
    pub(crate) fn openapi(&self) -> &openapi::Cache {
        &self.openapi
    }

    /// The address the server listens on, as discovery reports it.
    pub(crate) fn address(&self) -> String {
        self.address.read().map(|a| a.clone()).unwrap_or_default()
    }

    /// A receiver that changes when the server shuts down.
    pub(crate) fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// How often watches that allow bookmarks get one.
    pub(crate) fn bookmark_interval(&self) -> Duration {
        self.bookmark_interval
    }

    /// The watch lines shared among watchers.
    pub(crate) fn watch_lines(&self) -> &LineCache {
        &self.watch_lines
    }

    /// Wakes the background controllers (after a deletion started).
    pub(crate) fn kick_controllers(&self) {
        self.controllers.notify_one();
    }

    /// Wakes the namespace controller (a Namespace was written).
    pub(crate) fn kick_namespaces(&self) {
        self.namespaces.notify_one();
    }

    /// Resolves at the next [`kick_namespaces`](Self::kick_namespaces).
    pub(crate) async fn wait_for_namespace_kick(&self) {
        self.namespaces.notified().await;
    }

    /// Resolves at the next [`kick_controllers`](Self::kick_controllers).
    pub(crate) async fn wait_for_kick(&self) {
        self.controllers.notified().await;
    }

    /// The credentials the server accepts (and issues).
    pub(crate) fn authn(&self) -> &Authn {
        &self.authn
    }

    /// Who is asking (see [`Authn::authenticate`]).
    pub(crate) fn authenticate(&self, headers: &HeaderMap, path: &str) -> ApiResult<UserInfo> {
        self.authn.authenticate(&self.store, headers, path)
    }

    /// The current RBAC snapshot (see [`Authn::authorizer`]).
    pub(crate) fn authorizer(&self) -> ApiResult<std::sync::Arc<Authorizer>> {
        self.authn.authorizer(&self.store)
    }

    /// Decides a request (see [`Authn::authorize`]).
    pub(crate) fn authorize(&self, attrs: &Attributes) -> ApiResult<()> {
        self.authn.authorize(&self.store, attrs)
    }

    /// The stored form of the object at `key`, as it is now.
    pub(crate) fn stored(&self, key: &str) -> Option<mni_store::KeyValue> {
        self.store.get(key)
    }

    /// Every stored object under `prefix`, at the current revision.
    pub(crate) fn list_stored(&self, prefix: &str) -> ApiResult<mni_store::ListResult> {
        Ok(self
            .store
            .list(prefix, &mni_store::ListOptions::default())?)
    }

    /// The changes under `prefix` after revision `after`, from the store's log.
    pub(crate) fn watch_stored(
        &self,
        prefix: &str,
        after: i64,
    ) -> Result<mni_store::Watch, mni_store::Error> {
        self.store.watch(prefix, after)
    }

    /// Removes the object at `key` if it is still at `revision`, without the rest of a
    /// deletion (finalizers, dependents): the namespace finalizer's last step.
    pub(crate) async fn remove_stored(
        &self,
        key: &str,
        revision: i64,
    ) -> Result<mni_store::KeyValue, mni_store::Error> {
        self.store.delete(key, Some(revision)).await
    }

    /// The store's current revision (the newest resourceVersion).
    pub(crate) fn revision(&self) -> i64 {
        self.store.current_revision()
    }

    /// Compacts the store's history up to `revision`.
    pub(crate) async fn compact(&self, revision: i64) -> Result<u64, mni_store::Error> {
        self.store.compact(revision).await
    }

    /// Starts the store's scheduled compactor.
    pub(crate) fn spawn_compactor(
        &self,
        interval: Duration,
        retain: i64,
    ) -> tokio::task::JoinHandle<()> {
        self.store.spawn_compactor(interval, retain)
    }

    /// Closes the store, so every acknowledged write is on disk.
    pub(crate) async fn close(&self) {
        self.store.close().await;
    }
}
