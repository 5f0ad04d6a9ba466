//! The pure half of the fake virt-controller and CDI: from a snapshot of every object, the
//! writes that move each one step towards what KubeVirt and CDI would make of it.
//!
//! [`plan`] is the whole of it; the runtime (`super`) lists, calls [`plan`], paces the
//! [`Write::Patch`]es marked `step` and sends the rest at once. Nothing here does IO, so every
//! rule has a unit test (in `tests`).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};
use mni_kubeovn::ipam::{self, Cidr, IpRange};
use mni_kubeovn::v1::{Ip, Subnet};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::cdi::{
    self, DataVolume, DataVolumeCondition, DataVolumePhase, DataVolumeSpec, DataVolumeStatus,
};
use crate::quantity;
use crate::v1::{
    Condition, InstanceInterface, InstancePhase, Network, PhaseTransition, PrintableStatus,
    RunStrategy, StateChangeAction, VirtualMachine, VirtualMachineInstance,
    VirtualMachineInstanceStatus, VirtualMachineStatus, find_condition, is_condition_true,
};

/// The label CDI puts on its claims and importer pods.
pub(crate) const CDI_APP_LABEL: (&str, &str) = ("app", "containerized-data-importer");

/// The label virt-controller puts on the instances of a VM.
const VM_NAME_LABEL: &str = "vm.kubevirt.io/name";

/// The label of virt-launcher pods: `kubevirt.io=virt-launcher`.
pub(crate) const LAUNCHER_LABEL: (&str, &str) = ("kubevirt.io", "virt-launcher");

/// The label naming the UID of the instance a virt-launcher pod runs.
const CREATED_BY_LABEL: &str = "kubevirt.io/created-by";

/// Kube-OVN's annotation naming the subnet of a pod's default interface.
pub(crate) const LOGICAL_SWITCH: &str = "ovn.kubernetes.io/logical_switch";

/// Kube-OVN's annotation asking for a fixed address on a pod's default interface.
pub(crate) const IP_ADDRESS: &str = "ovn.kubernetes.io/ip_address";

/// How far one step of a simulated import gets.
const PROGRESS_STEP: f64 = 25.0;

/// Everything the fake controllers read in one pass.
#[derive(Debug, Default, Clone)]
pub(crate) struct Snapshot {
    pub(crate) vms: Vec<VirtualMachine>,
    pub(crate) vmis: Vec<VirtualMachineInstance>,
    pub(crate) dvs: Vec<DataVolume>,
    pub(crate) pvcs: Vec<PersistentVolumeClaim>,
    /// The importer pods (label `app=containerized-data-importer`).
    pub(crate) importers: Vec<Pod>,
    /// The virt-launcher pods (label `kubevirt.io=virt-launcher`).
    pub(crate) launchers: Vec<Pod>,
    pub(crate) subnets: Vec<Subnet>,
    /// Kube-OVN's records of addresses in use (`ips.kubeovn.io`).
    pub(crate) ips: Vec<Ip>,
    /// The simulated node, if it exists.
    pub(crate) node: Option<NodeInfo>,
}

/// What the simulated scheduler knows of the node.
#[derive(Debug, Default, Clone)]
pub(crate) struct NodeInfo {
    pub(crate) name: String,
    /// Allocatable CPU, in cores.
    pub(crate) cpu: f64,
    /// Allocatable memory, in bytes.
    pub(crate) memory: f64,
    pub(crate) labels: BTreeMap<String, String>,
}

/// Settings that change what the fake controllers compute.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The node every instance and importer runs on.
    pub(crate) node_name: String,
    /// Where pod-network addresses come from (first usable address: the gateway).
    pub(crate) pod_cidr: Cidr,
}

/// The kinds the fake controllers write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    VirtualMachine,
    VirtualMachineInstance,
    DataVolume,
    PersistentVolumeClaim,
    Pod,
    /// Kube-OVN's `IP` (cluster-scoped).
    Ip,
}

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Write {
    /// Create an object (`body` carries `apiVersion`, `kind` and metadata).
    Create {
        kind: Kind,
        namespace: String,
        body: Value,
    },
    /// Delete an object.
    Delete {
        kind: Kind,
        namespace: String,
        name: String,
    },
    /// A merge patch of the `status` subresource.
    Status {
        kind: Kind,
        namespace: String,
        name: String,
        patch: Value,
        /// A phase change: the runtime paces these, one per object per step interval.
        step: bool,
    },
}

/// Computes every write that moves the snapshot one step on.
pub(crate) fn plan(snapshot: &Snapshot, settings: &Settings, now: &Time) -> Vec<Write> {
    let mut writes = Vec::new();
    let pvcs = index(&snapshot.pvcs);
    let importers = index(&snapshot.importers);
    for dv in &snapshot.dvs {
        plan_data_volume(dv, &pvcs, &importers, settings, now, &mut writes);
    }
    let mut ipam = Ipam::new(snapshot, settings);
    let mut vmis: Vec<&VirtualMachineInstance> = snapshot.vmis.iter().collect();
    vmis.sort_by(|a, b| {
        (a.metadata.creation_timestamp.as_ref(), a.name_any())
            .cmp(&(b.metadata.creation_timestamp.as_ref(), b.name_any()))
    });
    for vmi in vmis {
        plan_instance(vmi, snapshot, &mut ipam, now, &mut writes);
    }
    plan_ip_records(snapshot, settings, &mut writes);
    let dvs = index(&snapshot.dvs);
    let vmis = index(&snapshot.vmis);
    for vm in &snapshot.vms {
        plan_virtual_machine(vm, &dvs, &vmis, now, &mut writes);
    }
    writes
}

type Key = (String, String);

fn key<K: ResourceExt>(object: &K) -> Key {
    (object.namespace().unwrap_or_default(), object.name_any())
}

fn index<K: ResourceExt>(objects: &[K]) -> BTreeMap<Key, &K> {
    objects.iter().map(|o| (key(o), o)).collect()
}

