//! Protobuf encoding of the Swagger 2.0 document as gnostic's `openapi.v2.Document`.
//!
//! client-go's `DiscoveryClient.OpenAPISchema()` fetches `/openapi/v2` with
//! `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and unmarshals the
//! body as `openapi_v2.Document` (github.com/google/gnostic-models, `OpenAPIv2.proto`).
//! This module writes that message by hand: only the messages the document uses (Document,
//! Info, Paths/PathItem/Operation, parameters, responses, Definitions/Schema, security).
//! Vendor extensions (`x-kubernetes-…`), `default`, `example` and `enum` values are
//! `Any { yaml }` with the value's JSON text — JSON is YAML, and kube-openapi reads these
//! with `yaml.Unmarshal`. Proto3 scalars equal to their default are omitted.

use serde_json::{Map, Value};

/// A protobuf writer for one message.
#[derive(Default)]
pub(crate) struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, 2);
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    fn string(&mut self, field: u32, value: &str) {
        if !value.is_empty() {
            self.bytes(field, value.as_bytes());
        }
    }

    fn bool(&mut self, field: u32, value: bool) {
        if value {
            self.key(field, 0);
            self.varint(1);
        }
    }

    fn int64(&mut self, field: u32, value: i64) {
        if value != 0 {
            self.key(field, 0);
            self.varint(value as u64);
        }
    }

    fn double(&mut self, field: u32, value: f64) {
        if value != 0.0 {
            self.key(field, 1);
            self.buf.extend_from_slice(&value.to_le_bytes());
        }
    }

    fn message(&mut self, field: u32, build: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        build(&mut inner);
        self.bytes(field, &inner.buf);
    }

    fn strings(&mut self, field: u32, value: Option<&Value>) {
        for item in value.and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = item.as_str() {
                self.bytes(field, s.as_bytes());
            }
        }
    }
}

fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn bool_of(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).and_then(Value::as_bool).unwrap_or_default()
}

/// `Any { yaml = 2 }` holding the JSON text of `value`.
fn any(w: &mut Writer, field: u32, value: &Value) {
    let text = serde_json::to_string(value).unwrap_or_default();
    w.message(field, |a| a.string(2, &text));
}

/// `repeated NamedAny vendor_extension` from the `x-` keys of `map`.
fn extensions(w: &mut Writer, field: u32, map: &Map<String, Value>) {
    for (name, value) in map.iter().filter(|(k, _)| k.starts_with("x-")) {
        w.message(field, |n| {
            n.string(1, name);
            any(n, 2, value);
        });
    }
}

/// Encodes a Swagger 2.0 JSON document (as produced by [`crate::v2_document`]) as a
/// gnostic `openapi.v2.Document` protobuf message.
#[must_use]
pub fn v2_protobuf(document: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    let Some(doc) = document.as_object() else {
        return w.buf;
    };
    w.string(1, str_of(doc, "swagger"));
    if let Some(Value::Object(info)) = doc.get("info") {
        w.message(2, |i| {
            i.string(1, str_of(info, "title"));
            i.string(2, str_of(info, "version"));
            i.string(3, str_of(info, "description"));
            extensions(i, 7, info);
        });
    }
    w.string(3, str_of(doc, "host"));
    w.string(4, str_of(doc, "basePath"));
    w.strings(5, doc.get("schemes"));
    w.strings(6, doc.get("consumes"));
    w.strings(7, doc.get("produces"));
    if let Some(Value::Object(paths)) = doc.get("paths") {
        w.message(8, |p| {
            extensions(p, 1, paths);
            for (name, item) in paths.iter().filter(|(k, _)| !k.starts_with("x-")) {
                p.message(2, |n| {
                    n.string(1, name);
                    n.message(2, |pi| path_item(pi, item));
                });
            }
        });
    }
    if let Some(Value::Object(definitions)) = doc.get("definitions") {
        w.message(9, |d| named_schemas(d, 1, definitions));
    }
    for requirement in doc
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(requirement) = requirement.as_object() else {
            continue;
        };
        w.message(12, |s| {
            for (name, scopes) in requirement {
                s.message(1, |n| {
                    n.string(1, name);
                    n.message(2, |a| a.strings(1, Some(scopes)));
                });
            }
        });
    }
    if let Some(Value::Object(definitions)) = doc.get("securityDefinitions") {
        w.message(13, |s| {
            for (name, def) in definitions {
                let Some(def) = def.as_object() else { continue };
                if str_of(def, "type") != "apiKey" {
                    continue;
                }
                s.message(1, |n| {
                    n.string(1, name);
                    n.message(2, |item| {
                        item.message(2, |k| {
                            k.string(1, "apiKey");
                            k.string(2, str_of(def, "name"));
                            k.string(3, str_of(def, "in"));
                            k.string(4, str_of(def, "description"));
                            extensions(k, 5, def);
                        });
                    });
                });
            }
        });
    }
    extensions(&mut w, 16, doc);
    w.buf
}

