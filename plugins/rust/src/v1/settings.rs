//! [`Settings`]: what `init` records under `plugins.rust.mni.dev/v1` in PROJECT, and how it
//! turns into a license header and dependency specs.

use mni_plugin::{FlagValues, PluginError};
use serde::{Deserialize, Serialize};

/// A license `--license` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct License {
    /// The flag value, e.g. `apache2`.
    pub flag: &'static str,
    /// The SPDX identifier, e.g. `Apache-2.0`; empty for `none`.
    pub spdx: &'static str,
    /// The full name, e.g. `Apache License, Version 2.0`; empty for `none`.
    pub name: &'static str,
}

/// Every license `--license` accepts.
pub const LICENSES: &[License] = &[
    License {
        flag: "apache2",
        spdx: "Apache-2.0",
        name: "Apache License, Version 2.0",
    },
    License {
        flag: "mit",
        spdx: "MIT",
        name: "MIT License",
    },
    License {
        flag: "none",
        spdx: "",
        name: "",
    },
];

/// Where generated projects get the mNi crates from. In PROJECT it is a map with one key,
/// `path`, `version` or `git`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "SourceRecord", try_from = "SourceRecord")]
pub enum MniSource {
    /// A checkout of the mNi repository (`--mni-path`), absolute or relative to the project.
    Path(String),
    /// A released version from a registry (`--mni-version`).
    Version(String),
    /// A git repository (`--mni-git`).
    Git(String),
}

/// [`MniSource`] as PROJECT stores it: exactly one of the fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SourceRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    git: Option<String>,
}

impl From<MniSource> for SourceRecord {
    fn from(source: MniSource) -> Self {
        match source {
            MniSource::Path(p) => Self {
                path: Some(p),
                ..Self::default()
            },
            MniSource::Version(v) => Self {
                version: Some(v),
                ..Self::default()
            },
            MniSource::Git(g) => Self {
                git: Some(g),
                ..Self::default()
            },
        }
    }
}

impl TryFrom<SourceRecord> for MniSource {
    type Error = String;

    fn try_from(record: SourceRecord) -> Result<Self, String> {
        match (record.path, record.version, record.git) {
            (Some(p), None, None) => Ok(Self::Path(p)),
            (None, Some(v), None) => Ok(Self::Version(v)),
            (None, None, Some(g)) => Ok(Self::Git(g)),
            _ => Err("mni: give exactly one of path, version or git".to_owned()),
        }
    }
}

/// The repository this plugin was built from: generated projects use its crates by default.
fn default_path() -> String {
    let manifest = env!("CARGO_MANIFEST_DIR");
    // CARGO_MANIFEST_DIR is <repo>/plugins/rust.
    let repo = manifest
        .strip_suffix("/plugins/rust")
        .or_else(|| manifest.strip_suffix("\\plugins\\rust"))
        .unwrap_or(manifest);
    repo.to_owned()
}

impl MniSource {
    /// Reads `--mni-path`, `--mni-version` and `--mni-git` (at most one).
    pub fn from_flags(flags: &FlagValues) -> Result<Option<Self>, PluginError> {
        let given: Vec<Self> = [
            flags.string("mni-path").map(Self::Path),
            flags.string("mni-version").map(Self::Version),
            flags.string("mni-git").map(Self::Git),
        ]
        .into_iter()
        .flatten()
        .collect();
        match given.as_slice() {
            [] => Ok(None),
            [one] => {
                if one.value().trim().is_empty() || one.value().contains('"') {
                    return Err(PluginError::InvalidInput(format!(
                        "--mni-{} {:?}: must be non-empty and must not contain '\"'",
                        one.kind(),
                        one.value()
                    )));
                }
                Ok(Some(one.clone()))
            }
            _ => Err(PluginError::InvalidInput(
                "--mni-path, --mni-version and --mni-git are exclusive: give at most one"
                    .to_owned(),
            )),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Path(_) => "path",
            Self::Version(_) => "version",
            Self::Git(_) => "git",
        }
    }

    fn value(&self) -> &str {
        match self {
            Self::Path(v) | Self::Version(v) | Self::Git(v) => v,
        }
    }

    /// The Cargo dependency spec of mNi crate `name` (e.g. `framework/runtime/operator`).
    #[must_use]
    pub fn spec(&self, dir: &str) -> String {
        match self {
            Self::Path(root) => {
                format!("{{ path = \"{}/{dir}\" }}", root.trim_end_matches('/'))
            }
            Self::Version(v) => format!("\"{v}\""),
            Self::Git(url) => format!("{{ git = \"{url}\" }}"),
        }
    }

    /// A note for the generated Cargo.toml saying where the crates come from.
    #[must_use]
    pub fn note(&self) -> String {
        match self {
            Self::Path(p) => format!("from the mNi checkout at {p}; change with --mni-path"),
            Self::Version(v) => format!("version {v} from crates.io"),
            Self::Git(u) => format!("from {u}"),
        }
    }
}

