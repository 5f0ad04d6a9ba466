//! Object validation against a structural schema, reproducing kube-openapi's SchemaValidator
//! as converted to field errors by apiextensions-apiserver, then the embedded-resource
//! ObjectMeta checks and the `x-kubernetes-list-type` set/map uniqueness checks.

mod passes;

use std::collections::HashSet;

use serde_json::{Value, json};

use super::{AdditionalProperties, RuleOutcome, Structural, formats, json_type};
use crate::field::{FieldError, gofmt};

/// Validates an object against its schema and returns kube-apiserver's field errors, in the
/// order schema errors, embedded-resource metadata errors, list-type errors, validation rules
/// (as on create: transition rules do not run).
pub fn validate(schema: &Structural, object: &Value) -> Vec<FieldError> {
    validate_update(schema, object, None).errors
}

/// [`validate`] for an update (`old` is the stored object) or a create (`old` is `None`):
/// transition rules run where the old value correlates, and rules failing on unchanged values
/// are ratcheted to warnings. The rules only run when the schema validation found no blocking
/// error ([`blocking_error`](super::blocking_error)).
pub fn validate_update(schema: &Structural, object: &Value, old: Option<&Value>) -> RuleOutcome {
    let mut errs = Vec::new();
    node(schema, object, "", &mut errs);
    passes::embedded(schema, object, "", true, &mut errs, 0);
    passes::list_types(schema, object, "", &mut errs, 0);
    let mut out = RuleOutcome {
        errors: errs,
        warnings: Vec::new(),
    };
    if schema.has_validation_rules() {
        match super::blocking_error(&out.errors) {
            Some(blocked) => out.errors.push(blocked),
            None => {
                let rules = super::validate_rules(schema, object, old);
                out.errors.extend(rules.errors);
                out.warnings = rules.warnings;
            }
        }
    }
    out
}

/// The field path for a kube-openapi error name: a leading `.` dropped, `<nil>` at the root.
fn error_path(name: &str) -> String {
    let trimmed = name.strip_prefix('.').unwrap_or(name);
    if trimmed.is_empty() {
        "<nil>".to_string()
    } else {
        trimmed.to_string()
    }
}

fn invalid(name: &str, value: Value, msg: String) -> FieldError {
    FieldError::invalid(error_path(name), value, msg)
}

/// A non-field (composite) error: kube-apiserver reports it at `<nil>` with an empty value.
fn composite(msg: String) -> FieldError {
    FieldError::invalid("<nil>", json!(""), msg)
}

fn child_name(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

fn node(s: &Structural, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if v.is_null() {
        type_check(s, v, path, errs);
        enum_check(s, v, path, errs);
        return;
    }
    type_check(s, v, path, errs);
    schema_props(s, v, path, errs);
    if let Value::String(text) = v {
        string_check(s, text, path, errs);
        if let Some(format) = &s.format
            && formats::is_known(format)
            && !formats::validate(format, text)
        {
            errs.push(FieldError::type_invalid(
                error_path(path),
                v.clone(),
                format!(
                    "{path} in body must be of type {format}: {}",
                    gofmt::quote(text)
                ),
            ));
        }
    }
    if let Value::Number(n) = v {
        number_check(s, n, path, errs);
    }
    if let Value::Array(items) = v {
        array_check(s, items, path, errs);
    }
    enum_check(s, v, path, errs);
    if let Value::Object(obj) = v {
        object_check(s, obj, path, errs);
    }
}

fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0
}

fn type_check(s: &Structural, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let types = s.types();
    if types.is_empty() && s.format.is_none() {
        return;
    }
    let type_err = |type_name: &str, value: &str| {
        FieldError::type_invalid(
            error_path(path),
            json!(value),
            format!(
                "{path} in body must be of type {type_name}: {}",
                gofmt::quote(value)
            ),
        )
    };
    if v.is_null() {
        if !types.is_empty() && !s.nullable {
            errs.push(type_err(&types.join(","), "null"));
        }
        return;
    }
    let sch = json_type(v);
    let inferred_format = match sch {
        "integer" => "int64",
        "number" => "float64",
        _ => "",
    };
    let has = |t: &str| types.contains(&t);
    let is_float_int = sch == "number" && v.as_f64().is_some_and(is_json_integer) && has("integer");
    let is_int_float = sch == "integer" && has("number");
    let is_string_or_slice = matches!(v, Value::String(_) | Value::Array(_));
    if let Some(format) = &s.format
        && !is_string_or_slice
        && !(has(sch) || format == inferred_format || is_float_int || is_int_float)
    {
        errs.push(type_err(format, inferred_format));
        return;
    }
    if !(has("number") || has("integer")) && s.format.is_some() && is_string_or_slice {
        return;
    }
    if !(has(sch) || is_float_int || is_int_float) {
        errs.push(type_err(&types.join(","), sch));
    }
}

