//! The pure half of the fake virt-controller and CDI: from a snapshot of every object, the
//! writes that move each one step towards what KubeVirt and CDI would make of it.
//!
//! [`plan`] is the whole of it; the runtime (`super`) lists, calls [`plan`], paces the
//! [`Write::Status`] writes marked `step` and sends the rest at once. The rules live in
//! `import` (DataVolumes), `addresses` (pools, allocation, Kube-OVN `IP` records) and `virt`
//! (VMs, instances, launcher pods). Nothing here does IO, so every rule has a unit test (in
//! `tests`).

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

mod addresses;
mod import;
mod virt;

use addresses::{Ipam, plan_ip_records};
use import::plan_data_volume;
use virt::{plan_instance, plan_virtual_machine};

#[cfg(test)]
mod tests;
