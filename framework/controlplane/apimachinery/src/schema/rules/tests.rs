//! Validation rules: each case is a schema, an object (and an old object), and the exact
//! kube-apiserver messages.

use serde_json::{Value, json};

use crate::schema::{Structural, rule_errors, validate, validate_update};

fn schema(v: Value) -> Structural {
    Structural::from_value(&v).unwrap_or_default()
}

/// A resource schema whose `spec` is `spec`.
fn resource(spec: Value) -> Structural {
    schema(json!({"type": "object", "properties": {"spec": spec}}))
}

fn check(s: &Structural, obj: Value, expected: &[&str]) {
    let got: Vec<String> = validate(s, &obj).iter().map(ToString::to_string).collect();
    assert_eq!(got, expected, "object {obj}");
}

fn check_update(s: &Structural, obj: Value, old: Value, expected: &[&str], warnings: &[&str]) {
    let out = validate_update(s, &obj, Some(&old));
    let got: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
    assert_eq!(got, expected, "object {obj}, old {old}");
    assert_eq!(out.warnings, warnings, "warnings of {obj}, old {old}");
}

/// A VPC-like spec: a CIDR and subnets (a map list keyed by name) inside it.
fn vpc() -> Structural {
    resource(json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.subnets.all(s, cidr(self.cidr).containsCIDR(s.cidr))",
             "message": "every subnet must be inside the VPC CIDR", "fieldPath": ".subnets"},
            {"rule": "self.subnets.all(a, self.subnets.all(b, a.name == b.name || !cidr(a.cidr).containsIP(cidr(b.cidr).ip()) && !cidr(b.cidr).containsIP(cidr(a.cidr).ip())))",
             "messageExpression": "'subnets overlap in ' + self.cidr"},
            {"rule": "self.cidr == oldSelf.cidr", "message": "cidr is immutable"}
        ],
        "properties": {
            "cidr": {"type": "string", "x-kubernetes-validations": [
                {"rule": "isCIDR(self)", "message": "must be a CIDR"},
                {"rule": "!isCIDR(self) || cidr(self) == cidr(self).masked()", "messageExpression": "'must be a network address, e.g. ' + string(cidr(self).masked())"}
            ]},
            "subnets": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object", "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "cidr": {"type": "string"},
                        "gateway": {"type": "string"}
                    },
                    "x-kubernetes-validations": [
                        {"rule": "!has(self.gateway) || cidr(self.cidr).containsIP(self.gateway)",
                         "message": "gateway must be inside the subnet", "fieldPath": ".gateway"},
                        {"rule": "self.cidr == oldSelf.cidr", "message": "subnet cidr is immutable", "reason": "FieldValueForbidden"}
                    ]
                }
            }
        }
    }))
}

#[test]
fn vpc_address_plans() {
    let s = vpc();
    let ok = json!({"spec": {"cidr": "10.0.0.0/16", "subnets": [
        {"name": "a", "cidr": "10.0.1.0/24", "gateway": "10.0.1.1"},
        {"name": "b", "cidr": "10.0.2.0/24"}
    ]}});
    check(&s, ok.clone(), &[]);
    check(
        &s,
        json!({"spec": {"cidr": "10.0.0.0/16", "subnets": [
            {"name": "a", "cidr": "10.0.1.0/24", "gateway": "10.0.2.1"},
            {"name": "b", "cidr": "10.1.0.0/24"},
            {"name": "c", "cidr": "10.0.1.0/25"}
        ]}}),
        &[
            "spec.subnets: Invalid value: \"object\": every subnet must be inside the VPC CIDR",
            "spec: Invalid value: \"object\": subnets overlap in 10.0.0.0/16",
            "spec.subnets[0].gateway: Invalid value: \"object\": gateway must be inside the subnet",
        ],
    );
    check(
        &s,
        json!({"spec": {"cidr": "10.0.0.1/16", "subnets": []}}),
        &["spec.cidr: Invalid value: \"string\": must be a network address, e.g. 10.0.0.0/16"],
    );
    check(
        &s,
        json!({"spec": {"cidr": "nope", "subnets": []}}),
        &["spec.cidr: Invalid value: \"string\": must be a CIDR"],
    );
}