fn owner_reference<K: Resource<DynamicType = ()>>(owner: &K) -> Value {
    json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "name": owner.meta().name.clone().unwrap_or_default(),
        "uid": owner.meta().uid.clone().unwrap_or_default(),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

// ---------------------------------------------------------------------------------------
// CDI

/// Why a DataVolume's spec cannot be imported, naming the field.
fn data_volume_error(spec: &DataVolumeSpec) -> Option<String> {
    let Some(claim) = spec.claim() else {
        return Some("spec.storage: required (the size of the claim to import into)".into());
    };
    match claim.size() {
        None => {
            return Some("spec.storage.resources.requests.storage: required".into());
        }
        Some(q) => {
            if let Err(e) = quantity::value(q) {
                return Some(format!("spec.storage.resources.requests.storage: {e}"));
            }
        }
    }
    let source = spec.source.clone().unwrap_or_default();
    let set = [
        source.http.is_some(),
        source.registry.is_some(),
        source.blank.is_some(),
    ]
    .iter()
    .filter(|s| **s)
    .count();
    if set != 1 {
        return Some("spec.source: exactly one of http, registry or blank is required".into());
    }
    if let Some(http) = &source.http
        && !(http.url.starts_with("http://") || http.url.starts_with("https://"))
    {
        return Some(format!(
            "spec.source.http.url: {:?} is not an http:// or https:// URL",
            http.url
        ));
    }
    None
}

/// The host of a URL or image reference (`scheme://host:port/path`, `host/repo:tag`).
fn host_of(reference: &str) -> &str {
    let rest = reference
        .split_once("://")
        .map_or(reference, |(_, rest)| rest);
    let host = rest.split('/').next().unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    host.split(':').next().unwrap_or_default()
}

/// The failure an import from `spec` runs into: hosts under `.invalid` (RFC 2606) do not
/// resolve.
fn import_failure(spec: &DataVolumeSpec) -> Option<String> {
    let source = spec.source.as_ref()?;
    let url = source
        .http
        .as_ref()
        .map(|h| h.url.clone())
        .or_else(|| source.registry.as_ref().and_then(|r| r.url.clone()))?;
    let host = host_of(&url);
    host.ends_with(".invalid").then(|| {
        format!(
            "Unable to connect to http data source: Get {url:?}: dial tcp: lookup {host}: no such host"
        )
    })
}

fn plan_data_volume(
    dv: &DataVolume,
    pvcs: &BTreeMap<Key, &PersistentVolumeClaim>,
    importers: &BTreeMap<Key, &Pod>,
    settings: &Settings,
    now: &Time,
    writes: &mut Vec<Write>,
) {
    if dv.metadata.deletion_timestamp.is_some() {
        return;
    }
    let (namespace, name) = key(dv);
    let current = dv.status.clone().unwrap_or_default();
    let existing = current.conditions.as_slice();
    let cond = |type_: &str, status: bool, reason: &str, message: &str| {
        dv_condition(existing, type_, status, reason, message, now)
    };
    let mut desired = DataVolumeStatus {
        claim_name: Some(name.clone()),
        restart_count: Some(current.restart_count.unwrap_or(0)),
        ..DataVolumeStatus::default()
    };
    if let Some(message) = data_volume_error(&dv.spec) {
        desired.phase = Some(DataVolumePhase::Failed);
        desired.progress = Some("N/A".into());
        desired.conditions = vec![
            cond(cdi::BOUND, false, "InvalidSpec", &message),
            cond(cdi::READY, false, "InvalidSpec", &message),
            cond(cdi::RUNNING, false, "InvalidSpec", &message),
        ];
        push_status(writes, Kind::DataVolume, dv, &current, &desired, false);
        return;
    }
    let pvc = pvcs.get(&(namespace.clone(), name.clone()));
    let importer_name = format!("importer-{name}");
    let importer = importers.get(&(namespace.clone(), importer_name.clone()));
    let phase = current.phase;
    let done = matches!(
        phase,
        Some(DataVolumePhase::Succeeded | DataVolumePhase::Failed)
    );
    if pvc.is_none() && !done {
        writes.push(Write::Create {
            kind: Kind::PersistentVolumeClaim,
            namespace: namespace.clone(),
            body: claim_for(dv),
        });
    }
    if importer.is_none() && !done {
        writes.push(Write::Create {
            kind: Kind::Pod,
            namespace: namespace.clone(),
            body: importer_for(dv, &importer_name, settings),
        });
    }
    if importer.is_some_and(|p| p.metadata.deletion_timestamp.is_none()) && done {
        writes.push(Write::Delete {
            kind: Kind::Pod,
            namespace: namespace.clone(),
            name: importer_name,
        });
    }
    let bound = pvc
        .and_then(|p| p.status.as_ref())
        .and_then(|s| s.phase.as_deref())
        == Some("Bound");
    let bound_cond = if bound || phase == Some(DataVolumePhase::Succeeded) {
        cond(cdi::BOUND, true, "Bound", &format!("PVC {name} Bound"))
    } else {
        cond(cdi::BOUND, false, "Pending", &format!("PVC {name} Pending"))
    };
    let failure = import_failure(&dv.spec);
    let (next, progress) = match phase {
        Some(DataVolumePhase::Succeeded) => (DataVolumePhase::Succeeded, "100.0%".to_string()),
        Some(DataVolumePhase::Failed) => (DataVolumePhase::Failed, "N/A".to_string()),
        _ if !bound => (DataVolumePhase::Pending, "N/A".to_string()),
        Some(DataVolumePhase::ImportScheduled) if failure.is_some() => {
            (DataVolumePhase::Failed, "N/A".to_string())
        }
        Some(DataVolumePhase::ImportScheduled) => {
            (DataVolumePhase::ImportInProgress, "0.00%".to_string())
        }
        Some(DataVolumePhase::ImportInProgress) => {
            let at = current
                .progress
                .as_deref()
                .and_then(|p| p.trim_end_matches('%').parse::<f64>().ok())
                .unwrap_or(0.0);
            let next = at + PROGRESS_STEP;
            if next >= 100.0 {
                (DataVolumePhase::Succeeded, "100.0%".to_string())
            } else {
                (DataVolumePhase::ImportInProgress, format!("{next:.2}%"))
            }
        }
        _ => (DataVolumePhase::ImportScheduled, "N/A".to_string()),
    };
    desired.phase = Some(next);
    desired.progress = Some(progress);
    desired.conditions = match next {
        DataVolumePhase::Succeeded => vec![
            bound_cond,
            cond(cdi::READY, true, "", ""),
            cond(cdi::RUNNING, false, "Completed", "Import Complete"),
        ],
        DataVolumePhase::Failed => {
            let message = failure.unwrap_or_else(|| "Import failed".into());
            vec![
                bound_cond,
                cond(cdi::READY, false, "", ""),
                cond(cdi::RUNNING, false, "Error", &message),
            ]
        }
        DataVolumePhase::ImportInProgress => vec![
            bound_cond,
            cond(cdi::READY, false, "", ""),
            cond(cdi::RUNNING, true, "Pod is running", ""),
        ],
        _ => vec![
            bound_cond,
            cond(cdi::READY, false, "", ""),
            cond(cdi::RUNNING, false, "", ""),
        ],
    };
    let step = phase != Some(next) || current.progress != desired.progress;
    push_status(writes, Kind::DataVolume, dv, &current, &desired, step);
}

/// The claim CDI creates for a DataVolume: same name, owned by it.
fn claim_for(dv: &DataVolume) -> Value {
    let claim = dv.spec.claim().cloned().unwrap_or_default();
    let source = dv.spec.source.clone().unwrap_or_default();
    let (kind, endpoint) = match (&source.http, &source.registry) {
        (Some(h), _) => ("http", h.url.clone()),
        (None, Some(r)) => ("registry", r.url.clone().unwrap_or_default()),
        _ => ("none", String::new()),
    };
    let mut modes = claim.access_modes.clone();
    if modes.is_empty() {
        modes.push("ReadWriteOnce".into());
    }
    let mut spec = json!({
        "accessModes": modes,
        "resources": {"requests": {"storage": claim.size().map(|q| q.0.clone())}},
    });
    if let Some(class) = &claim.storage_class_name {
        spec["storageClassName"] = json!(class);
    }
    if let Some(mode) = &claim.volume_mode {
        spec["volumeMode"] = json!(mode);
    }
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": dv.name_any(),
            "namespace": dv.namespace(),
            "labels": {CDI_APP_LABEL.0: CDI_APP_LABEL.1},
            "annotations": {
                "cdi.kubevirt.io/storage.import.source": kind,
                "cdi.kubevirt.io/storage.import.endpoint": endpoint,
                "cdi.kubevirt.io/storage.contentType":
                    dv.spec.content_type.clone().unwrap_or_else(|| "kubevirt".into()),
            },
            "ownerReferences": [owner_reference(dv)],
        },
        "spec": spec,
    })
}

