//! [`BareMetalHost`]: a physical server Metal3 manages through its BMC.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::HardwareDetails;

/// A physical server: how to reach its BMC, whether it should be on, and what to provision on
/// it (`metal3.io/v1alpha1` BareMetalHost, namespaced).
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "metal3.io",
    version = "v1alpha1",
    kind = "BareMetalHost",
    plural = "baremetalhosts",
    singular = "baremetalhost",
    shortname = "bmh",
    shortname = "bmhost",
    namespaced,
    status = "BareMetalHostStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A bare-metal server (mNi's subset of metal3.io/v1alpha1 BareMetalHost).",
    printcolumn(
        name = "Status",
        type_ = "string",
        description = "Operational status",
        json_path = ".status.operationalStatus",
        priority = 1
    ),
    printcolumn(
        name = "State",
        type_ = "string",
        description = "Provisioning status",
        json_path = ".status.provisioning.state"
    ),
    printcolumn(
        name = "Consumer",
        type_ = "string",
        description = "Consumer using this host",
        json_path = ".spec.consumerRef.name"
    ),
    printcolumn(
        name = "BMC",
        type_ = "string",
        description = "Address of management controller",
        json_path = ".spec.bmc.address",
        priority = 1
    ),
    printcolumn(
        name = "Online",
        type_ = "string",
        description = "Whether the host is online or not",
        json_path = ".spec.online"
    ),
    printcolumn(
        name = "Error",
        type_ = "string",
        description = "Type of the most recent error",
        json_path = ".status.errorType"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        description = "Time duration since creation of BaremetalHost",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct BareMetalHostSpec {
    /// Upstream fields mNi does not model (`bootMode`, `raid`, `firmware`, `taints`, …), kept as
    /// they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// How to reach the BMC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<Bmc>,
    /// The MAC address of the NIC the host boots from.
    #[serde(
        default,
        rename = "bootMACAddress",
        skip_serializing_if = "Option::is_none"
    )]
    pub boot_mac_address: Option<String>,
    /// Whether the host should be powered on.
    pub online: bool,
    /// The image to provision; removing it deprovisions the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// The Secret with the cloud-init user data for the provisioned host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<SecretReference>,
    /// Which disk to install on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<RootDeviceHints>,
    /// The host was provisioned outside Metal3: it is registered and its power is managed, but
    /// it is neither inspected nor provisioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub externally_provisioned: Option<bool>,
    /// Who uses the host (e.g. a Cluster API Metal3Machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_ref: Option<ObjectReference>,
    /// A human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `spec.bmc`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bmc {
    /// The BMC's URL; its scheme names the driver (`redfish://`, `redfish+http://`,
    /// `redfish-virtualmedia://`, `idrac-redfish://`, `ilo5-redfish://`, `ipmi://`, …).
    pub address: String,
    /// The Secret (same namespace) with the keys `username` and `password`.
    pub credentials_name: String,
    /// Skips TLS certificate verification (self-signed BMC certificates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_certificate_verification: Option<bool>,
}

/// The image checksum algorithms Metal3 accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChecksumType {
    /// MD5.
    Md5,
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
    /// Detected from the checksum's length.
    Auto,
}

/// The image formats Metal3 accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ImageFormat {
    /// A raw disk image.
    #[serde(rename = "raw")]
    Raw,
    /// QEMU copy-on-write.
    #[serde(rename = "qcow2")]
    Qcow2,
    /// VirtualBox.
    #[serde(rename = "vdi")]
    Vdi,
    /// VMware.
    #[serde(rename = "vmdk")]
    Vmdk,
    /// A live ISO booted from virtual media, not written to disk.
    #[serde(rename = "live-iso")]
    LiveIso,
}

/// `spec.image` (and `status.provisioning.image`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Where the image is downloaded from.
    pub url: String,
    /// The checksum, or a URL of a checksum file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// The checksum's algorithm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum_type: Option<ChecksumType>,
    /// The image's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ImageFormat>,
}

