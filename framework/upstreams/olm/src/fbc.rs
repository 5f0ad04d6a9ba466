//! File-based catalogs: the `olm.package`, `olm.channel` and `olm.bundle` schemas, and a
//! [`Catalog`] loaded from, or written to, a directory.
//!
//! As opm does, [`Catalog::load`] reads every `.json`, `.yaml` and `.yml` file below the
//! directory (a JSON file may hold a stream of objects, a YAML file several documents) and
//! sorts each blob by its `schema`; blobs of other schemas are kept as they are. Unknown fields
//! of the three schemas are kept in `extra` maps.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema of a package blob.
pub const SCHEMA_PACKAGE: &str = "olm.package";
/// The schema of a channel blob.
pub const SCHEMA_CHANNEL: &str = "olm.channel";
/// The schema of a bundle blob.
pub const SCHEMA_BUNDLE: &str = "olm.bundle";

/// Why a catalog directory could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid JSON or YAML, or a blob does not fit its schema.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A blob has no `schema` field.
    #[error(
        "{path}: a blob has no \"schema\" field; every catalog object needs one (olm.package, olm.channel, olm.bundle, …)"
    )]
    NoSchema {
        /// The file.
        path: PathBuf,
    },
}

/// An `olm.package` blob.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `olm.package`.
    pub schema: String,
    /// The package name.
    pub name: String,
    /// The channel a subscription without one follows.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub default_channel: String,
    /// Fields not modelled here (description, icon, …).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// An `olm.channel` blob.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    /// `olm.channel`.
    pub schema: String,
    /// The package the channel belongs to.
    pub package: String,
    /// The channel name.
    pub name: String,
    /// The upgrade graph.
    #[serde(default)]
    pub entries: Vec<ChannelEntry>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// One bundle of a channel and its upgrade edges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelEntry {
    /// The bundle name.
    pub name: String,
    /// The bundle this one upgrades from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub replaces: String,
    /// Bundles this one may upgrade from directly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    /// The versions this one may upgrade from directly.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub skip_range: String,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// An `olm.bundle` blob.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// `olm.bundle`.
    pub schema: String,
    /// The bundle name (the CSV's name).
    pub name: String,
    /// The package.
    pub package: String,
    /// The bundle image.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    /// Typed properties: `olm.package`, `olm.gvk`, `olm.bundle.object`, ….
    #[serde(default)]
    pub properties: Vec<Property>,
    /// Fields not modelled here (relatedImages, …).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A bundle property.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Property {
    /// `olm.package`, `olm.gvk`, `olm.gvk.required`, `olm.package.required`, ….
    #[serde(rename = "type")]
    pub kind: String,
    /// The property's value.
    pub value: Value,
}

impl Property {
    /// A property of type `kind`.
    pub fn new(kind: &str, value: Value) -> Self {
        Self {
            kind: kind.to_owned(),
            value,
        }
    }
}

impl Bundle {
    /// The properties of type `kind`.
    pub fn properties_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.properties
            .iter()
            .filter(move |p| p.kind == kind)
            .map(|p| &p.value)
    }

    /// The version of its `olm.package` property, if there is exactly one.
    pub fn version(&self) -> Option<&str> {
        let mut packages = self.properties_of("olm.package");
        let first = packages.next()?;
        if packages.next().is_some() {
            return None;
        }
        first.get("version").and_then(Value::as_str)
    }
}

/// A file-based catalog, in the order its blobs were read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    /// `olm.package` blobs.
    pub packages: Vec<Package>,
    /// `olm.channel` blobs.
    pub channels: Vec<Channel>,
    /// `olm.bundle` blobs.
    pub bundles: Vec<Bundle>,
    /// Blobs of other schemas, as read.
    pub others: Vec<Value>,
}

