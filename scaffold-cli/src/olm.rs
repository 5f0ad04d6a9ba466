//! `olm bundle`, `olm catalog` and `olm validate`: the command group that calls
//! `mni-plugin-olm` (see [`cli::OlmCommand`](crate::cli::OlmCommand) for why it is a group and
//! not a plugin subcommand).
//!
//! Unlike scaffolding, these commands do not go through `mni-machinery`'s Universe: a bundle
//! or a catalog is a directory the plugin stages beside its destination and swaps in whole once
//! it is complete and checked, so a failure writes nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use mni_plugin_olm::{BundleError, BundleRequest};

use crate::Error;
use crate::cli::{GlobalArgs, OlmCommand};

/// Runs one `olm` subcommand.
pub fn run(command: &OlmCommand, global: &GlobalArgs, out: &mut dyn Write) -> Result<(), Error> {
    if global.dry_run {
        // A bundle's merge is cheap to undo (the previous output is under .mni-generated/ and in
        // git); rather than print a half-true plan, refuse.
        return Err(BundleError::Flag {
            flag: "--dry-run".into(),
            message: "`olm` commands do not support --dry-run; write to another directory with -o instead".into(),
        }
        .into());
    }
    let cwd = global.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    match command {
        OlmCommand::Bundle(args) => {
            let mut request = BundleRequest::new(&args.version)
                .with_package(args.package.clone())
                .with_replaces(args.replaces.clone())
                .with_skip_range(args.skip_range.clone())
                .with_channels(args.channels.clone())
                .with_default_channel(args.default_channel.clone())
                .with_image(args.image.clone());
            for dependency in &args.depends_on {
                let Some((package, range)) = dependency.split_once('=') else {
                    return Err(BundleError::Flag {
                        flag: format!("--depends-on {dependency}"),
                        message: "--depends-on takes PACKAGE=RANGE, e.g. mni-vpc='>=0.1.0 <0.2.0'"
                            .into(),
                    }
                    .into());
                };
                request = request.with_dependency(package, range);
            }
            let report = mni_plugin_olm::write_bundle(&cwd, &args.output, &request)?;
            let dir = args.output.display();
            for path in &report.written {
                writeln!(out, "wrote   {dir}/{path}")?;
            }
            for path in &report.removed {
                writeln!(out, "removed {dir}/{path}")?;
            }
            for kept in &report.kept {
                writeln!(
                    out,
                    "kept your edit (the generator changed it too): {dir}/{kept}"
                )?;
            }
            writeln!(out, "bundle {} in {dir}", args.version)?;
        }
        OlmCommand::Catalog(args) => {
            let bundles: Vec<PathBuf> = args.bundles.iter().map(|b| under(&cwd, b)).collect();
            let catalog =
                mni_plugin_olm::build_catalog(&bundles, &args.registry, args.opm_rules_only)?;
            mni_plugin_olm::write_catalog(&catalog, &under(&cwd, &args.output))?;
            writeln!(
                out,
                "catalog {}: {} package(s), {} channel(s), {} bundle(s)",
                args.output.display(),
                catalog.packages.len(),
                catalog.channels.len(),
                catalog.bundles.len()
            )?;
        }
        OlmCommand::Validate(args) => {
            let catalog =
                mni_plugin_olm::validate_dir(&under(&cwd, &args.catalog), args.opm_rules_only)?;
            writeln!(
                out,
                "{}: valid ({} package(s), {} bundle(s))",
                args.catalog.display(),
                catalog.packages.len(),
                catalog.bundles.len()
            )?;
        }
    }
    Ok(())
}

/// `path`, relative to the `-C` directory unless absolute.
fn under(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    }
}
