//! Data-driven tests of object validation: each case is a schema for `spec.x` (or a whole
//! object schema), a value, and the exact kube-apiserver messages.

use serde_json::{Value, json};

use crate::schema::{Structural, validate};

/// Validates `{"spec": {"x": value}}` against a schema whose `spec.x` is `x_schema`.
fn check_x(x_schema: Value, value: Value, expected: &[&str]) {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": x_schema}}}});
    check(schema, json!({"spec": {"x": value}}), expected);
}

/// Validates `object` against `schema` and compares the rendered messages.
fn check(schema: Value, object: Value, expected: &[&str]) {
    let s = Structural::from_value(&schema).unwrap_or_default();
    let got: Vec<String> = validate(&s, &object)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(got, expected, "schema {schema}, object {object}");
}

#[test]
fn types() {
    check_x(json!({"type": "integer"}), json!(3), &[]);
    check_x(json!({"type": "integer"}), json!(3.0), &[]);
    check_x(
        json!({"type": "integer"}),
        json!("string"),
        &["spec.x: Invalid value: \"string\": spec.x in body must be of type integer: \"string\""],
    );
    check_x(
        json!({"type": "integer"}),
        json!(1.5),
        &["spec.x: Invalid value: \"number\": spec.x in body must be of type integer: \"number\""],
    );
    check_x(json!({"type": "number"}), json!(2), &[]);
    check_x(json!({"type": "string"}), json!("a"), &[]);
    check_x(
        json!({"type": "string"}),
        json!({"a": 1}),
        &["spec.x: Invalid value: \"object\": spec.x in body must be of type string: \"object\""],
    );
    check_x(json!({"type": "boolean"}), json!(false), &[]);
    check_x(
        json!({"type": "boolean"}),
        json!([true]),
        &["spec.x: Invalid value: \"array\": spec.x in body must be of type boolean: \"array\""],
    );
    check_x(
        json!({"type": "array", "items": {"type": "string"}}),
        json!([]),
        &[],
    );
    check_x(json!({"type": "object"}), json!({}), &[]);
    check_x(
        json!({"x-kubernetes-int-or-string": true}),
        json!("50%"),
        &[],
    );
    check_x(json!({"x-kubernetes-int-or-string": true}), json!(5), &[]);
    check_x(
        json!({"x-kubernetes-int-or-string": true}),
        json!(true),
        &[
            "spec.x: Invalid value: \"boolean\": spec.x in body must be of type integer,string: \"boolean\"",
        ],
    );
    check_x(
        json!({"x-kubernetes-preserve-unknown-fields": true}),
        json!({"any": [1]}),
        &[],
    );
}

#[test]
fn nullable() {
    check_x(
        json!({"type": "string", "nullable": true}),
        Value::Null,
        &[],
    );
    check_x(
        json!({"type": "string"}),
        Value::Null,
        &["spec.x: Invalid value: \"null\": spec.x in body must be of type string: \"null\""],
    );
}

#[test]
fn strings() {
    check_x(json!({"type": "string", "maxLength": 3}), json!("abc"), &[]);
    check_x(
        json!({"type": "string", "maxLength": 3}),
        json!("abcd"),
        &["spec.x: Too long: value is too long"],
    );
    check_x(json!({"type": "string", "maxLength": 3}), json!("ééé"), &[]);
    check_x(json!({"type": "string", "minLength": 2}), json!("ab"), &[]);
    check_x(
        json!({"type": "string", "minLength": 2}),
        json!("a"),
        &["spec.x: Invalid value: \"a\": spec.x in body should be at least 2 chars long"],
    );
    check_x(
        json!({"type": "string", "pattern": "^[a-z]+$"}),
        json!("abc"),
        &[],
    );
    check_x(
        json!({"type": "string", "pattern": "^[a-z]+$"}),
        json!("x1"),
        &["spec.x: Invalid value: \"x1\": spec.x in body should match '^[a-z]+$'"],
    );
}

#[test]
fn formats() {
    check_x(
        json!({"type": "string", "format": "date-time"}),
        json!("2024-01-01T00:00:00Z"),
        &[],
    );
    check_x(
        json!({"type": "string", "format": "date-time"}),
        json!("soon"),
        &["spec.x: Invalid value: \"soon\": spec.x in body must be of type date-time: \"soon\""],
    );
    check_x(
        json!({"type": "string", "format": "ipv4"}),
        json!("1.2.3"),
        &["spec.x: Invalid value: \"1.2.3\": spec.x in body must be of type ipv4: \"1.2.3\""],
    );
    check_x(
        json!({"type": "string", "format": "unknown-format"}),
        json!("anything"),
        &[],
    );
    check_x(
        json!({"type": "integer", "format": "int32"}),
        json!(5_000_000_000i64),
        &[],
    );
}

