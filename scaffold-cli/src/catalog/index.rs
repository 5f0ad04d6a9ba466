//! The catalog index: one `index.json` listing plugin releases, parsed and checked as a whole.
//!
//! Start with [`Index::parse`]. Each entry of `plugins` names one release (`name` and `version`
//! form its plugin key), what it supports (`supports.projectVersions`, `supports.mni`: a semver
//! requirement on mNi's version), one or more `artifacts` (a `target`, a `url` relative to the
//! index or absolute, a `sha256`), its `source` (where its code lives) and `env` (the variables
//! it may receive beyond `PATH`, `HOME` and `LANG`). A malformed entry, or two entries with the
//! same key, refuse the whole index with an error naming the entry and the field.

use std::collections::BTreeMap;

use mni_plugin::{PluginKey, PluginVersion};
use serde::{Deserialize, Serialize};

/// The `apiVersion` an index declares.
pub const INDEX_API_VERSION: &str = "catalog.mni.dev/v1";

/// Why an index was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// The document is not JSON, or its top level has the wrong shape.
    #[error("{origin}: {message}")]
    Document {
        /// Where the index came from.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// One entry is malformed.
    #[error("{origin}: plugins[{index}]{}: {message}", .name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default())]
    Entry {
        /// Where the index came from.
        origin: String,
        /// The entry's position in `plugins`.
        index: usize,
        /// Its `name`/`version`, when readable.
        name: Option<String>,
        /// What is wrong, naming the field.
        message: String,
    },
    /// Two entries share a key.
    #[error("{origin}: plugins[{second}] duplicates plugins[{first}]: {key} is listed twice")]
    Duplicate {
        /// Where the index came from.
        origin: String,
        /// The key.
        key: String,
        /// The first entry's position.
        first: usize,
        /// The second entry's position.
        second: usize,
    },
}

/// A whole index, every entry checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// The releases, in index order.
    pub entries: Vec<Entry>,
}

/// One plugin release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    /// The plugin name, a DNS-1123 subdomain (e.g. `apidocs.mni.dev`).
    pub name: String,
    /// The plugin version (e.g. `v1`, `v2-alpha`).
    pub version: String,
    /// One line about the plugin.
    #[serde(default)]
    pub description: String,
    /// Where its source lives (a repository URL).
    pub source: String,
    /// What it works with.
    pub supports: Supports,
    /// The executables, one per target.
    pub artifacts: Vec<Artifact>,
    /// Environment variables it may receive beyond `PATH`, `HOME` and `LANG`.
    #[serde(default)]
    pub env: Vec<String>,
}

/// What a release works with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Supports {
    /// The PROJECT file versions it understands (e.g. `["3"]`).
    pub project_versions: Vec<String>,
    /// A semver requirement on the mNi version (e.g. `>=0.1`).
    pub mni: String,
}

/// One executable of a release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Artifact {
    /// `any` (a script) or a target triple such as `x86_64-unknown-linux-gnu`.
    pub target: String,
    /// Where to fetch it: relative to the index, or an absolute URL or path.
    pub url: String,
    /// Its SHA-256, 64 lowercase hex digits.
    pub sha256: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    api_version: String,
    plugins: Vec<serde_json::Value>,
}

impl Entry {
    /// The plugin key, `name/version` (valid in a parsed [`Index`]).
    ///
    /// # Panics
    /// Never for an entry of a parsed [`Index`].
    #[must_use]
    pub fn key(&self) -> PluginKey {
        format!("{}/{}", self.name, self.version)
            .parse()
            .expect("checked when the index was parsed")
    }

    /// The artifact for the host (an exact match for its architecture and OS before `any`).
    #[must_use]
    pub fn artifact_for_host(&self) -> Option<&Artifact> {
        self.artifacts
            .iter()
            .find(|a| host_matches(&a.target))
            .or_else(|| self.artifacts.iter().find(|a| a.target == "any"))
    }

