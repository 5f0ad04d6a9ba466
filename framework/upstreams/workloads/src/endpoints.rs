//! The Endpoints controller: for every Service with a selector, an `Endpoints` object of
//! the same name listing the matching pods — ready ones under `addresses`, the others under
//! `notReadyAddresses` (all under `addresses` with `publishNotReadyAddresses`) — with
//! `targetRef`, `nodeName` and `hostname`, and ports resolved from `targetPort` by number
//! or by container-port name. Subsets are repacked by port set, addresses sorted by IP.
//!
//! Beside them, as kube-controller-manager's EndpointSlice controller does, the same pods as
//! `discovery.k8s.io/v1` EndpointSlices: one per set of ports (a placeholder without
//! endpoints for a Service that selects none), named by `generateName` after the Service,
//! labelled `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by:
//! endpointslice-controller.k8s.io`, controlled by the Service (so they go with it), each
//! endpoint with its `ready`/`serving`/`terminating` conditions, node and pod.
//!
//! Endpoints of Services without a selector belong to the user and are never touched;
//! Endpoints and EndpointSlices this simulator wrote are deleted when their Service goes away
//! or loses its selector.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference, Pod, Service,
};
use k8s_openapi::api::discovery::v1::{
    Endpoint, EndpointConditions, EndpointPort as SlicePort, EndpointSlice,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Api;
use serde_json::{Map, Value, json};

use crate::cache::Snapshot;
use crate::ops::{self, Outcome};
use crate::scope::Scope;
use crate::util;
use futures::future::BoxFuture;

/// The label naming an EndpointSlice's Service.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// The label naming the controller that manages an EndpointSlice.
pub(crate) const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// kube-controller-manager's EndpointSlice controller, as it names itself in that label.
pub(crate) const SLICE_CONTROLLER: &str = "endpointslice-controller.k8s.io";

/// Errors of the Endpoints controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing Endpoints failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
}

/// Reconciles the Endpoints of every Service in `scope`; `managed` remembers which ones this
/// simulator owns, and those whose Service is gone (or lost its selector) are deleted.
pub(crate) async fn sync(
    client: &kube::Client,
    snap: &Snapshot,
    scope: &Scope,
    managed: &mut HashSet<(String, String)>,
    out: &mut Outcome,
) {
    let todo = snap.services.iter().filter(|svc| {
        let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
        let name = svc.metadata.name.as_deref().unwrap_or_default();
        selects(svc) && scope.service(ns, name)
    });
    let written = &std::sync::Mutex::new(Vec::new());
    let todo: Vec<BoxFuture<'_, Outcome>> = todo
        .map(|svc| -> BoxFuture<'_, Outcome> {
            Box::pin(async move {
                let mut out = Outcome::default();
                let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
                let name = svc.metadata.name.as_deref().unwrap_or_default();
                match sync_one(client, snap, svc, &mut out).await {
                    Ok(true) => written
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((ns.to_string(), name.to_string())),
                    Ok(false) => out.redo.add_service(ns, name),
                    Err(e) => {
                        out.failed(&format!("endpoints {ns}/{name}"), &e);
                        out.redo.add_service(ns, name);
                    }
                }
                out
            })
        })
        .collect();
    ops::each(todo, out).await;
    let written = std::mem::take(&mut *written.lock().unwrap_or_else(|e| e.into_inner()));
    managed.extend(written);
    let gone: Vec<(String, String)> = managed
        .iter()
        .filter(|(ns, name)| !snap.service(ns, name).is_some_and(selects))
        .cloned()
        .collect();
    for (ns, name) in gone {
        let api: Api<Endpoints> = Api::namespaced(client.clone(), &ns);
        let uid = snap
            .endpoints(&ns, &name)
            .and_then(|e| e.metadata.uid.clone());
        let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), &ns);
        let mut done = true;
        for slice in snap.slices_of(&ns, &name) {
            let slice_name = slice.metadata.name.as_deref().unwrap_or_default();
            let slice_uid = slice.metadata.uid.as_deref();
            if let Err(e) = ops::delete(&slices, slice_name, slice_uid, out).await {
                out.failed(&format!("endpointslice {ns}/{slice_name}"), &e);
                done = false;
            }
        }
        match ops::delete(&api, &name, uid.as_deref(), out).await {
            Ok(()) if done => {
                managed.remove(&(ns, name));
            }
            Ok(()) => {}
            Err(e) => out.failed(&format!("endpoints {ns}/{name}"), &e),
        }
    }
}

