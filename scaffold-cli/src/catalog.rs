//! Plugin catalogs and verified installs: `plugins search|install|remove|verify`.
//!
//! Start with [`Catalog::open`]: it reads a catalog's `index.json` from a directory or an
//! HTTP(S) URL ([`fetch`]) and checks every entry ([`index`]). [`Catalog::install`] picks the
//! newest release of a plugin that this mni-scaffold can run (its `supports.mni` requirement
//! matches this mNi version, its `supports.projectVersions` include the PROJECT version this CLI
//! writes, and it has an artefact for the host), reads the artefact into memory and checks its
//! SHA-256 **before anything is written**; only then does it stage the executable and its
//! [`InstallRecord`] in a temporary directory beside the destination and rename it into place
//! as `<plugins dir>/<name>/<version>/`, the directory external plugins are discovered in, so an
//! installed plugin is found by its key exactly like a hand-installed one. [`remove`] deletes a
//! version directory; [`verify`] re-hashes every installed executable. Before each run an
//! installed plugin's executable is hashed again (see the `external` module), so a tampered
//! one is refused even without `verify`.

pub mod fetch;
pub mod index;
pub mod installed;

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub use fetch::{FetchError, Location};
pub use index::{Entry, Index, IndexError};
pub use installed::{InstallRecord, RECORD_FILE, RecordError};

use crate::external;

/// Why a catalog command failed. [`CatalogError::exit_code`] is 2 for bad input, 1 otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No catalog was given.
    #[error("no catalog: pass --catalog PATH|URL, set MNI_CATALOG, or set `catalog:` in {config}")]
    NoCatalog {
        /// The user config file.
        config: String,
    },
    /// No plugins directory could be determined.
    #[error("no plugins directory: set MNI_PLUGINS_PATH, XDG_CONFIG_HOME or HOME")]
    NoPluginsDir,
    /// The index or an artefact could not be read.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The index is malformed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The catalog lists no such plugin.
    #[error("{catalog} lists no plugin {query:?}; see `mni-scaffold plugins search`")]
    NotListed {
        /// What was asked for.
        query: String,
        /// The catalog.
        catalog: String,
    },
    /// The query names several plugins.
    #[error("{query:?} matches several plugins ({}); give the full name or NAME/VERSION", .names.join(", "))]
    Ambiguous {
        /// What was asked for.
        query: String,
        /// The names it matches.
        names: Vec<String>,
    },
    /// Every matching release needs something this CLI is not.
    #[error("cannot install {query}: {}", .reasons.join("; "))]
    Incompatible {
        /// What was asked for.
        query: String,
        /// Why each release was refused, newest first.
        reasons: Vec<String>,
    },
    /// The artefact's SHA-256 differs from the index's.
    #[error(
        "refusing to install {key}: {url} has SHA-256 {actual}, but the catalog lists {expected}; nothing was written"
    )]
    Checksum {
        /// The plugin.
        key: String,
        /// The artefact.
        url: String,
        /// The index's checksum.
        expected: String,
        /// The artefact's.
        actual: String,
    },
    /// The version is already installed.
    #[error("{key} is already installed in {}; pass --force to replace it", .dir.display())]
    AlreadyInstalled {
        /// The plugin.
        key: String,
        /// Its directory.
        dir: PathBuf,
    },
    /// No installed plugin matches.
    #[error("no installed plugin matches {query:?}; see `mni-scaffold plugins list`")]
    NotInstalled {
        /// What was asked for.
        query: String,
    },
    /// `verify` found executables that changed.
    #[error("{} installed plugin(s) failed verification: {}", .failed.len(), .failed.join("; "))]
    Verify {
        /// One line per failure.
        failed: Vec<String>,
    },
    /// A file operation failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl CatalogError {
    /// 2 for bad input (no catalog, unknown or ambiguous plugin, incompatible release, already
    /// installed), 1 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::NoCatalog { .. }
            | Self::NotListed { .. }
            | Self::Ambiguous { .. }
            | Self::Incompatible { .. }
            | Self::AlreadyInstalled { .. }
            | Self::NotInstalled { .. } => 2,
            _ => 1,
        }
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> CatalogError + '_ {
    move |source| CatalogError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The mNi version this CLI is, for `supports.mni`.
///
/// # Panics
/// Never: the crate version is semver.
#[must_use]
pub fn mni_version() -> semver::Version {
    semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("the crate version is semver")
}

/// An opened, checked catalog.
#[derive(Debug, Clone)]
pub struct Catalog {
    location: Location,
    origin: String,
    index: Index,
}