fn path_item(w: &mut Writer, item: &Value) {
    let Some(item) = item.as_object() else { return };
    w.string(1, str_of(item, "$ref"));
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(Value::Object(op)) = item.get(method) {
            w.message(field, |o| operation(o, op));
        }
    }
    parameters(w, 9, item.get("parameters"));
    extensions(w, 10, item);
}

fn operation(w: &mut Writer, op: &Map<String, Value>) {
    w.strings(1, op.get("tags"));
    w.string(2, str_of(op, "summary"));
    w.string(3, str_of(op, "description"));
    w.string(5, str_of(op, "operationId"));
    w.strings(6, op.get("produces"));
    w.strings(7, op.get("consumes"));
    parameters(w, 8, op.get("parameters"));
    if let Some(Value::Object(responses)) = op.get("responses") {
        w.message(9, |r| {
            for (code, response) in responses.iter().filter(|(k, _)| !k.starts_with("x-")) {
                let Some(response) = response.as_object() else {
                    continue;
                };
                r.message(1, |n| {
                    n.string(1, code);
                    n.message(2, |value| {
                        value.message(1, |resp| {
                            resp.string(1, str_of(response, "description"));
                            if let Some(schema) = response.get("schema") {
                                resp.message(2, |item| {
                                    item.message(1, |s| self::schema(s, schema))
                                });
                            }
                            extensions(resp, 5, response);
                        });
                    });
                });
            }
            extensions(r, 2, responses);
        });
    }
    w.strings(10, op.get("schemes"));
    w.bool(11, bool_of(op, "deprecated"));
    extensions(w, 13, op);
}

/// `repeated ParametersItem`.
fn parameters(w: &mut Writer, field: u32, params: Option<&Value>) {
    for param in params.and_then(Value::as_array).into_iter().flatten() {
        let Some(param) = param.as_object() else {
            continue;
        };
        w.message(field, |item| {
            if let Some(reference) = param.get("$ref").and_then(Value::as_str) {
                item.message(2, |r| r.string(1, reference));
                return;
            }
            item.message(1, |p| match str_of(param, "in") {
                "body" => p.message(1, |b| {
                    b.string(1, str_of(param, "description"));
                    b.string(2, str_of(param, "name"));
                    b.string(3, "body");
                    b.bool(4, bool_of(param, "required"));
                    if let Some(schema) = param.get("schema") {
                        b.message(5, |s| self::schema(s, schema));
                    }
                    extensions(b, 6, param);
                }),
                location => p.message(2, |nb| non_body(nb, location, param)),
            });
        });
    }
}

/// `NonBodyParameter`: query (3), path (4) or header (1) sub-schemas share their first
/// fields (required 1, in 2, description 3, name 4); `type` is 6 for query, 5 otherwise.
fn non_body(w: &mut Writer, location: &str, param: &Map<String, Value>) {
    let (field, type_field, unique_field, ext_field) = match location {
        "query" => (3, 6, 20, 23),
        "header" => (1, 5, 19, 22),
        "formData" => (2, 6, 20, 23),
        _ => (4, 5, 19, 22),
    };
    w.message(field, |s| {
        s.bool(1, bool_of(param, "required"));
        s.string(2, location);
        s.string(3, str_of(param, "description"));
        s.string(4, str_of(param, "name"));
        s.string(type_field, str_of(param, "type"));
        s.string(type_field + 1, str_of(param, "format"));
        s.bool(unique_field, bool_of(param, "uniqueItems"));
        extensions(s, ext_field, param);
    });
}

/// `repeated NamedSchema` from a JSON object of schemas.
fn named_schemas(w: &mut Writer, field: u32, schemas: &Map<String, Value>) {
    for (name, schema) in schemas {
        w.message(field, |n| {
            n.string(1, name);
            n.message(2, |s| self::schema(s, schema));
        });
    }
}

fn int(map: &Map<String, Value>, key: &str) -> i64 {
    map.get(key).and_then(Value::as_i64).unwrap_or_default()
}

fn float(map: &Map<String, Value>, key: &str) -> f64 {
    map.get(key).and_then(Value::as_f64).unwrap_or_default()
}

