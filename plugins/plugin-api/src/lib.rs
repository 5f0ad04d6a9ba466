//! `mni-plugin`: the contract between `mni-scaffold` and its plugins.
//!
//! Start with [`Plugin`] and the subcommand traits ([`Init`], [`NewService`], [`CreateApi`],
//! [`CreateWebhook`], [`Edit`]): a plugin mutates a [`Universe`] (the project's files in memory)
//! and a [`ProjectConfig`] (the `PROJECT` file) according to its parsed [`FlagValues`]. Plugins
//! are named by a [`PluginKey`]; [`ChainResolver`] turns `--plugins` or the project's layout into
//! a chain of keys. External plugins speak the JSON of the [`external`] module.
//!
//! **Architecture invariant:** this crate knows nothing about the file system. Reading the
//! project, validating and committing files is `mni-machinery`'s job; here everything is strings.

mod bundle;
mod chain;
pub mod external;
mod flags;
mod key;
pub mod names;
mod plugin;
mod project;
mod universe;

pub use bundle::Bundle;
pub use chain::{ChainResolver, ResolveError};
pub use flags::{FlagError, FlagSpec, FlagType, FlagValue, FlagValues};
pub use key::{KeyError, PluginKey, PluginVersion, Stage};
pub use plugin::{
    Context, CreateApi, CreateWebhook, Edit, Init, NewService, Plugin, PluginError, Subcommand,
    SubcommandImpl, SubcommandMetadata, run, subcommand,
};
pub use project::{
    PROJECT_FILE, PROJECT_VERSION, ProjectConfig, ProjectError, Resource, ResourceApi, Service,
    Webhooks,
};
pub use universe::{
    FileState, IfExists, Universe, UniverseError, UniverseFile, WriteOutcome, normalize_path,
};

/// The traits a plugin implementation needs in scope.
pub mod prelude {
    pub use crate::{
        Context, CreateApi, CreateWebhook, Edit, Init, NewService, Plugin, PluginError,
    };
}
