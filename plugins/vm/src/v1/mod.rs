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

use mni_plugin::prelude::*;
use mni_plugin::{Bundle, PluginKey};
use mni_plugin_kustomize::KustomizeV1;
use mni_plugin_rust::RustV1;
use mni_plugin_service::ServiceV1;

pub use specialise::{DOMAIN_KIND, REQUIRES, SKIPPED, TAKEN_OVER};

/// The plugin's key.
pub const KEY: &str = "vm.mni.dev/v1";

/// The `vm.mni.dev/v1` plugin. See the [module docs](self).
pub struct VmV1 {
    key: PluginKey,
    /// `init` and `create api`: the Rust and kustomize plugins.
    project: Bundle,
    /// `new service`: Rust, kustomize, service/v1 for `Instance`, the specialisation.
    service: Bundle,
}

impl VmV1 {
    /// The plugin with its templates registered.
    ///
    /// # Panics
    ///
    /// Only if a built-in template does not parse (ruled out by the unit tests).
    #[must_use]
    pub fn new() -> Self {
        let key: PluginKey = KEY.parse().expect("KEY is a valid plugin key");
        let project = Bundle::new(
            key.clone(),
            vec![
                Box::new(RustV1::new().with_root_crate_default(false)),
                Box::new(KustomizeV1::new()),
            ],
        );
        let service = Bundle::new(
            key.clone(),
            vec![
                Box::new(RustV1::new()),
                Box::new(KustomizeV1::new()),
                Box::new(
                    ServiceV1::new()
                        .with_domain_kind(DOMAIN_KIND)
                        .without_templates(TAKEN_OVER.iter().chain(SKIPPED).copied()),
                ),
                Box::new(specialise::VmService::new(key.clone())),
            ],
        );
        Self {
            key,
            project,
            service,
        }
    }
}

impl Default for VmV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for VmV1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmV1").field("key", &self.key).finish()
    }
}

impl Plugin for VmV1 {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn description(&self) -> String {
        "Scaffolds the VM service: tenants' Instances (an instance type or cores and memory, a \
         container disk or an HTTP(S) import, data disks, cloud-init with SSH keys, a run \
         strategy, the pod network or a VPC subnet) reconciled onto KubeVirt (kubevirt.io/v1, \
         cdi.kubevirt.io/v1beta1) with validation and status, plus a backend and frontend for \
         instances and their power actions (new service). init and create api do what the \
         default bundle does."
            .to_owned()
    }

    fn init(&self) -> Option<&dyn Init> {
        self.project.init()
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        self.project.create_api()
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        self.service.new_service()
    }
}

#[cfg(test)]
mod tests;
