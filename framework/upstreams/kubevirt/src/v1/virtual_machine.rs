//! [`VirtualMachine`]: a VM that KubeVirt starts and stops as instances, by its run strategy.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Condition, VirtualMachineInstanceSpec};
use crate::cdi::DataVolumeSpec;

/// A virtual machine: the template of its instances, the DataVolumes it owns and whether it
/// should run (`kubevirt.io/v1` VirtualMachine, namespaced).
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubevirt.io",
    version = "v1",
    kind = "VirtualMachine",
    plural = "virtualmachines",
    singular = "virtualmachine",
    shortname = "vm",
    shortname = "vms",
    namespaced,
    status = "VirtualMachineStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A KubeVirt virtual machine (mNi's subset of kubevirt.io/v1 VirtualMachine).",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Status",
        type_ = "string",
        json_path = ".status.printableStatus"
    ),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct VirtualMachineSpec {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Deprecated upstream in favour of `runStrategy`: `true` is `Always`, `false` `Halted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    /// When the VM runs; exclusive with `running`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_strategy: Option<RunStrategy>,
    /// The instance the VM runs.
    pub template: InstanceTemplate,
    /// DataVolumes created with the VM and owned by it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_volume_templates: Vec<DataVolumeTemplate>,
}

impl VirtualMachineSpec {
    /// The run strategy in force: `runStrategy`, else `running` (`true` → `Always`, `false`
    /// → `Halted`), else `Halted`.
    pub fn effective_run_strategy(&self) -> RunStrategy {
        match (self.run_strategy, self.running) {
            (Some(s), _) => s,
            (None, Some(true)) => RunStrategy::Always,
            (None, _) => RunStrategy::Halted,
        }
    }
}

/// `spec.runStrategy`: when KubeVirt keeps an instance of the VM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RunStrategy {
    /// Always running: an instance that stops is started again.
    Always,
    /// Restarted only when the instance fails.
    RerunOnFailure,
    /// Stopped: no instance.
    #[default]
    Halted,
    /// Started and stopped only by request (`virtctl start/stop`).
    Manual,
    /// Run once to completion.
    Once,
}

/// `spec.template`: the metadata and spec every instance gets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct InstanceTemplate {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Labels and annotations copied to the instance (e.g. Kube-OVN's
    /// `ovn.kubernetes.io/logical_switch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMetadata>,
    /// The instance's spec.
    pub spec: VirtualMachineInstanceSpec,
}

/// The metadata of a template: labels and annotations (and, for a DataVolume template, its
/// name).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct TemplateMetadata {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The name (DataVolume templates only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `v1.DataVolumeTemplateSpec`: a DataVolume the VM creates and owns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct DataVolumeTemplate {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The DataVolume's name (required), labels and annotations.
    #[serde(default)]
    pub metadata: TemplateMetadata,
    /// The DataVolume's spec.
    pub spec: DataVolumeSpec,
}

/// What virt-controller reports about a VM.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VirtualMachineStatus {
    /// One word for people: `Stopped`, `Provisioning`, `Starting`, `Running`, `Stopping`,
    /// `ErrorUnschedulable`, `ErrImagePull`, `DataVolumeError`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printable_status: Option<PrintableStatus>,
    /// Whether an instance exists.
    #[serde(default)]
    pub created: bool,
    /// Whether the instance is ready.
    #[serde(default)]
    pub ready: bool,
    /// `Ready`, `DataVolumesReady`, `PodScheduled`, `Failure`, ….
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The run strategy in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_strategy: Option<RunStrategy>,
    /// The generation the instance was started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The generation virt-controller last saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_generation: Option<i64>,
    /// Pending start and stop requests (what `virtctl start/stop/restart` writes), oldest
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_change_requests: Vec<StateChangeRequest>,
}

/// `v1.VirtualMachineStateChangeRequest`: a start or stop request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StateChangeRequest {
    /// `Start` or `Stop`.
    pub action: StateChangeAction,
    /// The UID of the instance a `Stop` is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Extra data for the request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
}

/// What a [`StateChangeRequest`] asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StateChangeAction {
    /// Start an instance.
    #[default]
    Start,
    /// Stop the instance.
    Stop,
}

/// `status.printableStatus`, upstream's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PrintableStatus {
    /// No instance, none wanted.
    Stopped,
    /// DataVolumes are being imported.
    Provisioning,
    /// The instance is being scheduled and started.
    Starting,
    /// The instance runs.
    Running,
    /// The instance is paused.
    Paused,
    /// The instance is being stopped.
    Stopping,
    /// The VM is being deleted.
    Terminating,
    /// The instance keeps failing.
    CrashLoopBackOff,
    /// The instance is migrating.
    Migrating,
    /// The instance's pod cannot be scheduled.
    ErrorUnschedulable,
    /// A container disk image cannot be pulled.
    ErrImagePull,
    /// A container disk image pull is backing off.
    ImagePullBackOff,
    /// A claim the VM uses does not exist.
    ErrorPvcNotFound,
    /// A DataVolume of the VM failed.
    DataVolumeError,
    /// Claims wait for a consumer.
    WaitingForVolumeBinding,
    /// Anything else (including values newer than this type).
    #[default]
    #[serde(other)]
    Unknown,
}
