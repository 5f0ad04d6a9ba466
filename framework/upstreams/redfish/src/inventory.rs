//! A system's hardware inventory in one call: identity (manufacturer, model, serial), power,
//! processors, memory, NICs with their MAC addresses and storage — what Metal3 records in a
//! `HardwareData` after inspection.
//!
//! BMCs implement different subsets: a section whose link is missing, or whose collection
//! answers 404 or 501 (or 500, as sushy-emulator's fake driver does for storage), is left
//! empty and named in [`Inventory::unavailable`]. Unreachable BMCs and refused credentials
//! still fail the whole call.

use crate::client::{Client, Error};
use crate::model::{
    Collection, ComputerSystem, Drive, EthernetInterface, Memory, PowerState, Processor,
    SimpleStorage, Storage,
};

/// A system's hardware, as far as the BMC tells.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Inventory {
    /// The system's path.
    pub path: String,
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: Option<String>,
    /// Its UUID.
    pub uuid: Option<String>,
    /// Manufacturer.
    pub manufacturer: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Serial number.
    pub serial_number: Option<String>,
    /// Power state.
    pub power_state: Option<PowerState>,
    /// Processor count from the summary, else the number of processors listed.
    pub cpu_count: Option<u32>,
    /// Total memory in GiB from the summary, else the sum of the DIMMs.
    pub memory_gib: Option<f64>,
    /// Processors.
    pub processors: Vec<Processor>,
    /// Memory modules.
    pub memory: Vec<Memory>,
    /// Network interfaces.
    pub nics: Vec<EthernetInterface>,
    /// `SimpleStorage` controllers with their devices.
    pub simple_storage: Vec<SimpleStorage>,
    /// Drives found through `Storage`.
    pub drives: Vec<Drive>,
    /// Sections the BMC did not provide, with why (`"Processors: not linked"`, …).
    pub unavailable: Vec<String>,
}

impl Inventory {
    /// The MAC addresses of all NICs, lower case, in the BMC's order.
    pub fn mac_addresses(&self) -> Vec<String> {
        self.nics
            .iter()
            .filter_map(|n| {
                n.mac_address
                    .as_deref()
                    .or(n.permanent_mac_address.as_deref())
            })
            .map(str::to_ascii_lowercase)
            .collect()
    }
}

/// Whether a failure to read an optional section means "not provided" rather than a real error.
fn is_missing(error: &Error) -> Option<String> {
    match error {
        Error::UnexpectedResponse {
            status, message, ..
        } if matches!(status.as_u16(), 404 | 405 | 500 | 501) => {
            Some(format!("{status}: {message}"))
        }
        _ => None,
    }
}

impl Client {
    /// Reads every member of a collection.
    async fn members<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<Vec<T>, Error> {
        let collection: Collection = self.get(path).await?;
        let mut members = Vec::with_capacity(collection.members.len());
        for link in collection.members {
            members.push(self.get(&link.odata_id).await?);
        }
        Ok(members)
    }

    /// An optional section: empty and noted in `unavailable` when the BMC does not provide it.
    async fn section<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        link: Option<&crate::model::Link>,
        unavailable: &mut Vec<String>,
    ) -> Result<Vec<T>, Error> {
        let Some(link) = link else {
            unavailable.push(format!("{name}: not linked from the system"));
            return Ok(Vec::new());
        };
        match self.members(&link.odata_id).await {
            Ok(members) => Ok(members),
            Err(e) => match is_missing(&e) {
                Some(why) => {
                    unavailable.push(format!("{name}: {why}"));
                    Ok(Vec::new())
                }
                None => Err(e),
            },
        }
    }

    /// The inventory of a system given by id or path.
    pub async fn inventory(&self, system: &str) -> Result<Inventory, Error> {
        let system: ComputerSystem = self.system(system).await?;
        let mut unavailable = Vec::new();
        let processors: Vec<Processor> = self
            .section("Processors", system.processors.as_ref(), &mut unavailable)
            .await?;
        let memory: Vec<Memory> = self
            .section("Memory", system.memory.as_ref(), &mut unavailable)
            .await?;
        let nics = self
            .section(
                "EthernetInterfaces",
                system.ethernet_interfaces.as_ref(),
                &mut unavailable,
            )
            .await?;
        let simple_storage = self
            .section(
                "SimpleStorage",
                system.simple_storage.as_ref(),
                &mut unavailable,
            )
            .await?;
        let storage: Vec<Storage> = self
            .section("Storage", system.storage.as_ref(), &mut unavailable)
            .await?;
        let mut drives = Vec::new();
        for link in storage.iter().flat_map(|s| &s.drives) {
            match self.get::<Drive>(&link.odata_id).await {
                Ok(drive) => drives.push(drive),
                Err(e) => match is_missing(&e) {
                    Some(why) => unavailable.push(format!("Drive {}: {why}", link.odata_id)),
                    None => return Err(e),
                },
            }
        }
        let cpu_count = system
            .processor_summary
            .count
            .or_else(|| (!processors.is_empty()).then_some(processors.len() as u32));
        let memory_gib = system.memory_summary.total_system_memory_gib.or_else(|| {
            let mib: u64 = memory.iter().filter_map(|m| m.capacity_mib).sum();
            (mib > 0).then(|| mib as f64 / 1024.0)
        });
        Ok(Inventory {
            path: system.odata_id,
            id: system.id,
            name: system.name,
            uuid: system.uuid,
            manufacturer: system.manufacturer,
            model: system.model,
            serial_number: system.serial_number,
            power_state: system.power_state,
            cpu_count,
            memory_gib,
            processors,
            memory,
            nics,
            simple_storage,
            drives,
            unavailable,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_prefer_the_current_address_and_are_lower_case() {
        let nics: Vec<EthernetInterface> = serde_json::from_str(
            r#"[{"Id": "1", "MACAddress": "AA:BB:CC:00:11:22", "PermanentMACAddress": "aa:bb:cc:00:11:99"},
                {"Id": "2", "PermanentMACAddress": "52:54:00:00:00:01"},
                {"Id": "3"}]"#,
        )
        .unwrap();
        let inventory = Inventory {
            nics,
            ..Inventory::default()
        };
        assert_eq!(
            inventory.mac_addresses(),
            ["aa:bb:cc:00:11:22", "52:54:00:00:00:01"]
        );
    }

    #[test]
    fn only_not_provided_statuses_make_a_section_unavailable() {
        let err = |status: u16| Error::UnexpectedResponse {
            method: http::Method::GET,
            url: "u".into(),
            status: http::StatusCode::from_u16(status).unwrap(),
            message: "Not implemented".into(),
        };
        assert_eq!(
            is_missing(&err(501)).unwrap(),
            "501 Not Implemented: Not implemented"
        );
        assert!(is_missing(&err(400)).is_none());
        assert!(is_missing(&Error::AmbiguousSystem { count: 2 }).is_none());
    }
}