/// Whether the Endpoints of `svc` are this controller's: it has a selector and is not
/// being deleted.
fn selects(svc: &Service) -> bool {
    let has_selector = svc
        .spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .is_some_and(|s| !s.is_empty());
    has_selector && svc.metadata.deletion_timestamp.is_none()
}

/// The port a service port targets on `pod`, if the pod has it.
fn resolve_port(target: Option<&IntOrString>, port: i32, pod: &Pod) -> Option<i32> {
    match target {
        None => Some(port),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(s)) => s.parse().ok().or_else(|| {
            pod.spec
                .as_ref()?
                .containers
                .iter()
                .flat_map(|c| c.ports.iter().flatten())
                .find(|p| p.name.as_deref() == Some(s.as_str()))
                .map(|p| p.container_port)
        }),
    }
}

/// One subset in the making: its ports, ready and not-ready addresses.
type Group = (
    Vec<EndpointPort>,
    Vec<EndpointAddress>,
    Vec<EndpointAddress>,
);

/// The Endpoints subsets for `svc` (kube's addEndpointSubset + RepackSubsets).
fn subsets(svc: &Service, pods: &[std::sync::Arc<Pod>]) -> Vec<EndpointSubset> {
    let spec = svc.spec.clone().unwrap_or_default();
    let ns = svc.metadata.namespace.as_deref();
    let svc_name = svc.metadata.name.as_deref();
    let selector = spec.selector.clone().unwrap_or_default();
    let tolerate = spec.publish_not_ready_addresses == Some(true);
    let headless = spec.cluster_ip.as_deref() == Some("None");
    let ports = spec.ports.clone().unwrap_or_default();
    // (ready, ip, pod name) -> address, and the ports each address serves.
    let mut served: BTreeMap<(bool, String, String), (EndpointAddress, Vec<EndpointPort>)> =
        BTreeMap::new();
    for pod in pods {
        if pod.metadata.namespace.as_deref() != ns || !util::is_active(pod) {
            continue;
        }
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        if !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            continue;
        }
        let Some(ip) = pod
            .status
            .as_ref()
            .and_then(|s| s.pod_ip.clone())
            .filter(|i| !i.is_empty())
        else {
            continue;
        };
        let pod_spec = pod.spec.as_ref();
        let hostname = pod_spec
            .filter(|s| s.subdomain.as_deref() == svc_name)
            .and_then(|s| s.hostname.clone())
            .filter(|h| !h.is_empty());
        let address = EndpointAddress {
            ip: ip.clone(),
            hostname,
            node_name: pod_spec.and_then(|s| s.node_name.clone()),
            target_ref: Some(ObjectReference {
                kind: Some("Pod".into()),
                namespace: pod.metadata.namespace.clone(),
                name: pod.metadata.name.clone(),
                uid: pod.metadata.uid.clone(),
                ..Default::default()
            }),
        };
        let ready = tolerate || util::is_ready(pod);
        let mut eps = Vec::new();
        for sp in &ports {
            if let Some(port) = resolve_port(sp.target_port.as_ref(), sp.port, pod) {
                eps.push(EndpointPort {
                    name: sp.name.clone().filter(|n| !n.is_empty()),
                    port,
                    protocol: Some(sp.protocol.clone().unwrap_or_else(|| "TCP".into())),
                    app_protocol: sp.app_protocol.clone(),
                });
            }
        }
        if eps.is_empty() && !(ports.is_empty() && headless) {
            continue;
        }
        eps.sort_by(|a, b| (&a.name, a.port).cmp(&(&b.name, b.port)));
        let key = (ready, ip, pod.metadata.name.clone().unwrap_or_default());
        served.insert(key, (address, eps));
    }
    // Group addresses by the exact port set they serve.
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for ((ready, _, _), (addr, eps)) in served {
        let key = serde_json::to_string(&eps).unwrap_or_default();
        let g = groups
            .entry(key)
            .or_insert_with(|| (eps, Vec::new(), Vec::new()));
        if ready {
            g.1.push(addr)
        } else {
            g.2.push(addr)
        }
    }
    groups
        .into_values()
        .map(|(eps, ready, not_ready)| EndpointSubset {
            addresses: (!ready.is_empty()).then_some(ready),
            not_ready_addresses: (!not_ready.is_empty()).then_some(not_ready),
            ports: (!eps.is_empty()).then_some(eps),
        })
        .collect()
}

