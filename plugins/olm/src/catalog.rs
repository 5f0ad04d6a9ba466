//! `mni-scaffold olm catalog`: a file-based catalog built from bundle directories, and
//! `olm validate`.
//!
//! [`build_catalog`] renders each bundle ([`mni_olm::render_bundle`], manifests embedded, so the
//! catalog needs no registry), groups them into one `olm.package` per package (default channel:
//! the newest bundle's) and one `olm.channel` per channel (entries in version order, with each
//! CSV's `replaces`, `skips` and `olm.skipRange`), and validates the result.
//! [`write_catalog`] writes it to a staging directory and swaps it in only when complete.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use mni_olm::{
    BundleDir, Catalog, Channel, Package, SCHEMA_CHANNEL, SCHEMA_PACKAGE, ValidateOptions,
    render_bundle, validate,
};

use crate::BundleError;

/// The registry bundle images are named in when none is given.
pub const DEFAULT_REGISTRY: &str = "ghcr.io/mni-cloud";

/// Builds a catalog from `bundles`; each bundle's image is `<registry>/<package>-bundle:v<version>`.
/// The catalog is validated before it is returned; with `opm_rules_only`, only by the rules
/// `opm validate` applies (so bundles whose `replaces` edge leaves the catalog, as upstream
/// bundles taken one at a time do, still make one).
pub fn build_catalog(
    bundles: &[PathBuf],
    registry: &str,
    opm_rules_only: bool,
) -> Result<Catalog, BundleError> {
    let mut read = Vec::new();
    for dir in bundles {
        let bundle = BundleDir::read(dir)?;
        let version =
            semver::Version::parse(&bundle.csv.spec.version).map_err(|e| BundleError::Version {
                version: bundle.csv.spec.version.clone(),
                message: format!("{} (spec.version of {})", e, bundle.csv.metadata.name),
            })?;
        read.push((version, bundle));
    }
    read.sort_by(|a, b| (a.1.package(), &a.0).cmp(&(b.1.package(), &b.0)));
    let mut catalog = Catalog::default();
    let mut packages: BTreeMap<String, Package> = BTreeMap::new();
    let mut channels: BTreeMap<(String, String), Channel> = BTreeMap::new();
    for (version, bundle) in &read {
        let package = bundle.package().to_owned();
        let image = format!("{registry}/{package}-bundle:v{version}");
        catalog.bundles.push(render_bundle(bundle, &image));
        let entry = packages.entry(package.clone()).or_insert_with(|| Package {
            schema: SCHEMA_PACKAGE.into(),
            name: package.clone(),
            ..Package::default()
        });
        // Newest wins: bundles are in version order.
        if let Some(default) = bundle.default_channel() {
            entry.default_channel = default.to_owned();
        } else if let Some(first) = bundle.channels().first() {
            entry.default_channel = first.clone();
        }
        for channel in bundle.channels() {
            channels
                .entry((package.clone(), channel.clone()))
                .or_insert_with(|| Channel {
                    schema: SCHEMA_CHANNEL.into(),
                    package: package.clone(),
                    name: channel.clone(),
                    ..Channel::default()
                })
                .entries
                .push(bundle.entry());
        }
    }
    catalog.packages = packages.into_values().collect();
    catalog.channels = channels.into_values().collect();
    validate(
        &catalog,
        &ValidateOptions::default().with_opm_rules_only(opm_rules_only),
    )?;
    Ok(catalog)
}

/// Writes `catalog` to `out`, replacing what is there, all at once.
pub fn write_catalog(catalog: &Catalog, out: &Path) -> Result<(), BundleError> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "catalog".into());
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stage = parent.join(format!(".{name}.mni-staging"));
    let old = parent.join(format!(".{name}.mni-old"));
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| BundleError::Io { path, source }
    };
    let _ = fs::remove_dir_all(&stage);
    fs::create_dir_all(&stage).map_err(io(&stage))?;
    if let Err(e) = catalog.write(&stage) {
        let _ = fs::remove_dir_all(&stage);
        return Err(e.into());
    }
    let _ = fs::remove_dir_all(&old);
    if out.exists() {
        fs::rename(out, &old).map_err(io(out))?;
    }
    fs::rename(&stage, out).map_err(io(out))?;
    let _ = fs::remove_dir_all(&old);
    Ok(())
}

/// `olm validate DIR`: loads and validates the catalog at `dir`.
pub fn validate_dir(dir: &Path, opm_rules_only: bool) -> Result<Catalog, BundleError> {
    let catalog = Catalog::load(dir)?;
    validate(
        &catalog,
        &ValidateOptions::default().with_opm_rules_only(opm_rules_only),
    )
    .map_err(|source| BundleError::Validation {
        dir: dir.to_owned(),
        source,
    })?;
    Ok(catalog)
}