impl Default for MniSource {
    fn default() -> Self {
        Self::Path(default_path())
    }
}

/// What `init` stores under `plugins.rust.mni.dev/v1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The copyright owner (`--owner`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The license flag value (`--license`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// Where the mNi crates come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mni: Option<MniSource>,
    /// `Some(false)` when `init --root-crate=false` made the root a virtual workspace (no
    /// root operator crate); absent in projects with a root crate, which is every project
    /// made before the flag existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_crate: Option<bool>,
}

impl Settings {
    /// Whether the project root is an operator crate (see [`root_crate`](Self::root_crate)).
    #[must_use]
    pub fn has_root_crate(&self) -> bool {
        self.root_crate != Some(false)
    }

    /// The license, if one other than `none` was chosen.
    #[must_use]
    pub fn license(&self) -> Option<&'static License> {
        let flag = self.license.as_deref()?;
        LICENSES
            .iter()
            .find(|l| l.flag == flag && !l.spdx.is_empty())
    }

    /// The comment every generated Rust file starts with (empty without owner and license),
    /// ending in a blank line.
    #[must_use]
    pub fn header(&self) -> String {
        let mut header = String::new();
        if let Some(owner) = &self.owner {
            header.push_str(&format!("// Copyright {owner}.\n"));
        }
        if let Some(license) = self.license() {
            header.push_str(&format!("// SPDX-License-Identifier: {}\n", license.spdx));
        }
        if !header.is_empty() {
            header.push('\n');
        }
        header
    }

    /// The data every template of a project sees: owner, license and the mNi dependencies.
    #[must_use]
    pub fn template_data(&self) -> serde_json::Value {
        let mni = self.mni.clone().unwrap_or_default();
        serde_json::json!({
            "header": self.header(),
            "owner": self.owner.clone().unwrap_or_default(),
            "license_spdx": self.license().map_or("", |l| l.spdx),
            "license_name": self.license().map_or("", |l| l.name),
            "mni": {
                "operator": mni.spec("framework/runtime/operator"),
                "testkit": mni.spec("framework/runtime/testkit"),
            },
            "mni_source_note": mni.note(),
        })
    }
}

/// Checks `--owner` and `--license`.
pub(crate) fn validate_flags(flags: &FlagValues) -> Result<(), PluginError> {
    if let Some(license) = flags.string("license")
        && !LICENSES.iter().any(|l| l.flag == license)
    {
        return Err(PluginError::InvalidInput(format!(
            "--license {license:?} is not a known license: use apache2, mit or none"
        )));
    }
    if let Some(owner) = flags.string("owner")
        && (owner.contains('\n') || owner.trim().is_empty())
    {
        return Err(PluginError::InvalidInput(
            "--owner must be one non-empty line".to_owned(),
        ));
    }
    MniSource::from_flags(flags).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::FlagValue;

    #[test]
    fn header_names_owner_and_license() {
        let s = Settings {
            owner: Some("ACME Inc".into()),
            license: Some("apache2".into()),
            mni: None,
            root_crate: None,
        };
        assert_eq!(
            s.header(),
            "// Copyright ACME Inc.\n// SPDX-License-Identifier: Apache-2.0\n\n"
        );
        let none = Settings {
            license: Some("none".into()),
            ..Settings::default()
        };
        assert_eq!(none.header(), "");
        assert!(none.license().is_none());
    }

    #[test]
    fn mni_sources_render_cargo_specs() {
        let p = MniSource::Path("../../..".into());
        assert_eq!(
            p.spec("framework/runtime/operator"),
            "{ path = \"../../../framework/runtime/operator\" }"
        );
        assert_eq!(MniSource::Version("0.2.0".into()).spec("x"), "\"0.2.0\"");
        assert_eq!(
            MniSource::Git("https://g/mni".into()).spec("x"),
            "{ git = \"https://g/mni\" }"
        );
        assert!(
            MniSource::default()
                .spec("framework/runtime/operator")
                .contains("framework/runtime/operator")
        );
    }

    #[test]
    fn flags_are_checked() {
        let f = |pairs: &[(&str, &str)]| {
            let mut v = FlagValues::new();
            for (k, val) in pairs {
                v.set(k, FlagValue::String((*val).into()));
            }
            v
        };
        assert!(validate_flags(&f(&[("license", "mit"), ("owner", "A")])).is_ok());
        let err = validate_flags(&f(&[("license", "gpl")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--license \"gpl\" is not a known license: use apache2, mit or none"
        );
        let err = validate_flags(&f(&[("mni-path", "a"), ("mni-git", "b")])).unwrap_err();
        assert!(err.to_string().contains("exclusive"), "{err}");
        assert!(validate_flags(&f(&[("mni-path", "")])).is_err());
    }
}
