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

/// Runs decoding, defaulting and validation on `obj` (already in storage form, metadata set).
/// `old` is the stored object on update, for CRD transition rules (`oldSelf`). Returns the
/// warnings to send back.
pub(crate) fn admit(
    info: &ResourceInfo,
    obj: &mut Value,
    old: Option<&Value>,
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
            dropped_fields(obj, &normalized, "", &mut unknown);
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
            "strict decoding error: {}",
            warnings.join(", ")
        )));
    }
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
    if validation != FieldValidation::Warn {
        warnings.clear();
    }
    warnings.extend(ratcheted);
    Ok(warnings)
}

/// Collects the paths of fields present (and not null) in `before` but absent from `after`.
fn dropped_fields(before: &Value, after: &Value, path: &str, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, v) in b {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match a.get(k) {
                    None if !v.is_null() => out.push(p),
                    Some(av) => dropped_fields(v, av, &p, out),
                    None => {}
                }
            }
        }
        (Value::Array(b), Value::Array(a)) => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                dropped_fields(bv, av, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// How kube-apiserver validates the name of each kind.
fn name_errors(info: &ResourceInfo, name: &str) -> Vec<String> {
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "namespaces") => mni_apimachinery::name_is_dns_label(name, false),
        ("", "services") => mni_apimachinery::name_is_dns1035_label(name, false),
        ("rbac.authorization.k8s.io", _) => mni_apimachinery::is_valid_path_segment_name(name),
        _ => mni_apimachinery::name_is_dns_subdomain(name, false),
    }
}

/// Validates the metadata every object has.
pub(crate) fn metadata_errors(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = crate::object::name(obj);
    if name.is_empty() {
        errs.push(FieldError::required("metadata.name", ""));
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
        let before =
            json!({"spec": {"a": 1, "b": {"c": 2}, "n": null}, "list": [{"x": 1, "y": 2}]});
        let after = json!({"spec": {"a": 1, "b": {}}, "list": [{"x": 1}]});
        let mut out = Vec::new();
        dropped_fields(&before, &after, "", &mut out);
        assert_eq!(out, vec!["spec.b.c", "list[0].y"]);
    }
}
