// SPDX-License-Identifier: MIT

//! API group `crew.example.com`, version `v1alpha1`.

// +mni:fragment:kinds:sailor
mod sailor;
pub use sailor::{Sailor, SailorSpec, SailorStatus};
// +mni:fragment-end:kinds:sailor
// +mni:scaffold:kinds
