//! LIST and DELETECOLLECTION: selectors, resourceVersion semantics and pagination.
//!
//! A list reads the store at one revision (the current one, or the one a `resourceVersion` /
//! `continue` token names), filters by label and field selectors, and pages with `limit`.
//! Continue tokens carry the revision of the first page, so every page of one list is a
//! consistent snapshot; a token whose revision was compacted is a 410, as upstream.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use mni_apimachinery::{FieldSelector, Selector};
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::registry::ResourceInfo;
use crate::request::{Query, Target};
use crate::rest::Reply;
use crate::server::Shared;

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
                Selector::parse(s)
                    .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))
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

    /// Whether the object `kv` may match: `false` when its labels rule it out.
    ///
    /// The labels come from `cache`, or from reading only `metadata.labels` of the stored
    /// document (the rest is skipped, not built), so a label-selected list over many objects
    /// parses in full only the ones it returns.
    pub(crate) fn may_match(&self, cache: &LabelCache, kv: &mni_store::KeyValue) -> bool {
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

/// Where a list reads from.
#[derive(Debug, Clone, Copy)]
struct ReadAt {
    revision: Option<i64>,
}

fn encode_continue(rev: i64, key: &str) -> String {
    let raw = json!({"v": "meta.k8s.io/v1", "rv": rev, "start": key}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn decode_continue(token: &str) -> ApiResult<(i64, String)> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    Ok((
        v["rv"].as_i64().ok_or_else(bad)?,
        v["start"].as_str().ok_or_else(bad)?.to_string(),
    ))
}

impl Shared {
    /// Waits until the store has reached `rev` (a write may be in flight), or fails with 504.
    pub(crate) async fn wait_for_revision(&self, rev: i64) -> ApiResult<()> {
        for _ in 0..60 {
            if self.store.current_revision() >= rev {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut e = ApiError::timeout(format!(
            "Too large resource version: {rev}, current: {}",
            self.store.current_revision()
        ));
        e.details = Some(json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1
        }));
        Err(e)
    }

    /// Reads the matching objects (stored form) of a collection.
    async fn collect(
        &self,
        target: &Target,
        q: &Query,
        filter: &Filter,
    ) -> ApiResult<(Vec<(String, Value)>, i64, Option<String>, Option<usize>)> {
        let info = &target.info;
        let prefix = info.collection_prefix(target.namespace.as_deref());
        let limit = q.int("limit")?.filter(|l| *l > 0).map(|l| l as usize);
        let rv = q.get("resourceVersion");
        let rv_match = q.get("resourceVersionMatch");
        let parse_rv = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s}")))
        };
        let (at, start_after) = if let Some(token) = q.get("continue") {
            if rv.is_some_and(|r| r != "0") {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let (rev, start) = decode_continue(token)?;
            if rev < self.store.compacted_revision() {
                return Err(ApiError::new(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                ));
            }
            (
                ReadAt {
                    revision: Some(rev),
                },
                Some(start),
            )
        } else {
            match (rv, rv_match) {
                (_, Some(m)) if !["Exact", "NotOlderThan"].contains(&m) => {
                    return Err(ApiError::bad_request(format!(
                        "resourceVersionMatch: Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\""
                    )));
                }
                (None, Some(_)) => {
                    return Err(ApiError::bad_request(
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    ));
                }
                (Some(r), Some("Exact")) => {
                    let rev = parse_rv(r)?;
                    if rev == 0 {
                        return Err(ApiError::bad_request(
                            "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"",
                        ));
                    }
                    self.wait_for_revision(rev).await?;
                    (
                        ReadAt {
                            revision: Some(rev),
                        },
                        None,
                    )
                }
                (Some(r), _) if r != "0" => {
                    self.wait_for_revision(parse_rv(r)?).await?;
                    (ReadAt { revision: None }, None)
                }
                _ => (ReadAt { revision: None }, None),
            }
        };
        let mut opts = mni_store::ListOptions::default();
        if let Some(r) = at.revision {
            opts = opts.with_revision(r);
        }
        if let Some(s) = start_after {
            opts = opts.with_start_after(s);
        }
        let listed = self.store.list(&prefix, &opts)?;
        let revision = listed.revision;
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = None;
        let total = listed.items.len();
        for (i, kv) in listed.items.iter().enumerate() {
            if !filter.may_match(&self.labels, kv) {
                continue;
            }
            let obj = object::from_stored(kv)?;
            if !filter.matches(&obj) {
                continue;
            }
            if limit.is_some_and(|l| items.len() == l) {
                next = items
                    .last()
                    .map(|(k, _): &(String, Value)| encode_continue(revision, k));
                if filter.is_empty() {
                    remaining = Some(total - i);
                }
                break;
            }
            items.push((kv.key.clone(), obj));
        }
        Ok((items, revision, next, remaining))
    }

    /// LIST of a collection, in the shape `Accept` asked for.
    pub(crate) async fn list(
        &self,
        target: &Target,
        q: &Query,
        output: crate::request::Output,
    ) -> ApiResult<Value> {
        let info = &target.info;
        let filter = Filter::from_query(info, q)?;
        let (items, revision, next, remaining) = self.collect(target, q, &filter).await?;
        let items: Vec<Value> = items
            .into_iter()
            .map(|(_, o)| object::to_served(info, o))
            .collect();
        let mut metadata = json!({"resourceVersion": revision.to_string()});
        if let Some(c) = next {
            metadata["continue"] = json!(c);
        }
        if let Some(r) = remaining {
            metadata["remainingItemCount"] = json!(r);
        }
        Ok(match output {
            crate::request::Output::Table => crate::table::table(info, &items, metadata, q),
            crate::request::Output::Metadata => json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": metadata,
                "items": items.iter().map(object::partial_metadata).collect::<Vec<_>>(),
            }),
            crate::request::Output::Object => json!({
                "kind": info.list_kind,
                "apiVersion": info.api_version(),
                "metadata": metadata,
                "items": items,
            }),
        })
    }

    /// DELETECOLLECTION: deletes every matching object, returning them as a list.
    pub(crate) async fn delete_collection(
        &self,
        target: &Target,
        q: &Query,
        options: &Value,
    ) -> ApiResult<Reply> {
        let info = &target.info;
        let filter = Filter::from_query(info, q)?;
        let dry_run = q.dry_run()?;
        let mut all = Query::default();
        all.0.extend(
            q.0.iter()
                .filter(|(k, _)| *k == "resourceVersion")
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        let (items, revision, _, _) = self.collect(target, &all, &filter).await?;
        let mut deleted = Vec::new();
        for (_, obj) in items {
            let one = Target {
                info: info.clone(),
                namespace: object::meta_str(&obj, "namespace").map(str::to_string),
                name: Some(object::name(&obj).to_string()),
                subresource: None,
            };
            match self.delete(&one, options, dry_run).await {
                Ok(r) => deleted.push(r.body),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Reply {
            code: 200,
            body: json!({
                "kind": info.list_kind,
                "apiVersion": info.api_version(),
                "metadata": {"resourceVersion": revision.to_string()},
                "items": deleted,
            }),
            warnings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = encode_continue(42, "/registry/core/configmaps/ns/b");
        assert_eq!(
            decode_continue(&t).expect("decode"),
            (42, "/registry/core/configmaps/ns/b".to_string())
        );
        assert_eq!(decode_continue("%%%").expect_err("bad").code, 400);
    }
}
