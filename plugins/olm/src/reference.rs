//! The committed OLM catalog of the reference services, `services/catalog/`: one bundle per
//! service (`bundles/<package>/`) and the file-based catalog of all of them (`catalog/`).
//!
//! Regenerate it with `cargo run -p mni-plugin-olm --bin regen-olm-catalog`; the test
//! `reference_catalog` of this crate fails when the committed tree drifts from what
//! [`regenerate`] writes.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{
    BundleError, BundleRequest, DEFAULT_REGISTRY, build_catalog, write_bundle, write_catalog,
};

/// The command that regenerates the reference catalog.
pub const REGEN_COMMAND: &str = "cargo run -p mni-plugin-olm --bin regen-olm-catalog";

/// The reference services: (directory under `services/`, package, bundle request).
pub fn services() -> Vec<(&'static str, &'static str, BundleRequest)> {
    let request = |package: &str| {
        BundleRequest::new("0.1.0")
            .with_package(Some(package.to_owned()))
            .with_channels(vec!["alpha".into()])
            .with_image(Some(format!(
                "{DEFAULT_REGISTRY}/{package}-operator:v0.1.0"
            )))
    };
    vec![
        ("vpc", "mni-vpc", request("mni-vpc")),
        // The VM service attaches instances to VPC subnets: it needs the VPC service's API
        // (the olm.gvk from its PROJECT) and a VPC operator of the same minor.
        (
            "vm",
            "mni-vm",
            request("mni-vm").with_dependency("mni-vpc", ">=0.1.0 <0.2.0"),
        ),
        ("baremetal", "mni-baremetal", request("mni-baremetal")),
        // The platform operator (tenants); its tenants' default VPCs come from mni-vpc when
        // that is installed, so it does not require it.
        ("platform", "mni-platform", request("mni-platform")),
    ]
}

/// Writes the reference catalog of the checkout at `repo` into `out/bundles` and `out/catalog`
/// (replaced).
pub fn regenerate(repo: &Path, out: &Path) -> Result<(), BundleError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| BundleError::Io { path, source }
    };
    // Only the generated parts: the README beside them is written by hand.
    for part in ["bundles", "catalog"] {
        let dir = out.join(part);
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
    }
    let mut bundles: Vec<PathBuf> = Vec::new();
    for (service, package, request) in services() {
        let dir = out.join("bundles").join(package);
        write_bundle(&repo.join("services").join(service), &dir, &request)?;
        // A fresh generation has nothing to merge with later: no base to keep.
        let generated = dir.join(crate::GENERATED_DIR);
        fs::remove_dir_all(&generated).map_err(io(&generated))?;
        bundles.push(dir);
    }
    let catalog = build_catalog(&bundles, DEFAULT_REGISTRY, false)?;
    write_catalog(&catalog, &out.join("catalog"))
}
