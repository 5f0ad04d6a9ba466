//! The Redfish resources the client reads, as plain serde types (no IO): the service root,
//! collections, `ComputerSystem` with its boot settings and reset action, processors, memory,
//! Ethernet interfaces, storage, managers, chassis, virtual media, sessions and the error body.
//!
//! Every field is optional because BMCs leave out what they do not implement; unknown fields
//! are ignored. Names follow the DMTF schema (`PowerState`, `Boot.BootSourceOverrideTarget`, …).

use serde::{Deserialize, Serialize};

/// A link to another resource: `{"@odata.id": "/redfish/v1/..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// The resource's path.
    #[serde(rename = "@odata.id")]
    pub odata_id: String,
}

/// A resource collection (`Systems`, `Managers`, `EthernetInterfaces`, …).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Collection {
    /// Links to the members.
    pub members: Vec<Link>,
}

/// `/redfish/v1/`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ServiceRoot {
    /// The service's id.
    pub id: Option<String>,
    /// Its name.
    pub name: Option<String>,
    /// Redfish protocol version, e.g. `1.5.0`.
    pub redfish_version: Option<String>,
    /// The service's UUID.
    #[serde(rename = "UUID")]
    pub uuid: Option<String>,
    /// The systems collection.
    pub systems: Option<Link>,
    /// The chassis collection.
    pub chassis: Option<Link>,
    /// The managers collection.
    pub managers: Option<Link>,
    /// The session service.
    pub session_service: Option<Link>,
    /// Well-known links, including `Sessions`.
    pub links: ServiceRootLinks,
}

/// `ServiceRoot.Links`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ServiceRootLinks {
    /// Where to `POST` a session (`/redfish/v1/SessionService/Sessions`).
    pub sessions: Option<Link>,
}

/// A resource's `Status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Status {
    /// `Enabled`, `Absent`, …
    pub state: Option<String>,
    /// `OK`, `Warning`, `Critical`.
    pub health: Option<String>,
}

/// A system's power state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PowerState {
    /// Powered on.
    On,
    /// Powered off.
    Off,
    /// Going on.
    PoweringOn,
    /// Going off.
    PoweringOff,
    /// Paused (virtual machines).
    Paused,
    /// A value this client does not know.
    #[serde(untagged)]
    Other(String),
}

impl std::fmt::Display for PowerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::On => f.write_str("On"),
            Self::Off => f.write_str("Off"),
            Self::PoweringOn => f.write_str("PoweringOn"),
            Self::PoweringOff => f.write_str("PoweringOff"),
            Self::Paused => f.write_str("Paused"),
            Self::Other(s) => f.write_str(s),
        }
    }
}

/// `ComputerSystem`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ComputerSystem {
    /// The resource's path.
    #[serde(rename = "@odata.id")]
    pub odata_id: String,
    /// The system's id (last path segment).
    pub id: String,
    /// Its name.
    pub name: Option<String>,
    /// Its UUID.
    #[serde(rename = "UUID")]
    pub uuid: Option<String>,
    /// Manufacturer.
    pub manufacturer: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Serial number.
    pub serial_number: Option<String>,
    /// SKU.
    #[serde(rename = "SKU")]
    pub sku: Option<String>,
    /// BIOS version.
    pub bios_version: Option<String>,
    /// Power state.
    pub power_state: Option<PowerState>,
    /// Status.
    pub status: Status,
    /// Boot settings.
    pub boot: Boot,
    /// Processor summary.
    pub processor_summary: ProcessorSummary,
    /// Memory summary.
    pub memory_summary: MemorySummary,
    /// The processors collection.
    pub processors: Option<Link>,
    /// The memory collection.
    pub memory: Option<Link>,
    /// The Ethernet interfaces collection.
    pub ethernet_interfaces: Option<Link>,
    /// The simple storage collection.
    pub simple_storage: Option<Link>,
    /// The storage collection.
    pub storage: Option<Link>,
    /// The system's virtual media collection (some BMCs, sushy-emulator among them, put it here
    /// rather than under the manager).
    pub virtual_media: Option<Link>,
    /// Related resources.
    pub links: SystemLinks,
    /// Actions.
    pub actions: SystemActions,
}

/// `ComputerSystem.Links`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SystemLinks {
    /// Chassis containing the system.
    pub chassis: Vec<Link>,
    /// Managers (BMCs) of the system.
    pub managed_by: Vec<Link>,
}

/// `ComputerSystem.Actions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SystemActions {
    /// `#ComputerSystem.Reset`.
    #[serde(rename = "#ComputerSystem.Reset")]
    pub reset: Option<ResetAction>,
}

