//! The simulator's view of the cluster: one kube-runtime reflector per kind, feeding a
//! shared wake-up signal, and the per-pass [`Snapshot`] the controllers read.
//!
//! `managedFields` are dropped on the way in to keep the caches small.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use k8s_openapi::serde::de::DeserializeOwned;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::util;

/// Errors while starting or reading the caches.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// A watcher ended before its initial list completed.
    #[error("the {0} watcher stopped before its initial list")]
    NotReady(&'static str),
}

/// Reflector stores for every kind the simulator reads.
pub(crate) struct Cache {
    pods: Store<Pod>,
    replica_sets: Store<ReplicaSet>,
    deployments: Store<Deployment>,
    stateful_sets: Store<StatefulSet>,
    daemon_sets: Store<DaemonSet>,
    services: Store<Service>,
    endpoints: Store<Endpoints>,
    /// The watcher tasks; dropped (aborted) with the cache.
    _tasks: JoinSet<()>,
}

fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

fn spawn<K>(
    tasks: &mut JoinSet<()>,
    client: &Client,
    namespace: Option<&str>,
    notify: &Arc<Notify>,
) -> Store<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = watcher(api::<K>(client, namespace), watcher::Config::default())
        .default_backoff()
        .modify(|o: &mut K| o.managed_fields_mut().clear())
        .reflect(writer);
    let notify = notify.clone();
    tasks.spawn(async move {
        futures::pin_mut!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => notify.notify_one(),
                Err(e) => tracing::debug!(kind = %K::kind(&()), error = %e, "watch error"),
            }
        }
    });
    reader
}

impl Cache {
    /// Starts one watcher per kind; every event wakes `notify`.
    pub(crate) fn start(client: &Client, namespace: Option<&str>, notify: &Arc<Notify>) -> Self {
        let mut tasks = JoinSet::new();
        Self {
            pods: spawn(&mut tasks, client, namespace, notify),
            replica_sets: spawn(&mut tasks, client, namespace, notify),
            deployments: spawn(&mut tasks, client, namespace, notify),
            stateful_sets: spawn(&mut tasks, client, namespace, notify),
            daemon_sets: spawn(&mut tasks, client, namespace, notify),
            services: spawn(&mut tasks, client, namespace, notify),
            endpoints: spawn(&mut tasks, client, namespace, notify),
            _tasks: tasks,
        }
    }

    /// Waits until every store has completed its initial list.
    pub(crate) async fn ready(&self) -> Result<(), Error> {
        self.pods
            .wait_until_ready()
            .await
            .map_err(|_| Error::NotReady("Pod"))?;
        let rs = self.replica_sets.wait_until_ready();
        rs.await.map_err(|_| Error::NotReady("ReplicaSet"))?;
        let d = self.deployments.wait_until_ready();
        d.await.map_err(|_| Error::NotReady("Deployment"))?;
        let s = self.stateful_sets.wait_until_ready();
        s.await.map_err(|_| Error::NotReady("StatefulSet"))?;
        let ds = self.daemon_sets.wait_until_ready();
        ds.await.map_err(|_| Error::NotReady("DaemonSet"))?;
        let svc = self.services.wait_until_ready();
        svc.await.map_err(|_| Error::NotReady("Service"))?;
        let ep = self.endpoints.wait_until_ready();
        ep.await.map_err(|_| Error::NotReady("Endpoints"))?;
        Ok(())
    }

    /// A consistent-enough copy of every store for one reconcile pass.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let mut pods = self.pods.state();
        pods.sort_by(|a, b| key(&a.metadata).cmp(&key(&b.metadata)));
        let mut by_owner: HashMap<String, Vec<Arc<Pod>>> = HashMap::new();
        for p in &pods {
            if let Some(r) = util::controller_of(&p.metadata) {
                by_owner.entry(r.uid.clone()).or_default().push(p.clone());
            }
        }
        Snapshot {
            pods,
            pods_by_owner: by_owner,
            replica_sets: sorted(self.replica_sets.state()),
            deployments: sorted(self.deployments.state()),
            stateful_sets: sorted(self.stateful_sets.state()),
            daemon_sets: sorted(self.daemon_sets.state()),
            services: sorted(self.services.state()),
            endpoints: sorted(self.endpoints.state()),
        }
    }
}

fn key(meta: &kube::api::ObjectMeta) -> (&str, &str) {
    (
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

fn sorted<K: Resource>(mut v: Vec<Arc<K>>) -> Vec<Arc<K>> {
    v.sort_by(|a, b| key(a.meta()).cmp(&key(b.meta())));
    v
}

/// Every cached object at the start of a pass, sorted by namespace and name.
pub(crate) struct Snapshot {
    /// All pods.
    pub(crate) pods: Vec<Arc<Pod>>,
    /// Pods by the uid of their controller.
    pods_by_owner: HashMap<String, Vec<Arc<Pod>>>,
    /// All ReplicaSets.
    pub(crate) replica_sets: Vec<Arc<ReplicaSet>>,
    /// All Deployments.
    pub(crate) deployments: Vec<Arc<Deployment>>,
    /// All StatefulSets.
    pub(crate) stateful_sets: Vec<Arc<StatefulSet>>,
    /// All DaemonSets.
    pub(crate) daemon_sets: Vec<Arc<DaemonSet>>,
    /// All Services.
    pub(crate) services: Vec<Arc<Service>>,
    /// All Endpoints.
    pub(crate) endpoints: Vec<Arc<Endpoints>>,
}

impl Snapshot {
    /// The pods controlled by the object with `uid`.
    pub(crate) fn pods_of(&self, uid: Option<&str>) -> &[Arc<Pod>] {
        uid.and_then(|u| self.pods_by_owner.get(u))
            .map_or(&[], Vec::as_slice)
    }

    /// The ReplicaSets controlled by the Deployment with `uid`.
    pub(crate) fn replica_sets_of(&self, uid: &str) -> Vec<Arc<ReplicaSet>> {
        self.replica_sets
            .iter()
            .filter(|rs| util::controlled_by(&rs.metadata, uid))
            .cloned()
            .collect()
    }

    /// Looks up a ReplicaSet by uid.
    pub(crate) fn replica_set(&self, uid: &str) -> Option<&ReplicaSet> {
        self.replica_sets
            .iter()
            .find(|r| r.metadata.uid.as_deref() == Some(uid))
            .map(AsRef::as_ref)
    }

    /// Looks up a Deployment by uid.
    pub(crate) fn deployment(&self, uid: &str) -> Option<&Deployment> {
        self.deployments
            .iter()
            .find(|r| r.metadata.uid.as_deref() == Some(uid))
            .map(AsRef::as_ref)
    }

    /// Looks up a StatefulSet by uid.
    pub(crate) fn stateful_set(&self, uid: &str) -> Option<&StatefulSet> {
        self.stateful_sets
            .iter()
            .find(|r| r.metadata.uid.as_deref() == Some(uid))
            .map(AsRef::as_ref)
    }

    /// Looks up a DaemonSet by uid.
    pub(crate) fn daemon_set(&self, uid: &str) -> Option<&DaemonSet> {
        self.daemon_sets
            .iter()
            .find(|r| r.metadata.uid.as_deref() == Some(uid))
            .map(AsRef::as_ref)
    }

    /// Looks up Endpoints by namespace and name.
    pub(crate) fn endpoints(&self, ns: &str, name: &str) -> Option<&Endpoints> {
        self.endpoints
            .iter()
            .find(|e| key(&e.metadata) == (ns, name))
            .map(AsRef::as_ref)
    }
}