#[test]
fn numbers() {
    check_x(json!({"type": "integer", "maximum": 10}), json!(10), &[]);
    check_x(
        json!({"type": "integer", "maximum": 10}),
        json!(11),
        &["spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10"],
    );
    check_x(
        json!({"type": "integer", "maximum": 10, "exclusiveMaximum": true}),
        json!(10),
        &["spec.x: Invalid value: 10: spec.x in body should be less than 10"],
    );
    check_x(json!({"type": "integer", "minimum": 1}), json!(1), &[]);
    check_x(
        json!({"type": "integer", "minimum": 1}),
        json!(0),
        &["spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"],
    );
    check_x(
        json!({"type": "number", "minimum": 1.5, "exclusiveMinimum": true}),
        json!(1.5),
        &["spec.x: Invalid value: 1.5: spec.x in body should be greater than 1.5"],
    );
    check_x(json!({"type": "integer", "multipleOf": 5}), json!(15), &[]);
    check_x(
        json!({"type": "integer", "multipleOf": 5}),
        json!(7),
        &["spec.x: Invalid value: 7: spec.x in body should be a multiple of 5"],
    );
    check_x(
        json!({"type": "number", "multipleOf": 0.5}),
        json!(2.5),
        &[],
    );
    check_x(
        json!({"type": "number", "multipleOf": 0.5}),
        json!(2.25),
        &["spec.x: Invalid value: 2.25: spec.x in body should be a multiple of 0.5"],
    );
    check_x(
        json!({"type": "number", "maximum": 1000000}),
        json!(1000000.5),
        &[
            "spec.x: Invalid value: 1.0000005e+06: spec.x in body should be less than or equal to 1e+06",
        ],
    );
}

#[test]
fn arrays() {
    let items = json!({"type": "string"});
    check_x(
        json!({"type": "array", "items": items, "minItems": 1}),
        json!(["a"]),
        &[],
    );
    check_x(
        json!({"type": "array", "items": items, "minItems": 1}),
        json!([]),
        &["spec.x: Invalid value: 0: spec.x in body should have at least 1 items"],
    );
    check_x(
        json!({"type": "array", "items": items, "maxItems": 2}),
        json!(["a", "b"]),
        &[],
    );
    check_x(
        json!({"type": "array", "items": items, "maxItems": 2}),
        json!(["a", "b", "c"]),
        &["spec.x: Too many: 3: has too many items"],
    );
    check_x(
        json!({"type": "array", "items": items, "uniqueItems": true}),
        json!(["a", "b"]),
        &[],
    );
    check_x(
        json!({"type": "array", "items": items, "uniqueItems": true}),
        json!(["a", "a"]),
        &["spec.x: Invalid value: \"\": spec.x in body shouldn't contain duplicates"],
    );
    check_x(
        json!({"type": "array", "items": {"type": "integer"}}),
        json!([1, "b"]),
        &[
            "spec.x[1]: Invalid value: \"string\": spec.x[1] in body must be of type integer: \"string\"",
        ],
    );
}

#[test]
fn enums() {
    check_x(
        json!({"type": "string", "enum": ["small", "large"]}),
        json!("small"),
        &[],
    );
    check_x(
        json!({"type": "string", "enum": ["small", "large"]}),
        json!("huge"),
        &["spec.x: Unsupported value: \"huge\": supported values: \"small\", \"large\""],
    );
    check_x(json!({"type": "integer", "enum": [1, 2]}), json!(2), &[]);
    check_x(
        json!({"type": "integer", "enum": [1, 2]}),
        json!(3),
        &["spec.x: Unsupported value: 3: supported values: \"1\", \"2\""],
    );
}

