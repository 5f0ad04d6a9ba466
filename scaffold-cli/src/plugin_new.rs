//! `mni-scaffold plugins new NAME`: scaffolds a plugin project on `mni-plugin-sdk` — the
//! scaffold scaffolds its own plugins.
//!
//! Start with [`new_plugin`]. The project is a Cargo package `NAME` in `<dir>/NAME` whose binary
//! is the external plugin `NAME.DOMAIN/v1` (installed as
//! `$MNI_PLUGINS_PATH/NAME.DOMAIN/v1/NAME.DOMAIN`): `src/main.rs` with a working `create api`
//! that renders an embedded template, that template, a test that runs the real `mni-scaffold`
//! through the SDK's testing module, and a README. The templates are
//! `templates/plugin/v1/` of `mni-templates`, rendered by `mni-machinery` in strict mode.
//!
//! The SDK is a path dependency on the mNi checkout: `--mni-path` (absolute, or relative to the
//! new project), by default the checkout this binary was built from. The new directory is
//! created with `create_dir`, which fails if anything is there, and filled by
//! `mni-machinery`'s atomic commit; on failure it is removed again, so an existing directory is
//! never touched and a failed run leaves nothing behind.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use mni_machinery::{TemplateFile, Templates};
use mni_plugin::names::{self, NameError};
use mni_plugin::{PluginKey, Universe};
use serde_json::json;

/// The default `--domain`.
pub const DEFAULT_DOMAIN: &str = "my.domain";

/// Why `plugins new` failed. Nothing is left on disk when one is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginNewError {
    /// `NAME` or `--domain` is not a valid name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `NAME.DOMAIN/v1` is not a plugin key.
    #[error("NAME and --domain: {key:?} is not a plugin key: {message}")]
    Key {
        /// The key built.
        key: String,
        /// Why it does not parse.
        message: String,
    },
    /// The target directory exists.
    #[error(
        "NAME: {path} already exists; choose another NAME or remove it (plugins new never overwrites)"
    )]
    Exists {
        /// The directory.
        path: PathBuf,
    },
    /// The SDK is not where `--mni-path` says.
    #[error(
        "--mni-path: no mni-plugin-sdk at {path}; pass --mni-path with the path of an mNi checkout"
    )]
    NoSdk {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// Creating the directory failed.
    #[error("cannot create {path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `mni-templates` was built without `templates/plugin/v1` (a stale build).
    #[error(
        "the plugin project templates (templates/plugin/v1) are not in this build of mni-scaffold; rebuild it"
    )]
    NoTemplates,
    /// Rendering a template failed (a bug in `templates/plugin/v1`).
    #[error(transparent)]
    Template(#[from] mni_machinery::TemplateError),
    /// Planning the files failed (`--dry-run`).
    #[error(transparent)]
    Plan(#[from] mni_machinery::PlanError),
    /// Writing the files failed.
    #[error(transparent)]
    Commit(#[from] mni_machinery::CommitError),
    /// Printing the report failed.
    #[error("cannot write output: {0}")]
    Output(#[source] std::io::Error),
}

impl PluginNewError {
    /// 2 for bad input (name, domain, existing directory, missing SDK), 1 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Name(_) | Self::Key { .. } | Self::Exists { .. } | Self::NoSdk { .. } => 2,
            _ => 1,
        }
    }
}

/// What to scaffold.
#[derive(Debug, Clone)]
pub struct PluginNew {
    /// The plugin's short name: the package, binary and directory name.
    pub name: String,
    /// The domain the key's name ends with (`NAME.DOMAIN/v1`).
    pub domain: String,
    /// The mNi checkout, as written into `Cargo.toml`.
    pub mni_path: String,
    /// Print what would be created, write nothing (`--dry-run`).
    pub dry_run: bool,
}

impl PluginNew {
    /// `NAME` in the default domain, with the SDK of the checkout this binary was built from.
    #[must_use]
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            domain: DEFAULT_DOMAIN.to_owned(),
            mni_path: default_mni_path(),
            dry_run: false,
        }
    }

    /// Prints the plan instead of writing (`--dry-run`).
    #[must_use]
    pub fn with_dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Sets the domain.
    #[must_use]
    pub fn with_domain(mut self, domain: &str) -> Self {
        self.domain = domain.to_owned();
        self
    }

    /// Sets the mNi checkout (absolute, or relative to the new project).
    #[must_use]
    pub fn with_mni_path(mut self, path: &str) -> Self {
        self.mni_path = path.to_owned();
        self
    }

    /// The plugin key, `NAME.DOMAIN/v1`, after checking `NAME` and the domain.
    pub fn key(&self) -> Result<PluginKey, PluginNewError> {
        names::validate_service_name("NAME", &self.name)?;
        names::validate_dns1123_subdomain("--domain", &self.domain)?;
        let key = format!("{}.{}/v1", self.name, self.domain);
        key.parse().map_err(|e| PluginNewError::Key {
            key: key.clone(),
            message: format!("{e}"),
        })
    }
}

/// The checkout this binary was built from (`CARGO_MANIFEST_DIR` is `<repo>/scaffold-cli`).
fn default_mni_path() -> String {
    let manifest = env!("CARGO_MANIFEST_DIR");
    manifest
        .strip_suffix("/scaffold-cli")
        .unwrap_or(manifest)
        .to_owned()
}

