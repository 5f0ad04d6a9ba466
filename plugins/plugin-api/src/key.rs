//! Plugin keys: `name/version`, e.g. `go.kubebuilder.io/v4` or `service.mni.dev/v1`.
//!
//! Start with [`PluginKey`]; its version is a [`PluginVersion`], validated the way Kubebuilder's
//! `plugin.Version` is: `v<number>` optionally followed by `-alpha` or `-beta`. Keys order by
//! name, then by version (`v1-alpha` < `v1-beta` < `v1` < `v2-alpha`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a plugin key, name or version did not parse. Each message names the bad part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key has no `/` separating name and version.
    #[error("invalid plugin key {key:?}: expected <name>/<version>, e.g. \"service.mni.dev/v1\"")]
    MissingVersion {
        /// The whole key as given.
        key: String,
    },
    /// The name part is not a DNS-1123 subdomain.
    #[error(
        "invalid plugin key {key:?}: name {name:?} must be lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
    )]
    InvalidName {
        /// The whole key as given.
        key: String,
        /// The offending name.
        name: String,
    },
    /// The version part does not match `v<number>[-alpha|-beta]`.
    #[error(
        "invalid plugin key {key:?}: version {version:?} must look like v<number>[-alpha|-beta], e.g. \"v1\" or \"v2-beta\""
    )]
    InvalidVersion {
        /// The whole key as given.
        key: String,
        /// The offending version.
        version: String,
    },
    /// `v0` without a stage: unstable versions must say so.
    #[error(
        "invalid plugin key {key:?}: version \"v0\" must carry a stage (\"v0-alpha\" or \"v0-beta\")"
    )]
    UnstableV0 {
        /// The whole key as given.
        key: String,
    },
}

/// The stability stage of a [`PluginVersion`]. Orders `Alpha < Beta < Stable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// `-alpha`: may change or disappear.
    Alpha,
    /// `-beta`: feature-complete, may still change.
    Beta,
    /// No suffix: stable.
    Stable,
}

/// A plugin version: `v<number>[-alpha|-beta]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PluginVersion {
    /// The number after `v`.
    pub number: u64,
    /// The stage suffix.
    pub stage: Stage,
}

impl PluginVersion {
    /// A stable version `v<number>`.
    #[must_use]
    pub const fn stable(number: u64) -> Self {
        Self {
            number,
            stage: Stage::Stable,
        }
    }

    /// Whether this version has no `-alpha`/`-beta` suffix.
    #[must_use]
    pub fn is_stable(&self) -> bool {
        self.stage == Stage::Stable
    }

    /// Parses a version, using `key` to name the whole key in errors.
    fn parse_in(version: &str, key: &str) -> Result<Self, KeyError> {
        let invalid = || KeyError::InvalidVersion {
            key: key.to_owned(),
            version: version.to_owned(),
        };
        let rest = version.strip_prefix('v').ok_or_else(invalid)?;
        let (digits, stage) = match rest.split_once('-') {
            None => (rest, Stage::Stable),
            Some((d, "alpha")) => (d, Stage::Alpha),
            Some((d, "beta")) => (d, Stage::Beta),
            Some(_) => return Err(invalid()),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let number = digits.parse::<u64>().map_err(|_| invalid())?;
        if number == 0 && stage == Stage::Stable {
            return Err(KeyError::UnstableV0 {
                key: key.to_owned(),
            });
        }
        Ok(Self { number, stage })
    }
}

impl Ord for PluginVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.number
            .cmp(&other.number)
            .then(self.stage.cmp(&other.stage))
    }
}

impl PartialOrd for PluginVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for PluginVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stage {
            Stage::Stable => write!(f, "v{}", self.number),
            Stage::Beta => write!(f, "v{}-beta", self.number),
            Stage::Alpha => write!(f, "v{}-alpha", self.number),
        }
    }
}

impl FromStr for PluginVersion {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_in(s, s)
    }
}

