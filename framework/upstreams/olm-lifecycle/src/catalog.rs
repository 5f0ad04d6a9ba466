//! File-based catalogs (FBC): the minimal model the resolver needs, parsed from YAML or JSON
//! documents.
//!
//! A catalog is a stream of blobs, each with a `schema`: `olm.package` (name,
//! `defaultChannel`), `olm.channel` (package, name, `entries` with `replaces`, `skips`,
//! `skipRange`) and `olm.bundle` (name, package, image, `properties`). Of a bundle's
//! properties this reads `olm.package` (its version), `olm.gvk` (APIs it provides),
//! `olm.gvk.required`, `olm.package.required` and `olm.bundle.object` (a manifest as base64
//! JSON: the bundle's CSV and CRDs travel in the catalog, so no image is pulled). Other
//! schemas and properties are ignored. Everything here is private on purpose: it is the one
//! module to swap for the shared `mni-olm` types once they exist.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

/// Why a catalog could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A document is neither YAML nor JSON.
    #[error("{origin}: {message}")]
    Syntax {
        /// Which file or ConfigMap key.
        origin: String,
        /// What the parser said.
        message: String,
    },
    /// A blob of a known schema lacks a field or has the wrong shape.
    #[error("{origin}: a {schema} blob is invalid: {message}")]
    Blob {
        /// Which file or ConfigMap key.
        origin: String,
        /// The blob's schema.
        schema: String,
        /// What is wrong.
        message: String,
    },
    /// The catalog directory could not be read.
    #[error("reading catalog directory {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// A group, version and kind, as `olm.gvk` properties name APIs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub(crate) struct Gvk {
    /// The API group.
    pub(crate) group: String,
    /// The API version.
    pub(crate) version: String,
    /// The kind.
    pub(crate) kind: String,
}

impl std::fmt::Display for Gvk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// One entry of a channel: a bundle and its upgrade edges.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Entry {
    /// The bundle's name (its CSV's name).
    pub(crate) name: String,
    /// The bundle this one upgrades from.
    #[serde(default)]
    pub(crate) replaces: Option<String>,
    /// Bundles this one may upgrade from directly.
    #[serde(default)]
    pub(crate) skips: Vec<String>,
    /// A semver range of versions this one may upgrade from directly.
    #[serde(default)]
    pub(crate) skip_range: Option<String>,
}

/// A package: its default channel and channels.
#[derive(Clone, Debug, Default)]
pub(crate) struct Package {
    /// The channel a Subscription without `channel` follows.
    pub(crate) default_channel: Option<String>,
    /// Channels by name.
    pub(crate) channels: BTreeMap<String, Vec<Entry>>,
}

/// A package's required version range (`olm.package.required`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PackageRequirement {
    /// The package needed.
    pub(crate) package: String,
    /// The semver range, as written (`>=0.1.0 <0.3.0`).
    pub(crate) range: String,
}

/// A bundle: one version of an operator, with its manifests.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bundle {
    /// The bundle's name (its CSV's name).
    pub(crate) name: String,
    /// The package it belongs to.
    pub(crate) package: String,
    /// Its version (`olm.package` property).
    pub(crate) version: Option<semver::Version>,
    /// The APIs it provides (`olm.gvk`).
    pub(crate) provides: Vec<Gvk>,
    /// The APIs it needs (`olm.gvk.required`).
    pub(crate) requires: Vec<Gvk>,
    /// The packages it needs (`olm.package.required`).
    pub(crate) requires_packages: Vec<PackageRequirement>,
    /// Its manifests (`olm.bundle.object`), decoded.
    pub(crate) objects: Vec<Value>,
}

/// A parsed catalog.
#[derive(Clone, Debug, Default)]
pub(crate) struct Catalog {
    /// Packages by name.
    pub(crate) packages: BTreeMap<String, Package>,
    /// Bundles by name.
    pub(crate) bundles: BTreeMap<String, Bundle>,
}

