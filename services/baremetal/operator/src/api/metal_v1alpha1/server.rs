// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `Server` custom resource (`metal.mni.dev/v1alpha1`, namespaced): a tenant's physical
//! server, which `ServerReconciler` hands to Metal3 as a `metal3.io/v1alpha1` BareMetalHost
//! after it pre-flighted the server's BMC over Redfish.
//!
//! The kind is not called `BareMetalHost` and has the short name `srv`: Metal3's
//! `baremetalhosts.metal3.io` (short names `bmh`, `bmhost`) is installed beside it.
//!
//! The spec is checked twice with the same messages: by the API server, through the CEL rules
//! (`x-kubernetes-validations`) in the schema below, and by [`validate`](super::validate) in
//! Rust, which the controller runs before it touches Metal3 and the backend runs before it
//! writes. Every message starts with the field it is about (`bmc.address: …`).

use std::collections::BTreeMap;

use kube::CustomResource;
use mni_core::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tenant's bare-metal server: its BMC and the credentials to it, the MAC it boots from,
/// whether it should be powered on, the image to provision and how, and the labels Cluster
/// API Metal3's host selectors match.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "metal.mni.dev",
    version = "v1alpha1",
    kind = "Server",
    plural = "servers",
    shortname = "srv",
    namespaced,
    status = "ServerStatus",
    printcolumn = r#"{"name":"State","type":"string","jsonPath":".status.state"}"#,
    printcolumn = r#"{"name":"Power","type":"string","jsonPath":".status.power"}"#,
    printcolumn = r#"{"name":"Vendor","type":"string","jsonPath":".status.hardware.manufacturer"}"#,
    printcolumn = r#"{"name":"Model","type":"string","jsonPath":".status.hardware.model"}"#,
    printcolumn = r#"{"name":"CPUs","type":"integer","jsonPath":".status.hardware.cpus"}"#,
    printcolumn = r#"{"name":"Memory","type":"string","jsonPath":".status.hardware.memory"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status","priority":1}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.bootMACAddress.matches('^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$')",
        "messageExpression": "'bootMACAddress: ' + self.bootMACAddress + ' is not a MAC address (six hex pairs separated by colons)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".bootMACAddress"
    },
    {
        "rule": "!has(oldSelf.image) || self.bmc.address == oldSelf.bmc.address",
        "message": "bmc.address: cannot change while the server has an image; deprovision it first (remove spec.image)",
        "reason": "FieldValueForbidden",
        "fieldPath": ".bmc.address"
    },
    {
        "rule": "!has(oldSelf.image) || !has(self.image) || self.image.url == oldSelf.image.url",
        "message": "image.url: cannot change the image of a provisioned server; deprovision it first (remove spec.image)",
        "reason": "FieldValueForbidden",
        "fieldPath": ".image.url"
    }
]))]
pub struct ServerSpec {
    /// The server's BMC and the Secret with the credentials to it.
    pub bmc: Bmc,
    /// The MAC address of the NIC the server boots from; the pre-flight checks that the
    /// BMC's system has it.
    #[serde(rename = "bootMACAddress")]
    #[schemars(length(max = 17))]
    pub boot_mac_address: String,
    /// Whether the server should be powered on.
    #[serde(default)]
    pub online: bool,
    /// The image to provision; removing it deprovisions the server (the disk is cleaned and
    /// the server returns to `available`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// A Secret (key `userData`) with the cloud-init user data for the provisioned image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<SecretReference>,
    /// Which disk to install the image on, as Metal3's root device hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<RootDeviceHints>,
    /// Labels put on the BareMetalHost, for Cluster API Metal3's host selectors
    /// (`Metal3MachineTemplate` `hostSelector.matchLabels`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub host_labels: BTreeMap<String, String>,
}

