//! Field-level validation errors, rendered exactly like Kubernetes' `field.Error`.
//!
//! A [`FieldError`] carries a kind (which maps to a `StatusCause` reason such as
//! `FieldValueInvalid`), the field path (`spec.containers[0].name`), the offending value and a
//! detail. Its `Display` is Kubernetes' `field.Error.Error()`, e.g.
//! `spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`.
//! [`aggregate_message`] joins several errors the way an `Invalid` Status message does.

pub(crate) mod gofmt;

/// Quotes a string like Go's `%q` (`strconv.Quote`), as Kubernetes messages print values.
pub use gofmt::quote as go_quote;

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Value, json};

/// The type of a field error; each maps to a Kubernetes `CauseType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// A requested value was not found (`FieldValueNotFound`).
    NotFound,
    /// A required value is missing (`FieldValueRequired`).
    Required,
    /// A value that must be unique is repeated (`FieldValueDuplicate`).
    Duplicate,
    /// A malformed value (`FieldValueInvalid`).
    Invalid,
    /// A value outside an enumerated set (`FieldValueNotSupported`).
    NotSupported,
    /// A value that is not permitted in this context (`FieldValueForbidden`).
    Forbidden,
    /// A value that is too long; the value itself is not printed (`FieldValueTooLong`).
    TooLong,
    /// A list or map with too many items (`FieldValueTooMany`).
    TooMany,
    /// A value that is too short (`FieldValueTooShort`).
    TooShort,
    /// A list with too few items (`FieldValueTooFew`).
    TooFew,
    /// An error not caused by the input (`InternalError`).
    Internal,
    /// A value whose type does not match the schema (`FieldValueTypeInvalid`).
    TypeInvalid,
}

impl FieldErrorKind {
    /// The Kubernetes `StatusCause.reason` for this kind, e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotFound => "FieldValueNotFound",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::TooShort => "FieldValueTooShort",
            Self::TooFew => "FieldValueTooFew",
            Self::Internal => "InternalError",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The human text of this kind, e.g. `Invalid value`.
    pub fn text(self) -> &'static str {
        match self {
            Self::NotFound => "Not found",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::TooShort => "Too short",
            Self::TooFew => "Too few",
            Self::Internal => "Internal error",
        }
    }
}

/// One field-level validation error, as Kubernetes' `field.Error`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What went wrong.
    pub kind: FieldErrorKind,
    /// The field path, e.g. `spec.containers[0].name`; `<nil>` when Kubernetes has no path.
    pub path: String,
    /// The offending value; `None` when Kubernetes omits it from the message.
    pub value: Option<Value>,
    /// Free-form detail appended after the value.
    pub detail: String,
}