#[test]
fn transition_rules_correlate_map_lists_by_key() {
    let s = vpc();
    let old = json!({"spec": {"cidr": "10.0.0.0/16", "subnets": [
        {"name": "a", "cidr": "10.0.1.0/24"},
        {"name": "b", "cidr": "10.0.2.0/24"}
    ]}});
    // Reordered items correlate by name: nothing changed.
    check_update(
        &s,
        json!({"spec": {"cidr": "10.0.0.0/16", "subnets": [
            {"name": "b", "cidr": "10.0.2.0/24"},
            {"name": "a", "cidr": "10.0.1.0/24"}
        ]}}),
        old.clone(),
        &[],
        &[],
    );
    // A changed subnet CIDR and a changed VPC CIDR are refused; a new item has no oldSelf.
    check_update(
        &s,
        json!({"spec": {"cidr": "10.0.0.0/8", "subnets": [
            {"name": "a", "cidr": "10.0.3.0/24"},
            {"name": "c", "cidr": "10.0.4.0/24"}
        ]}}),
        old,
        &[
            "spec: Invalid value: \"object\": cidr is immutable",
            "spec.subnets[0]: Forbidden: subnet cidr is immutable",
        ],
        &[],
    );
}

#[test]
fn unchanged_values_ratchet_to_warnings() {
    let s = resource(json!({"type": "object", "properties": {
        "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10"}]},
        "b": {"type": "integer"}
    }}));
    let old = json!({"spec": {"a": 20, "b": 1}});
    check_update(
        &s,
        json!({"spec": {"a": 20, "b": 2}}),
        old.clone(),
        &[],
        &["spec.a: Invalid value: \"integer\": failed rule: self < 10"],
    );
    check_update(
        &s,
        json!({"spec": {"a": 21, "b": 1}}),
        old,
        &["spec.a: Invalid value: \"integer\": failed rule: self < 10"],
        &[],
    );
}

#[test]
fn optional_old_self_runs_on_create() {
    let s = resource(
        json!({"type": "object", "properties": {"a": {"type": "string",
        "x-kubernetes-validations": [{"rule": "oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith('x')",
                                      "optionalOldSelf": true, "message": "bad"}]}}}),
    );
    check(&s, json!({"spec": {"a": "xyz"}}), &[]);
    check(
        &s,
        json!({"spec": {"a": "abc"}}),
        &["spec.a: Invalid value: \"string\": bad"],
    );
    check_update(
        &s,
        json!({"spec": {"a": "abc"}}),
        json!({"spec": {"a": "abc"}}),
        &[],
        &[],
    );
}

#[test]
fn reasons_and_messages() {
    let rule = |extra: Value| {
        let mut r = json!({"rule": "self.x > 0", "message": "x must be positive"});
        if let (Value::Object(r), Value::Object(e)) = (&mut r, extra) {
            r.extend(e);
        }
        resource(json!({"type": "object", "x-kubernetes-validations": [r],
            "properties": {"x": {"type": "integer"}}}))
    };
    let bad = json!({"spec": {"x": 0}});
    check(
        &rule(json!({})),
        bad.clone(),
        &["spec: Invalid value: \"object\": x must be positive"],
    );
    check(
        &rule(json!({"reason": "FieldValueForbidden"})),
        bad.clone(),
        &["spec: Forbidden: x must be positive"],
    );
    check(
        &rule(json!({"reason": "FieldValueRequired", "fieldPath": ".x"})),
        bad.clone(),
        &["spec.x: Required value: x must be positive"],
    );
    check(
        &rule(json!({"reason": "FieldValueDuplicate"})),
        bad.clone(),
        &["spec: Duplicate value: \"object\""],
    );
    check(
        &rule(json!({"message": "", "messageExpression": "'x is ' + string(self.x)"})),
        bad.clone(),
        &["spec: Invalid value: \"object\": x is 0"],
    );
    check(
        &rule(json!({"message": "", "messageExpression": "''"})),
        bad.clone(),
        &["spec: Invalid value: \"object\": failed rule: self.x > 0"],
    );
    check(
        &rule(json!({"messageExpression": "1"})),
        bad.clone(),
        &["spec: Invalid value: \"object\": messageExpression must evaluate to a string"],
    );
    check(
        &rule(json!({"rule": "self.x / (self.x - 1) > 0", "message": ""})),
        json!({"spec": {"x": 1}}),
        &[
            "spec: Invalid value: \"object\": division by zero evaluating rule: self.x / (self.x - 1) > 0",
        ],
    );
    // An optional field read without has() fails at evaluation, as in kube-apiserver.
    check(
        &rule(json!({"message": ""})),
        json!({"spec": {}}),
        &["spec: Invalid value: \"object\": no such key: x evaluating rule: self.x > 0"],
    );
    // The errors are reported with the status cause kube-apiserver sends.
    let errs = validate(&rule(json!({})), &bad);
    assert_eq!(
        errs[0].status_cause(),
        json!({"reason": "FieldValueInvalid", "message": "Invalid value: \"object\": x must be positive", "field": "spec"})
    );
}