impl Catalog {
    /// Reads every `.yaml`, `.yml` and `.json` file under `dir` (recursively, in name order).
    pub(crate) fn from_dir(dir: &Path) -> Result<Catalog, Error> {
        let mut files = Vec::new();
        collect_files(dir, &mut files)?;
        files.sort();
        let mut catalog = Catalog::default();
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|source| Error::Io {
                path: file.display().to_string(),
                source,
            })?;
            catalog.add_documents(&file.display().to_string(), &text)?;
        }
        Ok(catalog)
    }

    /// Reads the documents of each value of a ConfigMap's `data`, in key order.
    pub(crate) fn from_config_map_data(data: &BTreeMap<String, String>) -> Result<Catalog, Error> {
        let mut catalog = Catalog::default();
        for (key, text) in data {
            catalog.add_documents(&format!("key {key}"), text)?;
        }
        Ok(catalog)
    }

    /// Adds the blobs of a YAML stream or of concatenated JSON objects.
    pub(crate) fn add_documents(&mut self, origin: &str, text: &str) -> Result<(), Error> {
        let syntax = |message: String| Error::Syntax {
            origin: origin.to_string(),
            message,
        };
        let mut blobs = Vec::new();
        if text.trim_start().starts_with('{') {
            for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
                blobs.push(value.map_err(|e| syntax(e.to_string()))?);
            }
        } else {
            for document in serde_yaml::Deserializer::from_str(text) {
                let value = Value::deserialize(document).map_err(|e| syntax(e.to_string()))?;
                if !value.is_null() {
                    blobs.push(value);
                }
            }
        }
        for blob in blobs {
            self.add_blob(origin, blob)?;
        }
        Ok(())
    }

    fn add_blob(&mut self, origin: &str, blob: Value) -> Result<(), Error> {
        let schema = blob["schema"].as_str().unwrap_or_default().to_string();
        let invalid = |message: String| Error::Blob {
            origin: origin.to_string(),
            schema: schema.clone(),
            message,
        };
        match schema.as_str() {
            "olm.package" => {
                let name = required_str(&blob, "name").map_err(invalid)?;
                let package = self.packages.entry(name).or_default();
                package.default_channel = blob["defaultChannel"].as_str().map(str::to_string);
            }
            "olm.channel" => {
                let package = required_str(&blob, "package").map_err(invalid)?;
                let name = required_str(&blob, "name").map_err(invalid)?;
                let entries: Vec<Entry> = serde_json::from_value(blob["entries"].clone())
                    .map_err(|e| invalid(format!("entries of channel {name}: {e}")))?;
                self.packages
                    .entry(package)
                    .or_default()
                    .channels
                    .insert(name, entries);
            }
            "olm.bundle" => {
                let bundle = parse_bundle(&blob).map_err(invalid)?;
                self.bundles.insert(bundle.name.clone(), bundle);
            }
            _ => {}
        }
        Ok(())
    }
}

fn collect_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: dir.display().to_string(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            files.push(path);
        }
    }
    Ok(())
}

fn required_str(blob: &Value, field: &str) -> Result<String, String> {
    blob[field]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("`{field}` is missing"))
}