#[test]
fn objects() {
    let obj = |extra: Value| {
        let mut s = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
        if let (Value::Object(s), Value::Object(e)) = (&mut s, extra) {
            s.extend(e);
        }
        s
    };
    check_x(obj(json!({"required": ["a"]})), json!({"a": "x"}), &[]);
    check_x(
        obj(json!({"required": ["a"]})),
        json!({"b": "x"}),
        &["spec.x.a: Required value"],
    );
    check_x(obj(json!({"minProperties": 1})), json!({"a": "x"}), &[]);
    check_x(
        obj(json!({"minProperties": 1})),
        json!({}),
        &["spec.x: Invalid value: 0: spec.x in body should have at least 1 properties"],
    );
    check_x(obj(json!({"maxProperties": 1})), json!({"a": "x"}), &[]);
    check_x(
        obj(json!({"maxProperties": 1})),
        json!({"a": "x", "b": "y"}),
        &["spec.x: Too many: 2: has too many items"],
    );
    check_x(
        json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        json!({"a": 1, "b": "two"}),
        &[
            "spec.x.b: Invalid value: \"string\": spec.x.b in body must be of type integer: \"string\"",
        ],
    );
    check_x(
        json!({"type": "object", "additionalProperties": false}),
        json!({}),
        &[],
    );
    check_x(
        json!({"type": "object", "additionalProperties": false}),
        json!({"z": 1}),
        &["spec.x: Invalid value: \"z\": spec.x.z in body is a forbidden property"],
    );
    check(
        json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}),
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}}),
        &["spec: Required value"],
    );
}

#[test]
fn combinators() {
    let any = json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
    check_x(any.clone(), json!(1), &[]);
    check_x(
        any,
        json!(true),
        &[
            "<nil>: Invalid value: \"\": \"spec.x\" must validate at least one schema (anyOf)",
            "spec.x: Invalid value: \"boolean\": spec.x in body must be of type integer: \"boolean\"",
        ],
    );
    let one = json!({"type": "integer", "oneOf": [{"minimum": 5}, {"maximum": 10}]});
    check_x(one.clone(), json!(20), &[]);
    check_x(
        one,
        json!(7),
        &[
            "<nil>: Invalid value: \"\": \"spec.x\" must validate one and only one schema (oneOf). Found 2 valid alternatives",
        ],
    );
    let all = json!({"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^a"}]});
    check_x(all.clone(), json!("ab"), &[]);
    check_x(
        all,
        json!("b"),
        &[
            "spec.x: Invalid value: \"b\": spec.x in body should be at least 2 chars long",
            "spec.x: Invalid value: \"b\": spec.x in body should match '^a'",
            "<nil>: Invalid value: \"\": \"spec.x\" must validate all the schemas (allOf). None validated",
        ],
    );
    let not = json!({"type": "string", "not": {"enum": ["forbidden"]}});
    check_x(not.clone(), json!("ok"), &[]);
    check_x(
        not,
        json!("forbidden"),
        &["<nil>: Invalid value: \"\": \"spec.x\" must not validate the schema (not)"],
    );
}

#[test]
fn list_types() {
    let set =
        json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}});
    check_x(set.clone(), json!(["a", "b"]), &[]);
    check_x(
        set,
        json!(["a", "b", "a", "a"]),
        &["spec.x[2]: Duplicate value: \"a\""],
    );
    let map = json!({
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}
    });
    check_x(
        map.clone(),
        json!([{"name": "a", "v": 1}, {"name": "b", "v": 1}]),
        &[],
    );
    check_x(
        map,
        json!([{"name": "a", "v": 1}, {"name": "a", "v": 2}]),
        &["spec.x[1]: Duplicate value: {\"name\":\"a\"}"],
    );
}

#[test]
fn embedded_resources() {
    let emb = json!({
        "type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true
    });
    check_x(
        emb.clone(),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"a": "b"}}}),
        &[],
    );
    check_x(
        emb.clone(),
        json!({"metadata": {}}),
        &[
            "spec.x.apiVersion: Required value: must not be empty",
            "spec.x.kind: Required value: must not be empty",
        ],
    );
    let errs = {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": emb}}}});
        let s = Structural::from_value(&schema).unwrap_or_default();
        let obj = json!({"spec": {"x": {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"-a": "b"}}}}});
        validate(&s, &obj)
    };
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0]
            .to_string()
            .starts_with("spec.x.metadata.labels: Invalid value: \"-a\": name part must")
    );
}

#[test]
fn root_metadata_name_rules() {
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}
    }});
    check(
        schema.clone(),
        json!({"metadata": {"name": "short", "uid": "x"}}),
        &[],
    );
    check(
        schema,
        json!({"metadata": {"name": "too-long"}}),
        &["metadata.name: Too long: value is too long"],
    );
}

#[test]
fn deep_input_is_safe() {
    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let mut v = json!(1);
    for _ in 0..300 {
        v = json!([v]);
    }
    let s = Structural::from_value(&schema).unwrap_or_default();
    assert!(validate(&s, &json!({"spec": v})).is_empty());
}
