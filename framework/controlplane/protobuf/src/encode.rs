//! Schema-driven JSON → protobuf encoding of one message.
//!
//! Fields are written in tag order and map entries in key order, as Go's generated marshalers
//! do. JSON `null` means "unset". Unknown JSON keys are errors, so a misspelt or unsupported
//! field is never dropped silently.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use crate::Error;
use crate::schema::{Card, Field, Message, Ty};
use crate::special;
use crate::wire;

/// Encodes the JSON form `value` of `msg` into `out` (the message body, without tag/length).
pub(crate) fn message(
    msg: &'static Message,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), Error> {
    if depth > crate::decode::MAX_DEPTH {
        return Err(Error::TooDeep(crate::decode::MAX_DEPTH));
    }
    let plain = special::from_json(msg, value)?;
    let Value::Object(obj) = &plain else {
        return Err(Error::JsonType {
            message: msg.name,
            field: "",
            expected: "an object",
        });
    };
    if let Some(key) = obj.keys().find(|k| !msg.knows(k)) {
        return Err(Error::UnknownField {
            message: msg.name,
            field: key.clone(),
        });
    }
    fields(msg, obj, out, depth)
}

/// Encodes the fields of `msg` found in `obj` (which may also hold keys of sibling inlined structs).
fn fields(
    msg: &'static Message,
    obj: &Map<String, Value>,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), Error> {
    for field in msg.fields {
        if field.card == Card::Inline {
            if let Ty::Msg(inner) = field.ty {
                let mut buf = Vec::new();
                fields(inner, obj, &mut buf, depth + 1)?;
                wire::put_len(out, field.tag, &buf);
            }
            continue;
        }
        let Some(value) = obj.get(field.json) else {
            continue;
        };
        match (field.card, value) {
            (_, Value::Null) => {}
            (Card::Repeated, Value::Array(items)) => {
                for item in items {
                    one(msg, field, item, out, depth)?;
                }
            }
            (Card::Map, Value::Object(map)) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for key in keys {
                    let mut entry = Vec::new();
                    wire::put_len(&mut entry, 1, key.as_bytes());
                    if let Some(v) = map.get(key) {
                        let inner = Field { tag: 2, ..*field };
                        one(msg, &inner, v, &mut entry, depth)?;
                    }
                    wire::put_len(out, field.tag, &entry);
                }
            }
            (Card::Repeated, _) => return Err(json_type(msg, field, "an array")),
            (Card::Map, _) => return Err(json_type(msg, field, "an object")),
            _ => one(msg, field, value, out, depth)?,
        }
    }
    Ok(())
}

/// Encodes one value of `field.ty` as field `field.tag`.
fn one(
    msg: &'static Message,
    field: &Field,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), Error> {
    let json = field.json;
    match (field.ty, value) {
        (Ty::Str, Value::String(s)) => wire::put_len(out, field.tag, s.as_bytes()),
        (Ty::Bytes, Value::String(s)) => {
            let bytes = STANDARD
                .decode(s)
                .map_err(|e| Error::invalid(msg.name, json, format!("base64: {e}")))?;
            wire::put_len(out, field.tag, &bytes);
        }
        (Ty::Bool, Value::Bool(b)) => {
            wire::put_key(out, field.tag, wire::VARINT);
            wire::put_varint(out, u64::from(*b));
        }
        (Ty::Int32, Value::Number(n)) => {
            let v = n
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| json_type(msg, field, "an int32"))?;
            wire::put_key(out, field.tag, wire::VARINT);
            wire::put_varint(out, i64::from(v) as u64);
        }
        (Ty::Int64, Value::Number(n)) => {
            let v = n
                .as_i64()
                .ok_or_else(|| json_type(msg, field, "an int64"))?;
            wire::put_key(out, field.tag, wire::VARINT);
            wire::put_varint(out, v as u64);
        }
        (Ty::Double, Value::Number(n)) => {
            let v = n
                .as_f64()
                .ok_or_else(|| json_type(msg, field, "a number"))?;
            wire::put_key(out, field.tag, wire::FIXED64);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        (Ty::Msg(m), v) => {
            let mut buf = Vec::new();
            message(m, v, &mut buf, depth + 1)?;
            wire::put_len(out, field.tag, &buf);
        }
        (Ty::Str | Ty::Bytes, _) => return Err(json_type(msg, field, "a string")),
        (Ty::Bool, _) => return Err(json_type(msg, field, "a boolean")),
        (Ty::Int32 | Ty::Int64 | Ty::Double, _) => return Err(json_type(msg, field, "a number")),
    }
    Ok(())
}

fn json_type(msg: &'static Message, field: &Field, expected: &'static str) -> Error {
    Error::JsonType {
        message: msg.name,
        field: field.json,
        expected,
    }
}
