//! `mni-kubevirt`: mNi's subset of the KubeVirt and CDI APIs, and a fake virt-controller.
//!
//! mNi's VM service reconciles tenants' virtual machines onto KubeVirt. This crate holds what
//! that operator and the development control plane share:
//!
//! - [`v1`] — `kubevirt.io/v1` VirtualMachine and VirtualMachineInstance;
//! - [`cdi`] — `cdi.kubevirt.io/v1beta1` DataVolume;
//! - [`simulator`] — a fake virt-controller, virt-handler and CDI for mNi's API server and
//!   tests: DataVolumes import, VMs get instances that are scheduled onto a simulated node
//!   and run with addresses (from the pod network or a Kube-OVN subnet), and failures can be
//!   injected. `mni-dev up --simulate-upstream kubevirt` and
//!   `mni_testkit::TestEnvBuilder::with_kubevirt` run it.
//!
//! Start with [`v1::VirtualMachine`]; [`crds`] lists every CRD of the subset.
//!
//! **Architecture Invariant:** the types work unchanged against a real KubeVirt ≥ 1.4 and
//! CDI ≥ 1.60: JSON names, JSON types and condition shapes are upstream's.

pub mod cdi;
mod quantity;
pub mod simulator;
pub mod v1;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Every CRD of the subset: `virtualmachines.kubevirt.io`,
/// `virtualmachineinstances.kubevirt.io`, `datavolumes.cdi.kubevirt.io`.
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut all = v1::crds();
    all.push(cdi::crd());
    all
}
