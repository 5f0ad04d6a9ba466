//! The simulator's view of the cluster: one kube-runtime reflector per kind, feeding a
//! shared wake-up signal and the list of [`Change`]s since the last pass, and the per-pass
//! [`Snapshot`] the controllers read, indexed so that every lookup is a hash-map hit.
//!
//! `managedFields` are dropped on the way in to keep the caches small.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::scope::{Change, Kind};
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
    endpoint_slices: Store<EndpointSlice>,
    jobs: Store<Job>,
    cron_jobs: Store<CronJob>,
    /// What the watchers saw since the last [`Cache::take_changes`].
    pending: Arc<Mutex<Pending>>,
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

/// Watch events not yet handed to a pass.
#[derive(Debug)]
struct Pending {
    /// A watcher (re)listed: look at everything.
    all: bool,
    /// The objects added, modified or deleted.
    changes: Vec<Change>,
}

fn change<K: Resource<DynamicType = ()>>(kind: Kind, obj: &K) -> Change {
    let meta = obj.meta();
    Change {
        kind,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        owner: util::controller_of(meta).map(|r| r.uid.clone()),
        labels: match kind {
            Kind::Pod | Kind::EndpointSlice => meta.labels.clone().unwrap_or_default(),
            _ => BTreeMap::new(),
        },
    }
}

/// Where a watcher reports to.
struct Sink<'a> {
    tasks: &'a mut JoinSet<()>,
    client: &'a Client,
    namespace: Option<&'a str>,
    notify: &'a Arc<Notify>,
    pending: &'a Arc<Mutex<Pending>>,
}

fn spawn<K>(sink: &mut Sink<'_>, kind: Kind) -> Store<K>
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
    let api = api::<K>(sink.client, sink.namespace);
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(|o: &mut K| o.managed_fields_mut().clear())
        .reflect(writer);
    let notify = sink.notify.clone();
    let pending = sink.pending.clone();
    sink.tasks.spawn(async move {
        futures::pin_mut!(stream);
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(e) => e,
                Err(e) => {
                    tracing::debug!(kind = %K::kind(&()), error = %e, "watch error");
                    continue;
                }
            };
            {
                let mut p = pending
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match &event {
                    watcher::Event::Apply(o) | watcher::Event::Delete(o) => {
                        p.changes.push(change(kind, o));
                    }
                    watcher::Event::InitDone => p.all = true,
                    watcher::Event::Init | watcher::Event::InitApply(_) => continue,
                }
            }
            notify.notify_one();
        }
    });
    reader
}

impl Cache {
    /// Starts one watcher per kind; every event wakes `notify`.
    pub(crate) fn start(client: &Client, namespace: Option<&str>, notify: &Arc<Notify>) -> Self {
        let mut tasks = JoinSet::new();
        let pending = Arc::new(Mutex::new(Pending {
            all: true,
            changes: Vec::new(),
        }));
        let mut sink = Sink {
            tasks: &mut tasks,
            client,
            namespace,
            notify,
            pending: &pending,
        };
        let pods = spawn(&mut sink, Kind::Pod);
        let replica_sets = spawn(&mut sink, Kind::ReplicaSet);
        let deployments = spawn(&mut sink, Kind::Deployment);
        let stateful_sets = spawn(&mut sink, Kind::StatefulSet);
        let daemon_sets = spawn(&mut sink, Kind::DaemonSet);
        let services = spawn(&mut sink, Kind::Service);
        let endpoints = spawn(&mut sink, Kind::Endpoints);
        let endpoint_slices = spawn(&mut sink, Kind::EndpointSlice);
        let jobs = spawn(&mut sink, Kind::Job);
        let cron_jobs = spawn(&mut sink, Kind::CronJob);
        Self {
            pods,
            replica_sets,
            deployments,
            stateful_sets,
            daemon_sets,
            services,
            endpoints,
            endpoint_slices,
            jobs,
            cron_jobs,
            pending,
            _tasks: tasks,
        }
    }

