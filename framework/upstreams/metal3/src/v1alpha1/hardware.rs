//! The hardware of a host as inspection finds it ([`HardwareDetails`], Metal3's
//! `HardwareDetails`), stored in `BareMetalHost.status.hardware` and in a [`HardwareData`]
//! object of the same name.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The inspection result of one host (`metal3.io/v1alpha1` HardwareData, namespaced; same
/// name and namespace as its BareMetalHost, which owns it).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "metal3.io",
    version = "v1alpha1",
    kind = "HardwareData",
    plural = "hardwaredata",
    singular = "hardwaredata",
    shortname = "hd",
    namespaced,
    derive = "Default",
    derive = "PartialEq",
    doc = "The hardware details of a BareMetalHost (mNi's subset of metal3.io/v1alpha1 HardwareData).",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct HardwareDataSpec {
    /// What inspection found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<HardwareDetails>,
}

/// `HardwareDetails`: processors, memory, NICs, storage, vendor and firmware of a host.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HardwareDetails {
    /// Manufacturer, product name and serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_vendor: Option<SystemVendor>,
    /// Firmware (BIOS) details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<Firmware>,
    /// Total memory in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_mebibytes: Option<i64>,
    /// Network interfaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<Nic>,
    /// Disks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<Storage>,
    /// Processors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// The host name the inspection ramdisk saw (empty for out-of-band inspection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
}

/// `HardwareSystemVendor`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SystemVendor {
    /// Manufacturer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    /// Product (model) name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_name: Option<String>,
    /// Serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
}

/// `Firmware`: the BIOS.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Firmware {
    /// The BIOS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bios: Option<Bios>,
}

/// `BIOS`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bios {
    /// Release date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `NIC`: one network interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Nic {
    /// Interface name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Vendor and product.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// MAC address, lower case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// IP address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Speed in Gbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_gbps: Option<i64>,
    /// Whether the host boots (PXE) from this NIC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pxe: Option<bool>,
}

/// The disk types Metal3 distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StorageType {
    /// A rotational disk.
    #[serde(rename = "HDD")]
    Hdd,
    /// A solid-state disk.
    #[serde(rename = "SSD")]
    Ssd,
    /// An NVMe disk.
    #[serde(rename = "NVME")]
    Nvme,
}

/// `Storage`: one disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Storage {
    /// Device name (e.g. `/dev/sda`), or what the BMC calls it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether it is rotational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// HDD, SSD or NVME.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<StorageType>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<i64>,
    /// Vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
}

/// `CPU`: the processors, summarised.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cpu {
    /// Architecture, e.g. `x86_64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Maximum clock speed in MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_megahertz: Option<f64>,
    /// CPU flags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Number of logical CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
}
