//! `olm.mni.dev/v1`: shipping a scaffolded service through the Operator Lifecycle Manager.
//!
//! Three commands, wired into `mni-scaffold` as the `olm` command group:
//!
//! - `olm bundle` ([`write_bundle`]): a registry+v1 bundle — CSV, CRDs, `annotations.yaml`,
//!   `dependencies.yaml`, `bundle.Containerfile` — generated from PROJECT and `config/`, and
//!   regenerated with a three-way merge ([`merge`]) that keeps what the user edited.
//! - `olm catalog` ([`build_catalog`], [`write_catalog`]): a file-based catalog of bundles.
//! - `olm validate` ([`validate_dir`]): opm's verdict on a catalog, plus mNi's own checks.
//!
//! Why a command group and not a plugin subcommand: the plugin contract (`mni-plugin`) is about
//! scaffolding a Universe at `init`/`create`/`edit` time, chained and recorded in the history;
//! a bundle is a release artifact with its own version and merge base, generated from the
//! scaffolded output rather than into it. A separate group keeps the contract small; the key
//! [`PLUGIN_KEY`] names the PROJECT section ([`PROJECT_KEY`]) where optional CSV metadata lives.
//!
//! The OLM types themselves (CSV subset, catalog schemas, validation) are in `mni-olm`.

mod bundle;
mod catalog;
pub mod merge;
mod project;
pub mod reference;

use std::path::PathBuf;

pub use bundle::{
    BundleReport, BundleRequest, DEFAULT_MIN_KUBE_VERSION, GENERATED_DIR, generate, write_bundle,
};
pub use catalog::{DEFAULT_REGISTRY, build_catalog, validate_dir, write_catalog};
pub use project::PROJECT_KEY;

/// The plugin's key.
pub const PLUGIN_KEY: &str = "olm.mni.dev/v1";

/// Why a bundle or catalog could not be generated, read or validated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// The directory has no PROJECT file.
    #[error("{}: no PROJECT file; run in a scaffolded project or pass -C DIR", .0.display())]
    NoProject(PathBuf),
    /// The project has no CRDs to own.
    #[error("no CRDs under {}; create an API first (`mni-scaffold create api …`)", .0.iter().map(|d| format!("{}/crd/bases", d.display())).collect::<Vec<_>>().join(", "))]
    NoCrds(Vec<PathBuf>),
    /// `--version` is not a semantic version.
    #[error(
        "--version {version:?} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 0.1.0): {message}"
    )]
    Version {
        /// The version given.
        version: String,
        /// What the parser said.
        message: String,
    },
    /// A dependency's version range does not parse.
    #[error("dependency on {package}: {message}")]
    Dependency {
        /// The package.
        package: String,
        /// What is wrong.
        message: String,
    },
    /// A flag's value is malformed, or the flag is not supported here.
    #[error("{flag}: {message}")]
    Flag {
        /// The flag, e.g. `--skip-range`.
        flag: String,
        /// What is wrong, and the fix.
        message: String,
    },
    /// `--default-channel` is not one of `--channels`.
    #[error(
        "--default-channel {channel:?} is not one of --channels {channels:?}; add it to --channels"
    )]
    DefaultChannel {
        /// The default channel.
        channel: String,
        /// The channels.
        channels: String,
    },
    /// A file is not valid YAML.
    #[error("{}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parse error.
        message: String,
    },
    /// A non-YAML file was changed by both the user and the generator.
    #[error("{}: your edits and the regenerated file overlap; resolve by hand (the last generated version is under {GENERATED_DIR}/)", .path.display())]
    Conflict {
        /// The file.
        path: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// A bundle directory is incomplete or inconsistent.
    #[error(transparent)]
    Render(#[from] mni_olm::RenderError),
    /// A catalog directory could not be read or written.
    #[error(transparent)]
    Catalog(#[from] mni_olm::CatalogError),
    /// A catalog built from bundles is invalid.
    #[error(transparent)]
    BuiltCatalog(#[from] mni_olm::ValidationError),
    /// The catalog at `dir` is invalid.
    #[error("{}: {source}", .dir.display())]
    Validation {
        /// The catalog directory.
        dir: PathBuf,
        /// The findings.
        #[source]
        source: mni_olm::ValidationError,
    },
}