    /// The changes seen since the last call, or `None` when a watcher relisted (every object
    /// may have changed).
    pub(crate) fn take_changes(&self) -> Option<Vec<Change>> {
        let mut p = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changes = std::mem::take(&mut p.changes);
        if std::mem::take(&mut p.all) {
            None
        } else {
            Some(changes)
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
        let es = self.endpoint_slices.wait_until_ready();
        es.await.map_err(|_| Error::NotReady("EndpointSlice"))?;
        let jobs = self.jobs.wait_until_ready();
        jobs.await.map_err(|_| Error::NotReady("Job"))?;
        let cj = self.cron_jobs.wait_until_ready();
        cj.await.map_err(|_| Error::NotReady("CronJob"))?;
        Ok(())
    }

    /// A consistent-enough copy of every store for one reconcile pass.
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot::new(
            self.pods.state(),
            self.replica_sets.state(),
            self.deployments.state(),
            self.stateful_sets.state(),
            self.daemon_sets.state(),
            self.services.state(),
            self.endpoints.state(),
        )
        .with_batch(self.jobs.state(), self.cron_jobs.state())
        .with_endpoint_slices(self.endpoint_slices.state())
    }
}

fn key(meta: &kube::api::ObjectMeta) -> (&str, &str) {
    (
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

fn owned_key(meta: &kube::api::ObjectMeta) -> (String, String) {
    let (ns, name) = key(meta);
    (ns.to_string(), name.to_string())
}

fn sorted<K: Resource>(mut v: Vec<Arc<K>>) -> Vec<Arc<K>> {
    v.sort_by(|a, b| key(a.meta()).cmp(&key(b.meta())));
    v
}

fn by_uid<K: Resource>(v: &[Arc<K>]) -> HashMap<String, Arc<K>> {
    v.iter()
        .filter_map(|o| Some((o.meta().uid.clone()?, o.clone())))
        .collect()
}

/// Every cached object at the start of a pass, sorted by namespace and name, with the
/// indexes the controllers and [`Scope::of`](crate::scope::Scope::of) look things up in.
pub(crate) struct Snapshot {
    /// All pods.
    pub(crate) pods: Vec<Arc<Pod>>,
    /// Pods by the uid of their controller.
    pods_by_owner: HashMap<String, Vec<Arc<Pod>>>,
    /// All ReplicaSets.
    pub(crate) replica_sets: Vec<Arc<ReplicaSet>>,
    /// ReplicaSets by uid.
    replica_set_by_uid: HashMap<String, Arc<ReplicaSet>>,
    /// ReplicaSets by the uid of their controller.
    replica_sets_by_owner: HashMap<String, Vec<Arc<ReplicaSet>>>,
    /// All Deployments.
    pub(crate) deployments: Vec<Arc<Deployment>>,
    /// Deployments by uid.
    deployment_by_uid: HashMap<String, Arc<Deployment>>,
    /// All StatefulSets.
    pub(crate) stateful_sets: Vec<Arc<StatefulSet>>,
    /// StatefulSets by uid.
    stateful_set_by_uid: HashMap<String, Arc<StatefulSet>>,
    /// All DaemonSets.
    pub(crate) daemon_sets: Vec<Arc<DaemonSet>>,
    /// DaemonSets by uid.
    daemon_set_by_uid: HashMap<String, Arc<DaemonSet>>,
    /// All Services.
    pub(crate) services: Vec<Arc<Service>>,
    /// Services by namespace and name.
    service_by_key: HashMap<(String, String), Arc<Service>>,
    /// Services with a selector, each under one label of its selector: the one fewest
    /// Services' selectors share (labels every Service of a kind has, such as
    /// `app.kubernetes.io/component: frontend`, would put them all under one entry).
    services_by_label: HashMap<(String, String, String), Vec<Arc<Service>>>,
    /// The label keys some selector uses.
    selector_keys: HashSet<String>,
    /// Pods by namespace and each label whose key is in `selector_keys`.
    pods_by_label: HashMap<(String, String, String), Vec<Arc<Pod>>>,
    /// Endpoints by namespace and name.
    endpoints_by_key: HashMap<(String, String), Arc<Endpoints>>,
    /// The Endpoints (namespace, name) that list a pod, by the pod's namespace and name.
    endpoints_by_pod: HashMap<(String, String), Vec<(String, String)>>,
    /// All Jobs.
    pub(crate) jobs: Vec<Arc<Job>>,
    /// Jobs by uid.
    job_by_uid: HashMap<String, Arc<Job>>,
    /// Jobs by the uid of their controller (a CronJob).
    jobs_by_owner: HashMap<String, Vec<Arc<Job>>>,
    /// All CronJobs.
    pub(crate) cron_jobs: Vec<Arc<CronJob>>,
    /// The EndpointSlices the EndpointSlice controller manages, by namespace and Service name.
    slices_by_service: HashMap<(String, String), Vec<Arc<EndpointSlice>>>,
}

fn selector(svc: &Service) -> Option<&BTreeMap<String, String>> {
    svc.spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .filter(|s| !s.is_empty())
}

impl Snapshot {
    /// Sorts the objects and builds the indexes.
    fn new(
        pods: Vec<Arc<Pod>>,
        replica_sets: Vec<Arc<ReplicaSet>>,
        deployments: Vec<Arc<Deployment>>,
        stateful_sets: Vec<Arc<StatefulSet>>,
        daemon_sets: Vec<Arc<DaemonSet>>,
        services: Vec<Arc<Service>>,
        endpoints: Vec<Arc<Endpoints>>,
    ) -> Self {
        let pods = sorted(pods);
        let mut pods_by_owner: HashMap<String, Vec<Arc<Pod>>> = HashMap::new();
        for p in &pods {
            if let Some(r) = util::controller_of(&p.metadata) {
                pods_by_owner
                    .entry(r.uid.clone())
                    .or_default()
                    .push(p.clone());
            }
        }
        let replica_sets = sorted(replica_sets);
        let mut replica_sets_by_owner: HashMap<String, Vec<Arc<ReplicaSet>>> = HashMap::new();
        for rs in &replica_sets {
            if let Some(r) = util::controller_of(&rs.metadata) {
                let v = replica_sets_by_owner.entry(r.uid.clone()).or_default();
                v.push(rs.clone());
            }
        }
        let services = sorted(services);
        let mut services_by_label: HashMap<(String, String, String), Vec<Arc<Service>>> =
            HashMap::new();
        let mut selector_keys = HashSet::new();
        let mut sharing: HashMap<(&str, &str, &str), usize> = HashMap::new();
        for svc in &services {
            let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
            for (k, v) in selector(svc).into_iter().flatten() {
                selector_keys.insert(k.clone());
                *sharing.entry((ns, k, v)).or_default() += 1;
            }
        }
        for svc in &services {
            let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
            let rarest = selector(svc)
                .into_iter()
                .flatten()
                .min_by_key(|(k, v)| sharing.get(&(ns, k.as_str(), v.as_str())));
            if let Some((k, v)) = rarest {
                let e = services_by_label.entry((ns.to_string(), k.clone(), v.clone()));
                e.or_default().push(svc.clone());
            }
        }
        let mut pods_by_label: HashMap<(String, String, String), Vec<Arc<Pod>>> = HashMap::new();
        for p in &pods {
            let ns = p.metadata.namespace.as_deref().unwrap_or_default();
            for (k, v) in p.metadata.labels.iter().flatten() {
                if selector_keys.contains(k) {
                    let e = pods_by_label.entry((ns.to_string(), k.clone(), v.clone()));
                    e.or_default().push(p.clone());
                }
            }
        }
        let mut endpoints_by_pod: HashMap<(String, String), Vec<(String, String)>> = HashMap::new();
        for ep in &endpoints {
            let ep_key = owned_key(&ep.metadata);
            let addresses = ep.subsets.iter().flatten().flat_map(|s| {
                let ready = s.addresses.iter().flatten();
                ready.chain(s.not_ready_addresses.iter().flatten())
            });
            for a in addresses {
                let Some(r) = &a.target_ref else { continue };
                let pod = (
                    r.namespace.clone().unwrap_or_else(|| ep_key.0.clone()),
                    r.name.clone().unwrap_or_default(),
                );
                endpoints_by_pod
                    .entry(pod)
                    .or_default()
                    .push(ep_key.clone());
            }
        }
        Snapshot {
            pods_by_owner,
            replica_set_by_uid: by_uid(&replica_sets),
            replica_sets_by_owner,
            replica_sets,
            deployment_by_uid: by_uid(&deployments),
            deployments: sorted(deployments),
            stateful_set_by_uid: by_uid(&stateful_sets),
            stateful_sets: sorted(stateful_sets),
            daemon_set_by_uid: by_uid(&daemon_sets),
            daemon_sets: sorted(daemon_sets),
            service_by_key: services
                .iter()
                .map(|s| (owned_key(&s.metadata), s.clone()))
                .collect(),
            services,
            services_by_label,
            selector_keys,
            pods_by_label,
            pods,
            endpoints_by_key: endpoints
                .iter()
                .map(|e| (owned_key(&e.metadata), e.clone()))
                .collect(),
            endpoints_by_pod,
            jobs: Vec::new(),
            job_by_uid: HashMap::new(),
            jobs_by_owner: HashMap::new(),
            cron_jobs: Vec::new(),
            slices_by_service: HashMap::new(),
        }
    }

    /// Adds the Jobs and CronJobs.
    fn with_batch(mut self, jobs: Vec<Arc<Job>>, cron_jobs: Vec<Arc<CronJob>>) -> Self {
        let jobs = sorted(jobs);
        for j in &jobs {
            if let Some(r) = util::controller_of(&j.metadata) {
                let v = self.jobs_by_owner.entry(r.uid.clone()).or_default();
                v.push(j.clone());
            }
        }
        self.job_by_uid = by_uid(&jobs);
        self.jobs = jobs;
        self.cron_jobs = sorted(cron_jobs);
        self
    }

    /// Adds the EndpointSlices the EndpointSlice controller manages.
    fn with_endpoint_slices(mut self, slices: Vec<Arc<EndpointSlice>>) -> Self {
        for s in sorted(slices) {
            let labels = s.metadata.labels.as_ref();
            let managed = labels.and_then(|l| l.get(crate::endpoints::MANAGED_BY_LABEL))
                == Some(&crate::endpoints::SLICE_CONTROLLER.to_string());
            let service = labels.and_then(|l| l.get(crate::endpoints::SERVICE_NAME_LABEL));
            if let (true, Some(service)) = (managed, service) {
                let ns = s.metadata.namespace.clone().unwrap_or_default();
                let v = self
                    .slices_by_service
                    .entry((ns, service.clone()))
                    .or_default();
                v.push(s.clone());
            }
        }
        self
    }

    /// The pods controlled by the object with `uid`.
    pub(crate) fn pods_of(&self, uid: Option<&str>) -> &[Arc<Pod>] {
        uid.and_then(|u| self.pods_by_owner.get(u))
            .map_or(&[], Vec::as_slice)
    }

    /// The ReplicaSets controlled by the Deployment with `uid`.
    pub(crate) fn replica_sets_of(&self, uid: &str) -> Vec<Arc<ReplicaSet>> {
        self.replica_sets_by_owner
            .get(uid)
            .cloned()
            .unwrap_or_default()
    }

    /// The Jobs controlled by the CronJob with `uid`.
    pub(crate) fn jobs_of(&self, uid: Option<&str>) -> &[Arc<Job>] {
        uid.and_then(|u| self.jobs_by_owner.get(u))
            .map_or(&[], Vec::as_slice)
    }

    /// Looks up a Job by uid.
    pub(crate) fn job(&self, uid: &str) -> Option<&Job> {
        self.job_by_uid.get(uid).map(AsRef::as_ref)
    }

    /// The managed EndpointSlices of the Service `ns/name`.
    pub(crate) fn slices_of(&self, ns: &str, name: &str) -> &[Arc<EndpointSlice>] {
        let k = (ns.to_string(), name.to_string());
        self.slices_by_service.get(&k).map_or(&[], Vec::as_slice)
    }

    /// The uid of the controller of the ReplicaSet with `uid`, if both exist.
    pub(crate) fn controller_of_replica_set(&self, uid: &str) -> Option<&str> {
        let rs = self.replica_set_by_uid.get(uid)?;
        util::controller_of(&rs.metadata).map(|r| r.uid.as_str())
    }

    /// Looks up a ReplicaSet by uid.
    pub(crate) fn replica_set(&self, uid: &str) -> Option<&ReplicaSet> {
        self.replica_set_by_uid.get(uid).map(AsRef::as_ref)
    }

    /// Looks up a Deployment by uid.
    pub(crate) fn deployment(&self, uid: &str) -> Option<&Deployment> {
        self.deployment_by_uid.get(uid).map(AsRef::as_ref)
    }

    /// Looks up a StatefulSet by uid.
    pub(crate) fn stateful_set(&self, uid: &str) -> Option<&StatefulSet> {
        self.stateful_set_by_uid.get(uid).map(AsRef::as_ref)
    }

    /// Looks up a DaemonSet by uid.
    pub(crate) fn daemon_set(&self, uid: &str) -> Option<&DaemonSet> {
        self.daemon_set_by_uid.get(uid).map(AsRef::as_ref)
    }

    /// Looks up a Service by namespace and name.
    pub(crate) fn service(&self, ns: &str, name: &str) -> Option<&Service> {
        let k = (ns.to_string(), name.to_string());
        self.service_by_key.get(&k).map(AsRef::as_ref)
    }

    /// Looks up Endpoints by namespace and name.
    pub(crate) fn endpoints(&self, ns: &str, name: &str) -> Option<&Endpoints> {
        let k = (ns.to_string(), name.to_string());
        self.endpoints_by_key.get(&k).map(AsRef::as_ref)
    }

    /// The (namespace, name) of every Service in `ns` whose selector matches `labels`.
    pub(crate) fn services_selecting(
        &self,
        ns: &str,
        labels: &BTreeMap<String, String>,
    ) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for (k, v) in labels {
            if !self.selector_keys.contains(k) {
                continue;
            }
            let candidates = self
                .services_by_label
                .get(&(ns.to_string(), k.clone(), v.clone()));
            for svc in candidates.into_iter().flatten() {
                let sel = selector(svc).into_iter().flatten();
                if sel.into_iter().all(|(k, v)| labels.get(k) == Some(v)) {
                    found.push(owned_key(&svc.metadata));
                }
            }
        }
        found
    }

    /// The (namespace, name) of every Endpoints object that lists the pod `ns/name`.
    pub(crate) fn endpoints_listing(&self, ns: &str, name: &str) -> &[(String, String)] {
        let k = (ns.to_string(), name.to_string());
        self.endpoints_by_pod.get(&k).map_or(&[], Vec::as_slice)
    }

    /// The pods in `svc`'s namespace that may match its selector: those carrying the label of
    /// the selector that the fewest pods carry. Empty for a Service without a selector.
    pub(crate) fn pods_for_service(&self, svc: &Service) -> &[Arc<Pod>] {
        let Some(selector) = selector(svc) else {
            return &[];
        };
        let ns = svc.metadata.namespace.clone().unwrap_or_default();
        selector
            .iter()
            .map(|(k, v)| {
                self.pods_by_label
                    .get(&(ns.clone(), k.clone(), v.clone()))
                    .map_or(&[][..], Vec::as_slice)
            })
            .min_by_key(|pods| pods.len())
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, component: &str, instance: &str) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default", "labels": {
                    "app.kubernetes.io/component": component,
                    "app.kubernetes.io/instance": instance,
                }},
            }))
            .expect("pod"),
        )
    }

    fn service(name: &str, selector: serde_json::Value) -> Arc<Service> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"selector": selector},
            }))
            .expect("service"),
        )
    }

    /// Many installations whose Services share their first selector label: every lookup still
    /// sees only the few candidates of its own installation, and finds exactly the matches.
    #[test]
    fn lookups_use_the_most_selective_label() {
        let mut pods = Vec::new();
        let mut services = Vec::new();
        for i in 0..50 {
            let instance = format!("i{i}");
            for component in ["backend", "frontend"] {
                pods.push(pod(
                    &format!("{instance}-{component}"),
                    component,
                    &instance,
                ));
                services.push(service(
                    &format!("{instance}-{component}"),
                    json!({"app.kubernetes.io/component": component,
                           "app.kubernetes.io/instance": instance}),
                ));
            }
        }
        // One Service selecting every frontend.
        services.push(service(
            "all-frontends",
            json!({"app.kubernetes.io/component": "frontend"}),
        ));
        let snap = Snapshot::new(pods, vec![], vec![], vec![], vec![], services, vec![]);

        let svc = snap
            .service("default", "i7-frontend")
            .expect("service")
            .clone();
        let candidates = snap.pods_for_service(&svc);
        assert_eq!(candidates.len(), 2, "only i7's pods are candidates");
        let all = snap
            .service("default", "all-frontends")
            .expect("service")
            .clone();
        assert_eq!(snap.pods_for_service(&all).len(), 50);

        let labels: BTreeMap<String, String> = [
            ("app.kubernetes.io/component", "frontend"),
            ("app.kubernetes.io/instance", "i7"),
            ("unrelated", "x"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut found = snap.services_selecting("default", &labels);
        found.sort();
        assert_eq!(
            found,
            vec![
                ("default".to_string(), "all-frontends".to_string()),
                ("default".to_string(), "i7-frontend".to_string()),
            ]
        );
        assert!(snap.services_selecting("other", &labels).is_empty());
    }
}
