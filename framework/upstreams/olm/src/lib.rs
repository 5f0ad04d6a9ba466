//! `mni-olm`: the Operator Lifecycle Manager's data model, without IO beyond reading and writing
//! directories.
//!
//! Start with [`Catalog`]: a file-based catalog (FBC) as `opm` reads it — `olm.package`,
//! `olm.channel` and `olm.bundle` blobs ([`Package`], [`Channel`], [`Bundle`]) loaded from a
//! directory of JSON or YAML files ([`Catalog::load`]) and written back ([`Catalog::write`]).
//! [`validate`] refuses what `opm validate` refuses (and, unless asked not to, a few things it
//! does not check, labelled as mNi's own). [`render_bundle`] turns a bundle directory
//! (`manifests/` + `metadata/`) into the `olm.bundle` blob `opm render` would emit, with every
//! manifest embedded as an `olm.bundle.object`, so a catalog needs no registry.
//!
//! [`ClusterServiceVersion`] is the typed subset of a CSV that mNi generates and reads; every
//! field it does not model is kept in `extra` maps, so reading and writing a CSV loses nothing a
//! user wrote.
//!
//! For installing from a catalog, [`Catalog::head`], [`Catalog::upgrade_from`] and
//! [`Bundle::objects`] walk the upgrade graph and decode a bundle's embedded manifests.
//!
//! Used by the `olm.mni.dev/v1` plugin (`mni-scaffold olm …`) and meant for the OLM lifecycle
//! controller of `mni-dev`.

mod csv;
mod fbc;
mod graph;
mod range;
mod render;
mod validate;

pub use csv::{
    CSV_API_VERSION, ClusterServiceVersion, CrdDescription, CrdDescriptions, CsvMetadata, CsvSpec,
    Descriptor, InstallMode,
};
pub use fbc::{
    Bundle, Catalog, CatalogError, Channel, ChannelEntry, Package, Property, SCHEMA_BUNDLE,
    SCHEMA_CHANNEL, SCHEMA_PACKAGE,
};
pub use graph::ObjectError;
pub use range::{RangeError, VersionRange};
pub use render::{
    ANNOTATION_CHANNELS, ANNOTATION_DEFAULT_CHANNEL, ANNOTATION_PACKAGE, BundleDir, RenderError,
    render_bundle,
};
pub use validate::{Finding, ValidateOptions, ValidationError, validate};
