//! [`VirtualMachineInstance`]: one running guest, in one virt-launcher pod on one node.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Condition, DomainSpec, Network, Volume};

/// `v1.VirtualMachineInstanceSpec`: the guest and where it runs. The spec of a
/// [`VirtualMachineInstance`] (`kubevirt.io/v1`, namespaced: one running guest; a
/// VirtualMachine creates one of the same name, owned by it) and of a VM's template.
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubevirt.io",
    version = "v1",
    kind = "VirtualMachineInstance",
    plural = "virtualmachineinstances",
    singular = "virtualmachineinstance",
    shortname = "vmi",
    shortname = "vmis",
    namespaced,
    status = "VirtualMachineInstanceStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A KubeVirt virtual machine instance (mNi's subset of kubevirt.io/v1 VirtualMachineInstance).",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "IP",
        type_ = "string",
        json_path = ".status.interfaces[0].ipAddress"
    ),
    printcolumn(name = "NodeName", type_ = "string", json_path = ".status.nodeName"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct VirtualMachineInstanceSpec {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The virtual hardware.
    pub domain: DomainSpec,
    /// The volumes the domain's disks refer to by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// The networks the domain's interfaces refer to by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<Network>,
    /// Labels a node must carry to run the VMI.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// The guest's host name (default: the VMI's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Seconds the guest gets to shut down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

/// What virt-controller and virt-handler report about an instance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VirtualMachineInstanceStatus {
    /// `Pending`, `Scheduling`, `Scheduled`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<InstancePhase>,
    /// The node the instance runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Why the instance is in its phase (e.g. after a failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The guest's network interfaces and their addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<InstanceInterface>,
    /// `Ready`, `PodScheduled`, `AgentConnected`, ….
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// When each phase was entered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_transition_timestamps: Vec<PhaseTransition>,
    /// The virt-launcher pods of the instance, by UID, and their nodes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub active_pods: BTreeMap<String, String>,
    /// The QoS class of the virt-launcher pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_class: Option<String>,
}

/// `status.phase` of an instance.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum InstancePhase {
    /// Accepted, no pod yet.
    Pending,
    /// The virt-launcher pod is being scheduled.
    Scheduling,
    /// The pod is on a node; the guest is starting.
    Scheduled,
    /// The guest runs.
    Running,
    /// The guest shut down.
    Succeeded,
    /// The guest failed.
    Failed,
    /// Anything else (including values newer than this type).
    #[default]
    #[serde(other)]
    Unknown,
}

/// `v1.VirtualMachineInstanceNetworkInterface`: one guest interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceInterface {
    /// The interface's name in the spec (its network's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The first address of the interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    /// Every address of the interface.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
    /// The MAC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// The interface's name in the guest, e.g. `eth0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_name: Option<String>,
    /// Where the information came from: `domain`, `guest-agent`, `multus-status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info_source: Option<String>,
}

/// `v1.VirtualMachineInstancePhaseTransitionTimestamp`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhaseTransition {
    /// The phase entered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<InstancePhase>,
    /// When.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_transition_timestamp: Option<Time>,
}
