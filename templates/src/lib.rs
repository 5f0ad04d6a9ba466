//! `mni-templates`: the `.hbs` templates of mNi's built-in scaffold plugins, compiled in.
//!
//! Templates live beside this crate as `templates/<plugin>/<version>/<output path>.hbs`, e.g.
//! `templates/rust/v1/src/main.rs.hbs`, so a template reads like the file it produces and a
//! change to one shows up in review as a change to that file. [`files`] lists a plugin
//! version's templates as `(output path, source)` pairs; plugins register them with
//! `mni_machinery::Templates` under their output path. Embedding keeps `mni-scaffold` a single
//! self-contained binary; `build.rs` makes Cargo rebuild this crate when any template changes.

use include_dir::{Dir, include_dir};

/// Every template directory, embedded at build time.
static ROOT: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR");

/// The suffix every template file carries.
pub const SUFFIX: &str = ".hbs";

/// The templates of `plugin` at `version` as `(output path, source)` pairs, sorted by path.
/// The output path is relative to the version directory and has [`SUFFIX`] removed, e.g.
/// `("src/main.rs", "...")`. Empty when the plugin or version has no templates.
#[must_use]
pub fn files(plugin: &str, version: &str) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    if let Some(dir) = ROOT.get_dir(format!("{plugin}/{version}")) {
        collect(dir, dir.path().to_str().unwrap_or_default(), &mut out);
    }
    out.sort_unstable();
    out
}

/// The source of one template, by plugin, version and output path (without [`SUFFIX`]).
#[must_use]
pub fn get(plugin: &str, version: &str, path: &str) -> Option<&'static str> {
    ROOT.get_file(format!("{plugin}/{version}/{path}{SUFFIX}"))
        .and_then(|f| f.contents_utf8())
}

fn collect(dir: &'static Dir<'static>, base: &str, out: &mut Vec<(&'static str, &'static str)>) {
    for file in dir.files() {
        let Some(path) = file.path().to_str() else {
            continue;
        };
        let Some(rel) = path
            .strip_prefix(base)
            .map(|p| p.trim_start_matches('/'))
            .and_then(|p| p.strip_suffix(SUFFIX))
        else {
            continue;
        };
        if let Some(source) = file.contents_utf8() {
            out.push((rel, source));
        }
    }
    for sub in dir.dirs() {
        collect(sub, base, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_a_plugin_version_by_output_path() {
        let rust = files("rust", "v1");
        assert!(rust.iter().any(|(p, _)| *p == "src/main.rs"), "{rust:?}");
        assert!(rust.iter().all(|(p, _)| !p.ends_with(SUFFIX)));
        assert!(rust.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        assert_eq!(
            get("rust", "v1", "src/main.rs"),
            Some(
                rust.iter()
                    .find(|(p, _)| *p == "src/main.rs")
                    .map(|(_, s)| *s)
                    .unwrap_or_default()
            )
        );
    }

    #[test]
    fn unknown_plugins_have_no_templates() {
        assert!(files("nope", "v1").is_empty());
        assert!(files("rust", "v9").is_empty());
        assert_eq!(get("rust", "v1", "missing"), None);
    }

    #[test]
    fn only_template_files_are_listed() {
        // The crate's own sources sit beside the templates and must never be listed.
        assert!(files("src", "").is_empty());
    }
}