fn parse_bundle(blob: &Value) -> Result<Bundle, String> {
    let name = required_str(blob, "name")?;
    let mut bundle = Bundle {
        package: required_str(blob, "package")?,
        name,
        ..Bundle::default()
    };
    let empty = Vec::new();
    for property in blob["properties"].as_array().unwrap_or(&empty) {
        let value = &property["value"];
        let bad = |e: &dyn std::fmt::Display| {
            format!("bundle {}: property {}: {e}", bundle.name, property["type"])
        };
        match property["type"].as_str().unwrap_or_default() {
            "olm.package" => {
                let version = value["version"].as_str().unwrap_or_default();
                bundle.version = Some(semver::Version::parse(version).map_err(|e| bad(&e))?);
            }
            "olm.gvk" => bundle
                .provides
                .push(serde_json::from_value(value.clone()).map_err(|e| bad(&e))?),
            "olm.gvk.required" => bundle
                .requires
                .push(serde_json::from_value(value.clone()).map_err(|e| bad(&e))?),
            "olm.package.required" => bundle.requires_packages.push(PackageRequirement {
                package: value["packageName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                range: value["versionRange"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            }),
            "olm.bundle.object" => {
                let data = value["data"].as_str().unwrap_or_default();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| bad(&e))?;
                bundle
                    .objects
                    .push(serde_json::from_slice(&bytes).map_err(|e| bad(&e))?);
            }
            _ => {}
        }
    }
    Ok(bundle)
}

/// Parses an OLM semver range (`>=0.1.0 <0.3.0`, `>=1.0.0 || 0.9.x`): spaces join
/// comparators, `||` separates alternatives.
pub(crate) fn parse_range(range: &str) -> Result<Vec<semver::VersionReq>, semver::Error> {
    range
        .split("||")
        .map(|alternative| {
            let joined = alternative
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(", ");
            semver::VersionReq::parse(&joined)
        })
        .collect()
}

/// Whether `version` is in the OLM semver `range` (an unparsable range matches nothing).
pub(crate) fn in_range(range: &str, version: &semver::Version) -> bool {
    parse_range(range).is_ok_and(|alternatives| alternatives.iter().any(|r| r.matches(version)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> String {
        base64::engine::general_purpose::STANDARD.encode(value.to_string())
    }

    #[test]
    fn parses_packages_channels_and_bundles_from_yaml() {
        let csv =
            serde_json::json!({"kind": "ClusterServiceVersion", "metadata": {"name": "a.v1.0.0"}});
        let text = format!(
            r#"
schema: olm.package
name: a
defaultChannel: stable
---
schema: olm.channel
package: a
name: stable
entries:
  - name: a.v1.0.0
  - name: a.v1.1.0
    replaces: a.v1.0.0
    skipRange: ">=0.9.0 <1.1.0"
---
schema: olm.bundle
name: a.v1.0.0
package: a
image: example.com/a:1.0.0
properties:
  - type: olm.package
    value: {{packageName: a, version: 1.0.0}}
  - type: olm.gvk
    value: {{group: a.example.com, version: v1, kind: Thing}}
  - type: olm.gvk.required
    value: {{group: b.example.com, version: v1, kind: Other}}
  - type: olm.package.required
    value: {{packageName: c, versionRange: ">=0.1.0"}}
  - type: olm.bundle.object
    value: {{data: {}}}
---
schema: olm.deprecations
package: a
"#,
            object(csv)
        );
        let mut catalog = Catalog::default();
        catalog.add_documents("test", &text).expect("parses");
        let package = &catalog.packages["a"];
        assert_eq!(package.default_channel.as_deref(), Some("stable"));
        assert_eq!(
            package.channels["stable"][1].replaces.as_deref(),
            Some("a.v1.0.0")
        );
        let bundle = &catalog.bundles["a.v1.0.0"];
        assert_eq!(bundle.version, Some(semver::Version::new(1, 0, 0)));
        assert_eq!(bundle.provides[0].kind, "Thing");
        assert_eq!(bundle.requires[0].group, "b.example.com");
        assert_eq!(bundle.requires_packages[0].range, ">=0.1.0");
        assert_eq!(bundle.objects[0]["metadata"]["name"], "a.v1.0.0");
    }

    #[test]
    fn parses_concatenated_json() {
        let text = r#"{"schema":"olm.package","name":"x"}
{"schema":"olm.channel","package":"x","name":"alpha","entries":[{"name":"x.v1"}]}"#;
        let mut catalog = Catalog::default();
        catalog.add_documents("x.json", text).expect("parses");
        assert_eq!(catalog.packages["x"].channels["alpha"][0].name, "x.v1");
    }

    #[test]
    fn a_bundle_without_a_package_names_the_field() {
        let mut catalog = Catalog::default();
        let error = catalog
            .add_documents("f.yaml", "schema: olm.bundle\nname: b\n")
            .expect_err("invalid");
        assert!(
            error.to_string().contains("`package` is missing"),
            "{error}"
        );
    }

    #[test]
    fn ranges_use_olm_syntax() {
        let v = |s| semver::Version::parse(s).expect("version");
        assert!(in_range(">=0.1.0 <0.3.0", &v("0.2.0")));
        assert!(!in_range(">=0.1.0 <0.3.0", &v("0.3.0")));
        assert!(in_range("<0.1.0 || >=1.0.0", &v("1.2.0")));
        assert!(!in_range("not a range", &v("1.0.0")));
    }
}
