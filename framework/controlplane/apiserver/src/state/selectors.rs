//! Label and field selectors: which objects a list, a watch or a deletecollection sees.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use mni_apimachinery::{FieldSelector, Operator, Selector};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::registry::ResourceInfo;
use crate::request::Query;

/// Label and field selectors of a request.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    labels: Option<Selector>,
    fields: Option<FieldSelector>,
    /// Field label → JSON path, for the labels the kind supports.
    field_paths: Vec<(String, String)>,
}

impl Filter {
    /// Reads `labelSelector` and `fieldSelector`, rejecting unsupported field labels.
    pub(crate) fn from_query(info: &ResourceInfo, q: &Query) -> ApiResult<Filter> {
        let labels = q
            .get("labelSelector")
            .map(|s| {
                // labels.Parse's own message, as kube-apiserver returns it.
                Selector::parse(s).map_err(|e| ApiError::bad_request(e.to_string()))
            })
            .transpose()?;
        let mut field_paths: Vec<(String, String)> = vec![
            ("metadata.name".into(), "metadata.name".into()),
            ("metadata.namespace".into(), "metadata.namespace".into()),
        ];
        match (info.builtin(), info.custom()) {
            (Some(b), _) => field_paths.extend(
                b.field_labels
                    .iter()
                    .map(|(l, p)| ((*l).to_string(), (*p).to_string())),
            ),
            (_, Some(c)) => {
                field_paths.extend(c.selectable_fields.iter().map(|p| (p.clone(), p.clone())))
            }
            _ => {}
        }
        let fields = q
            .get("fieldSelector")
            .map(|s| {
                FieldSelector::parse(s)
                    .map_err(|e| ApiError::bad_request(format!("invalid field selector: {e}")))
            })
            .transpose()?;
        for r in fields.iter().flat_map(|f| f.requirements()) {
            if !field_paths.iter().any(|(l, _)| *l == r.field) {
                let known: Vec<String> =
                    field_paths.iter().map(|(l, _)| format!("{l:?}")).collect();
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {} (supported: {})",
                    r.field,
                    known.join(", ")
                )));
            }
        }
        Ok(Filter {
            labels,
            fields,
            field_paths,
        })
    }

    /// Whether no selector was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.labels.as_ref().is_none_or(Selector::is_empty)
            && self.fields.as_ref().is_none_or(FieldSelector::is_empty)
    }

    /// The store index terms ([`label_terms`]) that every matching object has: one for each
    /// `key=value`, `key==value` or single-valued `key in (value)` requirement. A list can read
    /// the keys of any one of them instead of the whole collection.
    pub(crate) fn index_terms(&self) -> Vec<String> {
        self.labels
            .iter()
            .flat_map(Selector::requirements)
            .filter_map(|r| match (r.operator(), r.values()) {
                (Operator::Equals | Operator::DoubleEquals | Operator::In, [v]) => {
                    Some(label_term(r.key(), v))
                }
                _ => None,
            })
            .collect()
    }

    /// Whether the object `kv` may match: `false` when its labels rule it out.
    ///
    /// The labels come from `cache`, or from reading only `metadata.labels` of the stored
    /// document (the rest is skipped, not built), so a label-selected list over many objects
    /// parses in full only the ones it returns.
    pub(super) fn may_match(&self, cache: &LabelCache, kv: &mni_store::KeyValue) -> bool {
        let Some(selector) = &self.labels else {
            return true;
        };
        match cache.labels(kv) {
            Some(labels) => selector.matches(&labels),
            // Let the full parse report what is wrong.
            None => true,
        }
    }

    /// Whether an object (in stored form) matches.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        if let Some(l) = &self.labels
            && !l.matches(&object::labels(obj))
        {
            return false;
        }
        match &self.fields {
            None => true,
            Some(f) => f.matches(&|label: &str| {
                let path = self
                    .field_paths
                    .iter()
                    .find(|(l, _)| l == label)
                    .map_or(label, |(_, p)| p.as_str());
                object::field_value(obj, path)
            }),
        }
    }
}

/// The labels of stored objects by key, each valid for one `mod_revision`.
///
/// Label-selected lists (an operator looking up a Deployment's pods) would otherwise read
/// every object of the collection each time. Entries of deleted objects linger until the
/// cache is cleared, which happens when it grows past [`LabelCache::MAX`].
#[derive(Debug, Default)]
pub(crate) struct LabelCache(Mutex<HashMap<String, (i64, Labels)>>);

/// The string-valued labels of one object.
type Labels = Arc<BTreeMap<String, String>>;

impl LabelCache {
    /// How many objects the cache holds at most.
    const MAX: usize = 100_000;

    /// The labels of `kv`; `None` when the stored document is not an object.
    fn labels(&self, kv: &mni_store::KeyValue) -> Option<Labels> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((rev, labels)) = map.get(&kv.key)
            && *rev == kv.mod_revision
        {
            return Some(labels.clone());
        }
        let labels = Arc::new(
            serde_json::from_slice::<LabelsOnly>(&kv.value)
                .ok()?
                .metadata
                .labels,
        );
        if map.len() >= Self::MAX {
            map.clear();
        }
        map.insert(kv.key.clone(), (kv.mod_revision, labels.clone()));
        Some(labels)
    }
}

/// The store index term of one label pair.
fn label_term(key: &str, value: &str) -> String {
    format!("{key}={value}")
}

/// The store's [`mni_store::Indexer`] for the API server: each string label of a stored object
/// as a `key=value` term (nothing for a value that is not a JSON object).
pub(crate) fn label_indexer() -> mni_store::Indexer {
    mni_store::Indexer::new(|_, value| {
        serde_json::from_slice::<LabelsOnly>(value)
            .map(|o| {
                o.metadata
                    .labels
                    .iter()
                    .map(|(k, v)| label_term(k, v))
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// An object's labels, and nothing else of it.
#[derive(serde::Deserialize)]
struct LabelsOnly {
    #[serde(default)]
    metadata: MetadataLabels,
}

#[derive(serde::Deserialize, Default)]
struct MetadataLabels {
    #[serde(default, deserialize_with = "string_labels")]
    labels: BTreeMap<String, String>,
}

/// Label values that are strings, as [`object::labels`] reads them (others are dropped).
fn string_labels<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    let raw: Option<BTreeMap<String, Value>> = serde::Deserialize::deserialize(d)?;
    Ok(raw
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k, s)),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(selector: &str) -> Filter {
        Filter {
            labels: Some(Selector::parse(selector).expect("selector")),
            fields: None,
            field_paths: Vec::new(),
        }
    }

    #[test]
    fn equality_requirements_become_index_terms() {
        assert_eq!(
            filter("app=web,tier==fe,env in (prod),x in (a,b),y!=z,w").index_terms(),
            ["app=web", "env=prod", "tier=fe"]
        );
        assert!(filter("!app").index_terms().is_empty());
    }

    #[test]
    fn the_indexer_reads_string_labels_only() {
        let terms = label_indexer().terms(
            "/k",
            br#"{"metadata":{"name":"a","labels":{"app":"web","n":1}},"spec":{"big":[1,2,3]}}"#,
        );
        assert_eq!(terms, ["app=web"]);
        assert!(label_indexer().terms("/k", b"not json").is_empty());
        assert!(label_indexer().terms("/k", b"{}").is_empty());
    }
}
