// SPDX-License-Identifier: Apache-2.0

//! API group `crew.example.com`, version `v1`.

// +mni:fragment:kinds:captain
mod captain;
pub use captain::{Captain, CaptainSpec, CaptainStatus};
// +mni:fragment-end:kinds:captain
// +mni:scaffold:kinds