/// A BMC: its address as Metal3 parses it and the Secret with its credentials.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.address.matches('^(ipmi|libvirt|idrac|irmc|ilo4|ilo5|ibmc|redfish|redfish-virtualmedia|redfish-uefihttp|idrac-redfish|idrac-virtualmedia|ilo5-redfish|ilo5-virtualmedia)(\\\\+https?)?://[^/]+')",
        "messageExpression": "'bmc.address: ' + self.address + ' is not a BMC address Metal3 supports (SCHEME://HOST[:PORT][/PATH] with a scheme such as redfish, redfish+http, redfish-virtualmedia, idrac-redfish, ilo5-redfish or ipmi)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".address"
    }
]))]
pub struct Bmc {
    /// The BMC's address: `redfish://`, `redfish+http(s)://`, `redfish-virtualmedia://`,
    /// `idrac-redfish://`, `ilo5-redfish://`, … `HOST[:PORT][/redfish/v1/Systems/ID]`, or
    /// `ipmi://HOST[:PORT]` (not pre-flighted: mNi speaks Redfish only).
    #[schemars(length(min = 1, max = 512))]
    pub address: String,
    /// A Secret in the server's namespace with the keys `username` and `password`.
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    )]
    pub credentials_name: String,
    /// Skip verifying the BMC's TLS certificate (self-signed BMCs).
    #[serde(default)]
    pub disable_certificate_verification: bool,
}

/// The image Metal3 writes to the root disk.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.url.matches('^https?://[^/]+')",
        "messageExpression": "'image.url: ' + self.url + ' is not an http:// or https:// URL'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".url"
    },
    {
        "rule": "(has(self.format) && self.format == 'live-iso') || (has(self.checksum) && self.checksum != '')",
        "message": "image.checksum: required (the image's checksum, or the URL of a checksum file) unless format is live-iso",
        "reason": "FieldValueRequired",
        "fieldPath": ".checksum"
    },
    {
        "rule": "!has(self.checksumType) || self.checksumType in ['md5', 'sha256', 'sha512', 'auto']",
        "messageExpression": "'image.checksumType: unknown checksum type ' + self.checksumType + '; choose one of md5, sha256, sha512, auto'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".checksumType"
    },
    {
        "rule": "!has(self.format) || self.format in ['raw', 'qcow2', 'vdi', 'vmdk', 'live-iso']",
        "messageExpression": "'image.format: unknown format ' + self.format + '; choose one of raw, qcow2, vdi, vmdk, live-iso'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".format"
    }
]))]
pub struct Image {
    /// Where the image is downloaded from (http or https).
    #[schemars(length(max = 2048))]
    pub url: String,
    /// The image's checksum, or the URL of a file with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048))]
    pub checksum: Option<String>,
    /// `md5`, `sha256`, `sha512` or `auto` (the default: by the checksum's length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub checksum_type: Option<String>,
    /// `raw`, `qcow2`, `vdi`, `vmdk` or `live-iso` (booted, not written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub format: Option<String>,
}

/// A Secret in the server's namespace.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    /// The Secret's name.
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    )]
    pub name: String,
}

/// Metal3's root device hints: the disk whose properties match every hint given.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.deviceName) || self.deviceName.startsWith('/dev/')",
        "messageExpression": "'rootDeviceHints.deviceName: ' + self.deviceName + ' is not a device path (/dev/…)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".deviceName"
    },
    {
        "rule": "!has(self.hctl) || self.hctl.matches('^[0-9]+:[0-9]+:[0-9]+:[0-9]+$')",
        "messageExpression": "'rootDeviceHints.hctl: ' + self.hctl + ' is not Host:Channel:Target:Lun (e.g. 0:0:0:0)'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".hctl"
    },
    {
        "rule": "!has(self.minSizeGigabytes) || self.minSizeGigabytes >= 0",
        "messageExpression": "'rootDeviceHints.minSizeGigabytes: %d is negative'.format([self.minSizeGigabytes])",
        "reason": "FieldValueInvalid",
        "fieldPath": ".minSizeGigabytes"
    }
]))]
pub struct RootDeviceHints {
    /// A Linux device path (`/dev/sda`) or a by-path link (`/dev/disk/by-path/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub device_name: Option<String>,
    /// The SCSI address, `Host:Channel:Target:Lun`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub hctl: Option<String>,
    /// A substring of the disk's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub model: Option<String>,
    /// A substring of the disk's vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub vendor: Option<String>,
    /// The disk's serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub serial_number: Option<String>,
    /// The smallest size, in gigabytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size_gigabytes: Option<i64>,
    /// The disk's World Wide Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub wwn: Option<String>,
    /// The disk's WWN with its vendor extension appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub wwn_with_extension: Option<String>,
    /// The disk's WWN vendor extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub wwn_vendor_extension: Option<String>,
    /// A spinning disk (`true`) or a solid-state one (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// What the operator, the BMC and Metal3 report about a server.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// `Ready`, `Progressing` and `Degraded`, each with the generation it describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Metal3's provisioning state (`registering`, `inspecting`, `available`,
    /// `provisioning`, `provisioned`, `deprovisioning`, …), or the operator's own
    /// `pre-flight` and `invalid` before the host is handed to Metal3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `On` or `Off`, as Metal3 last read it from the BMC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<String>,
    /// Metal3's operational status (`OK`, `discovered`, `error`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operational_status: Option<String>,
    /// The hardware, as inspection found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Hardware>,
    /// Metal3's last error, while there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<HostError>,
    /// The image provisioned (or being provisioned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_image: Option<String>,
    /// The BareMetalHost's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bare_metal_host: Option<String>,
    /// What the last successful BMC pre-flight checked (address, credentials version, boot
    /// MAC); the pre-flight runs again when one of them changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<String>,
    /// The last reboot asked for (with the reboot annotation) and how far it got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reboot: Option<RebootStatus>,
}