    /// Why the release cannot run with mNi `mni` on projects of version `project`, if it
    /// cannot.
    #[must_use]
    pub fn incompatibility(&self, mni: &semver::Version, project: &str) -> Option<String> {
        let req = semver::VersionReq::parse(&self.supports.mni).ok()?;
        if !req.matches(mni) {
            return Some(format!(
                "{} needs mNi {}; this mni-scaffold is mNi {mni}",
                self.key(),
                self.supports.mni
            ));
        }
        if !self.supports.project_versions.iter().any(|v| v == project) {
            return Some(format!(
                "{} supports project versions {}; this mni-scaffold writes project version {project}",
                self.key(),
                self.supports.project_versions.join(", ")
            ));
        }
        if self.artifact_for_host().is_none() {
            return Some(format!(
                "{} has no artifact for {} (targets: {})",
                self.key(),
                host_target(),
                self.artifacts
                    .iter()
                    .map(|a| a.target.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        None
    }

    /// Checks every field, naming the first bad one.
    fn check(&self) -> Result<(), String> {
        format!("{}/{}", self.name, self.version)
            .parse::<PluginKey>()
            .map_err(|e| format!("field \"name\"/\"version\": {e}"))?;
        if self.source.trim().is_empty() {
            return Err("field \"source\": must not be empty".to_owned());
        }
        if self.supports.project_versions.is_empty() {
            return Err("field \"supports.projectVersions\": must list at least one".to_owned());
        }
        semver::VersionReq::parse(&self.supports.mni).map_err(|e| {
            format!(
                "field \"supports.mni\": {:?} is not a semver requirement: {e}",
                self.supports.mni
            )
        })?;
        if self.artifacts.is_empty() {
            return Err("field \"artifacts\": must list at least one".to_owned());
        }
        for (i, a) in self.artifacts.iter().enumerate() {
            if a.target.is_empty() {
                return Err(format!(
                    "field \"artifacts[{i}].target\": must not be empty"
                ));
            }
            if a.url.is_empty() {
                return Err(format!("field \"artifacts[{i}].url\": must not be empty"));
            }
            if !is_sha256(&a.sha256) {
                return Err(format!(
                    "field \"artifacts[{i}].sha256\": {:?} is not 64 lowercase hex digits",
                    a.sha256
                ));
            }
        }
        for (i, name) in self.env.iter().enumerate() {
            if !is_env_name(name) {
                return Err(format!(
                    "field \"env[{i}]\": {name:?} is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"
                ));
            }
        }
        Ok(())
    }
}

impl Index {
    /// Parses and checks `text`; `origin` (a path or URL) prefixes every error.
    pub fn parse(text: &str, origin: &str) -> Result<Self, IndexError> {
        let document = |message: String| IndexError::Document {
            origin: origin.to_owned(),
            message,
        };
        let doc: Document = serde_json::from_str(text).map_err(|e| document(e.to_string()))?;
        if doc.api_version != INDEX_API_VERSION {
            return Err(document(format!(
                "field \"apiVersion\": {:?} is not {INDEX_API_VERSION:?}",
                doc.api_version
            )));
        }
        let mut entries = Vec::with_capacity(doc.plugins.len());
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (index, value) in doc.plugins.into_iter().enumerate() {
            let name = match (value.get("name"), value.get("version")) {
                (Some(n), Some(v)) => Some(format!(
                    "{}/{}",
                    n.as_str().unwrap_or("?"),
                    v.as_str().unwrap_or("?")
                )),
                (Some(n), None) => n.as_str().map(str::to_owned),
                _ => None,
            };
            let entry_error = |message: String| IndexError::Entry {
                origin: origin.to_owned(),
                index,
                name: name.clone(),
                message,
            };
            let entry: Entry =
                serde_json::from_value(value).map_err(|e| entry_error(e.to_string()))?;
            entry.check().map_err(entry_error)?;
            let key = entry.key().to_string();
            if let Some(&first) = seen.get(&key) {
                return Err(IndexError::Duplicate {
                    origin: origin.to_owned(),
                    key,
                    first,
                    second: index,
                });
            }
            seen.insert(key, index);
            entries.push(entry);
        }
        Ok(Self { entries })
    }

    /// The entries for `query`: a full name or a short name, optionally `/VERSION`.
    #[must_use]
    pub fn matching(&self, query: &str) -> Vec<&Entry> {
        let (name, version) = match query.split_once('/') {
            Some((n, v)) => (n, Some(v)),
            None => (query, None),
        };
        let named = |e: &&Entry| {
            (e.name == name || e.name.split('.').next() == Some(name))
                && version.is_none_or(|v| e.version == v)
        };
        let mut out: Vec<&Entry> = self.entries.iter().filter(named).collect();
        out.sort_by_key(|e| std::cmp::Reverse(version_of(e)));
        out
    }
}

fn version_of(e: &Entry) -> Option<PluginVersion> {
    e.version.parse().ok()
}

/// The host as errors name it: `<arch>-<os>`. An artefact's target triple matches the host when
/// it starts with this architecture and has this OS among its other parts.
#[must_use]
pub fn host_target() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

/// Whether a target triple names the host: its architecture first and its OS among the rest.
fn host_matches(target: &str) -> bool {
    let mut parts = target.split('-');
    parts.next() == Some(std::env::consts::ARCH)
        && parts.any(|p| p == std::env::consts::OS || (p == "darwin" && cfg!(target_os = "macos")))
}

/// Whether `s` is a SHA-256 in lowercase hex.
#[must_use]
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `s` is a portable environment variable name.
#[must_use]
pub fn is_env_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, version: &str, extra: &str) -> String {
        format!(
            r#"{{"name":"{name}","version":"{version}","source":"https://example.com/x",
            "supports":{{"projectVersions":["3"],"mni":">=0.1"}},
            "artifacts":[{{"target":"any","url":"x","sha256":"{}"}}]{extra}}}"#,
            "a".repeat(64)
        )
    }

