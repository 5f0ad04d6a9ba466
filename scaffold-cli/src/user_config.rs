//! The user's `mni-scaffold` settings: `${XDG_CONFIG_HOME:-$HOME/.config}/mni/scaffold.yaml`
//! (or the file `$MNI_SCAFFOLD_CONFIG` names).
//!
//! Start with [`UserConfig::load`]. Two settings exist: `catalog`, the default catalog of
//! `plugins search|install` (a path or an http(s) URL; `--catalog` and `$MNI_CATALOG` come
//! first), and `plugins.<key or name>.env`, environment variables one external plugin may
//! receive beyond `PATH`, `HOME` and `LANG`:
//!
//! ```yaml
//! catalog: https://plugins.example.com/mni
//! plugins:
//!   apidocs.mni.dev:        # every version; or apidocs.mni.dev/v1 for one
//!     env: [ACME_DOCS_TOKEN]
//! ```
//!
//! A missing file is an empty config; a malformed one is an error naming the file, line and
//! field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::catalog::index::is_env_name;

/// Why the config file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UserConfigError {
    /// It could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// It does not parse, or a value is invalid.
    #[error("{}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// The settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// The default catalog.
    #[serde(default)]
    pub catalog: Option<String>,
    /// Per-plugin settings, by key or name.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginSettings>,
}

/// One plugin's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSettings {
    /// Variables it may receive beyond `PATH`, `HOME` and `LANG`.
    #[serde(default)]
    pub env: Vec<String>,
}

impl UserConfig {
    /// Reads `path`; a missing file is the default config.
    pub fn load(path: &Path) -> Result<Self, UserConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(UserConfigError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let invalid = |message: String| UserConfigError::Invalid {
            path: path.to_owned(),
            message,
        };
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let config: Self = serde_yaml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        for (plugin, settings) in &config.plugins {
            for (i, name) in settings.env.iter().enumerate() {
                if !is_env_name(name) {
                    return Err(invalid(format!(
                        "field \"plugins.{plugin}.env[{i}]\": {name:?} is not a variable name"
                    )));
                }
            }
        }
        Ok(config)
    }

    /// The allowed variables by plugin key or name, for [`crate::external::Runner::with_allowed`].
    #[must_use]
    pub fn allowed_env(&self) -> BTreeMap<String, Vec<String>> {
        self.plugins
            .iter()
            .map(|(k, s)| (k.clone(), s.env.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_and_checks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scaffold.yaml");
        assert_eq!(UserConfig::load(&path).unwrap(), UserConfig::default());
        std::fs::write(
            &path,
            "catalog: /srv/cat\nplugins:\n  docs.acme.io/v1:\n    env: [ACME_TOKEN]\n",
        )
        .unwrap();
        let config = UserConfig::load(&path).unwrap();
        assert_eq!(config.catalog.as_deref(), Some("/srv/cat"));
        assert_eq!(config.allowed_env()["docs.acme.io/v1"], ["ACME_TOKEN"]);
        std::fs::write(&path, "plugins:\n  docs:\n    env: [\"A B\"]\n").unwrap();
        let err = UserConfig::load(&path).unwrap_err().to_string();
        assert!(err.contains("field \"plugins.docs.env[0]\""), "{err}");
        std::fs::write(&path, "catalogue: x\n").unwrap();
        let err = UserConfig::load(&path).unwrap_err().to_string();
        assert!(err.contains("unknown field `catalogue`"), "{err}");
    }
}
