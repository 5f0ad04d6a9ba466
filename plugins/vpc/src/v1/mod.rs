//! `vpc.mni.dev/v1`.
//!
//! One key that does the whole job, since `--plugins vpc/v1` replaces the chain:
//!
//! - `init` and `create api`: `rust.mni.dev/v1`, then `kustomize.mni.dev/v1` (as the default
//!   bundle), except that `init --root-crate` defaults to `false`: a VPC project is one
//!   service, so its root is a virtual workspace and the service's crates are laid out flat at
//!   the root (`operator/`, `backend/`, `frontend/`; `new service --layout` says otherwise);
//! - `new service NAME`: `rust.mni.dev/v1` (the operator crate), `kustomize.mni.dev/v1` (its
//!   `config/`), `service.mni.dev/v1` built with
//!   [`ServiceV1::with_domain_kind`]`("VirtualPrivateCloud")` and
//!   [`ServiceV1::without_templates`] (it renders the service kind, the backend and frontend
//!   skeletons and every registration, and leaves the files below to this plugin), then the
//!   VPC specialisation (see `specialise`).
//!
//! What the specialisation writes for `network` (`SVC` is the project root in a flat project,
//! else `services/network/`; `OP` is `SVC/operator/`, `GV` is `src/api/network_v1alpha1/`):
//!
//! ```text
//! OP/GV/virtual_private_cloud.rs                 the VirtualPrivateCloud kind, CEL rules in its schema
//! OP/GV/validate.rs                              the same rules in Rust, shared with the backend
//! OP/src/controllers/virtual_private_cloud.rs    validate, apply onto Kube-OVN, prune, finalizer
//! OP/src/controllers/virtual_private_cloud/upstream.rs   the Kube-OVN objects as pure functions
//! OP/src/controllers/virtual_private_cloud/status.rs     conditions and per-subnet status
//! OP/src/controllers/kube_ovn_orphans.rs         deletes labelled Kube-OVN objects without owner
//! OP/tests/virtual_private_cloud.rs              reconcile, cleanup, status on mni-testkit
//! OP/tests/validation.rs                         invalid address plans, at admission and after
//! OP/config/crd/bases/, config/samples/          the CRD (equal to `crd` output) and a sample
//! SVC/backend/src/validation.rs                  the domain's validation hook (the operator's rules)
//! SVC/backend/src/subnets.rs                     subnet routes and their OpenAPI paths
//! SVC/backend/tests/virtual_private_clouds.rs    VPC and subnet routes over HTTP
//! SVC/frontend/assets/{index.html,app.js}        VPCs, subnets, EIPs
//! ```
//!
//! The backend's two modules go in at the markers of its `src/lib.rs` (`modules`, `routes`); everything else of the backend and frontend is service/v1's, on `mni-web`.
//!
//! It also adds `mni-kubeovn` (Kube-OVN's types) to the operator, registers the orphan sweeper
//! in `main.rs`, re-derives `config/rbac/role.yaml` (the operator gains `kubeovn.io`
//! permissions; the backend's Role does not) and records the service under this key in
//! PROJECT.
//!
//! The CRD template is what the generated types print: after changing
//! `operator/src/api/group_version/virtual_private_cloud.rs.hbs`, regenerate it with
//! `plugins/vpc/scripts/crd-template.sh`.

mod specialise;

use mni_plugin::PluginKey;
use mni_plugin::prelude::*;
use mni_plugin_service::SpecialisedService;

pub use specialise::{DOMAIN_KIND, SKIPPED, TAKEN_OVER};

/// What `mni-scaffold help` says of the plugin.
const DESCRIPTION: &str = "Scaffolds the VPC service: tenants' VirtualPrivateClouds (subnets, static routes, bound \
     namespaces, a NAT gateway with EIPs and SNAT/DNAT rules) reconciled onto Kube-OVN \
     (kubeovn.io/v1) with validation, finalizer cleanup and aggregated status, plus a \
     backend and frontend for VPCs and subnets (new service). init and create api do what \
     the default bundle does.";

/// The plugin's key.
pub const KEY: &str = "vpc.mni.dev/v1";

/// The `vpc.mni.dev/v1` plugin: a [`SpecialisedService`] (see the [module docs](self)).
#[derive(Debug)]
pub struct VpcV1(SpecialisedService);

impl VpcV1 {
    /// The plugin with its templates registered.
    #[must_use]
    pub fn new() -> Self {
        Self(SpecialisedService::new(
            specialise::specialisation().with_description(DESCRIPTION),
        ))
    }
}

impl Default for VpcV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl Plugin for VpcV1 {
    fn key(&self) -> &PluginKey {
        self.0.key()
    }

    fn description(&self) -> String {
        self.0.description()
    }

    fn init(&self) -> Option<&dyn Init> {
        self.0.init()
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        self.0.create_api()
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        self.0.new_service()
    }
}

#[cfg(test)]
mod tests;
