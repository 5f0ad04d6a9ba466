//! The VM specialisation of a service: the last step of `new service` with `vm.mni.dev/v1`.
//!
//! It runs after `service.mni.dev/v1` made the service with the domain kind `Instance` and
//! left the files listed in [`TAKEN_OVER`] unwritten; it renders `templates/vm/v1/` (those
//! output paths and a few more), registers what it adds at the scaffold markers, re-derives
//! the operator's role and records the service under its key, with the kinds it requires.
//!
//! The backend and frontend code is service/v1's, extended rather than replaced: the backend
//! gains two modules of its own (`validation`, the domain's validation hook, and `power`, the
//! start/stop/restart routes and their OpenAPI paths), registered at the markers of its
//! `src/lib.rs` (`modules` and `routes`).

use mni_plugin_service::Specialisation;

use super::KEY;

/// The domain kind of the VM service. Not `VirtualMachine`: KubeVirt's kind (short names
/// `vm`, `vms`) is installed beside it, and `kubectl get vm` must keep meaning KubeVirt's.
pub const DOMAIN_KIND: &str = "Instance";

/// The kinds of other services the VM service reads (group, version, kind): a VM in a VPC
/// subnet waits for the VPC service's `VirtualPrivateCloud`. PROJECT records them under the
/// plugin's key (`requires:`), so delivery can declare them (OLM's `olm.gvk.required`).
pub const REQUIRES: &[(&str, &str, &str)] =
    &[("network.mni.dev", "v1alpha1", "VirtualPrivateCloud")];

/// The `service.mni.dev/v1` templates this plugin renders itself (at the same output paths):
/// the README, the page and the domain kind. No Rust file of the backend or the frontend is
/// among them; those are extended at their markers.
pub const TAKEN_OVER: &[&str] = &[
    "README.md",
    "frontend/assets/app.js",
    "frontend/assets/index.html",
    "operator/config/crd/bases/domain.yaml",
    "operator/config/samples/domain.yaml",
    "operator/src/api/group_version/domain.rs",
    "operator/src/controllers/domain.rs",
    "operator/tests/domain.rs",
];

/// The `service.mni.dev/v1` templates that are not rendered at all: the backend's test,
/// whose requests carry the default domain kind's spec (the VM backend's tests are
/// `backend/tests/instances.rs`).
pub const SKIPPED: &[&str] = &["backend/tests/api.rs"];

/// The domain module's own modules, and the types of the domain kind's module that other
/// crates use, besides the kind, its spec and its status (which `service.mni.dev/v1` exports).
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const KINDS: &str = "pub mod catalogue;
pub mod validate;
// The types of the Instance's spec and status.
pub use instance::{
    BootDisk, CloudInit, DataDisk, HttpImport, InstanceInterface, InstanceNetwork, Resources,
    SecretReference, VpcAttachment,
};";

/// The backend's own modules (`templates/vm/v1/backend/src/`).
const BACKEND_MODULES: &str = "pub mod power;\nmod validation;";

/// The backend's routes: every write checked with the operator's rules, and the power routes.
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const BACKEND_ROUTES: &str =
    "// Instances are checked with the operator's rules and have power routes.
let domain = domain.with_validation(validation::check);
let openapi = power::openapi(openapi);
let routes = routes.with_routes(power::routes());";

/// The VM specialisation: what `vm.mni.dev/v1` adds to a service.
pub(super) fn specialisation() -> Specialisation {
    Specialisation::new(KEY, "vm", DOMAIN_KIND)
        .with_templates_of_service(TAKEN_OVER, SKIPPED)
        .with_step(
            "Specialise the service for virtual machines: the Instance kind with \
                          CEL validation, its controller onto KubeVirt (VirtualMachine, \
                          DataVolume templates, a cloud-init Secret, Kube-OVN attachment to a \
                          VPC subnet) with status from KubeVirt's, instance and power routes \
                          in the backend, instances in the frontend.",
            "mni-scaffold --plugins vm/v1 new service compute   # Instance in \
                       compute.<domain>/v1alpha1",
        )
        .with_kinds("vm-types", KINDS)
        .with_upstream_crates(&[("mni-kubevirt", "framework/upstreams/kubevirt")])
        .with_operator_dependencies(
            "mni-kubevirt = { workspace = true }\ntracing = { workspace = true }",
        )
        .with_backend(BACKEND_MODULES, BACKEND_ROUTES)
        .with_requires(REQUIRES)
}
