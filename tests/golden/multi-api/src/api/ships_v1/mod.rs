// SPDX-License-Identifier: MIT

//! API group `ships.example.com`, version `v1`.

// +mni:fragment:kinds:ship
mod ship;
pub use ship::{Ship, ShipSpec, ShipStatus};
// +mni:fragment-end:kinds:ship
// +mni:fragment:kinds:harbor
mod harbor;
pub use harbor::{Harbor, HarborSpec, HarborStatus};
// +mni:fragment-end:kinds:harbor
// +mni:scaffold:kinds
