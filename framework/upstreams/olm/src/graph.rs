//! Reading a catalog as OLM's resolver does: a channel's head, the next step of an upgrade, and
//! a bundle's embedded manifests — what an OLM lifecycle controller needs to install from a
//! [`Catalog`] without a registry.

use base64::Engine;
use semver::Version;
use serde_json::Value;

use crate::fbc::{Bundle, Catalog, Channel, ChannelEntry};
use crate::range::VersionRange;

/// Why a bundle's embedded manifests cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObjectError {
    /// An `olm.bundle.object` has no `data`, or it is not base64.
    #[error("bundle {bundle:?}: olm.bundle.object #{index} is not base64 data: {message}")]
    Encoding {
        /// The bundle.
        bundle: String,
        /// The property's index among the bundle's objects.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// The decoded data is not a JSON object.
    #[error("bundle {bundle:?}: olm.bundle.object #{index} is not a JSON manifest: {source}")]
    Json {
        /// The bundle.
        bundle: String,
        /// The property's index among the bundle's objects.
        index: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

impl Bundle {
    /// The manifests embedded as `olm.bundle.object` properties, decoded, in order.
    pub fn objects(&self) -> Result<Vec<Value>, ObjectError> {
        let engine = base64::engine::general_purpose::STANDARD;
        self.properties_of("olm.bundle.object")
            .enumerate()
            .map(|(index, value)| {
                let data = value.get("data").and_then(Value::as_str).ok_or_else(|| {
                    ObjectError::Encoding {
                        bundle: self.name.clone(),
                        index,
                        message: "no \"data\" string".into(),
                    }
                })?;
                let bytes = engine.decode(data).map_err(|e| ObjectError::Encoding {
                    bundle: self.name.clone(),
                    index,
                    message: e.to_string(),
                })?;
                serde_json::from_slice(&bytes).map_err(|source| ObjectError::Json {
                    bundle: self.name.clone(),
                    index,
                    source,
                })
            })
            .collect()
    }
}

impl Catalog {
    /// The `olm.channel` `channel` of `package`.
    pub fn channel(&self, package: &str, channel: &str) -> Option<&Channel> {
        self.channels
            .iter()
            .find(|c| c.package == package && c.name == channel)
    }

    /// The bundle `name` of `package`.
    pub fn bundle(&self, package: &str, name: &str) -> Option<&Bundle> {
        self.bundles
            .iter()
            .find(|b| b.package == package && b.name == name)
    }

    /// The head of a channel: the one entry nothing replaces or skips (`None` if there is not
    /// exactly one — [`crate::validate`] refuses such a channel).
    pub fn head(&self, package: &str, channel: &str) -> Option<&ChannelEntry> {
        let c = self.channel(package, channel)?;
        let mut heads = c.entries.iter().filter(|e| {
            !c.entries
                .iter()
                .any(|o| o.replaces == e.name || o.skips.contains(&e.name))
        });
        let head = heads.next()?;
        heads.next().is_none().then_some(head)
    }

    /// The entry an installed bundle `current` upgrades to in a channel: among the entries that
    /// replace it, skip it or whose `skipRange` holds its version, the newest.
    pub fn upgrade_from(
        &self,
        package: &str,
        channel: &str,
        current: &str,
    ) -> Option<&ChannelEntry> {
        let c = self.channel(package, channel)?;
        let version_of = |name: &str| {
            self.bundle(package, name)
                .and_then(Bundle::version)
                .and_then(|v| Version::parse(v).ok())
        };
        let current_version = version_of(current);
        c.entries
            .iter()
            .filter(|e| e.name != current)
            .filter(|e| {
                e.replaces == current
                    || e.skips.iter().any(|s| s == current)
                    || (!e.skip_range.is_empty()
                        && current_version.as_ref().is_some_and(|v| {
                            VersionRange::parse(&e.skip_range).is_ok_and(|r| r.matches(v))
                        }))
            })
            .max_by_key(|e| version_of(&e.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::{Package, Property};
    use serde_json::json;

    fn catalog() -> Catalog {
        let engine = base64::engine::general_purpose::STANDARD;
        let bundle = |v: &str| Bundle {
            schema: "olm.bundle".into(),
            name: format!("a.v{v}"),
            package: "a".into(),
            properties: vec![
                Property::new("olm.package", json!({"packageName": "a", "version": v})),
                Property::new(
                    "olm.bundle.object",
                    json!({"data": engine.encode(format!(r#"{{"kind":"ConfigMap","v":"{v}"}}"#))}),
                ),
            ],
            ..Bundle::default()
        };
        let entry = |name: &str, replaces: &str, skip_range: &str| ChannelEntry {
            name: name.into(),
            replaces: replaces.into(),
            skip_range: skip_range.into(),
            ..ChannelEntry::default()
        };
        Catalog {
            packages: vec![Package {
                schema: "olm.package".into(),
                name: "a".into(),
                default_channel: "alpha".into(),
                ..Package::default()
            }],
            channels: vec![Channel {
                schema: "olm.channel".into(),
                package: "a".into(),
                name: "alpha".into(),
                entries: vec![
                    entry("a.v0.1.0", "", ""),
                    entry("a.v0.2.0", "a.v0.1.0", ""),
                    entry("a.v0.3.0", "a.v0.2.0", "<0.3.0"),
                ],
                ..Channel::default()
            }],
            bundles: vec![bundle("0.1.0"), bundle("0.2.0"), bundle("0.3.0")],
            others: vec![],
        }
    }

    #[test]
    fn the_head_and_the_upgrade_steps_follow_the_graph() {
        let c = catalog();
        assert_eq!(
            c.head("a", "alpha").map(|e| e.name.as_str()),
            Some("a.v0.3.0")
        );
        // 0.1.0 is replaced by 0.2.0 but also in 0.3.0's skipRange: the newest wins.
        let next = c
            .upgrade_from("a", "alpha", "a.v0.1.0")
            .map(|e| e.name.as_str());
        assert_eq!(next, Some("a.v0.3.0"));
        assert_eq!(c.upgrade_from("a", "alpha", "a.v0.3.0"), None);
    }

    #[test]
    fn embedded_objects_decode() {
        let c = catalog();
        let objects = c
            .bundle("a", "a.v0.2.0")
            .expect("bundle")
            .objects()
            .expect("decodes");
        assert_eq!(objects, [json!({"kind": "ConfigMap", "v": "0.2.0"})]);
    }
}
