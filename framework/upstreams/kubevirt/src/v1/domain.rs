//! What a VirtualMachineInstance runs: `v1.VirtualMachineInstanceSpec` and the parts of it
//! mNi models — the domain (CPU, memory, resources, disks, interfaces), volumes and networks.
//!
//! A [`VirtualMachine`](super::VirtualMachine)'s `spec.template.spec` and a
//! [`VirtualMachineInstance`](super::VirtualMachineInstance)'s `spec` are both a
//! [`VirtualMachineInstanceSpec`](super::VirtualMachineInstanceSpec), made of these parts.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `v1.DomainSpec`: CPU, memory, resources and devices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct DomainSpec {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The CPU topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// The guest's memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    /// Resource requests and limits of the virt-launcher pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Disks and network interfaces.
    #[serde(default)]
    pub devices: Devices,
}

/// `v1.CPU`: the guest's CPU topology; vCPUs = cores × sockets × threads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Cpu {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Cores per socket (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Sockets (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// Threads per core (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The CPU model, e.g. `host-passthrough`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Cpu {
    /// The number of vCPUs: cores × sockets × threads, each defaulting to 1.
    pub fn vcpus(&self) -> u64 {
        [self.cores, self.sockets, self.threads]
            .iter()
            .map(|n| u64::from(n.unwrap_or(1).max(1)))
            .product()
    }
}

/// `v1.Memory`: the memory the guest sees.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Memory {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The guest's memory (default: the memory request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<Quantity>,
}

/// `v1.ResourceRequirements`: requests and limits (`cpu`, `memory`) of the virt-launcher pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct ResourceRequirements {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Minimum resources, e.g. `memory: 1Gi`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
    /// Maximum resources.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
}

/// `v1.Devices`: the devices mNi models.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Devices {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Disks, each backed by the volume of the same name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<Disk>,
    /// Network interfaces, each on the network of the same name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<Interface>,
}

/// `v1.Disk`: a disk of the guest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Disk {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The name of the volume behind the disk.
    pub name: String,
    /// Attach as a disk (the default when no target is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskTarget>,
    /// Attach as a CD-ROM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdrom: Option<DiskTarget>,
    /// The boot order (lower boots first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_order: Option<u32>,
    /// A serial number shown to the guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
}

/// `v1.DiskTarget` / `v1.CDRomTarget`: the bus a disk is on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct DiskTarget {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// `virtio`, `sata`, `scsi` or `usb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    /// Attach read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readonly: Option<bool>,
}

/// `v1.Interface`: a network interface of the guest; one binding is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Interface {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The name of the network the interface is on.
    pub name: String,
    /// NAT the guest behind the pod's address (the default for the pod network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub masquerade: Option<BindingMethod>,
    /// Bridge the guest onto the pod's interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<BindingMethod>,
    /// The guest interface's MAC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac_address: Option<String>,
    /// The NIC model, e.g. `virtio`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// An interface binding (`masquerade: {}`, `bridge: {}`): no fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BindingMethod {}

/// `v1.Volume`: one volume source, named for its disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Volume {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The volume's name, which a disk refers to.
    pub name: String,
    /// A disk image shipped in a container image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_disk: Option<ContainerDiskSource>,
    /// A CDI DataVolume in the VMI's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_volume: Option<DataVolumeSource>,
    /// A PersistentVolumeClaim in the VMI's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<PersistentVolumeClaimSource>,
    /// cloud-init NoCloud user data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_init_no_cloud: Option<CloudInitSource>,
    /// cloud-init ConfigDrive user data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_init_config_drive: Option<CloudInitSource>,
}

/// `v1.ContainerDiskSource`: a disk image in a container image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct ContainerDiskSource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The image, e.g. `quay.io/kubevirt/cirros-container-disk-demo`.
    pub image: String,
    /// `Always`, `IfNotPresent` or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    /// The Secret to pull the image with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secret: Option<String>,
    /// The path of the disk image inside the container image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `v1.DataVolumeSource`: a DataVolume by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct DataVolumeSource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The DataVolume's name.
    pub name: String,
    /// Whether the volume can be hot-plugged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotpluggable: Option<bool>,
}

/// `v1.PersistentVolumeClaimVolumeSource`: a claim by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct PersistentVolumeClaimSource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The claim's name.
    pub claim_name: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// `v1.CloudInitNoCloudSource` / `v1.CloudInitConfigDriveSource`: user data inline, base64
/// or from a Secret (key `userdata` or `userData`), and optional network data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct CloudInitSource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The Secret holding the user data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// The user data, inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// The user data, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data_base64: Option<String>,
    /// The Secret holding the network data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_data_secret_ref: Option<LocalObjectReference>,
    /// The network data, inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_data: Option<String>,
    /// The network data, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_data_base64: Option<String>,
}

/// `k8s.io/api/core/v1.LocalObjectReference`: an object in the same namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocalObjectReference {
    /// The object's name.
    #[serde(default)]
    pub name: String,
}

/// `v1.Network`: where an interface is connected; one source is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct Network {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The network's name, which an interface refers to.
    pub name: String,
    /// The pod network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<PodNetwork>,
    /// A Multus NetworkAttachmentDefinition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multus: Option<MultusNetwork>,
}

/// `v1.PodNetwork`: the pod network, optionally with the guest's CIDR behind masquerade.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct PodNetwork {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The guest's IPv4 CIDR behind masquerade.
    #[serde(
        default,
        rename = "vmNetworkCIDR",
        skip_serializing_if = "Option::is_none"
    )]
    pub vm_network_cidr: Option<String>,
}

/// `v1.MultusNetwork`: a NetworkAttachmentDefinition, `name` or `namespace/name`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct MultusNetwork {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The NetworkAttachmentDefinition: `name` (the VMI's namespace) or `namespace/name`.
    pub network_name: String,
    /// Whether this network replaces the pod network as the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

impl MultusNetwork {
    /// The `(namespace, name)` of the NetworkAttachmentDefinition, `namespace` defaulting
    /// to `vmi_namespace`.
    pub fn attachment(&self, vmi_namespace: &str) -> (String, String) {
        match self.network_name.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (vmi_namespace.to_string(), self.network_name.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcpus_multiply_the_topology() {
        assert_eq!(Cpu::default().vcpus(), 1);
        let cpu = Cpu {
            cores: Some(4),
            sockets: Some(2),
            ..Cpu::default()
        };
        assert_eq!(cpu.vcpus(), 8);
    }

    #[test]
    fn multus_names_default_to_the_vmi_namespace() {
        let net = MultusNetwork {
            network_name: "tenant-net".into(),
            ..MultusNetwork::default()
        };
        assert_eq!(net.attachment("ns1"), ("ns1".into(), "tenant-net".into()));
        let net = MultusNetwork {
            network_name: "other/tenant-net".into(),
            ..MultusNetwork::default()
        };
        assert_eq!(net.attachment("ns1"), ("other".into(), "tenant-net".into()));
    }
}
