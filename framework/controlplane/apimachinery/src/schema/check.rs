//! Checks that a CRD `openAPIV3Schema` is structural and servable, with apiextensions-style
//! error paths such as `spec.versions[0].schema.openAPIV3Schema.properties[spec].type`.

use serde_json::{Map, Value, json};

use super::{MAX_SCHEMA_DEPTH, Pattern};
use crate::field::{self, FieldError};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Validates a CRD schema JSON; `base` is the path of the schema in the CRD, e.g.
/// `spec.versions[0].schema.openAPIV3Schema`. Returns no errors for a servable schema.
pub fn validate_schema(schema: &Value, base: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    node(schema, Level::Root, base, false, &mut errs, 0);
    errs
}

fn flag(obj: &Map<String, Value>, k: &str) -> bool {
    obj.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn type_of(obj: &Map<String, Value>) -> &str {
    obj.get("type").and_then(Value::as_str).unwrap_or("")
}

fn is_int_or_string_any_of(obj: &Map<String, Value>) -> bool {
    let Some(Value::Array(any)) = obj.get("anyOf") else {
        return false;
    };
    let types: Vec<&str> = any
        .iter()
        .filter_map(|s| s.get("type").and_then(Value::as_str))
        .collect();
    any.len() == 2 && types == ["integer", "string"]
}

fn node(v: &Value, lvl: Level, path: &str, nested: bool, errs: &mut Vec<FieldError>, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        errs.push(FieldError::forbidden(path, "schema is nested too deeply"));
        return;
    }
    let Value::Object(obj) = v else {
        errs.push(FieldError::invalid(
            path,
            v.clone(),
            "must be a schema object",
        ));
        return;
    };
    let at = |k: &str| field::child(path, k);
    let ty = type_of(obj);
    let preserve = flag(obj, "x-kubernetes-preserve-unknown-fields");
    let embedded = flag(obj, "x-kubernetes-embedded-resource");
    let int_or_string = flag(obj, "x-kubernetes-int-or-string");

    for (k, what) in [
        ("$ref", "$ref is not supported"),
        ("id", "id is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("additionalItems", "additionalItems is not supported"),
    ] {
        if obj.get(k).is_some_and(|x| !x.is_null()) {
            errs.push(FieldError::forbidden(at(k), what));
        }
    }
    if !ty.is_empty() && !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(at("type"), json!(ty), &TYPES));
    }
    if let Some(Value::String(p)) = obj.get("pattern")
        && let Err(e) = Pattern::new(p).regex()
    {
        errs.push(FieldError::invalid(
            at("pattern"),
            json!(p),
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
    if obj.get("items").is_some_and(Value::is_array) {
        errs.push(FieldError::forbidden(
            at("items"),
            "items must be a schema object and not an array",
        ));
    }
    if flag(obj, "uniqueItems") {
        errs.push(FieldError::forbidden(
            at("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let has_props = obj
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_props
        && obj
            .get("additionalProperties")
            .is_some_and(|a| !a.is_null() && *a != json!(true))
    {
        errs.push(FieldError::forbidden(
            at("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }

    if nested {
        for (k, detail) in [
            ("type", "must be empty to be structural"),
            ("additionalProperties", "must be undefined to be structural"),
            ("default", "must be undefined to be structural"),
            ("nullable", "must be false to be structural"),
            (
                "x-kubernetes-preserve-unknown-fields",
                "must be undefined to be structural",
            ),
            (
                "x-kubernetes-embedded-resource",
                "must be false to be structural",
            ),
            (
                "x-kubernetes-int-or-string",
                "must be false to be structural",
            ),
        ] {
            let set = match obj.get(k) {
                None | Some(Value::Null) | Some(Value::Bool(false)) => false,
                Some(Value::String(s)) => !s.is_empty(),
                Some(_) => true,
            };
            if set {
                errs.push(FieldError::forbidden(at(k), detail));
            }
        }
    } else {
        if ty == "array" && obj.get("items").is_none_or(Value::is_null) {
            errs.push(FieldError::required(at("items"), "must be specified"));
        }
        if embedded && ty != "object" {
            if ty.is_empty() {
                errs.push(FieldError::required(
                    at("type"),
                    "must be object if x-kubernetes-embedded-resource is true",
                ));
            } else {
                errs.push(FieldError::invalid(
                    at("type"),
                    json!(ty),
                    "must be object if x-kubernetes-embedded-resource is true",
                ));
            }
        } else if ty.is_empty() && !embedded && !int_or_string && !preserve {
            let detail = match lvl {
                Level::Root => "must not be empty at the root",
                Level::Item => "must not be empty for specified array items",
                Level::Field => "must not be empty for specified object fields",
            };
            errs.push(FieldError::required(at("type"), detail));
        }
        if lvl == Level::Root && !ty.is_empty() && ty != "object" {
            errs.push(FieldError::invalid(
                at("type"),
                json!(ty),
                "must be object at the root",
            ));
        }
        if embedded
            && obj
                .get("additionalProperties")
                .is_some_and(|a| !a.is_null())
        {
            errs.push(FieldError::forbidden(
                at("additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            ));
        }
        if embedded && !preserve && !has_props {
            errs.push(FieldError::required(
                at("properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            ));
        }
        list_type_checks(obj, ty, path, errs);
        meta_checks(obj, lvl == Level::Root, embedded, path, errs);
    }

    if let Some(Value::Object(props)) = obj.get("properties") {
        for (k, p) in props {
            node(
                p,
                Level::Field,
                &field::key(&at("properties"), k),
                nested,
                errs,
                depth + 1,
            );
        }
    }
    if let Some(items @ Value::Object(_)) = obj.get("items") {
        node(items, Level::Item, &at("items"), nested, errs, depth + 1);
    }
    if let Some(extra @ Value::Object(_)) = obj.get("additionalProperties") {
        node(
            extra,
            Level::Field,
            &at("additionalProperties"),
            nested,
            errs,
            depth + 1,
        );
    }
    let skip_any_of = is_int_or_string_any_of(obj);
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(subs)) = obj.get(k) {
            for (i, sub) in subs.iter().enumerate() {
                let sub_path = field::index(&at(k), i);
                if k == "anyOf" && skip_any_of {
                    continue;
                }
                let is_int_or_string_all_of =
                    k == "allOf" && i == 0 && sub.as_object().is_some_and(is_int_or_string_any_of);
                if is_int_or_string_all_of {
                    continue;
                }
                node(sub, Level::Field, &sub_path, true, errs, depth + 1);
            }
        }
    }
    if let Some(not @ Value::Object(_)) = obj.get("not") {
        node(not, Level::Field, &at("not"), true, errs, depth + 1);
    }
}

fn list_type_checks(obj: &Map<String, Value>, ty: &str, path: &str, errs: &mut Vec<FieldError>) {
    let at = |k: &str| field::child(path, k);
    let list_type = obj.get("x-kubernetes-list-type").and_then(Value::as_str);
    let keys_set = obj
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .is_some_and(|k| !k.is_empty());
    if let Some(lt) = list_type {
        if !["atomic", "set", "map"].contains(&lt) {
            errs.push(FieldError::not_supported(
                at("x-kubernetes-list-type"),
                json!(lt),
                &["atomic", "set", "map"],
            ));
        }
        if ty != "array" {
            errs.push(FieldError::invalid(
                at("type"),
                json!(ty),
                "must be array if x-kubernetes-list-type is specified",
            ));
        }
    }
    if list_type == Some("map") && !keys_set {
        errs.push(FieldError::required(
            at("x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    if keys_set && list_type != Some("map") {
        errs.push(FieldError::forbidden(
            at("x-kubernetes-list-map-keys"),
            "must not be set if x-kubernetes-list-type is not map",
        ));
    }
    if let Some(mt) = obj.get("x-kubernetes-map-type").and_then(Value::as_str)
        && !["granular", "atomic"].contains(&mt)
    {
        errs.push(FieldError::not_supported(
            at("x-kubernetes-map-type"),
            json!(mt),
            &["granular", "atomic"],
        ));
    }
}

fn meta_checks(
    obj: &Map<String, Value>,
    root: bool,
    embedded: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(Value::Object(props)) = obj.get("properties") else {
        return;
    };
    let prop_path = |k: &str| field::key(&field::child(path, "properties"), k);
    if root || embedded {
        for (k, want) in [
            ("kind", "string"),
            ("apiVersion", "string"),
            ("metadata", "object"),
        ] {
            if let Some(Value::Object(p)) = props.get(k) {
                let ty = type_of(p);
                if ty != want {
                    errs.push(FieldError::invalid(
                        field::child(&prop_path(k), "type"),
                        json!(ty),
                        format!("must be {want}"),
                    ));
                }
            }
        }
    }
    if root && let Some(Value::Object(meta)) = props.get("metadata") {
        let allowed = ["type", "properties", "description"];
        let names_only = meta
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
        if !names_only || meta.keys().any(|k| !allowed.contains(&k.as_str())) {
            errs.push(FieldError::forbidden(
                prop_path("metadata"),
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a schema at `spec.versions[0].schema.openAPIV3Schema`; `expected` are messages.
    fn check(schema: Value, expected: &[&str]) {
        let got: Vec<String> = validate_schema(&schema, "spec.versions[0].schema.openAPIV3Schema")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, expected, "schema {schema}");
    }

    const P: &str = "spec.versions[0].schema.openAPIV3Schema";

    #[test]
    fn accepts_structural_schemas() {
        check(
            json!({"type": "object", "properties": {
                "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}},
                "spec": {"type": "object", "properties": {
                    "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "free": {"x-kubernetes-preserve-unknown-fields": true},
                    "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                              "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    "v": {"type": "string", "allOf": [{"pattern": "^a"}, {"maxLength": 3}]}
                }}
            }}),
            &[],
        );
    }

    #[test]
    fn rejects_non_structural_schemas() {
        check(
            json!({"properties": {}}),
            &[&format!(
                "{P}.type: Required value: must not be empty at the root"
            )],
        );
        check(
            json!({"type": "string"}),
            &[&format!(
                "{P}.type: Invalid value: \"string\": must be object at the root"
            )],
        );
        check(
            json!({"type": "object", "properties": {"spec": {"properties": {}}}}),
            &[&format!(
                "{P}.properties[spec].type: Required value: must not be empty for specified object fields"
            )],
        );
        check(
            json!({"type": "object", "properties": {"l": {"type": "array"}}}),
            &[&format!(
                "{P}.properties[l].items: Required value: must be specified"
            )],
        );
        check(
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {}}}}),
            &[&format!(
                "{P}.properties[l].items.type: Required value: must not be empty for specified array items"
            )],
        );
        check(
            json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
            &[&format!(
                "{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            )],
        );
        check(
            json!({"type": "object", "properties": {"s": {"type": "string", "allOf": [{"type": "string"}]}}}),
            &[&format!(
                "{P}.properties[s].allOf[0].type: Forbidden: must be empty to be structural"
            )],
        );
        check(
            json!({"type": "object", "properties": {"s": {"type": "strin"}}}),
            &[&format!(
                "{P}.properties[s].type: Unsupported value: \"strin\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            )],
        );
        check(
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}}),
            &[&format!(
                "{P}.properties[s].pattern: Invalid value: \"(\": must be a valid regular expression, but isn't: regex parse error:\n    (\n    ^\nerror: unclosed group"
            )],
        );
        check(
            json!({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": true}}}),
            &[&format!(
                "{P}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            )],
        );
        check(
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "string"}}}}),
            &[&format!(
                "{P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
            )],
        );
        check(
            json!({"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}}),
            &[&format!(
                "{P}.properties[t].items: Forbidden: items must be a schema object and not an array"
            )],
        );
        check(
            json!({"type": "object", "$ref": "#/x"}),
            &[&format!("{P}.$ref: Forbidden: $ref is not supported")],
        );
    }

    #[test]
    fn deep_schemas_are_bounded() {
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "array", "items": deep});
        }
        let errs = validate_schema(&json!({"type": "object", "properties": {"d": deep}}), "s");
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0]
                .to_string()
                .ends_with("Forbidden: schema is nested too deeply")
        );
    }
}
