// SPDX-License-Identifier: MIT

//! API group `ledger.example.com`, version `v1beta1`.

// +mni:fragment:kinds:entry
mod entry;
pub use entry::{Entry, EntrySpec, EntryStatus};
// +mni:fragment-end:kinds:entry
// +mni:scaffold:kinds
