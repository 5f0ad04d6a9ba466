// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `Instance` custom resource (`compute.mni.dev/v1alpha1`, namespaced): a tenant's
//! virtual machine, which `InstanceReconciler` maps onto a KubeVirt `VirtualMachine`.
//!
//! The kind is not called `VirtualMachine` and has the short name `inst`: KubeVirt's
//! `virtualmachines.kubevirt.io` (short names `vm`, `vms`) is installed beside it, and
//! `kubectl get vm` keeps meaning KubeVirt's.
//!
//! The spec is checked twice with the same messages: by the API server, through the CEL rules
//! (`x-kubernetes-validations`) in the schema below, and by [`validate`](super::validate) in
//! Rust, which the controller runs before it touches KubeVirt and the backend runs before it
//! writes. Every message starts with the field it is about (`resources.cores: …`).

use kube::CustomResource;
use mni_core::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tenant's virtual machine: its size (an instance type or explicit cores and memory), its
/// boot disk, data disks, cloud-init, run strategy and network.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "compute.mni.dev",
    version = "v1alpha1",
    kind = "Instance",
    plural = "instances",
    shortname = "inst",
    namespaced,
    status = "InstanceStatus",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"IP","type":"string","jsonPath":".status.ipAddress"}"#,
    printcolumn = r#"{"name":"Type","type":"string","jsonPath":".spec.instanceType"}"#,
    printcolumn = r#"{"name":"Node","type":"string","jsonPath":".status.nodeName"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.instanceType) || !has(self.resources)",
        "message": "instanceType: set an instance type or resources, not both",
        "reason": "FieldValueInvalid",
        "fieldPath": ".instanceType"
    },
    {
        "rule": "has(self.instanceType) || has(self.resources)",
        "message": "instanceType: set an instance type (e.g. s1.small) or resources (cores and memory)",
        "reason": "FieldValueRequired",
        "fieldPath": ".instanceType"
    },
    {
        "rule": "!has(self.instanceType) || self.instanceType in ['s1.small', 's1.medium', 's1.large', 'm1.large', 'm1.xlarge']",
        "messageExpression": "'instanceType: unknown instance type ' + self.instanceType + '; choose one of s1.small, s1.medium, s1.large, m1.large, m1.xlarge'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".instanceType"
    },
    {
        "rule": "!has(self.runStrategy) || self.runStrategy in ['Always', 'Halted', 'Manual', 'RerunOnFailure']",
        "messageExpression": "'runStrategy: unknown run strategy ' + self.runStrategy + '; choose one of Always, Halted, Manual, RerunOnFailure'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".runStrategy"
    }
]))]
pub struct InstanceSpec {
    /// An instance type of the catalogue (`s1.small`, `s1.medium`, `s1.large`, `m1.large`,
    /// `m1.xlarge`); exclusive with `resources`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub instance_type: Option<String>,
    /// Explicit cores and memory; exclusive with `instanceType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// The disk the instance boots from.
    pub boot_disk: BootDisk,
    /// Empty disks, each a DataVolume of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub data_disks: Vec<DataDisk>,
    /// Cloud-init user data and SSH authorized keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_init: Option<CloudInit>,
    /// When KubeVirt keeps the instance running: `Always` (the default), `Halted`, `Manual`
    /// or `RerunOnFailure`. Starting sets `Always`, stopping sets `Halted`, as `virtctl` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub run_strategy: Option<String>,
    /// Restart the instance: set to a new value (e.g. the current time) to ask for a restart;
    /// the operator restarts the running instance once per value (`status.restartedAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub restart_requested_at: Option<String>,
    /// The network: the pod network (the default) or a subnet of a VirtualPrivateCloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<InstanceNetwork>,
}

/// Explicit cores and memory.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.cores >= 1 && self.cores <= 32",
        "messageExpression": "'resources.cores: %d is not between 1 and 32'.format([self.cores])",
        "reason": "FieldValueInvalid",
        "fieldPath": ".cores"
    },
    {
        "rule": "self.memory.matches('^[1-9][0-9]{0,6}(Mi|Gi)$')",
        "messageExpression": "'resources.memory: ' + self.memory + ' is not a quantity in Mi or Gi (e.g. 4Gi)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".memory"
    },
    {
        "rule": "!self.memory.matches('^[1-9][0-9]{0,6}(Mi|Gi)$') || (self.memory.endsWith('Gi') ? int(self.memory.substring(0, self.memory.size() - 2)) <= 128 : int(self.memory.substring(0, self.memory.size() - 2)) <= 131072)",
        "messageExpression": "'resources.memory: ' + self.memory + ' is above the limit of 128Gi'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".memory"
    }
]))]
pub struct Resources {
    /// Virtual CPU cores, 1 to 32.
    pub cores: i64,
    /// Guest memory in `Mi` or `Gi`, at most `128Gi`.
    #[schemars(length(max = 16))]
    pub memory: String,
}

