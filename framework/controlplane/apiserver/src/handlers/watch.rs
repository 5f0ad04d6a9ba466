//! WATCH: a stream of `{"type": …, "object": …}` lines with Kubernetes semantics.
//!
//! The stream starts from the store's log, so a watch from any retained resourceVersion sees
//! every later change exactly once and in order. Without a resourceVersion (or with `0`) it
//! first sends the current state as synthetic `ADDED` events; with `sendInitialEvents=true` it
//! does the same and then marks the end with the `k8s.io/initial-events-end` bookmark. A
//! compacted resourceVersion gets an `ERROR` event carrying a 410 `Expired` Status, as
//! kube-apiserver sends it. Selectors turn updates that cross the selector's edge into
//! `ADDED`/`DELETED`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::registry::ResourceInfo;
use crate::request::{Output, Query, Target};
use crate::state::{Filter, LineCache, State};

/// Default watch duration when the client gives no `timeoutSeconds` (kube uses 30–60 min).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

struct Encoder {
    info: Arc<ResourceInfo>,
    output: Output,
    query: Query,
}

impl Encoder {
    fn line(&self, type_: &str, obj: Value) -> Bytes {
        let obj = match self.output {
            Output::Object => obj,
            Output::Metadata => object::partial_metadata(&obj),
            Output::Table => {
                let rv = obj["metadata"]["resourceVersion"].clone();
                crate::table::table(
                    &self.info,
                    std::slice::from_ref(&obj),
                    json!({"resourceVersion": rv}),
                    &self.query,
                )
            }
        };
        let mut line =
            serde_json::to_vec(&json!({"type": type_, "object": obj})).unwrap_or_default();
        line.push(b'\n');
        Bytes::from(line)
    }

    /// [`Encoder::line`] of an object already serialized (see [`object::served_json`]).
    fn raw_line(type_: &str, json: &[u8]) -> Bytes {
        let mut line = Vec::with_capacity(json.len() + type_.len() + 24);
        line.extend_from_slice(b"{\"type\":\"");
        line.extend_from_slice(type_.as_bytes());
        line.extend_from_slice(b"\",\"object\":");
        line.extend_from_slice(json);
        line.extend_from_slice(b"}\n");
        Bytes::from(line)
    }

    /// The object of `kv` as this watch sends it, without parsing it, when that is possible:
    /// full objects and no selector to check (see [`object::served_json`]).
    fn spliced(&self, filter: &Filter, kv: &mni_store::KeyValue) -> Option<Vec<u8>> {
        (self.output == Output::Object && filter.is_empty())
            .then(|| object::served_json(&self.info, kv))
            .flatten()
    }

    fn served(&self, kv: &mni_store::KeyValue) -> Option<Value> {
        object::from_stored(kv)
            .ok()
            .map(|o| object::to_served(&self.info, o))
    }

    fn bookmark(&self, rev: i64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rev.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let (kind, api_version) = match self.output {
            Output::Metadata => (
                "PartialObjectMetadata".to_string(),
                "meta.k8s.io/v1".to_string(),
            ),
            _ => (self.info.kind.clone(), self.info.api_version()),
        };
        let obj = json!({"kind": kind, "apiVersion": api_version, "metadata": meta});
        let mut line =
            serde_json::to_vec(&json!({"type": "BOOKMARK", "object": obj})).unwrap_or_default();
        line.push(b'\n');
        Bytes::from(line)
    }
}

fn error_line(e: &ApiError) -> Bytes {
    let mut line =
        serde_json::to_vec(&json!({"type": "ERROR", "object": e.to_status()})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// Starts a watch and returns the streaming response.
pub(crate) async fn watch(
    state: Arc<State>,
    target: Target,
    q: Query,
    output: Output,
) -> ApiResult<Response> {
    let info = target.info.clone();
    let filter = Filter::from_query(&info, &q)?;
    let timeout = q
        .int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map_or(DEFAULT_TIMEOUT, |t| Duration::from_secs(t as u64));
    let bookmarks = q.flag("allowWatchBookmarks");
    let send_initial = match q.get("sendInitialEvents") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid sendInitialEvents: {other:?}"
            )));
        }
    };
    let rv = q.get("resourceVersion");
    let rv_match = q.get("resourceVersionMatch");
    if send_initial.is_some() {
        if rv_match != Some("NotOlderThan") {
            return Err(ApiError::new(
                422,
                "Invalid",
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to \"NotOlderThan\"",
            ));
        }
        if send_initial == Some(true) && !bookmarks {
            return Err(ApiError::new(
                422,
                "Invalid",
                "ListOptions.meta.k8s.io \"\" is invalid: allowWatchBookmarks: Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is true",
            ));
        }
    } else if rv_match.is_some() {
        return Err(ApiError::new(
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ));
    }
    let parsed_rv = match rv {
        None | Some("0") => None,
        Some(r) => Some(
            r.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {r}")))?,
        ),
    };
    let prefix = info.collection_prefix(target.namespace.as_deref());
    let encoder = Encoder {
        info: info.clone(),
        output,
        query: q.clone(),
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    // Initial state: synthetic ADDED events at one revision, then the log from there.
    let initial = send_initial.unwrap_or(parsed_rv.is_none());
    let (start, snapshot) = if initial {
        if let Some(r) = parsed_rv {
            state.wait_for_revision(r).await?;
        }
        let listed = state.list_stored(&prefix)?;
        (listed.revision, listed.items)
    } else {
        (parsed_rv.unwrap_or(0), Vec::new())
    };
    let store_watch = state.watch_stored(&prefix, start);
    let mut shutdown = state.shutdown_signal();
    tokio::spawn(async move {
        let mut w = match store_watch {
            Ok(w) => w,
            Err(e) => {
                let _ = tx.send(error_line(&ApiError::from(e))).await;
                return;
            }
        };
        for kv in &snapshot {
            let line = match encoder.spliced(&filter, kv) {
                Some(json) => Some(Encoder::raw_line("ADDED", &json)),
                None => encoder
                    .served(kv)
                    .filter(|obj| filter.matches(obj))
                    .map(|obj| encoder.line("ADDED", obj)),
            };
            if let Some(line) = line
                && tx.send(line).await.is_err()
            {
                return;
            }
        }
        if send_initial == Some(true) && tx.send(encoder.bookmark(start, true)).await.is_err() {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(state.bookmark_interval());
        tick.tick().await;
        let mut last = start;
        loop {
            let line = tokio::select! {
                _ = &mut deadline => break,
                _ = shutdown.changed() => break,
                _ = tick.tick(), if bookmarks => Some(encoder.bookmark(last, false)),
                ev = w.next() => match ev {
                    None => break,
                    Some(Err(e)) => {
                        let _ = tx.send(error_line(&ApiError::from(e))).await;
                        break;
                    }
                    Some(Ok(ev)) => {
                        last = ev.revision();
                        translate(&encoder, &filter, &ev, state.watch_lines())
                    }
                },
            };
            if let Some(line) = line
                && tx.send(line).await.is_err()
            {
                break;
            }
        }
    });
    let stream =
        tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok::<Bytes, std::convert::Infallible>);
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}