/// The annotation that asks for a reboot: a [`RebootRequest`] as JSON. The backend's
/// `POST /api/v1/servers/{name}/reboot` writes it; the operator hands each new request (a new
/// `id`) to Metal3 as the BareMetalHost's `reboot.metal3.io` annotation, once.
pub const REBOOT_ANNOTATION: &str = "metal.mni.dev/reboot";

/// How a reboot powers the server off.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RebootMode {
    /// Ask the OS to shut down (`GracefulShutdown`); Metal3 powers off hard if that fails.
    Soft,
    /// Power off at once (`ForceOff`).
    Hard,
}

impl RebootMode {
    /// `soft` or `hard`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Soft => "soft",
            Self::Hard => "hard",
        }
    }
}

/// A reboot asked for: the value of [`REBOOT_ANNOTATION`].
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RebootRequest {
    /// Unique per request (the backend uses the time it was asked, RFC 3339).
    pub id: String,
    /// How to power off; without one, Metal3 tries soft, then hard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RebootMode>,
}

impl RebootRequest {
    /// A new request, its id the time now (RFC 3339, to the nanosecond).
    #[must_use]
    pub fn now(mode: Option<RebootMode>) -> Self {
        Self {
            id: k8s_openapi::jiff::Timestamp::now().to_string(),
            mode,
        }
    }
}

/// `status.reboot.phase` while Metal3 reboots the server.
pub const REBOOTING: &str = "Rebooting";

/// `status.reboot.phase` once Metal3 has restored power.
pub const REBOOTED: &str = "Completed";

/// `status.reboot.phase` of a request the operator did not pass on (the message says why).
pub const REBOOT_REFUSED: &str = "Refused";

/// The last reboot asked for, and how far it got.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RebootStatus {
    /// The request's id.
    pub id: String,
    /// How it powers off (absent: soft, then hard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RebootMode>,
    /// `Rebooting`, `Completed` or `Refused`.
    pub phase: String,
    /// When the operator handed it to Metal3 (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When Metal3 had powered the server off and on again (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Why a request was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A hardware summary from Metal3's inspection (`status.hardware` of the BareMetalHost).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hardware {
    /// The system's manufacturer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    /// The system's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system's serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// The CPU model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// The CPU architecture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_arch: Option<String>,
    /// How many CPUs (threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<i64>,
    /// The memory, as a quantity (`16Gi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The NICs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<Nic>,
    /// The disks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<Storage>,
}

/// One NIC.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Nic {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its MAC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

/// One disk.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Storage {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<i64>,
    /// Its model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Metal3's last error.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostError {
    /// Metal3's error type (`registration error`, `provisioning error`, …).
    #[serde(rename = "type")]
    pub type_: String,
    /// Metal3's message.
    pub message: String,
}
