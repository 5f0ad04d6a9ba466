//! `mni-metal3`: mNi's subset of the Metal3 API, and a Metal3 simulator that drives real BMCs
//! over Redfish.
//!
//! mNi's bare-metal service reconciles tenants' servers onto Metal3's `BareMetalHost`. This
//! crate holds what that operator and the development control plane share:
//!
//! - [`v1alpha1`] — `metal3.io/v1alpha1` BareMetalHost and HardwareData;
//! - [`simulator`] — plays baremetal-operator and Ironic for mNi's API server and tests: it
//!   registers, inspects, provisions and deprovisions hosts and manages their power by talking
//!   **real Redfish** to their BMCs (`mni-redfish`), so a host's `status.hardware` comes from
//!   the BMC's inventory and `spec.online: false` powers the server off.
//!   `mni-dev up --simulate-upstream metal3` and `mni_testkit::TestEnvBuilder::with_metal3`
//!   run it.
//!
//! Start with [`v1alpha1::BareMetalHost`]; [`crds`] lists every CRD of the subset.
//!
//! **Architecture Invariant:** the types work unchanged against a real baremetal-operator
//! (≥ 0.9): JSON names, JSON types and enum values are upstream's.

pub mod simulator;
pub mod v1alpha1;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Every CRD of the subset: `baremetalhosts.metal3.io`, `hardwaredata.metal3.io`.
pub fn crds() -> Vec<CustomResourceDefinition> {
    v1alpha1::crds()
}