use tokio_stream::StreamExt as _;

/// Turns a store event into a watch line, applying the selector edge rules.
///
/// Without a selector the line depends only on the event, the served version and the output, so
/// it comes from (and goes to) the shared [`LineCache`].
fn translate(
    enc: &Encoder,
    filter: &Filter,
    ev: &mni_store::Event,
    lines: &LineCache,
) -> Option<Bytes> {
    let shareable = filter.is_empty() && enc.output != Output::Table;
    if !shareable {
        return translate_one(enc, filter, ev);
    }
    let api_version = enc.info.api_version();
    let metadata = enc.output == Output::Metadata;
    if let Some(line) = lines.get(ev.revision(), &ev.kv.key, &api_version, metadata) {
        return Some(line);
    }
    let line = translate_one(enc, filter, ev)?;
    lines.insert(
        ev.revision(),
        &ev.kv.key,
        api_version,
        metadata,
        line.clone(),
    );
    Some(line)
}

/// Parses and encodes one event for one watcher.
fn translate_one(enc: &Encoder, filter: &Filter, ev: &mni_store::Event) -> Option<Bytes> {
    use mni_store::EventKind;
    if let Some(json) = enc.spliced(filter, &ev.kv) {
        // Without a selector every event is sent as it is: no need to build the object.
        let type_ = match ev.kind {
            EventKind::Created => "ADDED",
            EventKind::Deleted => "DELETED",
            EventKind::Updated if ev.prev.is_some() => "MODIFIED",
            EventKind::Updated => "ADDED",
        };
        return Some(Encoder::raw_line(type_, &json));
    }
    let now = enc.served(&ev.kv)?;
    match ev.kind {
        EventKind::Created => filter.matches(&now).then(|| enc.line("ADDED", now)),
        EventKind::Deleted => filter.matches(&now).then(|| enc.line("DELETED", now)),
        EventKind::Updated => {
            let before = ev.prev.as_ref().and_then(|p| enc.served(p));
            let was = before.as_ref().is_some_and(|b| filter.matches(b));
            match (was, filter.matches(&now)) {
                (true, true) => Some(enc.line("MODIFIED", now)),
                (false, true) => Some(enc.line("ADDED", now)),
                (true, false) => {
                    // Leaving the selector: as kube-apiserver's watch cache, the previous
                    // content (which matched) at this event's resourceVersion.
                    let mut gone = before.unwrap_or_else(|| now.clone());
                    if let (Some(meta), Some(rv)) = (
                        gone.get_mut("metadata").and_then(Value::as_object_mut),
                        now.pointer("/metadata/resourceVersion").cloned(),
                    ) {
                        meta.insert("resourceVersion".into(), rv);
                    }
                    Some(enc.line("DELETED", gone))
                }
                (false, false) => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_lines_equal_encoded_ones() {
        let registry = crate::registry::Registry::with_builtins();
        let info = registry.get("", "v1", "configmaps").expect("configmaps");
        let enc = Encoder {
            info,
            output: Output::Object,
            query: Query::parse(None),
        };
        let doc = json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}});
        let kv = mni_store::KeyValue {
            key: "/registry/core/configmaps/n/a".into(),
            value: Bytes::from(serde_json::to_vec(&doc).expect("json")),
            create_revision: 4,
            mod_revision: 4,
        };
        let none = Filter::from_query(&enc.info, &Query::parse(None)).expect("no selector");
        let json = enc.spliced(&none, &kv).expect("spliced");
        let slow = enc.line("ADDED", enc.served(&kv).expect("parsed"));
        assert_eq!(Encoder::raw_line("ADDED", &json), slow);
        let meta = Encoder {
            output: Output::Metadata,
            ..enc
        };
        assert_eq!(meta.spliced(&none, &kv), None);
    }
}