    fn index(entries: &[String]) -> String {
        format!(
            r#"{{"apiVersion":"catalog.mni.dev/v1","plugins":[{}]}}"#,
            entries.join(",")
        )
    }

    #[test]
    fn parses_and_picks_newest() {
        let text = index(&[
            entry("docs.acme.io", "v1", ""),
            entry("docs.acme.io", "v2-alpha", ""),
            entry("docs.acme.io", "v2", r#","env":["ACME_TOKEN"]"#),
        ]);
        let idx = Index::parse(&text, "index.json").unwrap();
        let versions: Vec<&str> = idx
            .matching("docs")
            .iter()
            .map(|e| e.version.as_str())
            .collect();
        assert_eq!(versions, ["v2", "v2-alpha", "v1"]);
        assert_eq!(idx.matching("docs.acme.io/v1").len(), 1);
        assert!(idx.matching("other").is_empty());
        let e = idx.matching("docs").first().copied().unwrap();
        assert_eq!(e.env, ["ACME_TOKEN"]);
        let v = semver::Version::new(0, 1, 0);
        assert_eq!(e.incompatibility(&v, "3"), None);
        let err = e
            .incompatibility(&semver::Version::new(0, 0, 9), "3")
            .unwrap();
        assert!(err.contains("needs mNi >=0.1"), "{err}");
        let err = e.incompatibility(&v, "4").unwrap();
        assert!(err.contains("supports project versions 3"), "{err}");
    }

    #[test]
    fn matches_host_targets() {
        let arch = std::env::consts::ARCH;
        assert!(host_matches(&format!(
            "{arch}-unknown-{}-gnu",
            std::env::consts::OS
        )));
        assert!(!host_matches(&format!("{arch}-unknown-none")));
        assert!(!host_matches("any"));
        assert_eq!(host_target(), format!("{arch}-{}", std::env::consts::OS));
    }

    #[test]
    fn refuses_bad_entries_by_name_and_field() {
        let err = |entries: &[String]| {
            Index::parse(&index(entries), "cat/index.json")
                .unwrap_err()
                .to_string()
        };
        let e = err(&[entry("a.io", "v1", ""), entry("a.io", "v1", "")]);
        assert_eq!(
            e,
            "cat/index.json: plugins[1] duplicates plugins[0]: a.io/v1 is listed twice"
        );
        let e = err(&[entry("a.io", "one", "")]);
        assert!(
            e.starts_with("cat/index.json: plugins[0] (a.io/one): field \"name\"/\"version\""),
            "{e}"
        );
        let bad = entry("a.io", "v1", "").replace(&"a".repeat(64), "abc");
        let e = err(&[bad]);
        assert!(e.contains("field \"artifacts[0].sha256\": \"abc\""), "{e}");
        let e = err(&[entry("a.io", "v1", r#","env":["A-B"]"#)]);
        assert!(e.contains("field \"env[0]\""), "{e}");
        let e =
            err(&[entry("a.io", "v1", "").replace("\"source\":\"https://example.com/x\",", "")]);
        assert!(
            e.contains("plugins[0] (a.io/v1): missing field `source`"),
            "{e}"
        );
        let e = err(&[entry("a.io", "v1", "").replace(">=0.1", "newest")]);
        assert!(e.contains("field \"supports.mni\""), "{e}");
        let e = Index::parse("{}", "i.json").unwrap_err().to_string();
        assert!(e.contains("missing field `apiVersion`"), "{e}");
    }
}