/// CDI's importer pod: the claim's first consumer, bound to the simulated node, so a
/// `WaitForFirstConsumer` class provisions the volume there.
fn importer_for(dv: &DataVolume, name: &str, settings: &Settings) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": dv.namespace(),
            "labels": {CDI_APP_LABEL.0: CDI_APP_LABEL.1, "cdi.kubevirt.io": "importer"},
            "ownerReferences": [owner_reference(dv)],
        },
        "spec": {
            "nodeName": settings.node_name,
            "restartPolicy": "OnFailure",
            "containers": [{
                "name": "importer",
                "image": "quay.io/kubevirt/cdi-importer:v1.61.0",
                "volumeMounts": [{"name": "cdi-data-vol", "mountPath": "/data"}],
            }],
            "volumes": [{
                "name": "cdi-data-vol",
                "persistentVolumeClaim": {"claimName": dv.name_any()},
            }],
        },
    })
}

/// `existing`'s condition `type_` if nothing about it changed, else a fresh one
/// (`lastTransitionTime` kept unless the status flips).
fn dv_condition(
    existing: &[DataVolumeCondition],
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: &Time,
) -> DataVolumeCondition {
    let status = if status { "True" } else { "False" };
    let old = cdi::find_condition(existing, type_);
    if let Some(c) = old
        && c.status == status
        && c.reason.as_deref().unwrap_or("") == reason
        && c.message.as_deref().unwrap_or("") == message
    {
        return c.clone();
    }
    let transition = old
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.clone());
    DataVolumeCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
        last_heartbeat_time: Some(now.clone()),
        last_transition_time: Some(transition),
    }
}

/// Like [`dv_condition`], for KubeVirt's condition shape.
fn kv_condition(
    existing: &[Condition],
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: &Time,
) -> Condition {
    let status = if status { "True" } else { "False" };
    let old = find_condition(existing, type_);
    if let Some(c) = old
        && c.status == status
        && c.reason.as_deref().unwrap_or("") == reason
        && c.message.as_deref().unwrap_or("") == message
    {
        return c.clone();
    }
    let transition = old
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.clone());
    Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
        last_probe_time: None,
        last_transition_time: Some(transition),
    }
}

// ---------------------------------------------------------------------------------------
// Addresses

/// Where an interface's address comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pool {
    /// The pod network.
    Pod,
    /// A Kube-OVN Subnet, by name.
    Subnet(String),
}

/// The pool and fixed address of each interface of an instance, or why there is none.
#[derive(Debug, Clone, PartialEq)]
struct Attachment {
    interface: String,
    /// `None`: a network the simulator gives no address (a non-Kube-OVN attachment).
    pool: Option<Pool>,
    fixed: Option<String>,
    /// The Kube-OVN provider (`ovn`, or `<nad>.<ns>.ovn` for a Multus attachment).
    provider: String,
}

