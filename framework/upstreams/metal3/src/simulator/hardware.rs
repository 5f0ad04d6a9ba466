//! Inspection: a Redfish [`Inventory`] (and the system's BIOS version) turned into Metal3's
//! [`HardwareDetails`], as Ironic's out-of-band Redfish inspection reports it.

use mni_redfish::Inventory;

use crate::v1alpha1::{
    Bios, Cpu, Firmware, HardwareDetails, Nic, Storage, StorageType, SystemVendor,
};

/// The hardware details of a system. `boot_mac` marks the NIC the host boots from (`pxe`).
pub(crate) fn hardware_details(
    inventory: &Inventory,
    bios_version: Option<&str>,
    boot_mac: Option<&str>,
) -> HardwareDetails {
    let first = inventory.processors.first();
    let threads: Option<u32> = inventory
        .processors
        .iter()
        .map(|p| p.total_threads)
        .sum::<Option<u32>>()
        .filter(|t| *t > 0);
    let cpu = Cpu {
        arch: first.and_then(|p| {
            arch(
                p.instruction_set.as_deref(),
                p.processor_architecture.as_deref(),
            )
        }),
        model: first.and_then(|p| p.model.clone()),
        clock_megahertz: first.and_then(|p| p.max_speed_mhz).map(f64::from),
        flags: Vec::new(),
        count: threads.or(inventory.cpu_count).map(i64::from),
    };
    let boot_mac = boot_mac.map(str::to_ascii_lowercase);
    let nics = inventory
        .nics
        .iter()
        .map(|nic| {
            let mac = nic
                .mac_address
                .as_deref()
                .or(nic.permanent_mac_address.as_deref())
                .map(str::to_ascii_lowercase);
            Nic {
                name: Some(nic.name.clone().unwrap_or_else(|| nic.id.clone())),
                model: None,
                pxe: boot_mac.as_ref().map(|b| mac.as_ref() == Some(b)),
                mac,
                ip: None,
                speed_gbps: nic.speed_mbps.map(|m| (m / 1000) as i64),
            }
        })
        .collect();
    let mut storage: Vec<Storage> = inventory
        .simple_storage
        .iter()
        .flat_map(|s| &s.devices)
        .map(|d| Storage {
            name: d.name.clone(),
            size_bytes: d.capacity_bytes.map(|b| b as i64),
            vendor: d.manufacturer.clone(),
            model: d.model.clone(),
            ..Storage::default()
        })
        .collect();
    storage.extend(inventory.drives.iter().map(|d| {
        let type_ = match (d.protocol.as_deref(), d.media_type.as_deref()) {
            (Some(p), _) if p.eq_ignore_ascii_case("nvme") => Some(StorageType::Nvme),
            (_, Some("SSD")) => Some(StorageType::Ssd),
            (_, Some("HDD")) => Some(StorageType::Hdd),
            _ => None,
        };
        Storage {
            name: d.name.clone().or_else(|| Some(d.id.clone())),
            rotational: type_.map(|t| t == StorageType::Hdd),
            type_,
            size_bytes: d.capacity_bytes.map(|b| b as i64),
            vendor: d.manufacturer.clone(),
            model: d.model.clone(),
            serial_number: d.serial_number.clone(),
        }
    }));
    HardwareDetails {
        system_vendor: Some(SystemVendor {
            manufacturer: inventory.manufacturer.clone(),
            product_name: inventory.model.clone(),
            serial_number: inventory.serial_number.clone(),
        }),
        firmware: bios_version.map(|version| Firmware {
            bios: Some(Bios {
                version: Some(version.to_owned()),
                ..Bios::default()
            }),
        }),
        ram_mebibytes: inventory.memory_gib.map(|g| (g * 1024.0).round() as i64),
        nics,
        storage,
        cpu: (cpu != Cpu::default()).then_some(cpu),
        hostname: None,
    }
}

/// Ironic's architecture names from Redfish's instruction set (or architecture).
fn arch(instruction_set: Option<&str>, architecture: Option<&str>) -> Option<String> {
    match instruction_set {
        Some("x86-64") => Some("x86_64".into()),
        Some("x86") => Some("i686".into()),
        Some("ARM-A64") => Some("aarch64".into()),
        Some("ARM-A32") => Some("armv7l".into()),
        Some("PowerISA") => Some("ppc64le".into()),
        Some(other) => Some(other.to_ascii_lowercase()),
        None => architecture.map(str::to_ascii_lowercase),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_becomes_metal3_hardware_details() {
        let mut inventory = Inventory::default();
        inventory.manufacturer = Some("Sushy Emulator".into());
        inventory.model = Some("Fake".into());
        inventory.memory_gib = Some(1.5);
        inventory.cpu_count = Some(2);
        inventory.processors = serde_json::from_str(
            r#"[{"Id": "CPU0", "InstructionSet": "x86-64", "Model": "Xeon", "MaxSpeedMHz": 3000, "TotalThreads": 4},
                {"Id": "CPU1", "InstructionSet": "x86-64", "Model": "Xeon", "MaxSpeedMHz": 3000, "TotalThreads": 4}]"#,
        )
        .unwrap();
        inventory.nics = serde_json::from_str(
            r#"[{"Id": "eth0", "MACAddress": "52:54:00:AA:00:01", "SpeedMbps": 10000},
                {"Id": "eth1", "MACAddress": "52:54:00:aa:00:02"}]"#,
        )
        .unwrap();
        inventory.drives = serde_json::from_str(
            r#"[{"Id": "d0", "Name": "disk0", "CapacityBytes": 100000000000, "MediaType": "HDD"},
                {"Id": "d1", "CapacityBytes": 5, "Protocol": "NVMe", "MediaType": "SSD"}]"#,
        )
        .unwrap();
        let hw = hardware_details(&inventory, Some("1.2.3"), Some("52:54:00:aa:00:01"));
        let cpu = hw.cpu.clone().unwrap();
        assert_eq!(cpu.arch.as_deref(), Some("x86_64"));
        assert_eq!(cpu.count, Some(8));
        assert_eq!(cpu.clock_megahertz, Some(3000.0));
        assert_eq!(hw.ram_mebibytes, Some(1536));
        assert_eq!(hw.nics[0].mac.as_deref(), Some("52:54:00:aa:00:01"));
        assert_eq!(hw.nics[0].pxe, Some(true));
        assert_eq!(hw.nics[0].speed_gbps, Some(10));
        assert_eq!(hw.nics[1].pxe, Some(false));
        assert_eq!(hw.storage[0].type_, Some(StorageType::Hdd));
        assert_eq!(hw.storage[0].rotational, Some(true));
        assert_eq!(hw.storage[1].type_, Some(StorageType::Nvme));
        assert_eq!(hw.storage[1].name.as_deref(), Some("d1"));
        assert_eq!(
            hw.firmware.unwrap().bios.unwrap().version.as_deref(),
            Some("1.2.3")
        );
        assert_eq!(
            hw.system_vendor.unwrap().manufacturer.as_deref(),
            Some("Sushy Emulator")
        );
    }

    #[test]
    fn without_processors_the_summary_count_is_used() {
        let mut inventory = Inventory::default();
        inventory.cpu_count = Some(2);
        let hw = hardware_details(&inventory, None, None);
        assert_eq!(hw.cpu.unwrap().count, Some(2));
        assert!(hw.firmware.is_none());
        // Nothing known about the processors: no empty `cpu: {}`.
        let hw = hardware_details(&Inventory::default(), None, None);
        assert!(hw.cpu.is_none());
    }
}