/// The boot disk: a container disk image, or an image imported over HTTP(S) into a
/// DataVolume.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.image) || !has(self.http)",
        "message": "bootDisk: set image or http, not both",
        "reason": "FieldValueInvalid",
        "fieldPath": ".image"
    },
    {
        "rule": "has(self.image) || has(self.http)",
        "message": "bootDisk: set image (a container disk image) or http (an HTTP(S) URL to import)",
        "reason": "FieldValueRequired",
        "fieldPath": ".image"
    },
    {
        "rule": "!has(self.image) || self.image != ''",
        "message": "bootDisk.image: must not be empty",
        "reason": "FieldValueRequired",
        "fieldPath": ".image"
    },
    {
        "rule": "!has(self.image) || self.image == '' || self.image.matches('^([a-z0-9.-]+(:[0-9]+)?/)?[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$')",
        "messageExpression": "'bootDisk.image: ' + self.image + ' is not a container image reference (REGISTRY/REPOSITORY:TAG)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".image"
    }
]))]
pub struct BootDisk {
    /// A container disk image (`quay.io/containerdisks/fedora:41`): KubeVirt boots a copy of
    /// it, so writes are lost when the instance stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub image: Option<String>,
    /// An HTTP(S) disk image imported once into a DataVolume that lives as long as the
    /// instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpImport>,
}

/// An HTTP(S) import of a disk image into a DataVolume.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.url.matches('^https?://[^/?#@ ]+([/?#].*)?$')",
        "messageExpression": "'bootDisk.http.url: ' + self.url + ' is not an http:// or https:// URL'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".url"
    },
    {
        "rule": "self.size.matches('^[1-9][0-9]{0,6}(Mi|Gi|Ti)$')",
        "messageExpression": "'bootDisk.http.size: ' + self.size + ' is not a quantity in Mi, Gi or Ti (e.g. 10Gi)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".size"
    }
]))]
pub struct HttpImport {
    /// The image's URL (`http://` or `https://`).
    #[schemars(length(max = 2048))]
    pub url: String,
    /// The DataVolume's size, in `Mi`, `Gi` or `Ti`.
    #[schemars(length(max = 16))]
    pub size: String,
    /// The StorageClass (default: the cluster's default class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub storage_class: Option<String>,
}

/// An empty data disk.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.name.matches('^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$')",
        "messageExpression": "'dataDisks: name ' + self.name + ' is not a DNS label of at most 40 characters'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".name"
    },
    {
        "rule": "self.size.matches('^[1-9][0-9]{0,6}(Mi|Gi|Ti)$')",
        "messageExpression": "'dataDisks: disk ' + self.name + ': size ' + self.size + ' is not a quantity in Mi, Gi or Ti (e.g. 10Gi)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".size"
    }
]))]
pub struct DataDisk {
    /// The disk's name, unique in the instance (a DNS label of at most 40 characters); its
    /// serial number in the guest.
    #[schemars(length(max = 63))]
    pub name: String,
    /// The size, in `Mi`, `Gi` or `Ti`.
    #[schemars(length(max = 16))]
    pub size: String,
    /// The StorageClass (default: the cluster's default class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub storage_class: Option<String>,
}

/// Cloud-init: user data and SSH authorized keys, handed to the guest on a NoCloud disk.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudInit {
    /// User data: a `#cloud-config` document or a script. SSH keys are added to a
    /// `#cloud-config` document (or make one when there is no user data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32768))]
    pub user_data: Option<String>,
    /// A Secret in the instance's namespace whose values are SSH public keys (one or more
    /// per value, one per line), added to the default user's authorized keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_keys: Option<SecretReference>,
}

/// A Secret in the instance's namespace.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    /// The Secret's name.
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
    )]
    pub name: String,
}

/// Where the instance's network interface is.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceNetwork {
    /// A subnet of a VirtualPrivateCloud in the instance's namespace. Without it the
    /// instance is on the pod network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc: Option<VpcAttachment>,
}

/// A subnet of a VirtualPrivateCloud (`network.mni.dev/v1alpha1`, the VPC service), and an
/// optional fixed address in it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.ip) || isIP(self.ip)",
        "messageExpression": "'network.vpc.ip: ' + self.ip + ' is not an IP address'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".ip"
    }
]))]
pub struct VpcAttachment {
    /// The VirtualPrivateCloud's name.
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub name: String,
    /// The subnet's name in the VirtualPrivateCloud's spec.
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub subnet: String,
    /// A fixed address inside the subnet (default: the next free one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub ip: Option<String>,
}

/// What the operator and KubeVirt report about an instance.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceStatus {
    /// `Ready`, `Progressing`, `Degraded` and `RestartRequired`, each with the generation it
    /// describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// KubeVirt's `printableStatus` (`Stopped`, `Provisioning`, `Starting`, `Running`,
    /// `Stopping`, `ErrorUnschedulable`, `ErrImagePull`, `DataVolumeError`, …), or the
    /// operator's own `WaitingForNetwork` and `Invalid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The first address of the first interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    /// The guest's interfaces and their addresses, as KubeVirt reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<InstanceInterface>,
    /// The node the instance runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The cores the instance has (from its instance type or resources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<i64>,
    /// The memory the instance has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The import progress of the boot disk (`45.00%`), while it is imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_disk_progress: Option<String>,
    /// The KubeVirt VirtualMachine's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_machine: Option<String>,
    /// The `spec.restartRequestedAt` last acted upon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarted_at: Option<String>,
}

/// One guest interface.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceInterface {
    /// The interface's name in the VM (`default`).
    pub name: String,
    /// Its first address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    /// Every address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
    /// The MAC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}