/// The reset action: its target and, where offered, the allowed `ResetType` values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResetAction {
    /// Where to `POST`.
    pub target: String,
    /// `ResetType@Redfish.AllowableValues`.
    #[serde(rename = "ResetType@Redfish.AllowableValues")]
    pub allowable_values: Option<Vec<String>>,
}

/// `ComputerSystem.Boot`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Boot {
    /// `Disabled`, `Once` or `Continuous`.
    pub boot_source_override_enabled: Option<String>,
    /// `Pxe`, `Cd`, `Hdd`, `UefiHttp`, …
    pub boot_source_override_target: Option<String>,
    /// Allowed targets, where offered.
    #[serde(rename = "BootSourceOverrideTarget@Redfish.AllowableValues")]
    pub boot_source_override_target_allowable_values: Option<Vec<String>>,
    /// `UEFI` or `Legacy`.
    pub boot_source_override_mode: Option<String>,
}

/// `ComputerSystem.ProcessorSummary`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ProcessorSummary {
    /// Number of processors.
    pub count: Option<u32>,
    /// Model of the processors.
    pub model: Option<String>,
}

/// `ComputerSystem.MemorySummary`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct MemorySummary {
    /// Total memory in GiB.
    #[serde(rename = "TotalSystemMemoryGiB")]
    pub total_system_memory_gib: Option<f64>,
}

/// `Processor`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Processor {
    /// Id.
    pub id: String,
    /// `CPU`, `GPU`, …
    pub processor_type: Option<String>,
    /// `x86`, `ARM`, …
    pub processor_architecture: Option<String>,
    /// `x86-64`, `AArch64`, …
    pub instruction_set: Option<String>,
    /// Manufacturer.
    pub manufacturer: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Maximum speed in MHz.
    #[serde(rename = "MaxSpeedMHz")]
    pub max_speed_mhz: Option<u32>,
    /// Cores.
    pub total_cores: Option<u32>,
    /// Threads.
    pub total_threads: Option<u32>,
    /// Status.
    pub status: Status,
}

/// `Memory` (one DIMM).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Memory {
    /// Id.
    pub id: String,
    /// Capacity in MiB.
    #[serde(rename = "CapacityMiB")]
    pub capacity_mib: Option<u64>,
    /// `DRAM`, …
    pub memory_type: Option<String>,
    /// `DDR4`, …
    pub memory_device_type: Option<String>,
    /// Speed in MHz.
    #[serde(rename = "OperatingSpeedMhz")]
    pub operating_speed_mhz: Option<u32>,
    /// Status.
    pub status: Status,
}

/// `EthernetInterface`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct EthernetInterface {
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// The MAC address in use.
    #[serde(rename = "MACAddress")]
    pub mac_address: Option<String>,
    /// The burnt-in MAC address.
    #[serde(rename = "PermanentMACAddress")]
    pub permanent_mac_address: Option<String>,
    /// Link speed in Mbit/s.
    #[serde(rename = "SpeedMbps")]
    pub speed_mbps: Option<u64>,
    /// `LinkUp`, `LinkDown`, `NoLink`.
    pub link_status: Option<String>,
    /// Status.
    pub status: Status,
}

/// `SimpleStorage`: a controller and its devices.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SimpleStorage {
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// The devices.
    pub devices: Vec<SimpleStorageDevice>,
}

/// One device of a `SimpleStorage`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SimpleStorageDevice {
    /// Name.
    pub name: Option<String>,
    /// Manufacturer.
    pub manufacturer: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Capacity in bytes.
    pub capacity_bytes: Option<u64>,
    /// Status.
    pub status: Status,
}

/// `Storage`: a storage subsystem with links to its drives.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Storage {
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// The drives.
    pub drives: Vec<Link>,
}

/// `Drive`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Drive {
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// Manufacturer.
    pub manufacturer: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Serial number.
    pub serial_number: Option<String>,
    /// Capacity in bytes.
    pub capacity_bytes: Option<u64>,
    /// `HDD` or `SSD`.
    pub media_type: Option<String>,
    /// `SATA`, `SAS`, `NVMe`, …
    pub protocol: Option<String>,
}

/// `Manager` (a BMC).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Manager {
    /// The resource's path.
    #[serde(rename = "@odata.id")]
    pub odata_id: String,
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// `BMC`, …
    pub manager_type: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Firmware version.
    pub firmware_version: Option<String>,
    /// The virtual media collection.
    pub virtual_media: Option<Link>,
}

/// `Chassis`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Chassis {
    /// The resource's path.
    #[serde(rename = "@odata.id")]
    pub odata_id: String,
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// `RackMount`, `Enclosure`, …
    pub chassis_type: Option<String>,
    /// Manufacturer.
    pub manufacturer: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Serial number.
    pub serial_number: Option<String>,
    /// Power state.
    pub power_state: Option<PowerState>,
}

