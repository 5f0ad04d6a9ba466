//! The Kubernetes protobuf envelope: the `k8s\0` magic followed by a `runtime.Unknown`
//! message (1: typeMeta{1: apiVersion, 2: kind}, 2: raw object bytes, 3: contentEncoding,
//! 4: contentType).

use serde_json::{Map, Value};

use crate::schema::kinds;
use crate::wire::{self, Reader};
use crate::{Error, MAGIC};

/// The parts of a `runtime.Unknown` this crate uses.
#[derive(Debug, Default)]
struct Unknown<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
}

fn string(bytes: &[u8], field: &'static str) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        Error::invalid(
            "k8s.io.apimachinery.pkg.runtime.Unknown",
            field,
            "not UTF-8",
        )
    })
}

/// Parses a `runtime.Unknown`; unknown fields are skipped.
fn unknown(buf: &[u8]) -> Result<Unknown<'_>, Error> {
    let mut out = Unknown::default();
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        match r.key()? {
            (1, wire::LEN) => {
                let mut tm = Reader::new(r.bytes()?);
                while !tm.is_empty() {
                    match tm.key()? {
                        (1, wire::LEN) => out.api_version = string(tm.bytes()?, "apiVersion")?,
                        (2, wire::LEN) => out.kind = string(tm.bytes()?, "kind")?,
                        (_, wire_type) => tm.skip(wire_type)?,
                    }
                }
            }
            (2, wire::LEN) => out.raw = r.bytes()?,
            (3, wire::LEN) => out.content_encoding = string(r.bytes()?, "contentEncoding")?,
            (tag @ 1..=3, wire_type) => {
                return Err(Error::BadKey {
                    tag: tag.into(),
                    wire_type,
                });
            }
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(out)
}

/// Decodes a full body (magic + `runtime.Unknown`) at nesting `depth`.
pub(crate) fn decode(body: &[u8], depth: usize) -> Result<Value, Error> {
    decode_with(body, depth, None)
}

/// [`decode`], with the `apiVersion` and `kind` an empty `typeMeta` defaults to (as
/// kube-apiserver's protobuf serializer takes them from the request path: `copyKindDefaults`).
pub(crate) fn decode_with(
    body: &[u8],
    depth: usize,
    defaults: Option<(&str, &str)>,
) -> Result<Value, Error> {
    let rest = body.strip_prefix(MAGIC).ok_or(Error::MissingMagic)?;
    let mut u = unknown(rest)?;
    if let Some((api_version, kind)) = defaults {
        if u.kind.is_empty() {
            u.kind = kind.to_string();
        }
        if u.api_version.is_empty() {
            u.api_version = api_version.to_string();
        }
    }
    if u.api_version.is_empty() || u.kind.is_empty() {
        return Err(Error::MissingTypeMeta);
    }
    if !u.content_encoding.is_empty() {
        return Err(Error::UnsupportedEncoding(u.content_encoding));
    }
    let Some(message) = kinds::lookup(&u.api_version, &u.kind) else {
        return Err(Error::UnsupportedKind {
            api_version: u.api_version,
            kind: u.kind,
        });
    };
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(u.api_version));
    out.insert("kind".into(), Value::String(u.kind));
    if let Some(Value::Object(fields)) = crate::decode::message(message, u.raw, depth + 1)? {
        out.extend(fields);
    }
    Ok(Value::Object(out))
}

/// Encodes a JSON object (with `apiVersion` and `kind`) as a full body.
pub(crate) fn encode(obj: &Value) -> Result<Vec<u8>, Error> {
    let Value::Object(map) = obj else {
        return Err(Error::JsonType {
            message: "object",
            field: "",
            expected: "an object",
        });
    };
    let text = |k: &str| map.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
        return Err(Error::MissingTypeMeta);
    };
    let Some(message) = kinds::lookup(api_version, kind) else {
        return Err(Error::UnsupportedKind {
            api_version: api_version.into(),
            kind: kind.into(),
        });
    };
    let mut fields = map.clone();
    fields.remove("apiVersion");
    fields.remove("kind");
    let mut raw = Vec::new();
    crate::encode::message(message, &Value::Object(fields), &mut raw, 0)?;
    let mut type_meta = Vec::new();
    wire::put_len(&mut type_meta, 1, api_version.as_bytes());
    wire::put_len(&mut type_meta, 2, kind.as_bytes());
    let mut out = MAGIC.to_vec();
    wire::put_len(&mut out, 1, &type_meta);
    wire::put_len(&mut out, 2, &raw);
    // Go always writes contentEncoding and contentType, empty.
    wire::put_len(&mut out, 3, b"");
    wire::put_len(&mut out, 4, b"");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ConfigMap body whose envelope has an empty `typeMeta`, as a client may send it.
    fn untyped_configmap() -> Vec<u8> {
        let full = encode(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a"}, "data": {"k": "v"}}))
        .expect("encode");
        let u = unknown(&full[MAGIC.len()..]).expect("envelope");
        let mut out = MAGIC.to_vec();
        wire::put_len(&mut out, 1, b"");
        wire::put_len(&mut out, 2, u.raw);
        out
    }

    #[test]
    fn an_empty_type_meta_takes_the_defaults() {
        let body = untyped_configmap();
        assert!(matches!(decode(&body, 0), Err(Error::MissingTypeMeta)));
        let obj = decode_with(&body, 0, Some(("v1", "ConfigMap"))).expect("defaulted");
        assert_eq!(obj["kind"], "ConfigMap");
        assert_eq!(obj["apiVersion"], "v1");
        assert_eq!(obj["data"]["k"], "v");
        // A typeMeta that is set wins over the defaults.
        let full = encode(&serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s"}}))
        .expect("encode");
        let obj = decode_with(&full, 0, Some(("v1", "ConfigMap"))).expect("typed");
        assert_eq!(obj["kind"], "Secret");
    }
}
