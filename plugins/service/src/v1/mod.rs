//! `service.mni.dev/v1`.
//!
//! It implements `new service NAME` and runs after `rust.mni.dev/v1` (which makes the bare
//! operator crate) and `kustomize.mni.dev/v1` (its `config/`). The service's crates sit where
//! PROJECT records the operator crate: `SVC` is `services/billing/` (nested), or the project
//! root for the only service of a project without root crate (flat; see
//! `mni_plugin_rust::v1::ServiceLayout`, `new service --layout`). For `billing` in domain
//! `example.com` it adds (`OP` is `SVC/operator/`):
//!
//! ```text
//! SVC/README.md                                  how the three crates fit together, how to run them
//! OP/src/api/billing_v1alpha1/billing.rs          the service CRD `Billing`: frontend + backend WorkloadSpecs
//! OP/src/api/billing_v1alpha1/billing_account.rs the domain kind `BillingAccount`
//! OP/src/controllers/billing.rs                   what a Billing runs, through the runtime's workload engine
//! OP/src/controllers/billing_account.rs           the domain kind's skeleton controller
//! OP/tests/billing.rs, billing_account.rs         the controllers on mni-testkit with the simulator
//! OP/config/crd/bases/, config/samples/           both CRDs (equal to `crd` output) and samples
//! SVC/backend/                                   thin axum API on mni-web: CRUD on BillingAccounts, OpenAPI, probes
//! SVC/frontend/                                  thin web UI on mni-web: embedded assets, /api proxied to the backend
//! ```
//!
//! It also registers both kinds and controllers at the operator's scaffold markers, adds
//! the backend and frontend to the workspace `members`, adds `mni-core` to the
//! operator's dependencies and `mni-core` and `mni-web` to the workspace's, re-derives `config/rbac/role.yaml` (the service controller
//! declares what it applies), and records both kinds and all three crates in PROJECT.
//!
//! Names are derived in [`ServiceNames`]; a name that is invalid or taken is bad input
//! (exit 2) before anything is written.
//!
//! A plugin that builds a specialised service on this one (e.g. `vpc.mni.dev/v1`) constructs it
//! with [`ServiceV1::with_domain_kind`] to name the domain kind and
//! [`ServiceV1::without_templates`] to render the domain kind's files (or any other) itself;
//! [`ServiceV1::new`] is the default, `<Name>Account` with every file. [`specialised`] is the
//! base such plugins share: a [`Specialisation`] says what the plugin adds, a
//! [`SpecialisedService`] is the whole plugin.
//!
//! The backend and frontend are thin: what every service's web tier does is `mni-web`'s.
//! A plugin extends them at their markers rather than replacing them: in the backend's
//! `src/lib.rs`, `modules` (its own modules) and `routes` (statements that shadow `domain`,
//! `openapi` or `routes`, e.g. `let domain = domain.with_validation(check);`); in the
//! frontend's `src/lib.rs`, `assets`; in both `Cargo.toml`s, `dependencies`.
//!
//! The CRD templates (`operator/config/crd/bases/*.yaml.hbs`) are what the generated types
//! print; after changing a type template, regenerate them with
//! `plugins/service/scripts/crd-templates.sh` (the generated project's `tests/manifests.rs`
//! fails until then).

mod names;
mod new_service;
pub mod specialised;
pub mod testing;

use mni_machinery::Templates;
use mni_plugin::PluginKey;
use mni_plugin::prelude::*;
use mni_plugin_kustomize::KustomizeV1;

pub use specialised::{Specialisation, SpecialisedService};

pub use names::{
    API_VERSION, BACKEND_CRATE, FRONTEND_CRATE, RESERVED_KINDS, ServiceCrate, ServiceNameError,
    ServiceNames,
};

/// The plugin's key.
pub const KEY: &str = "service.mni.dev/v1";

/// The `service.mni.dev/v1` plugin. See the [module docs](self).
pub struct ServiceV1 {
    key: PluginKey,
    templates: Templates,
    kustomize: KustomizeV1,
    domain_kind: Option<String>,
    skipped: std::collections::BTreeSet<String>,
}

impl ServiceV1 {
    /// The plugin with its templates registered.
    ///
    /// # Panics
    ///
    /// Only if a built-in template does not parse (ruled out by the unit tests).
    #[must_use]
    pub fn new() -> Self {
        Self {
            key: KEY.parse().expect("KEY is a valid plugin key"),
            templates: Templates::deferred(mni_templates::files("service", "v1")),
            kustomize: KustomizeV1::new(),
            domain_kind: None,
            skipped: std::collections::BTreeSet::new(),
        }
    }

    /// Names the domain kind `kind` (PascalCase) instead of `<Name>Account`.
    #[must_use]
    pub fn with_domain_kind(mut self, kind: &str) -> Self {
        self.domain_kind = Some(kind.to_owned());
        self
    }

    /// Does not render these templates (names as under `templates/service/v1/`, without
    /// `.hbs`, e.g. `operator/src/api/group_version/domain.rs`): the plugin that asks renders
    /// the same output paths itself. Registrations at markers stay.
    #[must_use]
    pub fn without_templates<'a>(mut self, templates: impl IntoIterator<Item = &'a str>) -> Self {
        self.skipped
            .extend(templates.into_iter().map(ToOwned::to_owned));
        self
    }
}

impl Default for ServiceV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ServiceV1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceV1")
            .field("key", &self.key)
            .field("domain_kind", &self.domain_kind)
            .finish()
    }
}

impl Plugin for ServiceV1 {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn description(&self) -> String {
        "Scaffolds a complete service on top of the operator crate rust.mni.dev/v1 makes: the \
         service CRD (frontend and backend workloads) and its controller, a domain kind, an axum \
         backend doing CRUD on it through the Kubernetes API, a web frontend with embedded \
         assets, manifests and tests (new service). Runs after rust.mni.dev/v1 and \
         kustomize.mni.dev/v1."
            .to_owned()
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
