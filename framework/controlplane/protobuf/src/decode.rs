//! Schema-driven protobuf → JSON decoding of one message.
//!
//! Walks the wire format with [`Reader`], looks each tag up in the message's field table,
//! skips unknown fields (as Go does), and builds the JSON object in field-table order.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Number, Value};

use crate::Error;
use crate::schema::{Card, Field, Message, Special, Ty};
use crate::special;
use crate::wire::{self, Reader};

/// Maximum message nesting; deeper input is rejected rather than risking the stack.
pub(crate) const MAX_DEPTH: usize = 100;

/// Decodes `buf` as `msg`; `None` means the value is JSON `null` (omitted by the caller).
pub(crate) fn message(
    msg: &'static Message,
    buf: &[u8],
    depth: usize,
) -> Result<Option<Value>, Error> {
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep(MAX_DEPTH));
    }
    let obj = object(msg, buf, depth)?;
    special::to_json(msg, obj, depth)
}

/// Decodes `buf` into the plain object of `msg`'s fields.
fn object(msg: &'static Message, buf: &[u8], depth: usize) -> Result<Map<String, Value>, Error> {
    let mut slots: Vec<Option<Value>> = vec![None; msg.fields.len()];
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        let (tag, wire_type) = r.key()?;
        let Some((i, field)) = msg.by_tag(tag) else {
            r.skip(wire_type)?;
            continue;
        };
        match field.card {
            Card::Single | Card::Inline => {
                slots[i] = scalar_or_message(msg, field, &mut r, wire_type, depth)?;
            }
            Card::Repeated => {
                let mut items = Vec::new();
                let packed =
                    wire_type == wire::LEN && !matches!(field.ty, Ty::Str | Ty::Bytes | Ty::Msg(_));
                if packed {
                    let mut inner = Reader::new(r.bytes()?);
                    let element_type = if matches!(field.ty, Ty::Double) {
                        wire::FIXED64
                    } else {
                        wire::VARINT
                    };
                    while !inner.is_empty() {
                        items.extend(scalar_or_message(
                            msg,
                            field,
                            &mut inner,
                            element_type,
                            depth,
                        )?);
                    }
                } else {
                    let item = scalar_or_message(msg, field, &mut r, wire_type, depth)?;
                    // A null element (e.g. a zero time) stays in the array, as in Go.
                    items.push(item.unwrap_or(Value::Null));
                }
                match &mut slots[i] {
                    Some(Value::Array(existing)) => existing.extend(items),
                    slot => *slot = Some(Value::Array(items)),
                }
            }
            Card::Map => {
                if wire_type != wire::LEN {
                    return Err(wrong(msg, field, wire_type));
                }
                let (key, value) = map_entry(msg, field, r.bytes()?, depth)?;
                match &mut slots[i] {
                    Some(Value::Object(existing)) => {
                        existing.insert(key, value);
                    }
                    slot => *slot = Some(Value::Object(Map::from_iter([(key, value)]))),
                }
            }
        }
    }
    let mut out = Map::new();
    for (field, slot) in msg.fields.iter().zip(slots) {
        let Some(value) = slot else { continue };
        if field.card == Card::Inline {
            if let Value::Object(inner) = value {
                out.extend(inner);
            }
            continue;
        }
        if field.card == Card::Single && msg.special == Special::None && omitted(msg, field, &value)
        {
            continue;
        }
        out.insert(field.json.to_string(), value);
    }
    Ok(out)
}

/// Whether a decoded single value is left out of the JSON (see [`Field::omit_zero`]).
fn omitted(msg: &Message, field: &Field, value: &Value) -> bool {
    match value {
        Value::String(s) => s.is_empty() && !field.keep_empty() && matches!(field.ty, Ty::Str),
        Value::Bool(false) => field.omit_zero(msg),
        Value::Number(n) => n.as_i64() == Some(0) && field.omit_zero(msg),
        _ => false,
    }
}

/// Decodes one `map<string, ty>` entry: key = field 1, value = field 2.
fn map_entry(
    msg: &'static Message,
    field: &'static Field,
    buf: &[u8],
    depth: usize,
) -> Result<(String, Value), Error> {
    let mut r = Reader::new(buf);
    let (mut key, mut value) = (String::new(), None);
    while !r.is_empty() {
        match r.key()? {
            (1, wire::LEN) => key = utf8(msg, field, r.bytes()?)?,
            (2, wire_type) => value = scalar_or_message(msg, field, &mut r, wire_type, depth)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    let value = match (value, field.ty) {
        (Some(v), _) => v,
        (None, Ty::Str | Ty::Bytes) => Value::String(String::new()),
        (None, Ty::Msg(m)) => message(m, &[], depth + 1)?.unwrap_or(Value::Null),
        (None, Ty::Bool) => Value::Bool(false),
        (None, _) => Value::from(0),
    };
    Ok((key, value))
}

/// Decodes one value of `field.ty` with the given wire type.
fn scalar_or_message(
    msg: &'static Message,
    field: &'static Field,
    r: &mut Reader<'_>,
    wire_type: u8,
    depth: usize,
) -> Result<Option<Value>, Error> {
    let expected = match field.ty {
        Ty::Bool | Ty::Int32 | Ty::Int64 => wire::VARINT,
        Ty::Double => wire::FIXED64,
        Ty::Str | Ty::Bytes | Ty::Msg(_) => wire::LEN,
    };
    if wire_type != expected {
        return Err(wrong(msg, field, wire_type));
    }
    Ok(Some(match field.ty {
        Ty::Bool => Value::Bool(r.varint()? != 0),
        // int32 is sign-extended to 64 bits on the wire; truncation is the protobuf rule.
        Ty::Int32 => Value::from(r.varint()? as i64 as i32),
        Ty::Int64 => Value::from(r.varint()? as i64),
        Ty::Double => {
            let v = f64::from_bits(r.fixed64()?);
            if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
                Value::from(v as i64)
            } else {
                Value::Number(
                    Number::from_f64(v).ok_or_else(|| {
                        Error::invalid(msg.name, field.json, "not a finite number")
                    })?,
                )
            }
        }
        Ty::Str => Value::String(utf8(msg, field, r.bytes()?)?),
        Ty::Bytes => Value::String(STANDARD.encode(r.bytes()?)),
        Ty::Msg(m) => return message(m, r.bytes()?, depth + 1),
    }))
}

fn utf8(msg: &'static Message, field: &'static Field, bytes: &[u8]) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| Error::invalid(msg.name, field.json, "string is not valid UTF-8"))
}

fn wrong(msg: &'static Message, field: &'static Field, wire_type: u8) -> Error {
    Error::WireType {
        message: msg.name,
        field: field.json,
        wire_type,
    }
}