impl Catalog {
    /// Reads and checks the index at `location` (a path or URL).
    pub fn open(location: &str) -> Result<Self, CatalogError> {
        let location = Location::parse(location);
        let (origin, text) = location.index()?;
        let index = Index::parse(&text, &origin)?;
        Ok(Self {
            location,
            origin,
            index,
        })
    }

    /// The index.
    #[must_use]
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The `plugins search` table: every release whose name or description contains `term`,
    /// with what it supports and whether this CLI can install it.
    #[must_use]
    pub fn search(&self, term: Option<&str>) -> String {
        let term = term.unwrap_or_default().to_lowercase();
        let mni = mni_version();
        let mut rows = vec![[
            "KEY".to_owned(),
            "MNI".to_owned(),
            "PROJECT".to_owned(),
            "SOURCE".to_owned(),
            "DESCRIPTION".to_owned(),
        ]];
        for e in &self.index.entries {
            if !e.name.to_lowercase().contains(&term)
                && !e.description.to_lowercase().contains(&term)
            {
                continue;
            }
            let mut description = e.description.clone();
            if e.incompatibility(&mni, mni_plugin::PROJECT_VERSION)
                .is_some()
            {
                description.push_str(" (incompatible)");
            }
            rows.push([
                e.key().to_string(),
                e.supports.mni.clone(),
                e.supports.project_versions.join(","),
                e.source.clone(),
                description.trim().to_owned(),
            ]);
        }
        table(&rows)
    }

    /// The release `query` (`NAME` or `NAME/VERSION`; a short name is enough) resolves to: the
    /// newest compatible one.
    pub fn resolve(&self, query: &str) -> Result<&Entry, CatalogError> {
        let candidates = self.index.matching(query);
        let mut names: Vec<String> = candidates.iter().map(|e| e.name.clone()).collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            return Err(CatalogError::NotListed {
                query: query.to_owned(),
                catalog: self.origin.clone(),
            });
        }
        if names.len() > 1 {
            return Err(CatalogError::Ambiguous {
                query: query.to_owned(),
                names,
            });
        }
        let mni = mni_version();
        let mut reasons = Vec::new();
        for e in candidates {
            match e.incompatibility(&mni, mni_plugin::PROJECT_VERSION) {
                None => return Ok(e),
                Some(reason) => reasons.push(reason),
            }
        }
        Err(CatalogError::Incompatible {
            query: query.to_owned(),
            reasons,
        })
    }

    /// Installs `query` into `plugins_dir` (replacing an installed copy only with `force`) and
    /// returns its record. Nothing is written unless the artefact's SHA-256 matches.
    pub fn install(
        &self,
        query: &str,
        plugins_dir: &Path,
        force: bool,
    ) -> Result<InstallRecord, CatalogError> {
        let entry = self.resolve(query)?;
        let key = entry.key().to_string();
        let dest = plugins_dir.join(&entry.name).join(&entry.version);
        if dest.exists() && !force {
            return Err(CatalogError::AlreadyInstalled { key, dir: dest });
        }
        let artifact = entry
            .artifact_for_host()
            .expect("resolve returns entries with an artefact for the host");
        let (url, bytes) = self.location.artifact(&artifact.url)?;
        let actual = installed::sha256_hex(&bytes);
        if actual != artifact.sha256 {
            return Err(CatalogError::Checksum {
                key,
                url,
                expected: artifact.sha256.clone(),
                actual,
            });
        }
        let record = InstallRecord {
            key,
            source: entry.source.clone(),
            sha256: actual,
            target: artifact.target.clone(),
            url,
            catalog: self.origin.clone(),
            env: entry.env.clone(),
        };

        // Stage beside the destination, then rename into place.
        let parent = dest.parent().expect("dest has a parent");
        fs::create_dir_all(parent).map_err(io(parent))?;
        let staging = tempfile::Builder::new()
            .prefix(".install-")
            .tempdir_in(parent)
            .map_err(io(parent))?;
        let exe = staging.path().join(&entry.name);
        let mut file = fs::File::create(&exe).map_err(io(&exe))?;
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .map_err(io(&exe))?;
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).map_err(io(&exe))?;
        let record_path = staging.path().join(RECORD_FILE);
        let json = serde_json::to_string_pretty(&record).expect("a record serialises");
        fs::write(&record_path, json + "\n").map_err(io(&record_path))?;
        let old = if dest.exists() {
            let old = parent.join(format!(".remove-{}", entry.version));
            // A leftover of an interrupted replace.
            let _ = fs::remove_dir_all(&old);
            fs::rename(&dest, &old).map_err(io(&dest))?;
            Some(old)
        } else {
            None
        };
        let staged = staging.keep();
        if let Err(source) = fs::rename(&staged, &dest) {
            let _ = fs::remove_dir_all(&staged);
            if let Some(old) = &old {
                let _ = fs::rename(old, &dest);
            }
            return Err(CatalogError::Io { path: dest, source });
        }
        if let Some(old) = old {
            fs::remove_dir_all(&old).map_err(io(&old))?;
        }
        Ok(record)
    }
}

