// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! API group `metal.mni.dev`, version `v1alpha1`: the `metal` service's kinds.

// +mni:fragment:kinds:metal
mod metal;
pub use metal::{Metal, MetalSpec, MetalStatus};
// +mni:fragment-end:kinds:metal
// +mni:fragment:kinds:server
mod server;
pub use server::{Server, ServerSpec, ServerStatus};
// +mni:fragment-end:kinds:server
// +mni:fragment:kinds:baremetal-types
pub mod validate;
// The types of the Server's spec and status.
pub use server::{
    Bmc, Hardware, HostError, Image, Nic, REBOOT_ANNOTATION, REBOOT_REFUSED, REBOOTED, REBOOTING,
    RebootMode, RebootRequest, RebootStatus, RootDeviceHints, SecretReference, Storage,
};
// +mni:fragment-end:kinds:baremetal-types
// +mni:scaffold:kinds