/// Writes the Endpoints of `svc`; `Ok(false)` when a write was skipped (conflict, gone).
async fn sync_one(
    client: &kube::Client,
    snap: &Snapshot,
    svc: &Service,
    out: &mut Outcome,
) -> Result<bool, Error> {
    let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
    let name = svc.metadata.name.as_deref().unwrap_or_default();
    let want = subsets(svc, snap.pods_for_service(svc));
    let slices_done = sync_slices(client, snap, svc, &want, out).await?;
    let mut labels = svc.metadata.labels.clone().unwrap_or_default();
    let headless = svc.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()) == Some("None");
    if headless {
        labels.insert("service.kubernetes.io/headless".into(), String::new());
    }
    let api: Api<Endpoints> = Api::namespaced(client.clone(), ns);
    match snap.endpoints(ns, name) {
        None => {
            let ep = Endpoints {
                metadata: ObjectMeta {
                    name: Some(name.to_string()),
                    namespace: Some(ns.to_string()),
                    labels: (!labels.is_empty()).then_some(labels),
                    ..Default::default()
                },
                subsets: (!want.is_empty()).then_some(want),
            };
            return Ok(ops::create(&api, &ep, out).await?.is_some() && slices_done);
        }
        Some(cur) => {
            let cur_labels = cur.metadata.labels.clone().unwrap_or_default();
            let cur_subsets = cur.subsets.clone().unwrap_or_default();
            if cur_labels == labels && cur_subsets == want {
                return Ok(slices_done);
            }
            let mut label_patch: Map<String, Value> = labels
                .iter()
                .filter(|(k, v)| cur_labels.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            for k in cur_labels.keys().filter(|k| !labels.contains_key(*k)) {
                label_patch.insert(k.clone(), Value::Null);
            }
            let body = json!({
                "metadata": {"labels": label_patch},
                "subsets": if want.is_empty() { Value::Null } else { serde_json::to_value(&want).map_err(ops::Error::from)? },
            });
            Ok(ops::patch(&api, name, &body, false, out).await?.is_some() && slices_done)
        }
    }
}

/// One slice's worth of endpoints: an Endpoints address as a slice endpoint.
fn slice_endpoint(a: &EndpointAddress, ready: bool) -> Endpoint {
    Endpoint {
        addresses: vec![a.ip.clone()],
        conditions: Some(EndpointConditions {
            ready: Some(ready),
            serving: Some(ready),
            terminating: Some(false),
        }),
        hostname: a.hostname.clone(),
        node_name: a.node_name.clone(),
        target_ref: a.target_ref.clone(),
        ..Default::default()
    }
}

