//! Helpers over objects held as `serde_json::Value`: metadata access, timestamps, names,
//! stored-form conversion and the served-version conversion.
//!
//! The server keeps objects as JSON documents, as kube-apiserver does for custom resources.
//! The stored form never carries `metadata.resourceVersion`: the store's revision *is* the
//! resourceVersion and is filled in on every read.

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceInfo;
use crate::{builtin, conversion};

/// The `metadata` object, created when missing.
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    match obj.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("metadata was just made an object"),
    }
}

/// A string field of `metadata`.
pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// `metadata.name`, or empty.
pub(crate) fn name(obj: &Value) -> &str {
    meta_str(obj, "name").unwrap_or_default()
}

/// `metadata.labels` as a map of strings.
pub(crate) fn labels(obj: &Value) -> std::collections::BTreeMap<String, String> {
    obj.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.finalizers`.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Now, as Kubernetes serializes `metav1.Time` (RFC 3339, seconds).
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A new uid.
pub(crate) fn uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The suffix kube-apiserver appends to `generateName`: five characters from an alphabet
/// without vowels or look-alikes.
pub(crate) fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

/// Parses a stored value and sets its resourceVersion from the store revision.
pub(crate) fn from_stored(kv: &mni_store::KeyValue) -> ApiResult<Value> {
    let mut obj: Value = serde_json::from_slice(&kv.value)
        .map_err(|e| ApiError::internal(format!("corrupt object at {}: {e}", kv.key)))?;
    meta_mut(&mut obj).insert(
        "resourceVersion".into(),
        Value::String(kv.mod_revision.to_string()),
    );
    Ok(obj)
}

/// `obj`, just written to or read from the store at `revision`, with that resourceVersion: what
/// [`from_stored`] would return for the stored bytes, without parsing them again.
pub(crate) fn with_revision(mut obj: Value, revision: i64) -> Value {
    meta_mut(&mut obj).insert(
        "resourceVersion".into(),
        Value::String(revision.to_string()),
    );
    obj
}

/// Serializes an object for the store: its resourceVersion is removed (from `obj` too) and
/// the other fields keep their order.
pub(crate) fn to_stored(obj: &mut Value) -> ApiResult<bytes::Bytes> {
    meta_mut(obj).shift_remove("resourceVersion");
    serde_json::to_vec(obj)
        .map(bytes::Bytes::from)
        .map_err(ApiError::internal)
}

/// The top level of a stored document, read without building it: the fields
/// [`served_json`] needs, borrowed from the stored bytes.
#[derive(serde::Deserialize)]
struct StoredTop<'a> {
    #[serde(rename = "apiVersion", borrow)]
    api_version: Option<&'a str>,
    #[serde(borrow)]
    metadata: Option<&'a serde_json::value::RawValue>,
}

/// The stored object `kv` as `info` serves it, as JSON: the resourceVersion is spliced into
/// the stored bytes rather than the document parsed and written again (watch events and reads
/// of large objects are mostly this). The bytes equal serializing
/// `to_served(info, from_stored(kv))`; `None` when the document needs more than the
/// resourceVersion (another served version, events.k8s.io) or is not in the expected shape,
/// and then the caller takes that slower path.
pub(crate) fn served_json(info: &ResourceInfo, kv: &mni_store::KeyValue) -> Option<Vec<u8>> {
    if info.group == "events.k8s.io" {
        return None;
    }
    let doc: &[u8] = &kv.value;
    let top: StoredTop<'_> = serde_json::from_slice(doc).ok()?;
    let served = info.api_version();
    if top.api_version != Some(served.as_str()) {
        return None;
    }
    let meta = top.metadata?.get();
    // `from_stored` would replace a stored resourceVersion in place (the store never keeps
    // one, but the bytes are not trusted to be what this server wrote).
    if !meta.starts_with('{') || !meta.ends_with('}') || meta.contains("\"resourceVersion\"") {
        return None;
    }
    let start = (meta.as_ptr() as usize).checked_sub(doc.as_ptr() as usize)?;
    let close = start + meta.len() - 1;
    let mut out = Vec::with_capacity(doc.len() + 48);
    out.extend_from_slice(&doc[..close]);
    if !meta[1..meta.len() - 1].trim().is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(b"\"resourceVersion\":\"");
    out.extend_from_slice(kv.mod_revision.to_string().as_bytes());
    out.push(b'"');
    out.extend_from_slice(&doc[close..]);
    Some(out)
}

/// Converts a stored object to the version `info` serves.
pub(crate) fn to_served(info: &ResourceInfo, mut obj: Value) -> Value {
    if info.group == "events.k8s.io" {
        return builtin::event_to_events_v1(obj);
    }
    if conversion::is_hpa_v1(&info.group, &info.version, &info.kind) {
        return conversion::hpa_v2_to_v1(obj);
    }
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), Value::String(info.api_version()));
    }
    obj
}

/// Converts an object in the version `info` serves to the stored version.
pub(crate) fn to_storage(info: &ResourceInfo, mut obj: Value) -> Value {
    if info.group == "events.k8s.io" {
        return builtin::events_v1_to_event(obj);
    }
    if conversion::is_hpa_v1(&info.group, &info.version, &info.kind) {
        return conversion::hpa_v1_to_v2(obj);
    }
    if info.storage_version != info.version
        && let Some(o) = obj.as_object_mut()
    {
        let api_version = if info.group.is_empty() {
            info.storage_version.clone()
        } else {
            format!("{}/{}", info.group, info.storage_version)
        };
        o.insert("apiVersion".into(), Value::String(api_version));
    }
    obj
}

/// Reads a dotted field path (`spec.nodeName`) as the string a field selector compares.
pub(crate) fn field_value(obj: &Value, path: &str) -> Option<String> {
    let mut cur = obj;
    for seg in path.trim_start_matches('.').split('.') {
        cur = cur.get(seg)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The `PartialObjectMetadata` form of an object.
pub(crate) fn partial_metadata(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// Whether two objects differ outside `status`, `metadata` and the type fields: what bumps
/// `generation`. Compares in place, without copying either.
pub(crate) fn spec_differs(a: &Value, b: &Value) -> bool {
    const NOT_SPEC: [&str; 4] = ["metadata", "status", "apiVersion", "kind"];
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a != b;
    };
    let spec = |m: &'_ serde_json::Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| !NOT_SPEC.contains(&k.as_str()))
            .count()
    };
    spec(a) != spec(b)
        || a.iter()
            .filter(|(k, _)| !NOT_SPEC.contains(&k.as_str()))
            .any(|(k, v)| b.get(k) != Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(value: &[u8], mod_revision: i64) -> mni_store::KeyValue {
        mni_store::KeyValue {
            key: "/k".into(),
            value: bytes::Bytes::copy_from_slice(value),
            create_revision: 3,
            mod_revision,
        }
    }

    #[test]
    fn stored_form_has_no_resource_version() {
        let mut obj = json!({"metadata": {"name": "a", "resourceVersion": "7", "uid": "u"}});
        let bytes = to_stored(&mut obj).expect("serialize");
        assert_eq!(&bytes[..], br#"{"metadata":{"name":"a","uid":"u"}}"#);
        let read = from_stored(&kv(&bytes, 9)).expect("parse");
        assert_eq!(read["metadata"]["resourceVersion"], "9");
        assert_eq!(with_revision(obj, 9), read);
    }

    #[test]
    fn served_json_splices_the_resource_version() {
        let registry = crate::registry::Registry::with_builtins();
        let cm = registry.get("", "v1", "configmaps").expect("configmaps");
        let deploy = registry
            .get("apps", "v1", "deployments")
            .expect("deployments");
        let events = registry
            .get("events.k8s.io", "v1", "events")
            .expect("events");
        let slow = |info: &ResourceInfo, kv: &mni_store::KeyValue| {
            serde_json::to_vec(&to_served(info, from_stored(kv).expect("parse"))).expect("json")
        };
        for doc in [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
                   "labels": {"x": "y\"}"}}, "data": {"k": "{\"metadata\":{}}"}}),
            json!({"metadata": {}, "apiVersion": "v1", "kind": "ConfigMap"}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"managedFields": [
                   {"fieldsV1": {"f:metadata": {"f:resourceVersion": {}}}}]}}),
        ] {
            let kv = kv(&serde_json::to_vec(&doc).expect("json"), 42);
            let fast = served_json(&cm, &kv).expect("spliced");
            assert_eq!(fast, slow(&cm, &kv), "{doc}");
        }
        let plain = kv(
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#,
            5,
        );
        // Another served version, events.k8s.io's conversion, a stored resourceVersion, no
        // metadata or a document that is not an object take the parsing path.
        assert_eq!(served_json(&deploy, &plain), None);
        assert_eq!(served_json(&events, &plain), None);
        for odd in [
            &br#"{"apiVersion":"v1","metadata":{"resourceVersion":"1"}}"#[..],
            br#"{"apiVersion":"v1","kind":"ConfigMap"}"#,
            br#"{"apiVersion":"v1","metadata":[]}"#,
            br#"{"apiVersion":"v\u0031","metadata":{}}"#,
            b"[]",
        ] {
            assert_eq!(
                served_json(&cm, &kv(odd, 5)),
                None,
                "{}",
                String::from_utf8_lossy(odd)
            );
        }
    }

    #[test]
    fn only_fields_outside_metadata_and_status_are_spec() {
        let a = json!({"apiVersion": "v1", "kind": "K", "metadata": {"labels": {"a": "1"}},
                       "spec": {"x": 1}, "status": {"y": 1}, "data": {"k": "v"}});
        let mut b = a.clone();
        b["metadata"]["labels"]["a"] = json!("2");
        b["status"]["y"] = json!(2);
        b["apiVersion"] = json!("v2");
        assert!(!spec_differs(&a, &b));
        b["data"]["k"] = json!("w");
        assert!(spec_differs(&a, &b));
        let mut c = a.clone();
        c["extra"] = json!(null);
        assert!(spec_differs(&a, &c), "a field added is a change");
        assert!(spec_differs(&c, &a), "a field removed is a change");
    }

    #[test]
    fn generated_suffixes_use_kube_alphabet() {
        let s = name_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }

    #[test]
    fn field_values_render_as_strings() {
        let p = json!({"spec": {"hostNetwork": true, "nodeName": "n1"}});
        assert_eq!(field_value(&p, "spec.hostNetwork").as_deref(), Some("true"));
        assert_eq!(field_value(&p, "spec.nodeName").as_deref(), Some("n1"));
        assert_eq!(field_value(&p, "status.phase"), None);
    }
}
