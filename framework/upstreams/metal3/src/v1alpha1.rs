//! `metal3.io/v1alpha1`: mNi's subset of Metal3's API, as `kube::CustomResource` types.
//!
//! Two namespaced kinds:
//!
//! - [`BareMetalHost`] (`bmh`, `bmhost`) — a physical server: its BMC (address and credentials
//!   Secret), boot MAC, whether it should be powered on, the image to provision and the root
//!   device hints; its status carries the provisioning state machine, the operational status,
//!   the last error, the power state and the hardware found by inspection;
//! - [`HardwareData`] (`hd`) — the inspection result, same name and namespace as its host.
//!
//! Field names, JSON types and enum values follow baremetal-operator's CRDs; only what mNi uses
//! is modelled. The spec keeps the upstream fields it does not model (`bootMode`, `raid`,
//! `firmware`, …) in `unmodelled` and the CRD preserves them, so upstream's example hosts
//! apply unchanged.

mod hardware;
mod host;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use hardware::{
    Bios, Cpu, Firmware, HardwareData, HardwareDataSpec, HardwareDetails, Nic, Storage,
    StorageType, SystemVendor,
};
pub use host::{
    BareMetalHost, BareMetalHostSpec, BareMetalHostStatus, Bmc, ChecksumType, CredentialsStatus,
    ErrorType, Image, ImageFormat, OperationHistory, OperationMetric, OperationalStatus,
    ProvisionStatus, ProvisioningState, RootDeviceHints, SecretReference,
};

/// The API group of both kinds.
pub const GROUP: &str = "metal3.io";

/// The API version of both kinds.
pub const VERSION: &str = "v1alpha1";

/// The finalizer baremetal-operator puts on every host, so deleting one deprovisions it first.
pub const HOST_FINALIZER: &str = "baremetalhost.metal3.io";

/// The CRDs of the `metal3.io/v1alpha1` subset: `baremetalhosts`, `hardwaredata`.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![BareMetalHost::crd(), HardwareData::crd()]
}