/// The attachments of an instance's interfaces, in order. An instance with neither
/// interfaces nor networks gets the pod network on `default`, as KubeVirt auto-attaches it.
fn attachments(
    vmi: &VirtualMachineInstance,
    subnets: &[Subnet],
) -> Result<Vec<Attachment>, String> {
    let spec = &vmi.spec;
    let annotations = vmi.annotations();
    let namespace = vmi.namespace().unwrap_or_default();
    let names: Vec<String> = if !spec.domain.devices.interfaces.is_empty() {
        spec.domain
            .devices
            .interfaces
            .iter()
            .map(|i| i.name.clone())
            .collect()
    } else if !spec.networks.is_empty() {
        spec.networks.iter().map(|n| n.name.clone()).collect()
    } else {
        vec!["default".to_string()]
    };
    let default_pod = Network {
        name: "default".into(),
        pod: Some(Default::default()),
        ..Network::default()
    };
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let network = spec
            .networks
            .iter()
            .find(|n| &n.name == name)
            .or_else(|| (spec.networks.is_empty() && name == "default").then_some(&default_pod))
            .ok_or_else(|| {
                format!("spec.domain.devices.interfaces[{i}].name: no network named {name:?}")
            })?;
        let fixed = |key: &str| {
            annotations.get(key).map(|v| {
                let first = v.split(',').next().unwrap_or_default().trim();
                first.split('/').next().unwrap_or_default().to_string()
            })
        };
        let attachment = if let Some(multus) = &network.multus {
            let (ns, nad) = multus.attachment(&namespace);
            let provider = format!("{nad}.{ns}.ovn");
            let switch = annotations
                .get(&format!("{provider}.kubernetes.io/logical_switch"))
                .cloned()
                .or_else(|| {
                    subnets
                        .iter()
                        .find(|s| s.spec.provider.as_deref() == Some(provider.as_str()))
                        .map(ResourceExt::name_any)
                });
            Attachment {
                interface: name.clone(),
                pool: switch.map(Pool::Subnet),
                fixed: fixed(&format!("{provider}.kubernetes.io/ip_address")),
                provider,
            }
        } else {
            match annotations.get(LOGICAL_SWITCH) {
                Some(subnet) => Attachment {
                    interface: name.clone(),
                    pool: Some(Pool::Subnet(subnet.clone())),
                    fixed: fixed(IP_ADDRESS),
                    provider: "ovn".into(),
                },
                None => Attachment {
                    interface: name.clone(),
                    pool: Some(Pool::Pod),
                    fixed: None,
                    provider: "ovn".into(),
                },
            }
        };
        out.push(attachment);
    }
    Ok(out)
}

/// The addresses held in each pool, and by whom.
struct Ipam<'a> {
    settings: &'a Settings,
    subnets: BTreeMap<String, &'a Subnet>,
    held: BTreeMap<Pool, BTreeMap<IpAddr, Key>>,
}

impl<'a> Ipam<'a> {
    /// The addresses the instances' statuses already report.
    fn new(snapshot: &'a Snapshot, settings: &'a Settings) -> Self {
        let mut ipam = Ipam {
            settings,
            subnets: snapshot.subnets.iter().map(|s| (s.name_any(), s)).collect(),
            held: BTreeMap::new(),
        };
        for vmi in &snapshot.vmis {
            let Some(status) = &vmi.status else { continue };
            let Ok(attachments) = attachments(vmi, &snapshot.subnets) else {
                continue;
            };
            for a in attachments {
                let Some(pool) = a.pool else { continue };
                let ip = status
                    .interfaces
                    .iter()
                    .find(|i| i.name.as_deref() == Some(a.interface.as_str()))
                    .and_then(|i| i.ip_address.as_deref())
                    .and_then(|ip| ip.parse::<IpAddr>().ok());
                if let Some(ip) = ip {
                    ipam.held.entry(pool).or_default().insert(ip, key(vmi));
                }
            }
        }
        // Addresses Kube-OVN records as in use by anything else (pods, other VMs).
        for record in &snapshot.ips {
            let owner = (record.spec.namespace.clone(), record.spec.pod_name.clone());
            for ip in record.addresses() {
                ipam.held
                    .entry(Pool::Subnet(record.spec.subnet.clone()))
                    .or_default()
                    .entry(ip)
                    .or_insert_with(|| owner.clone());
            }
        }
        // Fixed addresses are reserved before any dynamic allocation, oldest instance
        // first, so a pool never hands out an address an instance asked for by name.
        let mut order: Vec<&VirtualMachineInstance> = snapshot
            .vmis
            .iter()
            .filter(|v| v.metadata.deletion_timestamp.is_none())
            .collect();
        order.sort_by(|a, b| {
            (a.metadata.creation_timestamp.as_ref(), a.name_any())
                .cmp(&(b.metadata.creation_timestamp.as_ref(), b.name_any()))
        });
        for vmi in order {
            let Ok(attachments) = attachments(vmi, &snapshot.subnets) else {
                continue;
            };
            for a in attachments {
                let (Some(pool), Some(ip)) = (a.pool, a.fixed.and_then(|f| f.parse().ok())) else {
                    continue;
                };
                ipam.held
                    .entry(pool)
                    .or_default()
                    .entry(ip)
                    .or_insert_with(|| key(vmi));
            }
        }
        ipam
    }

    /// The CIDR and exclusions of a pool.
    fn range(&self, pool: &Pool) -> Result<(Cidr, Vec<IpRange>), (&'static str, String)> {
        match pool {
            Pool::Pod => {
                let gw = ipam::first_usable(&self.settings.pod_cidr);
                Ok((self.settings.pod_cidr, vec![IpRange { start: gw, end: gw }]))
            }
            Pool::Subnet(name) => {
                let subnet = self.subnets.get(name).ok_or_else(|| {
                    (
                        "SubnetNotFound",
                        format!("Kube-OVN subnet {name:?} not found"),
                    )
                })?;
                let ready = subnet.status.as_ref().is_some_and(|s| {
                    mni_kubeovn::v1::is_condition_true(&s.conditions, mni_kubeovn::v1::READY)
                });
                if !ready {
                    return Err((
                        "SubnetNotReady",
                        format!("Kube-OVN subnet {name:?} is not ready"),
                    ));
                }
                let block = ipam::CidrBlock::parse(&subnet.spec.cidr_block)
                    .map_err(|e| ("SubnetInvalid", format!("subnet {name:?}: {e}")))?;
                let v4 = block.v4.ok_or_else(|| {
                    ("SubnetInvalid", format!("subnet {name:?} has no IPv4 CIDR"))
                })?;
                let mut excluded =
                    ipam::parse_exclude_ips(&subnet.spec.exclude_ips).unwrap_or_default();
                let gateway = subnet
                    .spec
                    .gateway
                    .clone()
                    .filter(|g| !g.is_empty())
                    .unwrap_or_else(|| ipam::default_gateway(&block));
                excluded.extend(gateway.split(',').filter_map(|g| IpRange::parse(g).ok()));
                Ok((v4, excluded))
            }
        }
    }

