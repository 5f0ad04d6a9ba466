//! `vm.mni.dev/v1`.
//!
//! One key that does the whole job, since `--plugins vm/v1` replaces the chain:
//!
//! - `init` and `create api`: `rust.mni.dev/v1`, then `kustomize.mni.dev/v1` (as the default
//!   bundle), except that `init --root-crate` defaults to `false`: a VM project is one
//!   service, laid out flat at the root (`operator/`, `backend/`, `frontend/`);
//! - `new service NAME`: `rust.mni.dev/v1` (the operator crate), `kustomize.mni.dev/v1` (its
//!   `config/`), `service.mni.dev/v1` built with
//!   [`ServiceV1::with_domain_kind`]`("Instance")` and [`ServiceV1::without_templates`] (it
//!   renders the service kind, the backend and frontend skeletons and every registration, and
//!   leaves the files below to this plugin), then the VM specialisation (see `specialise`).
//!
//! What the specialisation writes for `compute` (`SVC` is the project root in a flat project,
//! else `services/compute/`; `OP` is `SVC/operator/`, `GV` is `src/api/compute_v1alpha1/`):
//!
//! ```text
//! OP/GV/instance.rs                        the Instance kind, CEL rules in its schema
//! OP/GV/catalogue.rs                       the instance types (s1.small … m1.xlarge)
//! OP/GV/validate.rs                        the same rules in Rust, shared with the backend
//! OP/src/controllers/instance.rs           validate, wait for the network, apply onto KubeVirt
//! OP/src/controllers/instance/network.rs   the VPC service's published API, as read here
//! OP/src/controllers/instance/upstream.rs  the VirtualMachine and cloud-init Secret, pure
//! OP/src/controllers/instance/status.rs    conditions from KubeVirt's own status
//! OP/tests/instance.rs                     reconcile, VPC dependency, power, import, cleanup
//! OP/tests/validation.rs                   bad input, at admission and after
//! OP/config/crd/bases/, config/samples/    the CRD (equal to `crd` output) and a sample
//! SVC/backend/src/validation.rs            the domain's validation hook (the operator's rules)
//! SVC/backend/src/power.rs                 start, stop and restart routes
//! SVC/backend/tests/instances.rs           instance and power routes over HTTP
//! SVC/frontend/assets/{index.html,app.js}  instances, a create form, power buttons
//! ```
//!
//! The backend's two modules go in at the markers of its `src/lib.rs` (`modules`, `routes`);
//! everything else of the backend and frontend is service/v1's, on `mni-web`.
//!
//! It also adds `mni-kubevirt` (KubeVirt's and CDI's types) to the operator, re-derives
//! `config/rbac/role.yaml` (the operator gains `kubevirt.io`, `cdi.kubevirt.io`, Secret and
//! read-only `network.mni.dev` permissions; the backend's Role does not) and records the
//! service under this key in PROJECT, with the kinds of other services it requires
//! (`requires:`, for OLM's `olm.gvk.required`).
//!
//! The CRD template is what the generated types print: after changing
//! `operator/src/api/group_version/instance.rs.hbs`, regenerate it with
//! `plugins/vm/scripts/crd-template.sh`.

mod specialise;

use mni_plugin::PluginKey;
use mni_plugin::prelude::*;
use mni_plugin_service::SpecialisedService;

pub use specialise::{DOMAIN_KIND, REQUIRES, SKIPPED, TAKEN_OVER};

/// What `mni-scaffold help` says of the plugin.
const DESCRIPTION: &str = "Scaffolds the VM service: tenants' Instances (an instance type or cores and memory, a \
     container disk or an HTTP(S) import, data disks, cloud-init with SSH keys, a run \
     strategy, the pod network or a VPC subnet) reconciled onto KubeVirt (kubevirt.io/v1, \
     cdi.kubevirt.io/v1beta1) with validation and status, plus a backend and frontend for \
     instances and their power actions (new service). init and create api do what the \
     default bundle does.";

/// The plugin's key.
pub const KEY: &str = "vm.mni.dev/v1";

/// The `vm.mni.dev/v1` plugin: a [`SpecialisedService`] (see the [module docs](self)).
#[derive(Debug)]
pub struct VmV1(SpecialisedService);

impl VmV1 {
    /// The plugin with its templates registered.
    #[must_use]
    pub fn new() -> Self {
        Self(SpecialisedService::new(
            specialise::specialisation().with_description(DESCRIPTION),
        ))
    }
}

impl Default for VmV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl Plugin for VmV1 {
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