fn schema_props(s: &Structural, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let run = |sub: &Structural| {
        let mut e = Vec::new();
        node(sub, v, path, &mut e);
        e
    };
    if !s.any_of.is_empty() {
        let mut best: Option<Vec<FieldError>> = None;
        let mut ok = false;
        for sub in &s.any_of {
            let e = run(sub);
            if e.is_empty() {
                ok = true;
                best = None;
                break;
            }
            if best.as_ref().is_none_or(|b| e.len() < b.len()) {
                best = Some(e);
            }
        }
        if !ok {
            errs.push(composite(format!(
                "{} must validate at least one schema (anyOf)",
                gofmt::quote(path)
            )));
        }
        errs.extend(best.unwrap_or_default());
    }
    if !s.one_of.is_empty() {
        let mut best: Option<Vec<FieldError>> = None;
        let mut valid = 0;
        for sub in &s.one_of {
            let e = run(sub);
            if e.is_empty() {
                valid += 1;
                best = None;
            } else if valid == 0 && best.as_ref().is_none_or(|b| e.len() < b.len()) {
                best = Some(e);
            }
        }
        if valid != 1 {
            let extra = if valid == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {valid} valid alternatives")
            };
            errs.push(composite(format!(
                "{} must validate one and only one schema (oneOf). {extra}",
                gofmt::quote(path)
            )));
            errs.extend(best.unwrap_or_default());
        }
    }
    if !s.all_of.is_empty() {
        let mut valid = 0;
        for sub in &s.all_of {
            let e = run(sub);
            if e.is_empty() {
                valid += 1;
            }
            errs.extend(e);
        }
        if valid != s.all_of.len() {
            let extra = if valid == 0 { ". None validated" } else { "" };
            errs.push(composite(format!(
                "{} must validate all the schemas (allOf){extra}",
                gofmt::quote(path)
            )));
        }
    }
    if let Some(not) = &s.not
        && run(not).is_empty()
    {
        errs.push(composite(format!(
            "{} must not validate the schema (not)",
            gofmt::quote(path)
        )));
    }
}

fn string_check(s: &Structural, text: &str, path: &str, errs: &mut Vec<FieldError>) {
    let chars = text.chars().count() as i64;
    if let Some(max) = s.max_length
        && chars > max
    {
        errs.push(FieldError::too_long(error_path(path), None));
        return;
    }
    if let Some(min) = s.min_length
        && chars < min
    {
        errs.push(invalid(
            path,
            json!(text),
            format!("{path} in body should be at least {min} chars long"),
        ));
        return;
    }
    if let Some(p) = &s.pattern {
        let failed = match p.regex() {
            Ok(re) => (!re.is_match(text)).then(|| p.source.clone()),
            Err(e) => Some(format!("{}, but pattern is invalid: {e}", p.source)),
        };
        if let Some(shown) = failed {
            errs.push(invalid(
                path,
                json!(text),
                format!("{path} in body should match '{shown}'"),
            ));
        }
    }
}

/// Go's `int64(f)` conversion (truncation, saturating here instead of undefined).
fn go_int(f: f64) -> i64 {
    f as i64
}

