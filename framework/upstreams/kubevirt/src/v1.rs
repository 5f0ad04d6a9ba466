//! `kubevirt.io/v1`: mNi's subset of KubeVirt's API, as `kube::CustomResource` types.
//!
//! Two namespaced kinds, each with a `status` subresource:
//!
//! - [`VirtualMachine`] (`vm`, `vms`) — a template, DataVolume templates and a
//!   [`RunStrategy`]; KubeVirt keeps an instance of it while it should run;
//! - [`VirtualMachineInstance`] (`vmi`, `vmis`) — one running guest: phase, node,
//!   interfaces with their addresses.
//!
//! Field names and JSON types follow KubeVirt's `v1` OpenAPI definitions; only what mNi uses
//! is modelled. Every spec struct keeps the upstream fields it does not model in
//! `unmodelled` (and the CRDs mark those objects `x-kubernetes-preserve-unknown-fields`), so
//! upstream's own manifests apply unchanged and a template copied to an instance loses
//! nothing; unknown enum values in statuses become `Unknown`. [`crds`] gives mNi's own
//! schemas, stricter where a value set is known (run strategies, phases).

mod condition;
mod domain;
mod instance;
mod virtual_machine;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use condition::{
    Condition, FAILURE, POD_SCHEDULED, READY, STATUS_FALSE, STATUS_TRUE, find_condition,
    is_condition_true,
};
pub use domain::{
    BindingMethod, CloudInitSource, ContainerDiskSource, Cpu, DataVolumeSource, Devices, Disk,
    DiskTarget, DomainSpec, Interface, LocalObjectReference, Memory, MultusNetwork, Network,
    PersistentVolumeClaimSource, PodNetwork, ResourceRequirements, Volume,
};
pub use instance::{
    InstanceInterface, InstancePhase, PhaseTransition, VirtualMachineInstance,
    VirtualMachineInstanceSpec, VirtualMachineInstanceStatus,
};
pub use virtual_machine::{
    DataVolumeTemplate, InstanceTemplate, PrintableStatus, RunStrategy, StateChangeAction,
    StateChangeRequest, TemplateMetadata, VirtualMachine, VirtualMachineSpec, VirtualMachineStatus,
};

/// The API group of both kinds.
pub const GROUP: &str = "kubevirt.io";

/// The API version of both kinds.
pub const VERSION: &str = "v1";

/// The CRDs of the `kubevirt.io/v1` subset: `virtualmachines`, `virtualmachineinstances`.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![VirtualMachine::crd(), VirtualMachineInstance::crd()]
}