/// `VirtualMedia` (one virtual drive).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct VirtualMedia {
    /// The resource's path.
    #[serde(rename = "@odata.id")]
    pub odata_id: String,
    /// Id (`Cd`, `Floppy`, …).
    pub id: String,
    /// `CD`, `DVD`, `Floppy`, `USBStick`.
    pub media_types: Vec<String>,
    /// The image's URL (empty when none).
    pub image: Option<String>,
    /// Whether media is inserted.
    pub inserted: Option<bool>,
    /// Whether the media is write protected.
    pub write_protected: Option<bool>,
    /// Actions.
    pub actions: VirtualMediaActions,
}

/// `VirtualMedia.Actions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct VirtualMediaActions {
    /// `#VirtualMedia.InsertMedia`.
    #[serde(rename = "#VirtualMedia.InsertMedia")]
    pub insert_media: Option<ActionTarget>,
    /// `#VirtualMedia.EjectMedia`.
    #[serde(rename = "#VirtualMedia.EjectMedia")]
    pub eject_media: Option<ActionTarget>,
}

/// An action's target.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ActionTarget {
    /// Where to `POST`.
    pub target: String,
}

/// The body of a Redfish error response.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// `error` in an error response.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ErrorDetail {
    /// e.g. `Base.1.0.GeneralError`.
    pub code: Option<String>,
    /// The top-level message.
    pub message: Option<String>,
    /// Detailed messages.
    #[serde(rename = "@Message.ExtendedInfo")]
    pub extended_info: Vec<ExtendedInfo>,
}

/// One `@Message.ExtendedInfo` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ExtendedInfo {
    /// e.g. `Base.1.8.PropertyValueNotInList`.
    pub message_id: Option<String>,
    /// The human message.
    pub message: Option<String>,
    /// What to do about it.
    pub resolution: Option<String>,
}

