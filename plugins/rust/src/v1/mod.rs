//! `rust.mni.dev/v1`.
//!
//! Layout of what it generates (for a crate at `DIR`: the project root, or a service's
//! `operator/` or `services/NAME/operator/`, see [`ServiceLayout`]):
//!
//! ```text
//! DIR/Cargo.toml                  the root also holds [workspace] with a `members` marker
//! DIR/src/main.rs                 mni_operator::run with the CRDs, `controllers` marker
//! DIR/src/lib.rs                  pub mod api; pub mod controllers;
//! DIR/src/api/mod.rs              `api-modules` marker, crds() with a `crds` marker
//! DIR/src/api/GROUP_VERSION/      one module per group and version, a file per kind
//! DIR/src/controllers/KIND.rs     one Reconciler per kind, with `+mni:rbac` lines
//! DIR/tests/KIND.rs               the controller against mni-testkit
//! DIR/src/webhooks/               `create webhook`: a module per kind (Defaulter, Validator,
//!                                 conversion), `server()` and `register()` called by main.rs
//! DIR/tests/KIND_webhook.rs       the webhooks through mni-testkit's admission chain
//! Dockerfile                      (at the root) any crate of the workspace (`--build-arg BINARY=`)
//!                                 as a static musl binary on distroless nonroot
//! ```
//!
//! With `init --root-crate=false` the root `Cargo.toml` is a virtual workspace (no `src/` or
//! `config/` at the root, and the `Dockerfile` has no default binary): a project that is one service, whose crates
//! `new service` then puts at the root (`operator/`, `backend/`, `frontend/`).
//!
//! Project-wide choices made at `init` (owner, license, where the mNi crates come from,
//! whether there is a root crate) are kept in PROJECT under `plugins.rust.mni.dev/v1` as
//! [`Settings`].

mod api;
mod init;
mod layout;
mod service;
mod settings;
mod target;
mod webhook;

use mni_machinery::Templates;
use mni_plugin::PluginKey;
use mni_plugin::prelude::*;

pub use api::{Kind, create_api_flags};
pub use init::reinit_policy;
pub use layout::{LAYOUT_FLAG, ServiceLayout};
pub use settings::{LICENSES, License, MniSource, Settings};
pub use target::{OPERATOR_CRATE, Target};
pub use webhook::{WebhookRequest, create_webhook_flags};

/// The plugin's key.
pub const KEY: &str = "rust.mni.dev/v1";

/// The `rust.mni.dev/v1` plugin. See the [module docs](self).
pub struct RustV1 {
    key: PluginKey,
    templates: Templates,
    root_crate: bool,
}

impl RustV1 {
    /// The plugin with its templates registered.
    ///
    /// # Panics
    ///
    /// Never on user input: only if the templates compiled into the binary do not parse, which
    /// the unit tests rule out.
    #[must_use]
    pub fn new() -> Self {
        Self {
            key: KEY.parse().expect("KEY is a valid plugin key"),
            templates: Templates::deferred(mni_templates::files("rust", "v1")),
            root_crate: true,
        }
    }

    /// Makes `false` the default of `init --root-crate` (a plugin whose projects are one
    /// service, like `vpc.mni.dev/v1`, asks for it).
    #[must_use]
    pub fn with_root_crate_default(mut self, root_crate: bool) -> Self {
        self.root_crate = root_crate;
        self
    }
}

impl Default for RustV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RustV1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RustV1").field("key", &self.key).finish()
    }
}

impl Plugin for RustV1 {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn description(&self) -> String {
        "Scaffolds Rust operators on the mNi runtime: a Cargo workspace whose root crate is an \
         operator (init), an operator crate per service (new service), and per kind a \
         CustomResource type, a controller registered in main.rs and a test on mni-testkit \
         (create api); per kind a defaulting, validating or conversion webhook served beside \
         the controllers (create webhook)."
            .to_owned()
    }

    fn init(&self) -> Option<&dyn Init> {
        Some(self)
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        Some(self)
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        Some(self)
    }

    fn create_webhook(&self) -> Option<&dyn CreateWebhook> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