    /// Allocates (or confirms) an address for `owner` in `pool`.
    fn allocate(
        &mut self,
        owner: &Key,
        pool: &Pool,
        fixed: Option<&str>,
    ) -> Result<IpAddr, (&'static str, String)> {
        let (cidr, excluded) = self.range(pool)?;
        let held = self.held.entry(pool.clone()).or_default();
        let ip = match fixed {
            Some(text) => {
                let ip: IpAddr = text.parse().map_err(|_| {
                    (
                        "InvalidIPAddress",
                        format!("{IP_ADDRESS}: {text:?} is not an IP address"),
                    )
                })?;
                if !cidr.contains(ip) {
                    return Err((
                        "IPOutOfRange",
                        format!("IP {ip} is not in the CIDR {cidr} of {pool:?}"),
                    ));
                }
                if excluded.iter().any(|r| r.contains(ip)) {
                    return Err((
                        "IPExcluded",
                        format!("IP {ip} is excluded (gateway or excludeIps) in {pool:?}"),
                    ));
                }
                if let Some(other) = held.get(&ip).filter(|o| *o != owner) {
                    return Err((
                        "IPConflict",
                        format!(
                            "IP {ip} is already in use by VirtualMachineInstance {}/{}",
                            other.0, other.1
                        ),
                    ));
                }
                ip
            }
            None => {
                if let Some((ip, _)) = held.iter().find(|(_, o)| *o == owner) {
                    *ip
                } else {
                    let in_use: BTreeSet<IpAddr> = held.keys().copied().collect();
                    ipam::next_free(&cidr, &excluded, &in_use).ok_or_else(|| {
                        (
                            "NoAvailableAddress",
                            format!("no free address left in {pool:?} ({cidr})"),
                        )
                    })?
                }
            }
        };
        held.insert(ip, owner.clone());
        Ok(ip)
    }
}

/// The label on the `IP` records the simulator writes (and alone deletes).
const IP_RECORD_LABEL: (&str, &str) = ("mni.dev/simulated-by", "kubevirt");

/// Kube-OVN's `IP` records of the subnet addresses running instances hold — named
/// `<vm>.<namespace>` (plus `.<provider>` for a Multus attachment), as Kube-OVN names a
/// KubeVirt VM's — so the fake Kube-OVN counts them in the Subnet's `v4usingIPs`; records of
/// instances that are gone are deleted.
fn plan_ip_records(snapshot: &Snapshot, settings: &Settings, writes: &mut Vec<Write>) {
    let existing: BTreeMap<String, &Ip> =
        snapshot.ips.iter().map(|ip| (ip.name_any(), ip)).collect();
    let mut wanted = BTreeSet::new();
    for vmi in &snapshot.vmis {
        if vmi.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(status) = &vmi.status else { continue };
        let Ok(attachments) = attachments(vmi, &snapshot.subnets) else {
            continue;
        };
        let (namespace, name) = key(vmi);
        for a in attachments {
            let Some(Pool::Subnet(subnet)) = &a.pool else {
                continue;
            };
            let Some(iface) = status
                .interfaces
                .iter()
                .find(|i| i.name.as_deref() == Some(a.interface.as_str()))
            else {
                continue;
            };
            let Some(ip) = iface.ip_address.clone() else {
                continue;
            };
            let record = if a.provider == "ovn" {
                format!("{name}.{namespace}")
            } else {
                format!("{name}.{namespace}.{}", a.provider)
            };
            wanted.insert(record.clone());
            if existing.contains_key(&record) {
                continue;
            }
            writes.push(Write::Create {
                kind: Kind::Ip,
                namespace: String::new(),
                body: json!({
                    "apiVersion": "kubeovn.io/v1",
                    "kind": "IP",
                    "metadata": {
                        "name": record,
                        "labels": {
                            IP_RECORD_LABEL.0: IP_RECORD_LABEL.1,
                            "ovn.kubernetes.io/subnet": subnet,
                        },
                    },
                    "spec": {
                        "podName": name,
                        "namespace": namespace,
                        "subnet": subnet,
                        "nodeName": status.node_name.clone().unwrap_or_else(|| settings.node_name.clone()),
                        "ipAddress": ip,
                        "v4IpAddress": ip,
                        "macAddress": iface.mac.clone().unwrap_or_default(),
                        "podType": "VirtualMachine",
                    },
                }),
            });
        }
    }
    for (name, record) in existing {
        let ours =
            record.labels().get(IP_RECORD_LABEL.0).map(String::as_str) == Some(IP_RECORD_LABEL.1);
        if ours && !wanted.contains(&name) && record.metadata.deletion_timestamp.is_none() {
            writes.push(Write::Delete {
                kind: Kind::Ip,
                namespace: String::new(),
                name,
            });
        }
    }
}

/// A stable, locally administered MAC address for an address: `02:00:` and its last four
/// bytes.
fn mac_for(ip: IpAddr) -> String {
    let bytes: Vec<u8> = match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets()[12..].to_vec(),
    };
    format!(
        "02:00:{:02x}:{:02x}:{:02x}:{:02x}",
        bytes[0], bytes[1], bytes[2], bytes[3]
    )
}

// ---------------------------------------------------------------------------------------
// virt-controller and virt-handler

/// Why the simulated scheduler cannot place `vmi`: kube-scheduler's message.
fn unschedulable(vmi: &VirtualMachineInstance, node: Option<&NodeInfo>) -> Option<String> {
    let Some(node) = node else {
        return Some("0/0 nodes are available: no node to run virtual machines on.".into());
    };
    let domain = &vmi.spec.domain;
    let requests = domain
        .resources
        .as_ref()
        .map(|r| r.requests.clone())
        .unwrap_or_default();
    let mut reasons = Vec::new();
    let cpu = match requests.get("cpu") {
        Some(q) => match quantity::value(q) {
            Ok(v) => v,
            Err(e) => return Some(format!("spec.domain.resources.requests.cpu: {e}")),
        },
        #[allow(clippy::cast_precision_loss, reason = "vCPU counts are small")]
        None => domain.cpu.clone().unwrap_or_default().vcpus() as f64,
    };
    if cpu > node.cpu {
        reasons.push("1 Insufficient cpu");
    }
    let memory = requests
        .get("memory")
        .map(|q| ("spec.domain.resources.requests.memory", q))
        .or_else(|| {
            domain
                .memory
                .as_ref()
                .and_then(|m| m.guest.as_ref())
                .map(|q| ("spec.domain.memory.guest", q))
        });
    if let Some((field, q)) = memory {
        match quantity::value(q) {
            Ok(v) if v > node.memory => reasons.push("1 Insufficient memory"),
            Ok(_) => {}
            Err(e) => return Some(format!("{field}: {e}")),
        }
    }
    if vmi
        .spec
        .node_selector
        .iter()
        .any(|(k, v)| node.labels.get(k) != Some(v))
    {
        reasons.push("1 node(s) didn't match Pod's node affinity/selector");
    }
    (!reasons.is_empty()).then(|| {
        format!(
            "0/1 nodes are available: {}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            reasons.join(", ")
        )
    })
}

