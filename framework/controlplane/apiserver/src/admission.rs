//! The admission pipeline every write goes through before it reaches the store.
//!
//! Decode (unknown fields dropped, reported per `fieldValidation`), default, then validate
//! metadata and the kind. Built-in kinds are decoded through their typed k8s-openapi struct,
//! which drops unknown fields exactly as kube-apiserver's decoder does; custom resources are
//! pruned, defaulted and validated against their CRD's structural schema.

use mni_apimachinery::FieldError;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::registry::{Flavor, ResourceInfo};
use crate::request::FieldValidation;

/// The first half of admission, on `obj` already in storage form with its metadata set:
/// decodes (unknown fields dropped, refused under `fieldValidation=Strict`) and defaults it.
/// Writes run the mutating webhooks after it and [`check`] after them. Returns the
/// unknown-field warnings when `fieldValidation=Warn`.
pub(crate) fn decode(
    info: &ResourceInfo,
    obj: &mut Value,
    validation: FieldValidation,
) -> ApiResult<Vec<String>> {
    let unknown = match &info.flavor {
        Flavor::Builtin(b) => {
            let normalized = (b.normalize)(obj).map_err(|e| {
                ApiError::bad_request(format!(
                    "{kind} in version \"{v}\" cannot be handled as a {kind}: {e}",
                    kind = info.kind,
                    v = info.version
                ))
            })?;
            let mut unknown = Vec::new();
            dropped_fields(obj, &normalized, &mut unknown);
            *obj = normalized;
            (b.default)(obj);
            unknown
        }
        Flavor::Custom(c) => match &c.schema {
            Some(schema) => {
                let unknown = mni_apimachinery::prune(schema, obj);
                mni_apimachinery::drop_non_nullable_nulls(schema, obj);
                mni_apimachinery::default(schema, obj);
                unknown
            }
            None => Vec::new(),
        },
    };
    let mut warnings: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    if validation == FieldValidation::Strict && !warnings.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: strict decoding error: {}",
            warnings.join(", "),
            kind = info.kind,
            v = info.version
        )));
    }
    if validation != FieldValidation::Warn {
        warnings.clear();
    }
    Ok(warnings)
}

/// The second half of admission: validates the metadata and the kind of a decoded `obj`;
/// `old` is the stored object on update, for CRD transition rules (`oldSelf`).
/// Returns the warnings of ratcheted CRD rules.
pub(crate) fn check(
    info: &ResourceInfo,
    obj: &Value,
    old: Option<&Value>,
) -> ApiResult<Vec<String>> {
    let mut errors = metadata_errors(info, obj);
    let mut ratcheted = Vec::new();
    errors.extend(match &info.flavor {
        Flavor::Builtin(b) => (b.validate)(obj),
        Flavor::Custom(c) => match &c.schema {
            Some(s) => {
                let outcome = mni_apimachinery::validate_update(s, obj, old);
                ratcheted = outcome.warnings;
                outcome.errors
            }
            None => Vec::new(),
        },
    });
    if !errors.is_empty() {
        return Err(ApiError::invalid(
            &info.kind,
            &info.group,
            crate::object::name(obj),
            &errors,
        ));
    }
    Ok(ratcheted)
}

/// Collects the paths of fields present (and not null) in `before` but absent from `after`.
/// Paths are spelled out only for the fields reported: every write of a built-in kind runs
/// this over the whole object.
fn dropped_fields(before: &Value, after: &Value, out: &mut Vec<String>) {
    walk_dropped(before, after, &mut Vec::new(), out);
}

/// One step of a path in [`dropped_fields`].
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn walk_dropped<'a>(
    before: &'a Value,
    after: &Value,
    at: &mut Vec<Step<'a>>,
    out: &mut Vec<String>,
) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, v) in b {
                match a.get(k) {
                    None if !v.is_null() => {
                        at.push(Step::Key(k));
                        out.push(spell(at));
                        at.pop();
                    }
                    Some(av) if av.is_object() || av.is_array() => {
                        at.push(Step::Key(k));
                        walk_dropped(v, av, at, out);
                        at.pop();
                    }
                    _ => {}
                }
            }
        }
        (Value::Array(b), Value::Array(a)) => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                if av.is_object() || av.is_array() {
                    at.push(Step::Index(i));
                    walk_dropped(bv, av, at, out);
                    at.pop();
                }
            }
        }
        _ => {}
    }
}

/// `spec.list[0].name`.
fn spell(at: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in at {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// How kube-apiserver validates the name of each kind.
fn name_errors(info: &ResourceInfo, name: &str) -> Vec<String> {
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "namespaces") => mni_apimachinery::name_is_dns_label(name, false),
        ("", "services") => mni_apimachinery::name_is_dns1035_label(name, false),
        ("rbac.authorization.k8s.io" | "apiregistration.k8s.io", _) => {
            mni_apimachinery::is_valid_path_segment_name(name)
        }
        _ => mni_apimachinery::name_is_dns_subdomain(name, false),
    }
}

/// Validates the metadata every object has.
pub(crate) fn metadata_errors(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = crate::object::name(obj);
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in name_errors(info, name) {
            errs.push(FieldError::invalid(
                "metadata.name",
                Value::String(name.into()),
                msg,
            ));
        }
    }
    let meta = obj.get("metadata");
    let map_of = |field: &str| meta.and_then(|m| m.get(field)).and_then(Value::as_object);
    for (k, v) in map_of("labels").into_iter().flatten() {
        for msg in mni_apimachinery::is_qualified_name(k) {
            errs.push(FieldError::invalid(
                "metadata.labels",
                Value::String(k.clone()),
                msg,
            ));
        }
        let value = v.as_str().unwrap_or_default();
        for msg in mni_apimachinery::is_valid_label_value(value) {
            errs.push(FieldError::invalid(
                "metadata.labels",
                Value::String(value.into()),
                msg,
            ));
        }
    }
    let mut total = 0;
    for (k, v) in map_of("annotations").into_iter().flatten() {
        total += k.len() + v.as_str().map_or(0, str::len);
        for msg in mni_apimachinery::is_qualified_name(&k.to_ascii_lowercase()) {
            errs.push(FieldError::invalid(
                "metadata.annotations",
                Value::String(k.clone()),
                msg,
            ));
        }
    }
    if total > 256 * 1024 {
        errs.push(FieldError::too_long(
            "metadata.annotations",
            Some(mni_apimachinery::TOTAL_ANNOTATION_SIZE_LIMIT),
        ));
    }
    for (i, f) in crate::object::finalizers(obj).iter().enumerate() {
        for msg in mni_apimachinery::is_qualified_name(f) {
            errs.push(FieldError::invalid(
                format!("metadata.finalizers[{i}]"),
                Value::String(f.clone()),
                msg,
            ));
        }
    }
    let owners = meta
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array);
    for (i, o) in owners.into_iter().flatten().enumerate() {
        for field in ["apiVersion", "kind", "name", "uid"] {
            if o.get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                errs.push(FieldError::required(
                    format!("metadata.ownerReferences[{i}].{field}"),
                    "",
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dropped_fields_are_reported_with_paths() {
        let before = json!({"spec": {"a": 1, "b": {"c": 2}, "n": null}, "list": [{"x": 1, "y": 2}], "m": [[{"z": 1}]]});
        let after = json!({"spec": {"a": 1, "b": {}}, "list": [{"x": 1}], "m": [[{}]]});
        let mut out = Vec::new();
        dropped_fields(&before, &after, &mut out);
        assert_eq!(out, vec!["spec.b.c", "list[0].y", "m[0][0].z"]);
    }
}