/// A plugin's identity: a DNS-1123 subdomain name and a [`PluginVersion`].
///
/// ```
/// use mni_plugin::PluginKey;
/// let key: PluginKey = "service.mni.dev/v1".parse().unwrap();
/// assert_eq!(key.name(), "service.mni.dev");
/// assert_eq!(key.short_name(), "service");
/// assert_eq!(key.to_string(), "service.mni.dev/v1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PluginKey {
    name: String,
    version: PluginVersion,
}

impl PluginKey {
    /// Builds a key from a name and a version, validating the name.
    pub fn new(name: &str, version: PluginVersion) -> Result<Self, KeyError> {
        let key = format!("{name}/{version}");
        validate_name(name, &key)?;
        Ok(Self {
            name: name.to_owned(),
            version,
        })
    }

    /// The qualified name, e.g. `service.mni.dev`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name up to its first `.`, e.g. `service` for `service.mni.dev`.
    #[must_use]
    pub fn short_name(&self) -> &str {
        self.name.split('.').next().unwrap_or(&self.name)
    }

    /// The version.
    #[must_use]
    pub fn version(&self) -> PluginVersion {
        self.version
    }
}

/// Checks that `name` is a DNS-1123 subdomain; `key` is the whole key, for the message.
pub(crate) fn validate_name(name: &str, key: &str) -> Result<(), KeyError> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(KeyError::InvalidName {
            key: key.to_owned(),
            name: name.to_owned(),
        });
    }
    Ok(())
}

impl Ord for PluginKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name
            .cmp(&other.name)
            .then(self.version.cmp(&other.version))
    }
}

impl PartialOrd for PluginKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for PluginKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name, self.version)
    }
}

impl FromStr for PluginKey {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, version) = s
            .split_once('/')
            .ok_or_else(|| KeyError::MissingVersion { key: s.to_owned() })?;
        validate_name(name, s)?;
        let version = PluginVersion::parse_in(version, s)?;
        Ok(Self {
            name: name.to_owned(),
            version,
        })
    }
}

impl Serialize for PluginKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PluginKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, &str>) {
        let got = input
            .parse::<PluginKey>()
            .map(|k| k.to_string())
            .map_err(|e| e.to_string());
        match (got, expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e, "{input}"),
            (Err(g), Err(e)) => assert!(g.contains(e), "{input}: {g:?} should contain {e:?}"),
            (g, e) => panic!("{input}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn parses_and_displays() {
        check("go.kubebuilder.io/v4", Ok("go.kubebuilder.io/v4"));
        check("service/v1", Ok("service/v1"));
        check("service/v1-alpha", Ok("service/v1-alpha"));
        check("service/v2-beta", Ok("service/v2-beta"));
        check("service/v0-alpha", Ok("service/v0-alpha"));
        check("service", Err("expected <name>/<version>"));
        check("Service/v1", Err("name \"Service\""));
        check("-svc/v1", Err("name \"-svc\""));
        check("a..b/v1", Err("name \"a..b\""));
        check("/v1", Err("name \"\""));
        check("service/1", Err("version \"1\""));
        check("service/v1-gamma", Err("version \"v1-gamma\""));
        check("service/v", Err("version \"v\""));
        check("service/v-1", Err("version \"v-1\""));
        check("service/v0", Err("must carry a stage"));
        check("service/v1/x", Err("version \"v1/x\""));
    }

    #[test]
    fn orders_by_name_then_version() {
        let mut keys: Vec<PluginKey> = ["b/v1", "a/v2", "a/v1", "a/v1-beta", "a/v1-alpha", "a/v10"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        keys.sort();
        let got: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            ["a/v1-alpha", "a/v1-beta", "a/v1", "a/v2", "a/v10", "b/v1"]
        );
    }

    #[test]
    fn short_name_and_serde() {
        let key: PluginKey = "service.mni.dev/v1".parse().unwrap();
        assert_eq!(key.short_name(), "service");
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(json, "\"service.mni.dev/v1\"");
        let back: PluginKey = serde_json::from_str(&json).unwrap();
        assert_eq!(back, key);
        assert!(serde_json::from_str::<PluginKey>("\"nope\"").is_err());
    }
}