/// `Schema`.
pub(crate) fn schema(w: &mut Writer, schema: &Value) {
    let Some(s) = schema.as_object() else { return };
    w.string(1, str_of(s, "$ref"));
    w.string(2, str_of(s, "format"));
    w.string(3, str_of(s, "title"));
    w.string(4, str_of(s, "description"));
    if let Some(default) = s.get("default") {
        any(w, 5, default);
    }
    w.double(6, float(s, "multipleOf"));
    w.double(7, float(s, "maximum"));
    w.bool(8, bool_of(s, "exclusiveMaximum"));
    w.double(9, float(s, "minimum"));
    w.bool(10, bool_of(s, "exclusiveMinimum"));
    for (field, key) in [(11, "maxLength"), (12, "minLength")] {
        w.int64(field, int(s, key));
    }
    w.string(13, str_of(s, "pattern"));
    w.int64(14, int(s, "maxItems"));
    w.int64(15, int(s, "minItems"));
    w.bool(16, bool_of(s, "uniqueItems"));
    w.int64(17, int(s, "maxProperties"));
    w.int64(18, int(s, "minProperties"));
    w.strings(19, s.get("required"));
    for value in s
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        any(w, 20, value);
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(allowed)) => w.message(21, |a| {
            a.key(2, 0);
            a.varint(u64::from(*allowed));
        }),
        Some(additional @ Value::Object(_)) => {
            w.message(21, |a| a.message(1, |x| self::schema(x, additional)))
        }
        _ => {}
    }
    match s.get("type") {
        Some(Value::String(ty)) => w.message(22, |t| t.string(1, ty)),
        Some(types @ Value::Array(_)) => w.message(22, |t| t.strings(1, Some(types))),
        _ => {}
    }
    match s.get("items") {
        Some(Value::Array(items)) => w.message(23, |i| {
            for item in items {
                i.message(1, |x| self::schema(x, item));
            }
        }),
        Some(item @ Value::Object(_)) => w.message(23, |i| i.message(1, |x| self::schema(x, item))),
        _ => {}
    }
    for item in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        w.message(24, |x| self::schema(x, item));
    }
    if let Some(Value::Object(properties)) = s.get("properties") {
        w.message(25, |p| named_schemas(p, 1, properties));
    }
    w.string(26, str_of(s, "discriminator"));
    w.bool(27, bool_of(s, "readOnly"));
    if let Some(Value::Object(docs)) = s.get("externalDocs") {
        w.message(29, |e| {
            e.string(1, str_of(docs, "description"));
            e.string(2, str_of(docs, "url"));
        });
    }
    if let Some(example) = s.get("example") {
        any(w, 30, example);
    }
    extensions(w, 31, s);
}

/// A minimal protobuf decoder for tests: splits a message into its fields.
#[cfg(test)]
pub(crate) mod test_decoder {
    /// One decoded field.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct Field {
        pub(crate) number: u64,
        pub(crate) wire: u8,
        pub(crate) varint: u64,
        pub(crate) data: Vec<u8>,
    }

    impl Field {
        /// The payload of a length-delimited or fixed64 field.
        pub(crate) fn bytes(&self) -> &[u8] {
            &self.data
        }
    }

    fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *bytes.get(*pos)?;
            *pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// Decodes every field of a message; `None` if it is malformed.
    pub(crate) fn fields(bytes: &[u8]) -> Option<Vec<Field>> {
        let mut pos = 0;
        let mut out = Vec::new();
        while pos < bytes.len() {
            let key = varint(bytes, &mut pos)?;
            let mut field = Field {
                number: key >> 3,
                wire: (key & 7) as u8,
                ..Field::default()
            };
            match field.wire {
                0 => field.varint = varint(bytes, &mut pos)?,
                1 => {
                    field.data = bytes.get(pos..pos + 8)?.to_vec();
                    pos += 8;
                }
                2 => {
                    let len = usize::try_from(varint(bytes, &mut pos)?).ok()?;
                    field.data = bytes.get(pos..pos.checked_add(len)?)?.to_vec();
                    pos += len;
                }
                _ => return None,
            }
            out.push(field);
        }
        Some(out)
    }

    /// The UTF-8 values of every length-delimited field `number`.
    pub(crate) fn string_fields(fields: &[Field], number: u64) -> Vec<String> {
        fields
            .iter()
            .filter(|f| f.number == number && f.wire == 2)
            .filter_map(|f| String::from_utf8(f.data.clone()).ok())
            .collect()
    }

    #[test]
    fn varints_round_trip() {
        let mut w = super::Writer::default();
        w.int64(1, 300);
        w.string(2, "hi");
        w.double(3, 1.5);
        w.bool(4, true);
        let decoded = fields(&w.buf).unwrap_or_default();
        assert_eq!(decoded[0].varint, 300);
        assert_eq!(string_fields(&decoded, 2), ["hi"]);
        assert_eq!(decoded[2].data, 1.5f64.to_le_bytes());
        assert_eq!((decoded[3].number, decoded[3].varint), (4, 1));
    }
}