/// The EndpointSlices `svc` should have: one per subset (a set of ports), or one placeholder.
fn desired_slices(svc: &Service, subsets: &[EndpointSubset]) -> Vec<EndpointSlice> {
    let ns = svc.metadata.namespace.clone();
    let name = svc.metadata.name.clone().unwrap_or_default();
    let mut labels = svc.metadata.labels.clone().unwrap_or_default();
    labels.insert(SERVICE_NAME_LABEL.into(), name.clone());
    labels.insert(MANAGED_BY_LABEL.into(), SLICE_CONTROLLER.into());
    let spec = svc.spec.as_ref();
    if spec.and_then(|s| s.cluster_ip.as_deref()) == Some("None") {
        labels.insert("service.kubernetes.io/headless".into(), String::new());
    }
    let ipv6 = spec
        .and_then(|s| s.ip_families.as_ref())
        .and_then(|f| f.first())
        .is_some_and(|f| f == "IPv6");
    let owner = util::owner_ref("v1", "Service", &svc.metadata);
    let slice = |endpoints: Vec<Endpoint>, ports: Option<Vec<SlicePort>>| EndpointSlice {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: ns.clone(),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner.clone()]),
            ..Default::default()
        },
        address_type: if ipv6 { "IPv6" } else { "IPv4" }.into(),
        endpoints: (!endpoints.is_empty()).then_some(endpoints),
        ports,
    };
    if subsets.is_empty() {
        return vec![slice(Vec::new(), None)];
    }
    subsets
        .iter()
        .map(|sub| {
            let ready = sub
                .addresses
                .iter()
                .flatten()
                .map(|a| slice_endpoint(a, true));
            let not_ready = sub.not_ready_addresses.iter().flatten();
            let endpoints = ready
                .chain(not_ready.map(|a| slice_endpoint(a, false)))
                .collect();
            let ports = sub.ports.as_ref().map(|ps| {
                ps.iter()
                    .map(|p| SlicePort {
                        name: Some(p.name.clone().unwrap_or_default()),
                        port: Some(p.port),
                        protocol: p.protocol.clone(),
                        app_protocol: p.app_protocol.clone(),
                    })
                    .collect()
            });
            slice(endpoints, ports)
        })
        .collect()
}

/// Whether a stored slice already says what `want` says.
fn same_slice(cur: &EndpointSlice, want: &EndpointSlice) -> bool {
    cur.endpoints == want.endpoints
        && cur.ports == want.ports
        && cur.address_type == want.address_type
        && cur.metadata.labels == want.metadata.labels
}

/// Writes the EndpointSlices of `svc` for `subsets`; `Ok(false)` when a write was skipped.
async fn sync_slices(
    client: &kube::Client,
    snap: &Snapshot,
    svc: &Service,
    subsets: &[EndpointSubset],
    out: &mut Outcome,
) -> Result<bool, Error> {
    let ns = svc.metadata.namespace.as_deref().unwrap_or_default();
    let name = svc.metadata.name.as_deref().unwrap_or_default();
    let api: Api<EndpointSlice> = Api::namespaced(client.clone(), ns);
    let mut want = desired_slices(svc, subsets);
    let mut stale: Vec<&EndpointSlice> = Vec::new();
    // Slices already right stay; the others are rewritten in place, then created or deleted.
    for cur in snap.slices_of(ns, name) {
        match want.iter().position(|w| same_slice(cur, w)) {
            Some(i) => {
                want.remove(i);
            }
            None => stale.push(cur),
        }
    }
    let mut done = true;
    let mut stale = stale.into_iter();
    for w in want {
        match stale.next() {
            Some(cur) => {
                let body = json!({
                    "metadata": {"labels": w.metadata.labels},
                    "addressType": w.address_type,
                    "endpoints": w.endpoints,
                    "ports": w.ports,
                });
                let cur_name = cur.metadata.name.as_deref().unwrap_or_default();
                done &= ops::patch(&api, cur_name, &body, false, out)
                    .await?
                    .is_some();
            }
            None => done &= ops::create(&api, &w, out).await?.is_some(),
        }
    }
    for cur in stale {
        let cur_name = cur.metadata.name.as_deref().unwrap_or_default();
        ops::delete(&api, cur_name, cur.metadata.uid.as_deref(), out).await?;
    }
    Ok(done)
}
