//! `mni-kubeovn`: mNi's subset of the Kube-OVN API, and what both sides of it need.
//!
//! mNi's reference VPC service reconciles tenants' VPCs onto Kube-OVN's `kubeovn.io/v1`
//! objects. This crate holds what the VPC operator and the development control plane share:
//!
//! - [`v1`] — the `kubeovn.io/v1` types (Vpc, Subnet, VpcNatGateway, IptablesEIP,
//!   IptablesSnatRule, IptablesDnatRule, and IP: an address in use) as
//!   `kube::CustomResource`s, and [`v1::crds`];
//! - [`ipam`] — Kube-OVN's address arithmetic: `cidrBlock` and `excludeIps` parsing,
//!   default gateways, available-address counts;
//! - [`simulator`] — a fake kube-ovn-controller for mNi's API server and tests: it fills in
//!   the statuses (and spec defaults) Kube-OVN would, without any networking. `mni-dev
//!   --simulate-upstream kube-ovn` and `mni_testkit::TestEnvBuilder::with_kube_ovn` run it.
//!
//! Start with [`v1`]: its types are what an operator creates and reads.
//!
//! **Architecture Invariant:** the types work unchanged against a real Kube-OVN ≥ 1.13:
//! JSON names, JSON types and condition shapes are upstream's.

pub mod ipam;
pub mod simulator;
pub mod v1;