impl FieldError {
    /// A general constructor.
    pub fn new(
        kind: FieldErrorKind,
        path: impl Into<String>,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            path: path.into(),
            value,
            detail: detail.into(),
        }
    }

    /// `field.Required(path, detail)`.
    pub fn required(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Required, path, None, detail)
    }

    /// `field.Invalid(path, value, detail)`.
    pub fn invalid(path: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Invalid, path, Some(value), detail)
    }

    /// `field.TypeInvalid(path, value, detail)`.
    pub fn type_invalid(path: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::TypeInvalid, path, Some(value), detail)
    }

    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Forbidden, path, None, detail)
    }

    /// `field.Duplicate(path, value)`.
    pub fn duplicate(path: impl Into<String>, value: Value) -> Self {
        Self::new(FieldErrorKind::Duplicate, path, Some(value), "")
    }

    /// `field.NotFound(path, value)`.
    pub fn not_found(path: impl Into<String>, value: Value) -> Self {
        Self::new(FieldErrorKind::NotFound, path, Some(value), "")
    }

    /// `field.InternalError(path, err)`.
    pub fn internal(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Internal, path, None, detail)
    }

    /// `field.NotSupported(path, value, supported)`: detail `supported values: "a", "b"`.
    pub fn not_supported<S: AsRef<str>>(
        path: impl Into<String>,
        value: Value,
        supported: &[S],
    ) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| gofmt::quote(s.as_ref())).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(FieldErrorKind::NotSupported, path, Some(value), detail)
    }

    /// `field.TooLong(path, _, max)`: `may not be more than N bytes` (or `value is too long`).
    pub fn too_long(path: impl Into<String>, max_bytes: Option<usize>) -> Self {
        let detail = match max_bytes {
            Some(1) => "may not be more than 1 byte".to_string(),
            Some(n) => format!("may not be more than {n} bytes"),
            None => "value is too long".to_string(),
        };
        Self::new(FieldErrorKind::TooLong, path, None, detail)
    }

    /// `field.TooMany(path, actual, max)`: `must have at most N items` (or `has too many items`).
    pub fn too_many(path: impl Into<String>, actual: Option<usize>, max: Option<usize>) -> Self {
        let detail = match max {
            Some(1) => "must have at most 1 item".to_string(),
            Some(n) => format!("must have at most {n} items"),
            None => "has too many items".to_string(),
        };
        Self::new(
            FieldErrorKind::TooMany,
            path,
            actual.map(|a| json!(a)),
            detail,
        )
    }

    /// The Kubernetes `StatusCause.reason`, e.g. `FieldValueInvalid`.
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
    }

    /// The message without the field path (`ErrorBody()`), used as `StatusCause.message`.
    pub fn body(&self) -> String {
        use FieldErrorKind as K;
        let mut s = match (self.kind, &self.value) {
            (K::Required | K::Forbidden | K::TooLong | K::TooShort | K::Internal, _)
            | (_, None) => self.kind.text().to_string(),
            (_, Some(v)) => format!("{}: {}", self.kind.text(), render_bad_value(v)),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The full message, `path: body` (`Error()`).
    pub fn message(&self) -> String {
        format!("{}: {}", self.path, self.body())
    }

    /// A `StatusCause` object: `{"reason", "message", "field"}`.
    pub fn status_cause(&self) -> Value {
        json!({"reason": self.reason(), "message": self.body(), "field": self.path})
    }
}

/// Renders a bad value like `ErrorBody`: scalars with `%v`, strings with `%q`, others as JSON.
fn render_bad_value(v: &Value) -> String {
    match v {
        Value::String(s) => gofmt::quote(s),
        Value::Number(n) => gofmt::number_v(n),
        Value::Bool(b) => b.to_string(),
        other => gofmt::json(other),
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for FieldError {}

/// Joins errors like `ErrorList.ToAggregate().Error()`: duplicates dropped, one error alone,
/// several as `[e1, e2]`; empty for no errors.
pub fn aggregate_message(errors: &[FieldError]) -> String {
    aggregate_strings(errors.iter().map(FieldError::message))
}

/// Joins already rendered messages like a Kubernetes `Aggregate` error.
pub(crate) fn aggregate_strings(messages: impl IntoIterator<Item = String>) -> String {
    let mut seen = BTreeSet::new();
    let mut unique = Vec::new();
    for m in messages {
        if seen.insert(m.clone()) {
            unique.push(m);
        }
    }
    match unique.len() {
        0 => String::new(),
        1 => unique.remove(0),
        _ => format!("[{}]", unique.join(", ")),
    }
}

/// The message of an `Invalid` Status: `Kind.group "name" is invalid: <aggregate>`.
///
/// `qualified_kind` is `Kind` for the core group or `Kind.group` otherwise.
pub fn invalid_status_message(qualified_kind: &str, name: &str, errors: &[FieldError]) -> String {
    format!(
        "{qualified_kind} {} is invalid: {}",
        gofmt::quote(name),
        aggregate_message(errors)
    )
}

/// Appends a child field name to a path (`field.Path.Child`).
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Appends an index to a path (`field.Path.Index`).
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// Appends a map key to a path (`field.Path.Key`).
pub(crate) fn key(path: &str, k: &str) -> String {
    format!("{path}[{k}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(err: FieldError, expected: &str) {
        assert_eq!(err.to_string(), expected);
    }

    #[test]
    fn messages_match_kubernetes() {
        check(
            FieldError::invalid(
                "spec.replicas",
                json!(11),
                "spec.replicas in body should be less than or equal to 10",
            ),
            "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
        );
        check(
            FieldError::required("spec.foo", ""),
            "spec.foo: Required value",
        );
        check(
            FieldError::required("spec.foo", "must be set"),
            "spec.foo: Required value: must be set",
        );
        check(
            FieldError::not_supported("spec.mode", json!("x"), &["a", "b"]),
            "spec.mode: Unsupported value: \"x\": supported values: \"a\", \"b\"",
        );
        check(
            FieldError::too_long("metadata.annotations", Some(262144)),
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        );
        check(
            FieldError::too_long("spec.s", None),
            "spec.s: Too long: value is too long",
        );
        check(
            FieldError::too_many("spec.l", Some(3), Some(2)),
            "spec.l: Too many: 3: must have at most 2 items",
        );
        check(
            FieldError::too_many("spec.l", Some(3), None),
            "spec.l: Too many: 3: has too many items",
        );
        check(
            FieldError::duplicate("spec.l[1]", json!({"b": 1, "a": 2})),
            "spec.l[1]: Duplicate value: {\"a\":2,\"b\":1}",
        );
        check(
            FieldError::forbidden("spec.x", "not allowed"),
            "spec.x: Forbidden: not allowed",
        );
        check(
            FieldError::invalid("spec.x", Value::Null, "bad"),
            "spec.x: Invalid value: null: bad",
        );
        check(
            FieldError::invalid("spec.x", json!(1.5), ""),
            "spec.x: Invalid value: 1.5",
        );
        check(
            FieldError::type_invalid("spec.x", json!(true), "t"),
            "spec.x: Invalid value: true: t",
        );
    }

    #[test]
    fn reasons() {
        assert_eq!(FieldError::required("a", "").reason(), "FieldValueRequired");
        assert_eq!(
            FieldError::type_invalid("a", json!(1), "").reason(),
            "FieldValueTypeInvalid"
        );
        assert_eq!(
            FieldError::too_long("a", None).reason(),
            "FieldValueTooLong"
        );
        let cause = FieldError::required("spec.a", "").status_cause();
        assert_eq!(
            cause,
            json!({"reason": "FieldValueRequired", "message": "Required value", "field": "spec.a"})
        );
    }

    #[test]
    fn aggregation() {
        let a = FieldError::required("spec.a", "");
        let b = FieldError::required("spec.b", "");
        assert_eq!(aggregate_message(&[]), "");
        assert_eq!(
            aggregate_message(std::slice::from_ref(&a)),
            "spec.a: Required value"
        );
        assert_eq!(
            aggregate_message(&[a.clone(), b, a.clone()]),
            "[spec.a: Required value, spec.b: Required value]"
        );
        assert_eq!(
            invalid_status_message("Foo.example.com", "x", &[a]),
            "Foo.example.com \"x\" is invalid: spec.a: Required value"
        );
        assert_eq!(child("", "a"), "a");
        assert_eq!(key(&index(&child("a", "b"), 0), "k"), "a.b[0][k]");
    }
}