/// The pull error of the instance's first container disk on a host under `.invalid`.
fn image_pull_failure(vmi: &VirtualMachineInstance) -> Option<String> {
    vmi.spec.volumes.iter().find_map(|v| {
        let image = &v.container_disk.as_ref()?.image;
        let host = host_of(image);
        (host.contains('.') && host.ends_with(".invalid")).then(|| {
            format!("failed to pull image {image:?}: dial tcp: lookup {host}: no such host")
        })
    })
}

fn plan_instance(
    vmi: &VirtualMachineInstance,
    snapshot: &Snapshot,
    ipam: &mut Ipam<'_>,
    now: &Time,
    writes: &mut Vec<Write>,
) {
    if vmi.metadata.deletion_timestamp.is_some() {
        return;
    }
    let current = vmi.status.clone().unwrap_or_default();
    let existing = current.conditions.as_slice();
    let mut desired = current.clone();
    let phase = current.phase;
    let uid = vmi.uid().unwrap_or_default();
    let launcher = snapshot.launchers.iter().find(|p| {
        p.labels().get(CREATED_BY_LABEL) == Some(&uid)
            && p.namespace() == vmi.namespace()
            && p.metadata.deletion_timestamp.is_none()
    });
    let enter = |desired: &mut VirtualMachineInstanceStatus, phase: InstancePhase| {
        desired.phase = Some(phase);
        desired.phase_transition_timestamps.push(PhaseTransition {
            phase: Some(phase),
            phase_transition_timestamp: Some(now.clone()),
        });
    };
    match phase {
        None | Some(InstancePhase::Unknown) => enter(&mut desired, InstancePhase::Pending),
        Some(InstancePhase::Pending) => {
            enter(&mut desired, InstancePhase::Scheduling);
            desired.conditions = vec![kv_condition(
                existing,
                crate::v1::READY,
                false,
                "GuestNotRunning",
                "Guest VM is not reported as running",
                now,
            )];
        }
        Some(InstancePhase::Scheduling) => match unschedulable(vmi, snapshot.node.as_ref()) {
            Some(message) => {
                desired.conditions = vec![
                    kv_condition(
                        existing,
                        crate::v1::READY,
                        false,
                        "GuestNotRunning",
                        "Guest VM is not reported as running",
                        now,
                    ),
                    kv_condition(
                        existing,
                        crate::v1::POD_SCHEDULED,
                        false,
                        "Unschedulable",
                        &message,
                        now,
                    ),
                ];
            }
            None => {
                enter(&mut desired, InstancePhase::Scheduled);
                desired.node_name = snapshot.node.as_ref().map(|n| n.name.clone());
                desired.qos_class = Some("Burstable".into());
                desired.conditions = vec![
                    kv_condition(
                        existing,
                        crate::v1::READY,
                        false,
                        "GuestNotRunning",
                        "Guest VM is not reported as running",
                        now,
                    ),
                    kv_condition(existing, crate::v1::POD_SCHEDULED, true, "", "", now),
                ];
            }
        },
        Some(InstancePhase::Scheduled) => {
            let ready_false = |reason: &str, message: &str| {
                vec![
                    kv_condition(existing, crate::v1::READY, false, reason, message, now),
                    kv_condition(existing, crate::v1::POD_SCHEDULED, true, "", "", now),
                ]
            };
            if let Some(message) = image_pull_failure(vmi) {
                desired.conditions = ready_false("ErrImagePull", &message);
            } else if launcher.is_none() {
                // The guest starts in its virt-launcher pod, created below.
            } else {
                match interfaces(vmi, snapshot, ipam) {
                    Err((reason, message)) => {
                        desired.conditions = ready_false(reason, &message);
                    }
                    Ok(interfaces) => {
                        enter(&mut desired, InstancePhase::Running);
                        desired.interfaces = interfaces;
                        desired.conditions = vec![
                            kv_condition(existing, crate::v1::READY, true, "", "", now),
                            kv_condition(existing, crate::v1::POD_SCHEDULED, true, "", "", now),
                            kv_condition(existing, "AgentConnected", true, "", "", now),
                        ];
                    }
                }
            }
        }
        Some(_) => {}
    }
    let placed = matches!(
        desired.phase,
        Some(InstancePhase::Scheduled | InstancePhase::Running)
    );
    match launcher {
        None if placed => {
            writes.push(Write::Create {
                kind: Kind::Pod,
                namespace: vmi.namespace().unwrap_or_default(),
                body: launcher_for(vmi, snapshot),
            });
        }
        Some(pod) => {
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                desired.active_pods = [(pod.uid().unwrap_or_default(), node)].into();
            }
            let running = desired.phase == Some(InstancePhase::Running);
            let ip = desired.interfaces.iter().find_map(|i| i.ip_address.clone());
            let pod_status = launcher_status(pod, running, ip.as_deref(), now);
            push_status(
                writes,
                Kind::Pod,
                pod,
                &pod.status.clone().unwrap_or_default(),
                &pod_status,
                false,
            );
        }
        None => {}
    }
    let step = desired.phase != phase;
    push_status(
        writes,
        Kind::VirtualMachineInstance,
        vmi,
        &current,
        &desired,
        step,
    );
}

