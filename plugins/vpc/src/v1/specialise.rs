//! The VPC specialisation of a service: the last step of `new service` with `vpc.mni.dev/v1`.
//!
//! It runs after `service.mni.dev/v1` made the service with the domain kind
//! `VirtualPrivateCloud` and left the files listed in [`TAKEN_OVER`] unwritten; it renders
//! `templates/vpc/v1/` (those output paths and a few more), registers what it adds at the
//! scaffold markers, re-derives the operator's role and records the service under its key.
//!
//! The backend and frontend code is service/v1's, extended rather than replaced: the backend
//! gains two modules of its own (`validation`, the domain's validation hook, and `subnets`,
//! the subnet routes and their OpenAPI paths), registered at the markers of its `src/lib.rs` (`modules` and `routes`).

use mni_machinery::Insert;
use mni_plugin_rust::v1::Target;
use mni_plugin_service::Specialisation;
use mni_plugin_service::v1::ServiceNames;

use super::KEY;

/// The domain kind of the VPC service.
pub const DOMAIN_KIND: &str = "VirtualPrivateCloud";

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
/// whose requests carry the default domain kind's spec (the VPC backend's tests are
/// `backend/tests/virtual_private_clouds.rs`).
pub const SKIPPED: &[&str] = &["backend/tests/api.rs"];

/// The domain module's own module, and the types of the domain kind's module that other
/// crates use, besides the kind, its spec and its status (which `service.mni.dev/v1` exports).
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const KINDS: &str = "pub mod validate;
// The types of the VirtualPrivateCloud's spec and status.
pub use virtual_private_cloud::{
    DnatRule, Eip, EipStatus, NatGateway, NatGatewayStatus, Protocol, RoutePolicy, SnatRule,
    StaticRoute, SubnetSpec, SubnetStatus,
};";

/// The backend's own modules (`templates/vpc/v1/backend/src/`).
const BACKEND_MODULES: &str = "pub mod subnets;\nmod validation;";

/// The backend's routes: every write checked with the operator's rules, and the subnet routes.
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const BACKEND_ROUTES: &str = "// VPCs are checked with the operator's rules and have subnet routes.
let domain = domain.with_validation(validation::check);
let openapi = subnets::openapi(openapi);
let routes = routes.with_routes(subnets::routes());";

/// The orphan sweeper: its module and its registration in `main.rs`.
fn orphan_sweeper(target: &Target, _names: &ServiceNames) -> Vec<(String, Insert)> {
    let op = &target.dir;
    vec![
        (
            format!("{op}src/controllers/mod.rs"),
            Insert::new(
                "controller-modules",
                "kube_ovn_orphans",
                "pub mod kube_ovn_orphans;",
            ),
        ),
        (
            format!("{op}src/main.rs"),
            Insert::new(
                "imports",
                "kube-ovn-orphans",
                &format!(
                    "use {}::controllers::kube_ovn_orphans::KubeOvnOrphanReconciler;",
                    target.crate_ident
                ),
            ),
        ),
        (
            format!("{op}src/main.rs"),
            Insert::new(
                "controllers",
                "kube-ovn-orphans",
                "// Kube-OVN objects whose VirtualPrivateCloud is gone are deleted.\n\
                 let options = ControllerOptions::default().with_error_reporting(false);\n\
                 let manager = manager.with_controller_options(KubeOvnOrphanReconciler, options);",
            ),
        ),
    ]
}

/// The VPC specialisation: what `vpc.mni.dev/v1` adds to a service.
pub(super) fn specialisation() -> Specialisation {
    Specialisation::new(KEY, "vpc", DOMAIN_KIND)
        .with_templates_of_service(TAKEN_OVER, SKIPPED)
        .with_step(
            "Specialise the service for VPCs: the VirtualPrivateCloud kind with CEL \
             validation, its controller onto Kube-OVN (Vpc, Subnets, NAT gateway, EIPs, \
             SNAT/DNAT rules) with finalizer cleanup and status, VPC and subnet routes in the \
             backend, VPCs in the frontend.",
            "mni-scaffold --plugins vpc/v1 new service network   # VirtualPrivateCloud in \
             network.<domain>/v1alpha1",
        )
        .with_kinds("vpc-types", KINDS)
        .with_extra_inserts(orphan_sweeper)
        .with_upstream_crates(&[("mni-kubeovn", "framework/upstreams/kubeovn")])
        .with_operator_dependencies(
            "mni-kubeovn = { workspace = true }\nsha2 = { workspace = true }\ntracing = { workspace = true }",
        )
        .with_backend(BACKEND_MODULES, BACKEND_ROUTES)
}