/// A reference to a Secret by name and namespace (`userData`, `goodCredentials`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    /// The Secret's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `spec.rootDeviceHints`: which disk to install on; every hint given must match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RootDeviceHints {
    /// A device name such as `/dev/sda` or a `/dev/disk/by-path/` link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// A SCSI address such as `0:0:0:0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hctl: Option<String>,
    /// A substring of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A substring of the vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// The smallest acceptable size in GB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size_gigabytes: Option<i64>,
    /// The World Wide Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
    /// The WWN with its extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn_with_extension: Option<String>,
    /// The WWN's vendor extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn_vendor_extension: Option<String>,
    /// Rotational (`true`) or solid-state (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// `status.operationalStatus`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum OperationalStatus {
    /// Not yet set.
    #[default]
    #[serde(rename = "")]
    Unset,
    /// All is well.
    #[serde(rename = "OK")]
    Ok,
    /// The host lacks BMC details (address or credentials Secret name).
    #[serde(rename = "discovered")]
    Discovered,
    /// The last operation failed: see `errorType` and `errorMessage`.
    #[serde(rename = "error")]
    Error,
    /// Provisioning is delayed by a limit on concurrent provisioning.
    #[serde(rename = "delayed")]
    Delayed,
    /// The host is detached from the provisioner (`baremetalhost.metal3.io/detached`).
    #[serde(rename = "detached")]
    Detached,
    /// Servicing (firmware updates) is in progress.
    #[serde(rename = "servicing")]
    Servicing,
}

/// `status.errorType`: the kind of the last error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ErrorType {
    /// A provisioned host could not be re-registered.
    #[serde(rename = "provisioned registration error")]
    ProvisionedRegistration,
    /// The BMC could not be reached, or refused the credentials, or the details are invalid.
    #[serde(rename = "registration error")]
    Registration,
    /// Inspection failed.
    #[serde(rename = "inspection error")]
    Inspection,
    /// Preparation (cleaning, RAID, firmware settings) failed.
    #[serde(rename = "preparation error")]
    Preparation,
    /// Provisioning (or deprovisioning) failed.
    #[serde(rename = "provisioning error")]
    Provisioning,
    /// A power action failed.
    #[serde(rename = "power management error")]
    PowerManagement,
    /// Servicing failed.
    #[serde(rename = "servicing error")]
    Servicing,
}

impl ErrorType {
    /// The wire value, e.g. `registration error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ProvisionedRegistration => "provisioned registration error",
            Self::Registration => "registration error",
            Self::Inspection => "inspection error",
            Self::Preparation => "preparation error",
            Self::Provisioning => "provisioning error",
            Self::PowerManagement => "power management error",
            Self::Servicing => "servicing error",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The provisioning states of `status.provisioning.state` (a free string upstream; these are
/// baremetal-operator's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProvisioningState {
    /// No state yet.
    None,
    /// No BMC details: nothing can be done.
    Unmanaged,
    /// The BMC is being contacted and the credentials checked.
    Registering,
    /// The hardware is being read.
    Inspecting,
    /// Cleaning, RAID and firmware settings are applied.
    Preparing,
    /// Ready to be provisioned.
    Available,
    /// An image is being written.
    Provisioning,
    /// The image is on the host.
    Provisioned,
    /// The host was provisioned outside Metal3.
    ExternallyProvisioned,
    /// The image is being removed.
    Deprovisioning,
    /// The host is powered off before its deletion.
    PoweringOffBeforeDelete,
    /// The host is being deleted.
    Deleting,
    /// Detached from the provisioner.
    Detached,
}

impl ProvisioningState {
    /// Every state, for tests and parsing.
    pub const ALL: [Self; 13] = [
        Self::None,
        Self::Unmanaged,
        Self::Registering,
        Self::Inspecting,
        Self::Preparing,
        Self::Available,
        Self::Provisioning,
        Self::Provisioned,
        Self::ExternallyProvisioned,
        Self::Deprovisioning,
        Self::PoweringOffBeforeDelete,
        Self::Deleting,
        Self::Detached,
    ];

