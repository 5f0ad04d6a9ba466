//! `mni-plugin-sdk`: write an `mni-scaffold` service plugin in Rust, as an external plugin
//! binary.
//!
//! An external plugin is an executable that `mni-scaffold` finds at
//! `$MNI_PLUGINS_PATH/NAME/VERSION/NAME` and starts once per request, speaking the JSON
//! protocol of the [`wire`] module (Kubebuilder's `v1alpha1`) over stdin and stdout. With this
//! crate a plugin is written against the same traits as `mni-scaffold`'s built-in plugins
//! ([`Plugin`](prelude::Plugin) and one trait per subcommand, from `mni-plugin`), and its `main`
//! is one call to [`run`], which decodes the request, runs the subcommand over the project's
//! files and encodes the answer. Nothing about the protocol is left to the plugin.
//!
//! Where to start:
//!
//! - [`run`] (and [`handle`], its pure core) — the [`serve`](mod@crate::serve) module docs say
//!   exactly how a request becomes a call of your subcommand;
//! - [`Templates`] — your templates embedded in the binary (`include_str!` or
//!   [`include_dir`]), rendered with Handlebars in strict mode with the name helpers of the
//!   built-in plugins;
//! - [`steps`] — inserts at scaffold markers, a Cargo dependency, a CRD, a sample, a book
//!   page, all idempotent;
//! - [`testing`] — run the real `mni-scaffold` with your plugin installed over a temporary
//!   project, check the files and compile the result.
//!
//! `mni-scaffold plugins new NAME` scaffolds a plugin project on this crate.
//!
//! # A complete plugin
//!
//! This plugin, `docs.acme.io/v1`, adds `docs/<kind>.md` on `create api`, titled with its own
//! flag `--title`, and links it from the README at the Rust plugin's `apis` marker. Built as a
//! binary named `docs.acme.io` and installed as `$MNI_PLUGINS_PATH/docs.acme.io/v1/docs.acme.io`,
//! it runs with `mni-scaffold init --plugins rust-operator,docs`.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use mni_plugin_sdk::prelude::*;
//! use mni_plugin_sdk::{Templates, steps};
//! use mni_plugin_sdk::serde_json::json;
//!
//! struct Docs {
//!     key: PluginKey,
//!     templates: Templates,
//! }
//!
//! impl Plugin for Docs {
//!     fn key(&self) -> &PluginKey {
//!         &self.key
//!     }
//!
//!     fn create_api(&self) -> Option<&dyn CreateApi> {
//!         Some(self)
//!     }
//! }
//!
//! impl CreateApi for Docs {
//!     fn flags(&self) -> Vec<FlagSpec> {
//!         vec![FlagSpec::new("title", FlagType::String, "page title (default: the kind)")]
//!     }
//!
//!     fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
//!         // `--group`, `--version` and `--kind` always arrive: the CLI sends them.
//!         let kind = cx.flags.string("kind").unwrap_or_default();
//!         let title = cx.flags.string("title").unwrap_or_else(|| kind.clone());
//!         let data = json!({"kind": kind, "title": title, "domain": cx.config.domain});
//!         self.templates
//!             .scaffold(cx.universe, &data)
//!             .map_err(|e| e.into_plugin_error(&self.key))?;
//!         if cx.universe.contains("README.md") {
//!             let link = format!("- [{kind}](docs/{}.md)", kind.to_lowercase());
//!             steps::insert_before_marker(
//!                 cx.universe,
//!                 "README.md",
//!                 "<!-- +mni:scaffold:apis -->",
//!                 &link,
//!             )?;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> ExitCode {
//!     // In a plugin crate: `include_str!("../templates/docs/kind.md.hbs")`.
//!     let page = "# {{title}}\n\nThe {{plural (lower kind)}} of {{domain}}.\n";
//!     let plugin = Docs {
//!         key: "docs.acme.io/v1".parse().expect("a valid key"),
//!         templates: Templates::new()
//!             .with_template("docs/{{lower kind}}.md", page)
//!             .expect("the template parses"),
//!     };
//!     mni_plugin_sdk::run(&plugin)
//! }
//! ```
//!
//! **Architecture invariant:** a plugin built on this crate never touches the project on disk;
//! it answers with files and `mni-scaffold` validates and commits them (or refuses them all).

pub mod serve;
pub mod steps;
pub mod templates;
pub mod testing;

pub use include_dir;
pub use mni_plugin;
/// The typed requests and responses of the external-plugin protocol (`mni_plugin::external`).
pub use mni_plugin::external as wire;
pub use serde_json;
pub use serve::{ServeError, fixed_flags, handle, run, serve};
pub use templates::{SUFFIX, TemplateError, Templates};

/// What a plugin implementation needs in scope: the plugin and subcommand traits, their
/// context and errors, flags, keys and the Universe.
pub mod prelude {
    pub use mni_plugin::{
        Context, CreateApi, CreateWebhook, Edit, FlagSpec, FlagType, FlagValue, IfExists, Init,
        NewService, Plugin, PluginError, PluginKey, ProjectConfig, Resource, Subcommand,
        SubcommandMetadata, Universe,
    };
}
