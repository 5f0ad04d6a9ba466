//! Rendering a bundle directory into catalog blobs, as `opm render` does for a bundle image.
//!
//! A [`BundleDir`] is the registry+v1 layout: `manifests/` (one CSV, the CRDs and other
//! objects) and `metadata/` (`annotations.yaml` with the package and channels,
//! `dependencies.yaml`). [`render_bundle`] turns it into an `olm.bundle` with the properties
//! `olm.package`, `olm.gvk` (each owned CRD version), `olm.gvk.required` /
//! `olm.package.required` (from the dependencies) and one `olm.bundle.object` per manifest
//! (base64 of its JSON), plus the channel entry its CSV describes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::csv::ClusterServiceVersion;
use crate::fbc::{Bundle, ChannelEntry, Property, SCHEMA_BUNDLE};

/// The annotation naming the package.
pub const ANNOTATION_PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
/// The annotation listing the channels, comma-separated.
pub const ANNOTATION_CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
/// The annotation naming the default channel.
pub const ANNOTATION_DEFAULT_CHANNEL: &str =
    "operators.operatorframework.io.bundle.channel.default.v1";

/// Why a bundle directory could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid YAML or misses a field.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and the fix.
        message: String,
    },
    /// The CSV does not list a CRD the bundle ships.
    #[error(
        "{csv}: the bundle ships CRD {crd} but the CSV does not own it; add it to spec.customresourcedefinitions.owned (name, version, kind) or remove the CRD from {dir}"
    )]
    NotOwned {
        /// The CSV's name.
        csv: String,
        /// The CRD's name.
        crd: String,
        /// The manifests directory.
        dir: PathBuf,
    },
}

/// A bundle directory, read.
#[derive(Debug, Clone)]
pub struct BundleDir {
    /// The directory.
    pub root: PathBuf,
    /// The CSV.
    pub csv: ClusterServiceVersion,
    /// Every manifest, by file name, as JSON.
    pub manifests: BTreeMap<String, Value>,
    /// `metadata/annotations.yaml`'s `annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `metadata/dependencies.yaml`'s `dependencies` (empty without the file).
    pub dependencies: Vec<Property>,
}