/// virt-controller's virt-launcher pod for an instance, bound to the simulated node: the
/// instance's annotations (Kube-OVN reads its attachments from them), its claims as volumes
/// (so `WaitForFirstConsumer` claims see their consumer), owned by the instance.
fn launcher_for(vmi: &VirtualMachineInstance, snapshot: &Snapshot) -> Value {
    let name = vmi.name_any();
    let uid = vmi.uid().unwrap_or_default();
    let suffix: String = uid
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(5)
        .collect::<String>()
        .to_ascii_lowercase();
    let mut annotations = vmi.annotations().clone();
    annotations.insert("kubevirt.io/domain".into(), name.clone());
    let claims: Vec<Value> = vmi
        .spec
        .volumes
        .iter()
        .filter_map(|v| {
            let claim = v.data_volume.as_ref().map(|d| d.name.clone()).or_else(|| {
                v.persistent_volume_claim
                    .as_ref()
                    .map(|p| p.claim_name.clone())
            })?;
            Some(json!({"name": v.name, "persistentVolumeClaim": {"claimName": claim}}))
        })
        .collect();
    let requests = vmi
        .spec
        .domain
        .resources
        .as_ref()
        .map(|r| to_json(&r.requests))
        .unwrap_or_else(|| json!({}));
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("virt-launcher-{name}-{suffix}"),
            "namespace": vmi.namespace(),
            "labels": {
                LAUNCHER_LABEL.0: LAUNCHER_LABEL.1,
                CREATED_BY_LABEL: uid,
                VM_NAME_LABEL: name,
            },
            "annotations": annotations,
            "ownerReferences": [owner_reference(vmi)],
        },
        "spec": {
            "nodeName": snapshot.node.as_ref().map(|n| n.name.clone()),
            "restartPolicy": "Never",
            "containers": [{
                "name": "compute",
                "image": "quay.io/kubevirt/virt-launcher:v1.6.0",
                "resources": {"requests": requests},
            }],
            "volumes": claims,
        },
    })
}

/// The status the simulated kubelet reports for a virt-launcher pod: `Running` and ready
/// with the instance's first address once the instance runs, `Pending` before.
fn launcher_status(
    pod: &Pod,
    running: bool,
    ip: Option<&str>,
    now: &Time,
) -> k8s_openapi::api::core::v1::PodStatus {
    let current = pod.status.clone().unwrap_or_default();
    let since = |type_: &str, status: &str| {
        current
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == type_ && c.status == status)
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.clone())
    };
    let ready = if running { "True" } else { "False" };
    let mut status = json!({
        "phase": if running { "Running" } else { "Pending" },
        "qosClass": "Burstable",
        "hostIP": "10.245.0.1",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": since("PodScheduled", "True")},
            {"type": "Ready", "status": ready, "lastTransitionTime": since("Ready", ready)},
        ],
    });
    if running {
        status["startTime"] = json!(current.start_time.clone().unwrap_or_else(|| now.clone()));
        if let Some(ip) = ip {
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
        }
    }
    serde_json::from_value(status).unwrap_or_default()
}

/// The instance's interfaces with their addresses, or why one cannot get an address.
fn interfaces(
    vmi: &VirtualMachineInstance,
    snapshot: &Snapshot,
    ipam: &mut Ipam<'_>,
) -> Result<Vec<InstanceInterface>, (&'static str, String)> {
    let attachments = attachments(vmi, &snapshot.subnets).map_err(|m| ("InvalidNetwork", m))?;
    let owner = key(vmi);
    let mut out = Vec::new();
    for (i, a) in attachments.iter().enumerate() {
        let ip = match &a.pool {
            Some(pool) => Some(ipam.allocate(&owner, pool, a.fixed.as_deref())?),
            None => None,
        };
        let mac = vmi
            .spec
            .domain
            .devices
            .interfaces
            .iter()
            .find(|x| x.name == a.interface)
            .and_then(|x| x.mac_address.clone())
            .or_else(|| ip.map(mac_for));
        out.push(InstanceInterface {
            name: Some(a.interface.clone()),
            ip_address: ip.map(|ip| ip.to_string()),
            ip_addresses: ip.map(|ip| ip.to_string()).into_iter().collect(),
            mac,
            interface_name: Some(format!("eth{i}")),
            info_source: Some("domain, guest-agent".into()),
        });
    }
    Ok(out)
}

/// The DataVolumes a VM's instance needs: its templates and its `dataVolume` volumes.
fn data_volume_names(vm: &VirtualMachine) -> BTreeSet<String> {
    vm.spec
        .data_volume_templates
        .iter()
        .filter_map(|t| t.metadata.name.clone())
        .chain(
            vm.spec
                .template
                .spec
                .volumes
                .iter()
                .filter_map(|v| v.data_volume.as_ref().map(|d| d.name.clone())),
        )
        .collect()
}