fn number_check(s: &Structural, n: &serde_json::Number, path: &str, errs: &mut Vec<FieldError>) {
    let value = Value::Number(n.clone());
    let int = n.as_i64();
    let data = n.as_f64().unwrap_or(0.0);
    if let Some(factor) = s.multiple_of {
        match int {
            Some(i) if go_int(factor) != 0 && factor >= 1.0 => {
                let f = go_int(factor);
                if i.checked_rem(f).is_some_and(|r| r != 0) {
                    errs.push(invalid(
                        path,
                        value.clone(),
                        format!("{path} in body should be a multiple of {f}"),
                    ));
                }
            }
            _ if factor > 0.0 => {
                let mult = if factor < 1.0 {
                    1.0 / factor * data
                } else {
                    data / factor
                };
                if !is_json_integer(mult) {
                    errs.push(invalid(
                        path,
                        value.clone(),
                        format!(
                            "{path} in body should be a multiple of {}",
                            gofmt::float_v(factor)
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(min) = s.minimum {
        let excl = s.exclusive_minimum;
        let (fails, shown) = match int {
            Some(i) => {
                let m = go_int(min);
                ((!excl && i < m) || (excl && i <= m), m.to_string())
            }
            None => (
                (!excl && data < min) || (excl && data <= min),
                gofmt::float_v(min),
            ),
        };
        if fails {
            let op = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errs.push(invalid(
                path,
                value.clone(),
                format!("{path} in body should be {op} {shown}"),
            ));
        }
    }
    if let Some(max) = s.maximum {
        let excl = s.exclusive_maximum;
        let (fails, shown) = match int {
            Some(i) => {
                let m = go_int(max);
                ((!excl && i > m) || (excl && i >= m), m.to_string())
            }
            None => (
                (!excl && data > max) || (excl && data >= max),
                gofmt::float_v(max),
            ),
        };
        if fails {
            let op = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            errs.push(invalid(
                path,
                value,
                format!("{path} in body should be {op} {shown}"),
            ));
        }
    }
}

fn array_check(s: &Structural, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    if let Some(item_schema) = &s.items {
        for (i, item) in items.iter().enumerate() {
            node(item_schema, item, &format!("{path}[{i}]"), errs);
        }
    }
    let size = items.len() as i64;
    if let Some(min) = s.min_items
        && size < min
    {
        errs.push(invalid(
            path,
            json!(size),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = s.max_items
        && size > max
    {
        errs.push(FieldError::too_many(
            error_path(path),
            Some(items.len()),
            None,
        ));
    }
    if s.unique_items {
        let mut seen = HashSet::new();
        if items.iter().any(|item| !seen.insert(gofmt::json(item))) {
            errs.push(invalid(
                path,
                json!(""),
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }
}

/// Enum membership with Go's reflect conversion rules for numbers.
fn enum_matches(data: &Value, allowed: &Value) -> bool {
    match (data, allowed) {
        (Value::Null, _) => false,
        (Value::Number(d), Value::Number(a)) => match (d.as_i64(), a.as_i64()) {
            (Some(x), Some(y)) => x == y,
            (Some(x), None) => Some(x as f64) == a.as_f64(),
            (None, Some(y)) => d.as_f64().is_some_and(|f| go_int(f) == y),
            (None, None) => d.as_f64() == a.as_f64(),
        },
        _ => data == allowed,
    }
}

fn enum_check(s: &Structural, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(allowed) = &s.enumeration else {
        return;
    };
    if allowed.is_empty() || allowed.iter().any(|a| enum_matches(v, a)) {
        return;
    }
    let supported: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => gofmt::json(other),
        })
        .collect();
    errs.push(FieldError::not_supported(
        error_path(path),
        v.clone(),
        &supported,
    ));
}

fn object_check(
    s: &Structural,
    obj: &serde_json::Map<String, Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let n = obj.len() as i64;
    if let Some(min) = s.min_properties
        && n < min
    {
        errs.push(invalid(
            path,
            json!(n),
            format!("{path} in body should have at least {min} properties"),
        ));
        return;
    }
    if let Some(max) = s.max_properties
        && n > max
    {
        errs.push(FieldError::too_many(
            error_path(path),
            Some(obj.len()),
            None,
        ));
        return;
    }
    match &s.additional_properties {
        Some(AdditionalProperties::Bool(false)) => {
            for k in obj.keys().filter(|k| !s.properties.contains_key(*k)) {
                errs.push(invalid(
                    path,
                    json!(k),
                    format!("{path}.{k} in body is a forbidden property"),
                ));
            }
        }
        Some(AdditionalProperties::Schema(extra)) => {
            for (k, v) in obj.iter().filter(|(k, _)| !s.properties.contains_key(*k)) {
                node(extra, v, &format!("{path}.{k}"), errs);
            }
        }
        _ => {}
    }
    for (k, prop) in &s.properties {
        if let Some(v) = obj.get(k) {
            node(prop, v, &child_name(path, k), errs);
        }
    }
    for k in &s.required {
        if !obj.contains_key(k) {
            errs.push(FieldError::required(error_path(&format!("{path}.{k}")), ""));
        }
    }
}

#[cfg(test)]
mod tests;
