//! Which objects one reconcile pass looks at: everything, or only what the watch events since
//! the last pass can have changed.
//!
//! The watchers ([`crate::cache`]) record a [`Change`] per event. Before a pass, [`Scope::of`]
//! turns them into the objects whose desired state may differ, following the same edges the
//! controllers read along:
//!
//! - a pod: the pod (kubelet), its controller and that one's controller (counts, rollout),
//!   and the Services that select it or whose Endpoints list it;
//! - a ReplicaSet, StatefulSet, DaemonSet or Job: itself, its controller (a Job's CronJob),
//!   and its pods (their failure-injection annotations are read through the owner chain);
//! - a CronJob: itself;
//! - a Deployment: itself, its ReplicaSets and their pods;
//! - a Service, its Endpoints or one of its EndpointSlices: the Service's Endpoints and
//!   EndpointSlices.
//!
//! A relist, a timed transition and the periodic resync make a full pass ([`Scope::all`]);
//! objects whose write was skipped or failed are carried into the next pass
//! ([`Scope::merge`]). A pass is thus O(changed) in controller work; what stays O(all) is
//! building the [`Snapshot`](crate::cache::Snapshot)'s indexes, a few hash-map inserts per
//! object.

use std::collections::{BTreeMap, HashSet};

use crate::cache::Snapshot;

/// The kind of a watched object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A Pod.
    Pod,
    /// A ReplicaSet.
    ReplicaSet,
    /// A Deployment.
    Deployment,
    /// A StatefulSet.
    StatefulSet,
    /// A DaemonSet.
    DaemonSet,
    /// A Service.
    Service,
    /// An Endpoints object.
    Endpoints,
    /// An EndpointSlice.
    EndpointSlice,
    /// A Job.
    Job,
    /// A CronJob.
    CronJob,
}

/// One watch event, reduced to what [`Scope::of`] needs.
#[derive(Clone, Debug)]
pub(crate) struct Change {
    /// The object's kind.
    pub(crate) kind: Kind,
    /// Its namespace.
    pub(crate) namespace: String,
    /// Its name.
    pub(crate) name: String,
    /// Its uid.
    pub(crate) uid: String,
    /// The uid of its controller, if it has one.
    pub(crate) owner: Option<String>,
    /// Its labels (pods: they decide which Services select it; EndpointSlices: they name
    /// their Service).
    pub(crate) labels: BTreeMap<String, String>,
}

/// The objects one pass reconciles.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    all: bool,
    /// Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs, by uid.
    controllers: HashSet<String>,
    /// Pods, by uid.
    pods: HashSet<String>,
    /// Services (and their Endpoints), by namespace and name.
    services: HashSet<(String, String)>,
}

impl Scope {
    /// Every object.
    pub(crate) fn all() -> Self {
        Self {
            all: true,
            ..Self::default()
        }
    }

    /// Whether this pass looks at every object.
    pub(crate) fn is_all(&self) -> bool {
        self.all
    }

    /// Whether nothing is to be looked at.
    pub(crate) fn is_empty(&self) -> bool {
        !self.all && self.controllers.is_empty() && self.pods.is_empty() && self.services.is_empty()
    }

    /// The objects `changes` can have affected, given the cluster as `snap` shows it.
    pub(crate) fn of(changes: &[Change], snap: &Snapshot) -> Self {
        let mut s = Self::default();
        for c in changes {
            match c.kind {
                Kind::Pod => {
                    s.pods.insert(c.uid.clone());
                    if let Some(owner) = &c.owner {
                        s.controllers.insert(owner.clone());
                        if let Some(d) = snap.controller_of_replica_set(owner) {
                            s.controllers.insert(d.to_string());
                        }
                    }
                    for svc in snap.services_selecting(&c.namespace, &c.labels) {
                        s.services.insert(svc);
                    }
                    for svc in snap.endpoints_listing(&c.namespace, &c.name) {
                        s.services.insert(svc.clone());
                    }
                }
                Kind::ReplicaSet | Kind::StatefulSet | Kind::DaemonSet | Kind::Job => {
                    s.controllers.insert(c.uid.clone());
                    if let Some(owner) = &c.owner {
                        s.controllers.insert(owner.clone());
                    }
                    s.add_pods_of(snap, &c.uid);
                }
                Kind::Deployment => {
                    s.controllers.insert(c.uid.clone());
                    for rs in snap.replica_sets_of(&c.uid) {
                        if let Some(uid) = rs.metadata.uid.as_deref() {
                            s.controllers.insert(uid.to_string());
                            s.add_pods_of(snap, uid);
                        }
                    }
                }
                Kind::CronJob => {
                    s.controllers.insert(c.uid.clone());
                }
                Kind::Service | Kind::Endpoints => {
                    s.services.insert((c.namespace.clone(), c.name.clone()));
                }
                Kind::EndpointSlice => {
                    if let Some(svc) = c.labels.get(crate::endpoints::SERVICE_NAME_LABEL) {
                        s.services.insert((c.namespace.clone(), svc.clone()));
                    }
                }
            }
        }
        s
    }

    fn add_pods_of(&mut self, snap: &Snapshot, uid: &str) {
        for p in snap.pods_of(Some(uid)) {
            if let Some(uid) = p.metadata.uid.as_deref() {
                self.pods.insert(uid.to_string());
            }
        }
    }

    /// Adds everything in `other`.
    pub(crate) fn merge(&mut self, other: Scope) {
        self.all |= other.all;
        self.controllers.extend(other.controllers);
        self.pods.extend(other.pods);
        self.services.extend(other.services);
    }

    /// Whether the Deployment, ReplicaSet, StatefulSet or DaemonSet with `uid` is in scope.
    pub(crate) fn controller(&self, uid: Option<&str>) -> bool {
        self.all || uid.is_some_and(|u| self.controllers.contains(u))
    }

    /// Whether the pod with `uid` is in scope.
    pub(crate) fn pod(&self, uid: Option<&str>) -> bool {
        self.all || uid.is_some_and(|u| self.pods.contains(u))
    }

    /// Whether the Service `namespace/name` (and its Endpoints) is in scope.
    pub(crate) fn service(&self, namespace: &str, name: &str) -> bool {
        self.all
            || self
                .services
                .contains(&(namespace.to_string(), name.to_string()))
    }

    /// Brings the controller with `uid` into the next pass (its write was skipped or failed).
    pub(crate) fn add_controller(&mut self, uid: Option<&str>) {
        if let Some(u) = uid {
            self.controllers.insert(u.to_string());
        }
    }

    /// Brings the pod with `uid` into the next pass.
    pub(crate) fn add_pod(&mut self, uid: Option<&str>) {
        if let Some(u) = uid {
            self.pods.insert(u.to_string());
        }
    }

    /// Brings the Service `namespace/name` into the next pass.
    pub(crate) fn add_service(&mut self, namespace: &str, name: &str) {
        self.services
            .insert((namespace.to_string(), name.to_string()));
    }
}
