//! The typed subset of a `ClusterServiceVersion` (`operators.coreos.com/v1alpha1`) that mNi
//! writes and reads.
//!
//! Every struct keeps the fields it does not model in an `extra` map (`#[serde(flatten)]`), so
//! a CSV a user extended by hand round-trips without loss. Optional fields are left out when
//! empty, as operator-sdk writes them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The API version of a CSV.
pub const CSV_API_VERSION: &str = "operators.coreos.com/v1alpha1";

/// A ClusterServiceVersion: what OLM installs for one version of an operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterServiceVersion {
    /// `operators.coreos.com/v1alpha1`.
    pub api_version: String,
    /// `ClusterServiceVersion`.
    pub kind: String,
    /// Name (`<package>.v<version>`) and annotations (`alm-examples`, `olm.skipRange`).
    pub metadata: CsvMetadata,
    /// The operator's description, owned APIs and install strategy.
    pub spec: CsvSpec,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A CSV's metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsvMetadata {
    /// `<package>.v<version>`.
    pub name: String,
    /// Annotations, e.g. `alm-examples`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A CSV's spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsvSpec {
    /// The operator's semantic version.
    pub version: String,
    /// The CSV this one upgrades from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// CSVs this one may upgrade from directly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    /// The APIs the operator owns and requires.
    #[serde(default)]
    pub customresourcedefinitions: CrdDescriptions,
    /// Fields not modelled here (displayName, description, install, installModes, …).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `spec.customresourcedefinitions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrdDescriptions {
    /// The CRDs the bundle ships.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owned: Vec<CrdDescription>,
    /// The CRDs the operator needs from other operators.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<CrdDescription>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// One owned or required CRD version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrdDescription {
    /// `<plural>.<group>`.
    pub name: String,
    /// The served version.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// A human name for the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// What the kind is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fields of `.spec` worth showing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spec_descriptors: Vec<Descriptor>,
    /// Fields of `.status` worth showing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_descriptors: Vec<Descriptor>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A spec or status descriptor.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// The field's path below `.spec` or `.status`, dotted.
    pub path: String,
    /// A human name for the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The field's description, from the CRD schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fields not modelled here (`x-descriptors`, …).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// One entry of `spec.installModes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallMode {
    /// `OwnNamespace`, `SingleNamespace`, `MultiNamespace` or `AllNamespaces`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether the operator supports it.
    pub supported: bool,
}

impl InstallMode {
    /// The install modes of an mNi operator: it watches one namespace or all of them.
    pub fn mni_defaults() -> Vec<Self> {
        [
            ("OwnNamespace", true),
            ("SingleNamespace", true),
            ("MultiNamespace", false),
            ("AllNamespaces", true),
        ]
        .into_iter()
        .map(|(kind, supported)| Self {
            kind: kind.to_owned(),
            supported,
        })
        .collect()
    }
}

impl ClusterServiceVersion {
    /// Parses a CSV from YAML (or JSON).
    pub fn from_yaml(text: &str) -> Result<Self, serde_yaml::Error> {
        serde_yaml::from_str(text)
    }

    /// Whether `value` is a CSV (by `kind`).
    pub fn is_csv(value: &Value) -> bool {
        value.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion")
    }

    /// The owned CRD names that `crd_names` has but the CSV does not list.
    pub fn missing_owned<'a>(&self, crd_names: &'a [String]) -> Vec<&'a str> {
        crd_names
            .iter()
            .filter(|n| {
                !self
                    .spec
                    .customresourcedefinitions
                    .owned
                    .iter()
                    .any(|o| &o.name == *n)
            })
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let text = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a.v0.1.0\n  labels:\n    x: y\nspec:\n  version: 0.1.0\n  description: mine\n  customresourcedefinitions:\n    owned:\n    - name: ships.crew.example.com\n      version: v1\n      kind: Ship\n      resources: []\n";
        let csv = ClusterServiceVersion::from_yaml(text).expect("parses");
        assert_eq!(csv.spec.extra["description"], "mine");
        let back = serde_yaml::to_string(&csv).expect("writes");
        let again = ClusterServiceVersion::from_yaml(&back).expect("parses again");
        assert_eq!(csv, again);
        assert!(back.contains("resources: []"), "{back}");
        assert!(back.contains("x: y"), "{back}");
    }

    #[test]
    fn missing_owned_names_the_crd() {
        let csv = ClusterServiceVersion::from_yaml(
            "apiVersion: v\nkind: ClusterServiceVersion\nmetadata: {name: a}\nspec: {version: 0.1.0}\n",
        )
        .expect("parses");
        let names = vec!["ships.crew.example.com".to_owned()];
        assert_eq!(csv.missing_owned(&names), ["ships.crew.example.com"]);
    }
}