#[test]
fn blocking_errors_skip_rules() {
    let s = resource(json!({"type": "object", "required": ["x"],
        "x-kubernetes-validations": [{"rule": "self.x > 0"}],
        "properties": {"x": {"type": "integer"}}}));
    check(
        &s,
        json!({"spec": {}}),
        &[
            "spec.x: Required value",
            "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ],
    );
}

#[test]
fn self_binds_scalars_lists_maps_and_int_or_string() {
    let s = resource(json!({"type": "object", "properties": {
        "port": {"x-kubernetes-int-or-string": true,
                 "x-kubernetes-validations": [{"rule": "type(self) == int ? self > 0 : self.endsWith('%')"}]},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                 "x-kubernetes-validations": [{"rule": "self.all(t, t == t.lowerAscii())", "message": "lowercase"}]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"},
                   "x-kubernetes-validations": [{"rule": "!('forbidden' in self)"}]},
        "my-field": {"type": "integer"},
        "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self <= 1.0"}]}
    }, "x-kubernetes-validations": [{"rule": "!has(self.my__dash__field) || self.my__dash__field < 5"}]}));
    check(
        &s,
        json!({"spec": {"port": "50%", "tags": ["a"], "labels": {"a": "b"}, "my-field": 1, "ratio": 1}}),
        &[],
    );
    check(
        &s,
        json!({"spec": {"port": 0, "tags": ["A"], "labels": {"forbidden": "x"}, "my-field": 7, "ratio": 1.5}}),
        &[
            "spec: Invalid value: \"object\": failed rule: !has(self.my__dash__field) || self.my__dash__field < 5",
            "spec.port: Invalid value: \"\": failed rule: type(self) == int ? self > 0 : self.endsWith('%')",
            "spec.tags: Invalid value: \"array\": lowercase",
            "spec.labels: Invalid value: \"object\": failed rule: !('forbidden' in self)",
            "spec.ratio: Invalid value: \"number\": failed rule: self <= 1.0",
        ],
    );
}

#[test]
fn root_rules_see_name_but_not_labels() {
    let s = schema(json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('vpc-')", "message": "name must start with vpc-"}],
        "properties": {"spec": {"type": "object"}}}));
    check(
        &s,
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "vpc-a"}, "spec": {}}),
        &[],
    );
    check(
        &s,
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a"}, "spec": {}}),
        &["<nil>: Invalid value: \"object\": name must start with vpc-"],
    );
}

#[test]
fn crd_time_checks() {
    let errs = |s: Value| -> Vec<String> {
        rule_errors(&s, "spec.validation.openAPIV3Schema")
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        errs(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self."}]}}})
        ),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self.\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:6: Syntax error: no viable alternative at input '.'\n | self.\n | .....^"
        ]
    );
    assert_eq!(
        errs(json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "size(self.x) > 0 && nope"},
            {"rule": "true", "messageExpression": "'a' +"},
            {"rule": ""},
            {"rule": "true", "reason": "Bogus"},
            {"rule": "true", "optionalOldSelf": true}
        ]})),
        vec![
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"size(self.x) > 0 && nope\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:21: undeclared reference to 'nope' (in container '')\n | size(self.x) > 0 && nope\n | ....................^",
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[1].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"true\", Message:\"\", MessageExpression:\"'a' +\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 'a' +\n | .....^",
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[2].rule: Required value: rule is not specified",
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[3].reason: Unsupported value: \"Bogus\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[4].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
        ]
    );
    assert_eq!(
        errs(json!({"type": "object", "properties": {
            "set": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}},
            "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "properties": {"k": {"type": "string"}},
                              "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}
        }})),
        vec![
            "spec.validation.openAPIV3Schema.properties[set].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[set].items"
        ]
    );
    assert!(errs(vpc_raw()).is_empty());
    // Field selections are checked against the schema, as cel-go's type checker does.
    assert_eq!(
        errs(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"gateway": {"type": "string"}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
            "x-kubernetes-validations": [
                {"rule": "!has(self.gatway) || self.labels.any == 'x'"},
                {"rule": "self.labels.any == 'x' && self.gateway != ''"}
            ]}},
            "x-kubernetes-validations": [
                {"rule": "self.metadata.name != '' && self.kind != ''"},
                {"rule": "self.metadata.labels.size() > 0"}
            ]})
        ),
        vec![
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self.metadata.labels.size() > 0\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:14: undefined field 'labels'\n | self.metadata.labels.size() > 0\n | .............^",
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"!has(self.gatway) || self.labels.any == 'x'\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'gatway'\n | !has(self.gatway) || self.labels.any == 'x'\n | ....^",
        ]
    );
}

fn vpc_raw() -> Value {
    json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.spec.cidr == oldSelf.spec.cidr"}],
           "properties": {"spec": {"type": "object", "properties": {"cidr": {"type": "string",
               "x-kubernetes-validations": [{"rule": "isCIDR(self) && cidr(self).prefixLength() <= 24"}]}}}}})
}
