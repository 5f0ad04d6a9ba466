//! A Redfish client for the BMCs of bare-metal servers, reusable by any mNi service.
//!
//! Redfish (DMTF DSP0266) is the REST API BMCs offer for out-of-band control. This crate covers
//! what a bare-metal service needs from it:
//!
//! - parsing BMC addresses as Metal3 writes them ([`BmcAddress`]: `redfish://`,
//!   `redfish+http://`, `redfish-virtualmedia://`, `idrac-redfish://`, `ilo5-redfish://`, …;
//!   `ipmi://` is refused with an error naming the scheme);
//! - connecting with sessions (`X-Auth-Token`, deleted on [`Client::logout`] or drop) or basic
//!   auth, with TLS verified against the system's roots, a given CA, or not at all
//!   ([`TlsVerification`]);
//! - the service root, systems, chassis and managers; a system's [`Inventory`] (processors,
//!   memory, NICs with MACs, storage, identity, power);
//! - power through `ComputerSystem.Reset` ([`Client::reset`], checked against the BMC's
//!   allowable values) and [`Client::wait_for_power`] to observe the result, since BMCs apply
//!   power actions seconds after accepting them;
//! - the one-time boot override ([`Client::set_boot_override`]) and virtual media
//!   ([`Client::insert_media`], [`Client::eject_media`]).
//!
//! Every failure is one [`Error`] that says what failed: [`Error::Unreachable`] with the address,
//! [`Error::Unauthorized`], [`Error::UnknownSystem`] with the id, [`Error::ActionNotAllowed`]
//! with the allowed values, [`Error::UnexpectedResponse`] with the status and the Redfish
//! message.
//!
//! Start with [`Client::for_address`]:
//!
//! ```no_run
//! use std::time::Duration;
//! use mni_redfish::{BmcAddress, BootOverride, Client, PowerState, ResetType};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let address = BmcAddress::parse("redfish+https://10.0.0.5:8000/redfish/v1/Systems/1")?;
//! let bmc = Client::for_address(&address)
//!     .credentials("admin", "password")
//!     .verify_certificates(false)
//!     .connect()
//!     .await?;
//! let system = bmc.default_system().await?;
//! let inventory = bmc.inventory(&system.odata_id).await?;
//! println!("{:?} {:?}, MACs {:?}", inventory.manufacturer, inventory.model, inventory.mac_addresses());
//!
//! bmc.set_boot_override(&system.odata_id, &BootOverride::once("Pxe")).await?;
//! bmc.reset(&system.odata_id, ResetType::On).await?;
//! bmc.wait_for_power(&system.odata_id, PowerState::On, Duration::from_secs(60)).await?;
//! bmc.logout().await?;
//! # Ok(())
//! # }
//! ```
//!
//! ## Cargo features
//!
//! - `testing`: [`testing::Emulator`], which runs the real `sushy-emulator` (installed by
//!   `scripts/sushy-emulator.sh`) on a free loopback port with fake systems, optional basic auth
//!   and optional TLS — for this crate's tests and for services that test against Redfish.

mod address;
mod client;
mod inventory;
mod media;
pub mod model;
mod system;
mod tls;

#[cfg(feature = "testing")]
pub mod testing;

pub use address::{AddressError, BmcAddress, BmcType};
pub use client::{AuthMethod, Client, ClientBuilder, Error};
pub use inventory::Inventory;
pub use media::InsertMedia;
pub use model::{Boot, ComputerSystem, PowerState};
pub use system::{BootOverride, ResetType};
pub use tls::{TlsConfigError, TlsVerification};

/// The book's chapter "Talking to BMCs over Redfish", whose example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../../book/src/redfish.md")]
pub struct BookChapter;