impl Catalog {
    /// Reads every `.json`, `.yaml` and `.yml` file below `dir`, in path order.
    pub fn load(dir: &Path) -> Result<Self, CatalogError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| CatalogError::Io { path, source }
        };
        fs::metadata(dir).map_err(io(dir))?;
        let mut catalog = Self::default();
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(walkdir::DirEntry::into_path)
            .filter(|p| {
                matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("json" | "yaml" | "yml")
                )
            })
            .collect();
        files.sort();
        for path in files {
            let text = fs::read_to_string(&path).map_err(io(&path))?;
            for blob in parse_blobs(&path, &text)? {
                catalog.push(&path, blob)?;
            }
        }
        Ok(catalog)
    }

    fn push(&mut self, path: &Path, blob: Value) -> Result<(), CatalogError> {
        let schema = blob.get("schema").and_then(Value::as_str).unwrap_or("");
        let parse = |e: serde_json::Error| CatalogError::Parse {
            path: path.to_owned(),
            message: format!("a {schema} blob: {e}"),
        };
        match schema {
            "" => return Err(CatalogError::NoSchema { path: path.into() }),
            SCHEMA_PACKAGE => self
                .packages
                .push(serde_json::from_value(blob.clone()).map_err(parse)?),
            SCHEMA_CHANNEL => self
                .channels
                .push(serde_json::from_value(blob.clone()).map_err(parse)?),
            SCHEMA_BUNDLE => self
                .bundles
                .push(serde_json::from_value(blob.clone()).map_err(parse)?),
            _ => self.others.push(blob),
        }
        Ok(())
    }

    /// The catalog as YAML documents, one directory per package: `<package>/catalog.yaml`
    /// holding its package, channels and bundles (other blobs go to `others.yaml`).
    pub fn to_files(&self) -> BTreeMap<String, String> {
        let mut files: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut add = |name: String, value: Value| files.entry(name).or_default().push(value);
        let to_value = |v: &dyn erased::ToValue| v.to_value();
        for p in &self.packages {
            add(format!("{}/catalog.yaml", p.name), to_value(p));
        }
        for c in &self.channels {
            add(format!("{}/catalog.yaml", c.package), to_value(c));
        }
        for b in &self.bundles {
            add(format!("{}/catalog.yaml", b.package), to_value(b));
        }
        for o in &self.others {
            add("others.yaml".to_owned(), o.clone());
        }
        files
            .into_iter()
            .map(|(name, docs)| {
                let text = docs
                    .iter()
                    .map(|d| serde_yaml::to_string(d).expect("JSON values serialize"))
                    .collect::<Vec<_>>()
                    .join("---\n");
                (name, text)
            })
            .collect()
    }

    /// Writes [`Catalog::to_files`] below `dir` (which must not hold other catalog files, or
    /// they are read back too).
    pub fn write(&self, dir: &Path) -> Result<(), CatalogError> {
        for (name, text) in self.to_files() {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|source| CatalogError::Io {
                    path: parent.to_owned(),
                    source,
                })?;
            }
            fs::write(&path, text).map_err(|source| CatalogError::Io { path, source })?;
        }
        Ok(())
    }
}

/// Serializing the three blob types through one function.
mod erased {
    pub(super) trait ToValue {
        fn to_value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> ToValue for T {
        fn to_value(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("catalog blobs serialize")
        }
    }
}

/// The blobs of one file: a JSON stream or YAML documents.
fn parse_blobs(path: &Path, text: &str) -> Result<Vec<Value>, CatalogError> {
    let bad = |message: String| CatalogError::Parse {
        path: path.to_owned(),
        message,
    };
    if path.extension().and_then(|e| e.to_str()) == Some("json") {
        return serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| bad(format!("not JSON: {e}")));
    }
    let mut blobs = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).map_err(|e| bad(format!("not YAML: {e}")))?;
        if !value.is_null() {
            blobs.push(value);
        }
    }
    Ok(blobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_round_trips_through_a_directory() {
        let tmp = tempfile::tempdir().expect("tmp");
        fs::write(
            tmp.path().join("a.json"),
            r#"{"schema":"olm.package","name":"a","defaultChannel":"alpha","description":"x"}
{"schema":"olm.channel","package":"a","name":"alpha","entries":[{"name":"a.v0.1.0"}]}"#,
        )
        .expect("write");
        fs::write(
            tmp.path().join("b.yaml"),
            "schema: olm.bundle\nname: a.v0.1.0\npackage: a\nimage: x/a:v0.1.0\nproperties:\n- type: olm.package\n  value: {packageName: a, version: 0.1.0}\n---\nschema: my.thing\nk: v\n",
        )
        .expect("write");
        let catalog = Catalog::load(tmp.path()).expect("loads");
        assert_eq!(catalog.packages[0].extra["description"], "x");
        assert_eq!(catalog.bundles[0].version(), Some("0.1.0"));
        assert_eq!(catalog.others.len(), 1);
        let out = tmp.path().join("out");
        catalog.write(&out).expect("writes");
        assert_eq!(Catalog::load(&out).expect("reloads"), catalog);
    }

    #[test]
    fn a_blob_without_schema_names_the_file() {
        let tmp = tempfile::tempdir().expect("tmp");
        fs::write(tmp.path().join("x.yaml"), "name: a\n").expect("write");
        let err = Catalog::load(tmp.path()).expect_err("refused");
        assert!(err.to_string().contains("x.yaml"), "{err}");
    }
}
