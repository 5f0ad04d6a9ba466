// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! API group `network.mni.dev`, version `v1alpha1`: the `network` service's kinds.

// +mni:fragment:kinds:network
mod network;
pub use network::{Network, NetworkSpec, NetworkStatus};
// +mni:fragment-end:kinds:network
// +mni:fragment:kinds:virtual_private_cloud
mod virtual_private_cloud;
pub use virtual_private_cloud::{
    VirtualPrivateCloud, VirtualPrivateCloudSpec, VirtualPrivateCloudStatus,
};
// +mni:fragment-end:kinds:virtual_private_cloud
// +mni:fragment:kinds:vpc-types
pub mod validate;
// The types of the VirtualPrivateCloud's spec and status.
pub use virtual_private_cloud::{
    DnatRule, Eip, EipStatus, NatGateway, NatGatewayStatus, Protocol, RoutePolicy, SnatRule,
    StaticRoute, SubnetSpec, SubnetStatus,
};
// +mni:fragment-end:kinds:vpc-types
// +mni:scaffold:kinds