/// The external plugins under `plugins_dir` matching `query` (a key, a name or a short name).
fn installed_matching(plugins_dir: &Path, query: &str) -> Vec<external::ExternalPlugin> {
    let (name, version) = match query.split_once('/') {
        Some((n, v)) => (n, Some(v)),
        None => (query, None),
    };
    external::discover(plugins_dir)
        .0
        .into_iter()
        .filter(|p| {
            (p.key.name() == name || p.key.short_name() == name)
                && version.is_none_or(|v| p.key.version().to_string() == v)
        })
        .collect()
}

/// Removes the plugin `query` names (exactly one installed version) from `plugins_dir`; returns
/// its key.
pub fn remove(plugins_dir: &Path, query: &str) -> Result<String, CatalogError> {
    let mut found = installed_matching(plugins_dir, query);
    match found.len() {
        0 => Err(CatalogError::NotInstalled {
            query: query.to_owned(),
        }),
        1 => {
            let plugin = found.remove(0);
            let version_dir = plugin
                .path
                .parent()
                .expect("an executable in a version dir");
            fs::remove_dir_all(version_dir).map_err(io(version_dir))?;
            // The name directory goes too once its last version is gone.
            if let Some(name_dir) = version_dir.parent() {
                let _ = fs::remove_dir(name_dir);
            }
            Ok(plugin.key.to_string())
        }
        _ => Err(CatalogError::Ambiguous {
            query: query.to_owned(),
            names: found.iter().map(|p| p.key.to_string()).collect(),
        }),
    }
}

/// Re-hashes every plugin installed from a catalog (those matching `query`, if given): one
/// line per plugin (hand-installed ones are skipped, and listed only when `query` names them),
/// then [`CatalogError::Verify`] when any changed.
pub fn verify(plugins_dir: &Path, query: Option<&str>) -> (String, Result<(), CatalogError>) {
    let plugins = match query {
        Some(q) => {
            let found = installed_matching(plugins_dir, q);
            if found.is_empty() {
                let err = CatalogError::NotInstalled {
                    query: q.to_owned(),
                };
                return (String::new(), Err(err));
            }
            found
        }
        None => external::discover(plugins_dir).0,
    };
    let mut out = String::new();
    let mut failed = Vec::new();
    for p in plugins {
        let Some(expected) = &p.sha256 else {
            // Hand-installed plugins have nothing to check against; say so when asked by name.
            if query.is_some() {
                let _ = writeln!(out, "skip  {}: not installed from a catalog", p.key);
            }
            continue;
        };
        match installed::sha256_file(&p.path) {
            Ok(actual) if &actual == expected => {
                let _ = writeln!(out, "ok    {}  sha256:{actual}", p.key);
            }
            Ok(actual) => {
                let line = format!(
                    "{}: {} has SHA-256 {actual}, installed as {expected}",
                    p.key,
                    p.path.display()
                );
                let _ = writeln!(out, "FAIL  {line}");
                failed.push(line);
            }
            Err(e) => {
                let line = format!("{}: cannot read {}: {e}", p.key, p.path.display());
                let _ = writeln!(out, "FAIL  {line}");
                failed.push(line);
            }
        }
    }
    if out.is_empty() {
        out.push_str("no plugins installed from a catalog\n");
    }
    let result = if failed.is_empty() {
        Ok(())
    } else {
        Err(CatalogError::Verify { failed })
    };
    (out, result)
}

/// Left-aligned columns, two spaces apart.
fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The installed-from-a-catalog table of `plugins list`: key, source and checksum; empty when
/// there are none.
#[must_use]
pub fn installed_table(plugins: &[external::ExternalPlugin]) -> String {
    let mut rows = vec![[
        "KEY".to_owned(),
        "VERSION".to_owned(),
        "SOURCE".to_owned(),
        "SHA256".to_owned(),
    ]];
    for p in plugins {
        if let (Some(sha), Some(source)) = (&p.sha256, &p.source) {
            rows.push([
                p.key.to_string(),
                p.key.version().to_string(),
                source.clone(),
                sha.clone(),
            ]);
        }
    }
    if rows.len() == 1 {
        String::new()
    } else {
        table(&rows)
    }
}
