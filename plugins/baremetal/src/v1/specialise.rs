//! The bare-metal specialisation of a service: what `baremetal.mni.dev/v1` adds after
//! `service.mni.dev/v1` made the service with the domain kind `Server` and left the files
//! listed in [`TAKEN_OVER`] unwritten.
//!
//! The backend and frontend code is service/v1's, extended rather than replaced: the backend
//! gains two modules of its own (`validation`, the domain's validation hook, and `actions`,
//! the power and provisioning routes and their OpenAPI paths), registered at the markers of
//! its `src/lib.rs` (`modules` and `routes`).

use mni_plugin_service::Specialisation;

use super::KEY;

/// The domain kind of the bare-metal service. Not `BareMetalHost`: Metal3's kind is installed
/// beside it, and `kubectl get bmh` keeps meaning Metal3's.
pub const DOMAIN_KIND: &str = "Server";

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
/// whose requests carry the default domain kind's spec (the bare-metal backend's tests are
/// `backend/tests/servers.rs`).
pub const SKIPPED: &[&str] = &["backend/tests/api.rs"];

/// The domain module's own module, and the types of the domain kind's module that other
/// crates use, besides the kind, its spec and its status (which `service.mni.dev/v1` exports).
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const KINDS: &str = "pub mod validate;
// The types of the Server's spec and status.
pub use server::{
    Bmc, Hardware, HostError, Image, Nic, REBOOT_ANNOTATION, REBOOT_REFUSED, REBOOTED, REBOOTING,
    RebootMode, RebootRequest, RebootStatus, RootDeviceHints, SecretReference, Storage,
};";

/// The backend's own modules (`templates/baremetal/v1/backend/src/`).
const BACKEND_MODULES: &str = "pub mod actions;\nmod validation;";

/// The backend's routes: every write checked with the operator's rules, and the actions.
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const BACKEND_ROUTES: &str =
    "// Servers are checked with the operator's rules and have power and provisioning routes.
let domain = domain.with_validation(validation::check);
let openapi = actions::openapi(openapi);
let routes = routes.with_routes(actions::routes());";

/// The bare-metal specialisation: what `baremetal.mni.dev/v1` adds to a service.
pub(super) fn specialisation() -> Specialisation {
    Specialisation::new(KEY, "baremetal", DOMAIN_KIND)
        .with_templates_of_service(TAKEN_OVER, SKIPPED)
        .with_step(
            "Specialise the service for bare metal: the Server kind with CEL validation, \
             its controller onto Metal3 (a BareMetalHost and its BMC Secret, the BMC \
             pre-flighted over Redfish, deprovisioning before deletion) with status from \
             Metal3's, inventory, power and provisioning routes in the backend, servers in \
             the frontend.",
            "mni-scaffold --plugins baremetal/v1 new service metal   # Server in \
             metal.<domain>/v1alpha1",
        )
        .with_kinds("baremetal-types", KINDS)
        .with_upstream_crates(&[
            ("mni-metal3", "framework/upstreams/metal3"),
            ("mni-redfish", "framework/upstreams/redfish"),
        ])
        .with_operator_dependencies(
            "mni-metal3 = { workspace = true }\nmni-redfish = { workspace = true }\ntracing = { workspace = true }",
        )
        .with_backend(BACKEND_MODULES, BACKEND_ROUTES)
}