impl ErrorBody {
    /// The most telling message: the extended infos' messages, else the top-level one.
    pub fn summary(&self) -> Option<String> {
        let extended: Vec<&str> = self
            .error
            .extended_info
            .iter()
            .filter_map(|i| i.message.as_deref())
            .collect();
        if !extended.is_empty() {
            return Some(extended.join("; "));
        }
        self.error
            .message
            .clone()
            .or_else(|| self.error.code.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYSTEM: &str = r##"{
        "@odata.id": "/redfish/v1/Systems/437XR1138R2",
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "Id": "437XR1138R2",
        "Name": "WebFrontEnd483",
        "UUID": "38947555-7742-3448-3784-823347823834",
        "Manufacturer": "Contoso",
        "Model": "3500RX",
        "SerialNumber": "437XR1138R2",
        "PowerState": "On",
        "Boot": {
            "BootSourceOverrideEnabled": "Once",
            "BootSourceOverrideTarget": "Pxe",
            "BootSourceOverrideTarget@Redfish.AllowableValues": ["None", "Pxe", "Cd", "Hdd"],
            "BootSourceOverrideMode": "UEFI"
        },
        "ProcessorSummary": {"Count": 2, "Model": "Multi-Core Intel(R) Xeon(R) processor 7xxx Series"},
        "MemorySummary": {"TotalSystemMemoryGiB": 96},
        "Processors": {"@odata.id": "/redfish/v1/Systems/437XR1138R2/Processors"},
        "EthernetInterfaces": {"@odata.id": "/redfish/v1/Systems/437XR1138R2/EthernetInterfaces"},
        "Links": {"ManagedBy": [{"@odata.id": "/redfish/v1/Managers/BMC"}], "Chassis": []},
        "Actions": {
            "#ComputerSystem.Reset": {
                "target": "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset",
                "ResetType@Redfish.AllowableValues": ["On", "ForceOff", "GracefulShutdown"]
            }
        },
        "Oem": {"Contoso": {"Anything": true}}
    }"##;

    #[test]
    fn computer_system_fixture() {
        let system: ComputerSystem = serde_json::from_str(SYSTEM).unwrap();
        assert_eq!(system.id, "437XR1138R2");
        assert_eq!(system.power_state, Some(PowerState::On));
        assert_eq!(
            system.boot.boot_source_override_enabled.as_deref(),
            Some("Once")
        );
        assert_eq!(
            system
                .boot
                .boot_source_override_target_allowable_values
                .as_deref(),
            Some(&["None".to_owned(), "Pxe".into(), "Cd".into(), "Hdd".into()][..])
        );
        assert_eq!(system.processor_summary.count, Some(2));
        assert_eq!(system.memory_summary.total_system_memory_gib, Some(96.0));
        let reset = system.actions.reset.unwrap();
        assert_eq!(reset.allowable_values.unwrap().len(), 3);
        assert_eq!(
            system.links.managed_by[0].odata_id,
            "/redfish/v1/Managers/BMC"
        );
        assert!(system.memory.is_none());
    }

    #[test]
    fn inventory_member_fixtures() {
        let cpu: Processor = serde_json::from_str(
            r#"{"Id": "CPU1", "ProcessorType": "CPU", "ProcessorArchitecture": "x86",
                "InstructionSet": "x86-64", "Manufacturer": "Intel(R) Corporation",
                "Model": "Xeon", "MaxSpeedMHz": 3700, "TotalCores": 8, "TotalThreads": 16,
                "Status": {"State": "Enabled", "Health": "OK"}}"#,
        )
        .unwrap();
        assert_eq!((cpu.total_cores, cpu.max_speed_mhz), (Some(8), Some(3700)));
        assert_eq!(cpu.status.health.as_deref(), Some("OK"));
        let dimm: Memory = serde_json::from_str(
            r#"{"Id": "DIMM1", "CapacityMiB": 32768, "MemoryDeviceType": "DDR4",
                "OperatingSpeedMhz": 2400}"#,
        )
        .unwrap();
        assert_eq!(dimm.capacity_mib, Some(32768));
        let storage: SimpleStorage = serde_json::from_str(
            r#"{"Id": "1", "Devices": [{"Name": "SATA Bay 1", "Manufacturer": "Contoso",
                "Model": "3000GT8", "CapacityBytes": 8000000000000,
                "Status": {"State": "Enabled"}}]}"#,
        )
        .unwrap();
        assert_eq!(storage.devices[0].capacity_bytes, Some(8_000_000_000_000));
        let drive: Drive = serde_json::from_str(
            r#"{"Id": "1", "MediaType": "SSD", "Protocol": "NVMe", "CapacityBytes": 899527000000,
                "SerialNumber": "72D0A037FRD26"}"#,
        )
        .unwrap();
        assert_eq!(drive.media_type.as_deref(), Some("SSD"));
        let nic: EthernetInterface = serde_json::from_str(
            r#"{"Id": "1", "MACAddress": "12:44:6A:3B:04:11", "SpeedMbps": 1000,
                "LinkStatus": "LinkUp"}"#,
        )
        .unwrap();
        assert_eq!(nic.mac_address.as_deref(), Some("12:44:6A:3B:04:11"));
    }

    #[test]
    fn unknown_power_states_are_kept() {
        let state: PowerState = serde_json::from_str(r#""Standby""#).unwrap();
        assert_eq!(state, PowerState::Other("Standby".into()));
        assert_eq!(state.to_string(), "Standby");
        let state: PowerState = serde_json::from_str(r#""PoweringOff""#).unwrap();
        assert_eq!(state, PowerState::PoweringOff);
    }

    #[test]
    fn error_body_prefers_extended_info() {
        let body: ErrorBody = serde_json::from_str(
            r#"{"error": {"code": "Base.1.8.GeneralError", "message": "A general error has occurred.",
                "@Message.ExtendedInfo": [{"MessageId": "Base.1.8.PropertyValueNotInList",
                "Message": "The value Foo for the property ResetType is not in the list of acceptable values."}]}}"#,
        )
        .unwrap();
        assert_eq!(
            body.summary().unwrap(),
            "The value Foo for the property ResetType is not in the list of acceptable values."
        );
        let body: ErrorBody =
            serde_json::from_str(r#"{"error": {"message": "Fake system nope was not found"}}"#)
                .unwrap();
        assert_eq!(body.summary().unwrap(), "Fake system nope was not found");
    }

    #[test]
    fn virtual_media_and_root_fixtures() {
        let vm: VirtualMedia = serde_json::from_str(
            r##"{"@odata.id": "/redfish/v1/Managers/1/VirtualMedia/Cd", "Id": "Cd",
                "MediaTypes": ["CD", "DVD"], "Image": "", "Inserted": false,
                "Actions": {"#VirtualMedia.InsertMedia": {"target": "/i"},
                            "#VirtualMedia.EjectMedia": {"target": "/e"}}}"##,
        )
        .unwrap();
        assert_eq!(vm.actions.insert_media.unwrap().target, "/i");
        assert_eq!(vm.inserted, Some(false));
        let root: ServiceRoot = serde_json::from_str(
            r#"{"RedfishVersion": "1.6.0", "Systems": {"@odata.id": "/redfish/v1/Systems"},
                "Links": {"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}}}"#,
        )
        .unwrap();
        assert_eq!(
            root.links.sessions.unwrap().odata_id,
            "/redfish/v1/SessionService/Sessions"
        );
        assert!(root.managers.is_none());
    }
}