/// Scaffolds the plugin project `<dir>/NAME` and prints what was created to `out`. See the
/// [module docs](self).
pub fn new_plugin(
    request: &PluginNew,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<(), PluginNewError> {
    let key = request.key()?;
    let root = dir.join(&request.name);
    if fs::symlink_metadata(&root).is_ok() {
        return Err(PluginNewError::Exists { path: root });
    }
    let sdk_path = format!("{}/plugins/sdk", request.mni_path.trim_end_matches('/'));
    let sdk_on_disk = root.join(&sdk_path);
    if !sdk_on_disk.join("Cargo.toml").is_file() {
        return Err(PluginNewError::NoSdk { path: sdk_on_disk });
    }

    let sources = mni_templates::files("plugin", "v1");
    if sources.is_empty() {
        return Err(PluginNewError::NoTemplates);
    }
    let files: Vec<TemplateFile> = sources
        .iter()
        .map(|(path, _)| TemplateFile::new(path, path))
        .collect();
    let templates = Templates::deferred(sources);
    let plugin_name = key.to_string();
    let plugin_name = plugin_name.split_once('/').map_or("", |(n, _)| n);
    let data = json!({
        "name": request.name,
        "key": key.to_string(),
        "plugin_name": plugin_name,
        "mni_path": request.mni_path,
        "sdk_path": sdk_path,
    });
    let mut universe = Universe::new();
    templates.scaffold(&mut universe, &files, &data)?;
    if request.dry_run {
        let plan = mni_machinery::plan(&root, &universe)?;
        return write!(out, "{}", plan.report())
            .and_then(|()| {
                writeln!(
                    out,
                    "dry run of `plugins new` for {key}: nothing was written"
                )
            })
            .map_err(PluginNewError::Output);
    }

    fs::create_dir(&root).map_err(|source| match source.kind() {
        std::io::ErrorKind::AlreadyExists => PluginNewError::Exists { path: root.clone() },
        _ => PluginNewError::Io {
            path: root.clone(),
            source,
        },
    })?;
    let report = match mni_machinery::commit(&root, &universe) {
        Ok(report) => report,
        Err(e) => {
            // Only what this run created: the directory did not exist before `create_dir`.
            let _ = fs::remove_dir_all(&root);
            return Err(e.into());
        }
    };
    let shown = root.display();
    write!(out, "{report}")
        .and_then(|()| {
            writeln!(
                out,
                "plugin {key} scaffolded in {shown}; build it with `cargo build` there and install the binary as $MNI_PLUGINS_PATH/{plugin_name}/v1/{plugin_name} (see its README.md)"
            )
        })
        .map_err(PluginNewError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaffold(request: &PluginNew) -> (tempfile::TempDir, Result<String, PluginNewError>) {
        let tmp = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        let result =
            new_plugin(request, tmp.path(), &mut out).map(|()| String::from_utf8(out).unwrap());
        (tmp, result)
    }

    #[test]
    fn scaffolds_a_project_on_the_sdk() {
        let (tmp, out) = scaffold(&PluginNew::new("docs").with_domain("acme.io"));
        let out = out.unwrap();
        for file in [
            "Cargo.toml",
            "src/main.rs",
            "tests/scaffold.rs",
            "templates/docs/kind.md.hbs",
            "README.md",
            ".gitignore",
        ] {
            assert!(out.contains(&format!("create {file}\n")), "{out}");
        }
        assert!(
            out.contains("plugin docs.acme.io/v1 scaffolded in "),
            "{out}"
        );
        let read = |p: &str| fs::read_to_string(tmp.path().join("docs").join(p)).unwrap();
        let manifest = read("Cargo.toml");
        assert!(
            manifest.contains(&format!(
                "mni-plugin-sdk = {{ path = \"{}/plugins/sdk\" }}",
                default_mni_path()
            )),
            "{manifest}"
        );
        assert!(read("src/main.rs").contains("const KEY: &str = \"docs.acme.io/v1\";"));
        assert!(read("src/main.rs").contains("struct Docs {"));
        assert!(read("src/main.rs").contains("\"docs/{{lower kind}}.md\""));
        assert!(read("templates/docs/kind.md.hbs").starts_with("# {{title}}\n"));
        assert!(read("tests/scaffold.rs").contains("env!(\"CARGO_BIN_EXE_docs\")"));
    }

    #[test]
    fn refuses_bad_names_and_never_overwrites() {
        for (name, domain, needle) in [
            ("Docs", "acme.io", "NAME"),
            ("9docs", "acme.io", "NAME"),
            ("type", "acme.io", "NAME"),
            ("docs", "Acme_IO", "--domain"),
        ] {
            let (tmp, result) = scaffold(&PluginNew::new(name).with_domain(domain));
            let err = result.unwrap_err();
            assert!(err.to_string().contains(needle), "{name} {domain}: {err}");
            assert_eq!(err.exit_code(), 2);
            assert_eq!(
                fs::read_dir(tmp.path()).unwrap().count(),
                0,
                "nothing written"
            );
        }

        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("docs")).unwrap();
        fs::write(tmp.path().join("docs/keep.txt"), "mine").unwrap();
        let err = new_plugin(&PluginNew::new("docs"), tmp.path(), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().starts_with("NAME: "), "{err}");
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(fs::read_dir(tmp.path().join("docs")).unwrap().count(), 1);
    }

    #[test]
    fn a_dry_run_writes_nothing() {
        let (tmp, out) = scaffold(&PluginNew::new("docs").with_dry_run(true));
        let out = out.unwrap();
        assert!(out.contains("   create src/main.rs\n"), "{out}");
        assert!(
            out.ends_with("dry run of `plugins new` for docs.my.domain/v1: nothing was written\n")
        );
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_relative_mni_path_is_checked_from_the_new_project() {
        let (tmp, result) = scaffold(&PluginNew::new("docs").with_mni_path("../nowhere"));
        let err = result.unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--mni-path: no mni-plugin-sdk at "),
            "{err}"
        );
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
