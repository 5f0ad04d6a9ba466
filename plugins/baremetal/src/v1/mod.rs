//! `baremetal.mni.dev/v1`: a [`SpecialisedService`] (see
//! [`mni_plugin_service::v1::specialised`] for what `init`, `create api` and `new service` run).
//!
//! What the specialisation writes for `metal` (`SVC` is the project root in a flat project,
//! else `services/metal/`; `OP` is `SVC/operator/`, `GV` is `src/api/metal_v1alpha1/`):
//!
//! ```text
//! OP/GV/server.rs                         the Server kind, CEL rules in its schema
//! OP/GV/validate.rs                       the same rules in Rust, shared with the backend
//! OP/src/controllers/server.rs            validate, pre-flight, apply onto Metal3, deprovision on delete
//! OP/src/controllers/server/upstream.rs   the BareMetalHost and BMC Secret, pure
//! OP/src/controllers/server/preflight.rs  the BMC over Redfish: reachable, credentials, boot MAC
//! OP/src/controllers/server/status.rs     conditions from Metal3's own status
//! OP/tests/server.rs                      against sushy-emulator and the Metal3 simulator
//! OP/tests/validation.rs                  bad input, at admission and after
//! OP/config/crd/bases/, config/samples/   the CRD (equal to `crd` output) and a sample
//! SVC/backend/src/validation.rs           the domain's validation hook (the operator's rules)
//! SVC/backend/src/actions.rs              power on/off/reboot, provision, deprovision routes
//! SVC/backend/tests/servers.rs            server and action routes over HTTP
//! SVC/frontend/assets/{index.html,app.js} the inventory, a register form, action buttons
//! ```
//!
//! It also adds `mni-metal3` and `mni-redfish` to the operator, re-derives
//! `config/rbac/role.yaml` (the operator gains `metal3.io` and Secret permissions; the
//! backend's Role does not) and records the service under this key in PROJECT.
//!
//! The CRD template is what the generated types print: after changing
//! `operator/src/api/group_version/server.rs.hbs`, regenerate it with
//! `plugins/baremetal/scripts/crd-template.sh`.

mod specialise;

use mni_plugin::PluginKey;
use mni_plugin::prelude::*;
use mni_plugin_service::SpecialisedService;

pub use specialise::{DOMAIN_KIND, SKIPPED, TAKEN_OVER};

/// What `mni-scaffold help` says of the plugin.
const DESCRIPTION: &str = "Scaffolds the bare-metal service: tenants' Servers (a BMC address \
     as Metal3 parses it, credentials from a Secret, the boot MAC, desired power, an OS image \
     with its checksum, user data, root device hints, host-selector labels) pre-flighted over \
     Redfish and reconciled onto Metal3 (metal3.io/v1alpha1 BareMetalHost) with validation, \
     deprovisioning before deletion and status, plus a backend and frontend for the inventory \
     and power and provisioning actions (new service). init and create api do what the \
     default bundle does.";

/// The plugin's key.
pub const KEY: &str = "baremetal.mni.dev/v1";

/// The `baremetal.mni.dev/v1` plugin: a [`SpecialisedService`] (see the [module docs](self)).
#[derive(Debug)]
pub struct BaremetalV1(SpecialisedService);

impl BaremetalV1 {
    /// The plugin with its templates registered.
    #[must_use]
    pub fn new() -> Self {
        Self(SpecialisedService::new(
            specialise::specialisation().with_description(DESCRIPTION),
        ))
    }
}

impl Default for BaremetalV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl Plugin for BaremetalV1 {
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
