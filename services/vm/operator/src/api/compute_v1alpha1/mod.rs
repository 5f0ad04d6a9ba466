// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! API group `compute.mni.dev`, version `v1alpha1`: the `compute` service's kinds.

// +mni:fragment:kinds:compute
mod compute;
pub use compute::{Compute, ComputeSpec, ComputeStatus};
// +mni:fragment-end:kinds:compute
// +mni:fragment:kinds:instance
mod instance;
pub use instance::{Instance, InstanceSpec, InstanceStatus};
// +mni:fragment-end:kinds:instance
// +mni:fragment:kinds:vm-types
pub mod catalogue;
pub mod validate;
// The types of the Instance's spec and status.
pub use instance::{
    BootDisk, CloudInit, DataDisk, HttpImport, InstanceInterface, InstanceNetwork, Resources,
    SecretReference, VpcAttachment,
};
// +mni:fragment-end:kinds:vm-types
// +mni:scaffold:kinds