fn plan_virtual_machine(
    vm: &VirtualMachine,
    dvs: &BTreeMap<Key, &DataVolume>,
    vmis: &BTreeMap<Key, &VirtualMachineInstance>,
    now: &Time,
    writes: &mut Vec<Write>,
) {
    let (namespace, name) = key(vm);
    let current = vm.status.clone().unwrap_or_default();
    let existing = current.conditions.as_slice();
    let strategy = vm.spec.effective_run_strategy();
    let vmi = vmis.get(&(namespace.clone(), name.clone())).copied();
    let live = vmi.filter(|v| v.metadata.deletion_timestamp.is_none());
    let deleting = vm.metadata.deletion_timestamp.is_some();

    // DataVolume templates: created with the VM, whatever its run strategy.
    for template in &vm.spec.data_volume_templates {
        let Some(dv_name) = template.metadata.name.clone() else {
            continue;
        };
        if deleting || dvs.contains_key(&(namespace.clone(), dv_name.clone())) {
            continue;
        }
        writes.push(Write::Create {
            kind: Kind::DataVolume,
            namespace: namespace.clone(),
            body: json!({
                "apiVersion": format!("{}/{}", cdi::GROUP, cdi::VERSION),
                "kind": "DataVolume",
                "metadata": {
                    "name": dv_name,
                    "namespace": namespace,
                    "labels": template.metadata.labels,
                    "annotations": template.metadata.annotations,
                    "ownerReferences": [owner_reference(vm)],
                },
                "spec": to_json(&template.spec),
            }),
        });
    }
    let mut waiting_for = Vec::new();
    let mut failed = Vec::new();
    for dv_name in data_volume_names(vm) {
        let phase = dvs
            .get(&(namespace.clone(), dv_name.clone()))
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.phase);
        match phase {
            Some(DataVolumePhase::Succeeded) => {}
            Some(DataVolumePhase::Failed) => failed.push(dv_name),
            _ => waiting_for.push(dv_name),
        }
    }
    let volumes_ready = waiting_for.is_empty() && failed.is_empty();

    // Run strategy and start/stop requests.
    let mut requests = current.state_change_requests.clone();
    let mut want = match strategy {
        RunStrategy::Always | RunStrategy::RerunOnFailure | RunStrategy::Once => true,
        RunStrategy::Halted => false,
        RunStrategy::Manual => live.is_some(),
    };
    while let Some(request) = requests.first() {
        match request.action {
            StateChangeAction::Stop if vmi.is_some() => {
                want = false;
                break;
            }
            StateChangeAction::Stop => {
                requests.remove(0);
            }
            StateChangeAction::Start if vmi.is_none() => {
                want = true;
                if volumes_ready {
                    requests.remove(0);
                }
                break;
            }
            StateChangeAction::Start if live.is_some() => {
                requests.remove(0);
            }
            StateChangeAction::Start => {
                want = false;
                break;
            }
        }
    }
    if !deleting {
        if want && vmi.is_none() && volumes_ready {
            writes.push(Write::Create {
                kind: Kind::VirtualMachineInstance,
                namespace: namespace.clone(),
                body: instance_for(vm),
            });
        }
        if !want && live.is_some() {
            writes.push(Write::Delete {
                kind: Kind::VirtualMachineInstance,
                namespace: namespace.clone(),
                name: name.clone(),
            });
        }
    }

    let vmi_status = vmi.and_then(|v| v.status.clone()).unwrap_or_default();
    let vmi_ready = vmi.is_some() && is_condition_true(&vmi_status.conditions, crate::v1::READY);
    let vmi_ready_reason =
        find_condition(&vmi_status.conditions, crate::v1::READY).and_then(|c| c.reason.clone());
    let unschedulable = find_condition(&vmi_status.conditions, crate::v1::POD_SCHEDULED)
        .filter(|c| c.status == "False")
        .cloned();
    let printable = if deleting {
        PrintableStatus::Terminating
    } else if vmi.is_some() && live.is_none() {
        PrintableStatus::Stopping
    } else if !failed.is_empty() {
        PrintableStatus::DataVolumeError
    } else if vmi.is_some() {
        if vmi_status.phase == Some(InstancePhase::Running) {
            PrintableStatus::Running
        } else if unschedulable.is_some() {
            PrintableStatus::ErrorUnschedulable
        } else if vmi_ready_reason.as_deref() == Some("ErrImagePull") {
            PrintableStatus::ErrImagePull
        } else {
            PrintableStatus::Starting
        }
    } else if want && !volumes_ready {
        PrintableStatus::Provisioning
    } else if want {
        PrintableStatus::Starting
    } else {
        PrintableStatus::Stopped
    };
    let mut conditions = Vec::new();
    if vmi.is_none() {
        conditions.push(kv_condition(
            existing,
            crate::v1::READY,
            false,
            "VMINotExists",
            "VMI does not exist",
            now,
        ));
    } else if vmi_ready {
        conditions.push(kv_condition(existing, crate::v1::READY, true, "", "", now));
    } else {
        let message = find_condition(&vmi_status.conditions, crate::v1::READY)
            .and_then(|c| c.message.clone())
            .unwrap_or_default();
        conditions.push(kv_condition(
            existing,
            crate::v1::READY,
            false,
            vmi_ready_reason.as_deref().unwrap_or("GuestNotRunning"),
            &message,
            now,
        ));
    }
    if let Some(c) = unschedulable {
        conditions.push(kv_condition(
            existing,
            crate::v1::POD_SCHEDULED,
            false,
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or(""),
            now,
        ));
    }
    if !data_volume_names(vm).is_empty() {
        conditions.push(if volumes_ready {
            kv_condition(
                existing,
                "DataVolumesReady",
                true,
                "AllDVsReady",
                "All of the VMI's DVs are bound and ready",
                now,
            )
        } else if !failed.is_empty() {
            kv_condition(
                existing,
                "DataVolumesReady",
                false,
                "DataVolumeError",
                &format!("DataVolume(s) failed: {}", failed.join(", ")),
                now,
            )
        } else {
            kv_condition(
                existing,
                "DataVolumesReady",
                false,
                "NotAllDVsReady",
                &format!(
                    "Not all of the VMI's DVs are ready: {}",
                    waiting_for.join(", ")
                ),
                now,
            )
        });
    }
    let desired = VirtualMachineStatus {
        printable_status: Some(printable),
        created: vmi.is_some(),
        ready: vmi_ready,
        conditions,
        run_strategy: Some(strategy),
        observed_generation: vm.metadata.generation,
        desired_generation: vm.metadata.generation,
        state_change_requests: requests,
    };
    push_status(writes, Kind::VirtualMachine, vm, &current, &desired, false);
}

/// The instance virt-controller creates for a VM: same name, the template's metadata and
/// spec, owned by the VM.
fn instance_for(vm: &VirtualMachine) -> Value {
    let meta = vm.spec.template.metadata.clone().unwrap_or_default();
    let mut labels = meta.labels.clone();
    labels.insert(VM_NAME_LABEL.into(), vm.name_any());
    json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "name": vm.name_any(),
            "namespace": vm.namespace(),
            "labels": labels,
            "annotations": meta.annotations,
            "ownerReferences": [owner_reference(vm)],
        },
        "spec": to_json(&vm.spec.template.spec),
    })
}

/// Adds a status write when `desired` differs from `current`: a merge patch of the changed
/// top-level status fields, with `null` for fields that should go.
fn push_status<K: ResourceExt, S: Serialize>(
    writes: &mut Vec<Write>,
    kind: Kind,
    object: &K,
    current: &S,
    desired: &S,
    step: bool,
) {
    let (Value::Object(current), Value::Object(desired)) = (to_json(current), to_json(desired))
    else {
        return;
    };
    let mut patch = Map::new();
    for (k, v) in &desired {
        if current.get(k) != Some(v) {
            patch.insert(k.clone(), v.clone());
        }
    }
    for k in current.keys() {
        if !desired.contains_key(k) {
            patch.insert(k.clone(), Value::Null);
        }
    }
    if !patch.is_empty() {
        let (namespace, name) = key(object);
        writes.push(Write::Status {
            kind,
            namespace,
            name,
            patch: json!({ "status": patch }),
            step,
        });
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests;