impl BundleDir {
    /// Reads `root`.
    pub fn read(root: &Path) -> Result<Self, RenderError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| RenderError::Io { path, source }
        };
        let invalid = |path: &Path, message: String| RenderError::Invalid {
            path: path.to_owned(),
            message,
        };
        let dir = root.join("manifests");
        let mut manifests = BTreeMap::new();
        let mut csv = None;
        let mut entries: Vec<_> = fs::read_dir(&dir)
            .map_err(io(&dir))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            ) {
                continue;
            }
            let text = fs::read_to_string(&path).map_err(io(&path))?;
            let value: Value = serde_yaml::from_str(&text)
                .map_err(|e| invalid(&path, format!("not YAML: {e}")))?;
            if ClusterServiceVersion::is_csv(&value) {
                csv = Some(
                    serde_json::from_value::<ClusterServiceVersion>(value.clone())
                        .map_err(|e| invalid(&path, format!("not a ClusterServiceVersion: {e}")))?,
                );
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            manifests.insert(name, value);
        }
        let csv = csv.ok_or_else(|| {
            invalid(
                &dir,
                "no ClusterServiceVersion; run `mni-scaffold olm bundle --version X.Y.Z`".into(),
            )
        })?;

        #[derive(Deserialize)]
        struct Annotations {
            annotations: BTreeMap<String, String>,
        }
        let path = root.join("metadata/annotations.yaml");
        let text = fs::read_to_string(&path).map_err(io(&path))?;
        let annotations = serde_yaml::from_str::<Annotations>(&text)
            .map_err(|e| invalid(&path, format!("not an annotations file: {e}")))?
            .annotations;
        if !annotations.contains_key(ANNOTATION_PACKAGE) {
            return Err(invalid(
                &path,
                format!("no {ANNOTATION_PACKAGE} annotation naming the package"),
            ));
        }

        #[derive(Deserialize)]
        struct Dependencies {
            #[serde(default)]
            dependencies: Vec<Property>,
        }
        let path = root.join("metadata/dependencies.yaml");
        let dependencies = match fs::read_to_string(&path) {
            Ok(text) => {
                serde_yaml::from_str::<Dependencies>(&text)
                    .map_err(|e| invalid(&path, format!("not a dependencies file: {e}")))?
                    .dependencies
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(&path)(e)),
        };
        let bundle = Self {
            root: root.to_owned(),
            csv,
            manifests,
            annotations,
            dependencies,
        };
        bundle.check_owned()?;
        Ok(bundle)
    }

    /// The CRDs among the manifests.
    pub fn crds(&self) -> impl Iterator<Item = &Value> {
        self.manifests
            .values()
            .filter(|v| v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
    }

    /// Refuses a CRD the CSV does not own.
    fn check_owned(&self) -> Result<(), RenderError> {
        let names: Vec<String> = self
            .crds()
            .filter_map(|c| c.pointer("/metadata/name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect();
        match self.csv.missing_owned(&names).first() {
            Some(crd) => Err(RenderError::NotOwned {
                csv: self.csv.metadata.name.clone(),
                crd: (*crd).to_owned(),
                dir: self.root.join("manifests"),
            }),
            None => Ok(()),
        }
    }

    /// The package name.
    pub fn package(&self) -> &str {
        &self.annotations[ANNOTATION_PACKAGE]
    }

    /// The channels the bundle is in.
    pub fn channels(&self) -> Vec<String> {
        self.annotations
            .get(ANNOTATION_CHANNELS)
            .map(|c| {
                c.split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The default channel, if the bundle names one.
    pub fn default_channel(&self) -> Option<&str> {
        self.annotations
            .get(ANNOTATION_DEFAULT_CHANNEL)
            .map(String::as_str)
    }

    /// The channel entry of this bundle: name, replaces, skips, skipRange.
    pub fn entry(&self) -> ChannelEntry {
        ChannelEntry {
            name: self.csv.metadata.name.clone(),
            replaces: self.csv.spec.replaces.clone().unwrap_or_default(),
            skips: self.csv.spec.skips.clone(),
            skip_range: self
                .csv
                .metadata
                .annotations
                .get("olm.skipRange")
                .cloned()
                .unwrap_or_default(),
            extra: BTreeMap::new(),
        }
    }
}

/// The `olm.bundle` blob of `bundle`, pulled from `image`.
pub fn render_bundle(bundle: &BundleDir, image: &str) -> Bundle {
    let mut properties = vec![Property::new(
        "olm.package",
        json!({"packageName": bundle.package(), "version": bundle.csv.spec.version}),
    )];
    for crd in bundle.crds() {
        let group = crd.pointer("/spec/group").cloned().unwrap_or(Value::Null);
        let kind = crd
            .pointer("/spec/names/kind")
            .cloned()
            .unwrap_or(Value::Null);
        for version in crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let version = version.get("name").cloned().unwrap_or(Value::Null);
            properties.push(Property::new(
                "olm.gvk",
                json!({"group": group, "kind": kind, "version": version}),
            ));
        }
    }
    for dependency in &bundle.dependencies {
        match dependency.kind.as_str() {
            "olm.gvk" => {
                properties.push(Property::new("olm.gvk.required", dependency.value.clone()))
            }
            "olm.package" => properties.push(Property::new(
                "olm.package.required",
                json!({
                    "packageName": dependency.value.get("packageName"),
                    "versionRange": dependency.value.get("version"),
                }),
            )),
            _ => {}
        }
    }
    let engine = base64::engine::general_purpose::STANDARD;
    for manifest in bundle.manifests.values() {
        let json = serde_json::to_string(manifest).expect("JSON values serialize");
        properties.push(Property::new(
            "olm.bundle.object",
            json!({"data": engine.encode(json)}),
        ));
    }
    Bundle {
        schema: SCHEMA_BUNDLE.to_owned(),
        name: bundle.csv.metadata.name.clone(),
        package: bundle.package().to_owned(),
        image: image.to_owned(),
        properties,
        extra: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let p = root.join(path);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, text).expect("write");
    }

    fn sample(root: &Path, owned: bool) {
        let owned = if owned {
            "\n    owned:\n    - {name: ships.crew.example.com, version: v1, kind: Ship}\n"
        } else {
            " {}\n"
        };
        write(
            root,
            "manifests/demo.clusterserviceversion.yaml",
            &format!(
                "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: demo.v0.2.0\n  annotations: {{olm.skipRange: '<0.2.0'}}\nspec:\n  version: 0.2.0\n  replaces: demo.v0.1.0\n  customresourcedefinitions:{owned}"
            ),
        );
        write(
            root,
            "manifests/crew.example.com_ships.yaml",
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ships.crew.example.com}\nspec:\n  group: crew.example.com\n  names: {kind: Ship}\n  versions: [{name: v1}]\n",
        );
        write(
            root,
            "metadata/annotations.yaml",
            &format!(
                "annotations:\n  {ANNOTATION_PACKAGE}: demo\n  {ANNOTATION_CHANNELS}: alpha,stable\n"
            ),
        );
        write(
            root,
            "metadata/dependencies.yaml",
            "dependencies:\n- type: olm.gvk\n  value: {group: network.mni.dev, kind: VirtualPrivateCloud, version: v1alpha1}\n- type: olm.package\n  value: {packageName: mni-vpc, version: '>=0.1.0'}\n",
        );
    }

    #[test]
    fn a_bundle_renders_as_opm_renders_it() {
        let tmp = tempfile::tempdir().expect("tmp");
        sample(tmp.path(), true);
        let dir = BundleDir::read(tmp.path()).expect("reads");
        assert_eq!(dir.channels(), ["alpha", "stable"]);
        let entry = dir.entry();
        assert_eq!(entry.replaces, "demo.v0.1.0");
        assert_eq!(entry.skip_range, "<0.2.0");
        let bundle = render_bundle(&dir, "x/demo-bundle:v0.2.0");
        let kinds: Vec<&str> = bundle.properties.iter().map(|p| p.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "olm.package",
                "olm.gvk",
                "olm.gvk.required",
                "olm.package.required",
                "olm.bundle.object",
                "olm.bundle.object"
            ]
        );
        assert_eq!(bundle.version(), Some("0.2.0"));
    }

    #[test]
    fn a_crd_the_csv_does_not_own_is_named() {
        let tmp = tempfile::tempdir().expect("tmp");
        sample(tmp.path(), false);
        let err = BundleDir::read(tmp.path()).expect_err("refused");
        let msg = err.to_string();
        assert!(msg.contains("ships.crew.example.com"), "{msg}");
        assert!(
            msg.contains("spec.customresourcedefinitions.owned"),
            "{msg}"
        );
    }
}
