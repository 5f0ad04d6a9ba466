//! Virtual media: the virtual CD/DVD (or floppy, USB stick) drives a BMC offers, and inserting
//! or ejecting an image by URL with the `VirtualMedia.InsertMedia`/`EjectMedia` actions.
//!
//! The drives are found from the system's `VirtualMedia` link when it has one (sushy-emulator,
//! some vendors), else from the managers linked by `Links.ManagedBy` (the usual place, under
//! `Managers/…/VirtualMedia`).

use crate::client::{Client, Error};
use crate::model::{Collection, Manager, VirtualMedia};

/// What to insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertMedia {
    /// The image's URL; the BMC fetches it.
    pub image: String,
    /// Whether the media is inserted (default true).
    pub inserted: bool,
    /// Whether it is write protected (default true).
    pub write_protected: bool,
}

impl InsertMedia {
    /// Inserts `image`, write protected.
    pub fn image(image: impl Into<String>) -> Self {
        Self {
            image: image.into(),
            inserted: true,
            write_protected: true,
        }
    }
}

impl Client {
    /// The virtual media drives of a system (by id or path).
    pub async fn virtual_media(&self, system: &str) -> Result<Vec<VirtualMedia>, Error> {
        let resource = self.system(system).await?;
        let mut collections = Vec::new();
        if let Some(link) = &resource.virtual_media {
            collections.push(link.odata_id.clone());
        } else {
            for link in &resource.links.managed_by {
                let manager: Manager = self.get(&link.odata_id).await?;
                if let Some(vm) = manager.virtual_media {
                    collections.push(vm.odata_id);
                }
            }
        }
        if collections.is_empty() {
            return Err(Error::NotSupported {
                resource: resource.odata_id,
                feature: "virtual media".into(),
            });
        }
        let mut drives = Vec::new();
        for path in collections {
            let collection: Collection = self.get(&path).await?;
            for link in collection.members {
                drives.push(self.get(&link.odata_id).await?);
            }
        }
        Ok(drives)
    }

    /// One virtual media drive by id (`Cd`, `1`, …) or by media type (`CD`, `DVD`), listing the
    /// drives there are when none matches.
    pub async fn virtual_media_drive(
        &self,
        system: &str,
        drive: &str,
    ) -> Result<VirtualMedia, Error> {
        let drives = self.virtual_media(system).await?;
        let known: Vec<String> = drives.iter().map(|d| d.id.clone()).collect();
        drives
            .iter()
            .find(|d| d.id == drive)
            .or_else(|| {
                drives
                    .iter()
                    .find(|d| d.media_types.iter().any(|t| t.eq_ignore_ascii_case(drive)))
            })
            .cloned()
            .ok_or_else(|| Error::NotSupported {
                resource: self.system_path_of(system),
                feature: format!(
                    "virtual media drive {drive:?} (it has: {})",
                    known.join(", ")
                ),
            })
    }

    /// Inserts an image into a drive (`VirtualMedia.InsertMedia`).
    pub async fn insert_media(
        &self,
        system: &str,
        drive: &str,
        media: &InsertMedia,
    ) -> Result<(), Error> {
        let vm = self.virtual_media_drive(system, drive).await?;
        let target = vm
            .actions
            .insert_media
            .map(|a| a.target)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("{}/Actions/VirtualMedia.InsertMedia", vm.odata_id));
        self.post_action(
            &target,
            serde_json::json!({
                "Image": media.image,
                "Inserted": media.inserted,
                "WriteProtected": media.write_protected,
            }),
        )
        .await
    }

    /// Ejects the media of a drive (`VirtualMedia.EjectMedia`).
    pub async fn eject_media(&self, system: &str, drive: &str) -> Result<(), Error> {
        let vm = self.virtual_media_drive(system, drive).await?;
        let target = vm
            .actions
            .eject_media
            .map(|a| a.target)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("{}/Actions/VirtualMedia.EjectMedia", vm.odata_id));
        self.post_action(&target, serde_json::json!({})).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_defaults_are_write_protected_and_inserted() {
        let m = InsertMedia::image("http://h/x.iso");
        assert!(m.inserted && m.write_protected);
    }
}