    /// The wire value, e.g. `externally provisioned`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Unmanaged => "unmanaged",
            Self::Registering => "registering",
            Self::Inspecting => "inspecting",
            Self::Preparing => "preparing",
            Self::Available => "available",
            Self::Provisioning => "provisioning",
            Self::Provisioned => "provisioned",
            Self::ExternallyProvisioned => "externally provisioned",
            Self::Deprovisioning => "deprovisioning",
            Self::PoweringOffBeforeDelete => "powering off before delete",
            Self::Deleting => "deleting",
            Self::Detached => "detached",
        }
    }

    /// Parses a wire value; `ready` (the old name of `available`) is `Available`. Unknown
    /// values give `None`.
    pub fn parse(value: &str) -> Option<Self> {
        if value == "ready" {
            return Some(Self::Available);
        }
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

impl fmt::Display for ProvisioningState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `status`: what baremetal-operator observed and did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BareMetalHostStatus {
    /// `OK`, `discovered`, `error`, …
    #[serde(default)]
    pub operational_status: OperationalStatus,
    /// The kind of the last error, while there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<ErrorType>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<Time>,
    /// What inspection found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<HardwareDetails>,
    /// The provisioning state and what was provisioned.
    #[serde(default)]
    pub provisioning: ProvisionStatus,
    /// The credentials that last worked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good_credentials: Option<CredentialsStatus>,
    /// The credentials last tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tried_credentials: Option<CredentialsStatus>,
    /// The last error's message (empty when there is none).
    #[serde(default)]
    pub error_message: String,
    /// Whether the host is powered on, as the BMC last said.
    #[serde(default)]
    pub powered_on: bool,
    /// When each operation started and ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_history: Option<OperationHistory>,
    /// How many times in a row the current operation failed.
    #[serde(default)]
    pub error_count: i64,
}

impl BareMetalHostStatus {
    /// The parsed provisioning state (`None` for values this crate does not know).
    pub fn state(&self) -> Option<ProvisioningState> {
        ProvisioningState::parse(&self.provisioning.state)
    }
}

/// `status.provisioning`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionStatus {
    /// The provisioning state (see [`ProvisioningState`]).
    #[serde(default)]
    pub state: String,
    /// The provisioner's id of the host (Ironic's node UUID).
    #[serde(default, rename = "ID")]
    pub id: String,
    /// The image provisioned (or being provisioned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// The root device hints used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<RootDeviceHints>,
}

/// `status.goodCredentials` / `triedCredentials`: a Secret and its resource version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsStatus {
    /// The Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<SecretReference>,
    /// Its `resourceVersion` at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_version: Option<String>,
}

/// `status.operationHistory`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationHistory {
    /// Registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub register: Option<OperationMetric>,
    /// Inspection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inspect: Option<OperationMetric>,
    /// Provisioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provision: Option<OperationMetric>,
    /// Deprovisioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprovision: Option<OperationMetric>,
}

/// When an operation started and ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationMetric {
    /// Start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Time>,
    /// End.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Time>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_ready_is_available() {
        for state in ProvisioningState::ALL {
            assert_eq!(ProvisioningState::parse(state.as_str()), Some(state));
        }
        assert_eq!(
            ProvisioningState::parse("ready"),
            Some(ProvisioningState::Available)
        );
        assert_eq!(ProvisioningState::parse("servicing-ish"), None);
    }

    #[test]
    fn status_keeps_upstreams_required_fields_and_names() {
        let status = BareMetalHostStatus {
            error_type: Some(ErrorType::Registration),
            ..BareMetalHostStatus::default()
        };
        let json = serde_json::to_value(&status).unwrap();
        for field in [
            "operationalStatus",
            "provisioning",
            "errorMessage",
            "poweredOn",
            "errorCount",
        ] {
            assert!(json.get(field).is_some(), "{field} missing: {json}");
        }
        assert_eq!(json["errorType"], "registration error");
        assert_eq!(json["provisioning"]["ID"], "");
        let spec: BareMetalHostSpec = serde_json::from_value(serde_json::json!({
            "online": true,
            "bootMACAddress": "00:1a:74:74:e5:cb",
            "bootMode": "UEFI",
            "bmc": {"address": "ipmi://192.168.122.1:6233", "credentialsName": "s"},
            "image": {"url": "http://x/y.qcow2", "checksum": "abc", "checksumType": "md5", "format": "live-iso"},
        }))
        .unwrap();
        assert_eq!(spec.boot_mac_address.as_deref(), Some("00:1a:74:74:e5:cb"));
        assert_eq!(spec.unmodelled["bootMode"], "UEFI");
        let image = spec.image.unwrap();
        assert_eq!(image.format, Some(ImageFormat::LiveIso));
        assert_eq!(image.checksum_type, Some(ChecksumType::Md5));
    }
}
