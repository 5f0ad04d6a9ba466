//! Collections: reads at one revision, with selectors and pagination.
//!
//! A list reads the store at one revision (the current one, or the one a `resourceVersion` /
//! `continue` token names), filters by label and field selectors, and pages with `limit`.
//! Continue tokens carry the revision of the first page, so every page of one list is a
//! consistent snapshot; a token whose revision was compacted is a 410, as upstream.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::{Filter, State};
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::request::{Query, Target};

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

impl State {
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

    /// Reads the matching objects (stored form, with their keys) of a collection: the
    /// objects, the revision read, the continue token and the remaining count (both when a
    /// `limit` cut the list short).
    pub(crate) async fn collect(
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
        // An equality requirement of the label selector names an index term: read only the
        // keys that have the most selective one (at the current revision; else list all).
        let indexed = filter
            .index_terms()
            .into_iter()
            .min_by_key(|t| self.store.term_count(t))
            .map(|term| self.store.list_term(&prefix, &term, &opts))
            .transpose()?
            .flatten();
        let listed = match indexed {
            Some(listed) => listed,
            None => self.store.list(&prefix, &opts)?,
        };
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
