//! The checks apiextensions-apiserver runs on `x-kubernetes-validations` when a CRD is
//! written: every rule and `messageExpression` compiles, and transition rules (`oldSelf`) sit
//! on a correlatable part of the schema (no `set` or `atomic` list above them).

use serde_json::{Map, Value};

use super::ValidationRule;
use crate::field::{self, FieldError};
use crate::schema::MAX_SCHEMA_DEPTH;

/// Checks the validation rules of a CRD schema JSON; `base` is its path in the CRD, e.g.
/// `spec.validation.openAPIV3Schema`.
pub fn rule_errors(schema: &Value, base: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    node(schema, base, None, &mut errs, 0);
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
            let Ok(rule) = ValidationRule::parse(raw, &at) else {
                continue;
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
            node(
                p,
                &field::key(&props_path, k),
                uncorrelatable,
                errs,
                depth + 1,
            );
        }
    }
    if let Some(extra @ Value::Object(_)) = obj.get("additionalProperties") {
        let p = field::child(path, "additionalProperties");
        node(extra, &p, uncorrelatable, errs, depth + 1);
    }
    if let Some(items @ Value::Object(_)) = obj.get("items") {
        let p = field::child(path, "items");
        let is_map = obj.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
        let inner = match uncorrelatable {
            Some(u) => Some(u.to_string()),
            None if !is_map => Some(p.clone()),
            None => None,
        };
        node(items, &p, inner.as_deref(), errs, depth + 1);
    }
}
