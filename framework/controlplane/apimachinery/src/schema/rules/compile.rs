//! The checks apiextensions-apiserver runs on `x-kubernetes-validations` when a CRD is
//! written: every rule and `messageExpression` compiles, and transition rules (`oldSelf`) sit
//! on a correlatable part of the schema (no `set` or `atomic` list above them).

use serde_json::{Map, Value};

use super::ValidationRule;
use crate::field::{self, FieldError};
use crate::schema::{AdditionalProperties, MAX_SCHEMA_DEPTH, Structural};

/// Checks the validation rules of a CRD schema JSON; `base` is its path in the CRD, e.g.
/// `spec.validation.openAPIV3Schema`.
pub fn rule_errors(schema: &Value, base: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // The parsed schema holds the rules compiled and checked against their nodes' types.
    let parsed = Structural::from_value(schema).ok();
    node(schema, parsed.as_ref(), base, None, &mut errs, 0);
    errs
}

/// Go's `%#v` of an `apiextensions.ValidationRule`, the value kube-apiserver prints.
fn go_rule(obj: &Map<String, Value>) -> String {
    let text = |k: &str| crate::go_quote(obj.get(k).and_then(Value::as_str).unwrap_or_default());
    let reason = if obj.get("reason").is_some_and(|r| !r.is_null()) {
        "(*apiextensions.FieldValueErrorReason)(0xc000000000)"
    } else {
        "(*apiextensions.FieldValueErrorReason)(nil)"
    };
    let optional = if obj.get("optionalOldSelf").is_some_and(|r| !r.is_null()) {
        "(*bool)(0xc000000001)"
    } else {
        "(*bool)(nil)"
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{optional}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        text("fieldPath"),
    )
}

fn node(
    v: &Value,
    parsed: Option<&Structural>,
    path: &str,
    uncorrelatable: Option<&str>,
    errs: &mut Vec<FieldError>,
    depth: usize,
) {
    let Value::Object(obj) = v else {
        return;
    };
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    if let Some(Value::Array(rules)) = obj.get("x-kubernetes-validations") {
        let rules_path = field::child(path, "x-kubernetes-validations");
        for (i, raw) in rules.iter().enumerate() {
            let at = field::index(&rules_path, i);
            let reparsed;
            let rule = match parsed.and_then(|p| p.validations.get(i)) {
                Some(r) => r,
                None => match ValidationRule::parse(raw, &at) {
                    Ok(r) => {
                        reparsed = r;
                        &reparsed
                    }
                    Err(_) => continue,
                },
            };
            let Value::Object(raw) = raw else { continue };
            match &rule.compiled.rule {
                Err(e) if rule.rule.trim().is_empty() => {
                    errs.push(FieldError::required(
                        field::child(&at, "rule"),
                        e.to_string(),
                    ));
                }
                Err(e) => errs.push(FieldError::new(
                    crate::FieldErrorKind::Invalid,
                    field::child(&at, "rule"),
                    None,
                    format!("{}: compilation failed: {e}", go_rule(raw)),
                )),
                Ok(p) => {
                    if p.uses("oldSelf") {
                        if let Some(u) = uncorrelatable {
                            errs.push(FieldError::invalid(
                                field::child(&at, "rule"),
                                Value::String(rule.rule.clone()),
                                format!(
                                    "oldSelf cannot be used on the uncorrelatable portion of the schema within {u}"
                                ),
                            ));
                        }
                    } else if let Some(b) = rule.optional_old_self {
                        errs.push(FieldError::invalid(
                            field::child(&at, "optionalOldSelf"),
                            Value::Bool(b),
                            "may not be set if oldSelf is not used in rule",
                        ));
                    }
                }
            }
            if let Some(Err(e)) = &rule.compiled.message {
                errs.push(FieldError::new(
                    crate::FieldErrorKind::Invalid,
                    field::child(&at, "messageExpression"),
                    None,
                    format!(
                        "{}: messageExpression compilation failed: {e}",
                        go_rule(raw)
                    ),
                ));
            }
            if let Some(reason) = &rule.reason
                && ![
                    "FieldValueInvalid",
                    "FieldValueForbidden",
                    "FieldValueRequired",
                    "FieldValueDuplicate",
                ]
                .contains(&reason.as_str())
            {
                errs.push(FieldError::not_supported(
                    field::child(&at, "reason"),
                    Value::String(reason.clone()),
                    &[
                        "FieldValueDuplicate",
                        "FieldValueForbidden",
                        "FieldValueInvalid",
                        "FieldValueRequired",
                    ],
                ));
            }
        }
    }
    if let Some(Value::Object(props)) = obj.get("properties") {
        let props_path = field::child(path, "properties");
        for (k, p) in props {
            let sub = parsed.and_then(|s| s.properties.get(k));
            node(
                p,
                sub,
                &field::key(&props_path, k),
                uncorrelatable,
                errs,
                depth + 1,
            );
        }
    }
    if let Some(extra @ Value::Object(_)) = obj.get("additionalProperties") {
        let p = field::child(path, "additionalProperties");
        let sub = match parsed.and_then(|s| s.additional_properties.as_ref()) {
            Some(AdditionalProperties::Schema(a)) => Some(&**a),
            _ => None,
        };
        node(extra, sub, &p, uncorrelatable, errs, depth + 1);
    }
    if let Some(items @ Value::Object(_)) = obj.get("items") {
        let p = field::child(path, "items");
        let is_map = obj.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
        let inner = match uncorrelatable {
            Some(u) => Some(u.to_string()),
            None if !is_map => Some(p.clone()),
            None => None,
        };
        let sub = parsed.and_then(|s| s.items.as_deref());
        node(items, sub, &p, inner.as_deref(), errs, depth + 1);
    }
}
