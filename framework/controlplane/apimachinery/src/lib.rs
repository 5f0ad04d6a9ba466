//! Kubernetes API machinery without IO, over `serde_json::Value`.
//!
//! This crate reproduces what kube-apiserver does to request bodies and query parameters, with
//! its exact error messages, so that an embedded API server behaves like the real one:
//!
//! - [`FieldError`] — field-level errors rendered like `field.Error`; [`aggregate_message`].
//! - [`Structural`] — CRD `openAPIV3Schema`s: [`validate_schema`] checks a schema is servable,
//!   [`validate`] validates objects, [`prune`] drops unknown fields, [`default`] applies defaults;
//!   [`validate_update`] also runs CEL validation rules (`x-kubernetes-validations`) with
//!   transition rules, and [`rule_errors`] checks a CRD's rules compile.
//! - [`Selector`] — label selectors; [`FieldSelector`] — field selectors.
//! - `validation` functions — DNS-1123 names, qualified names, label values, annotations.
//! - [`JsonPath`] — the JSONPath subset of printer columns, [`format_cell`], [`human_duration`].
//!
//! Start with [`Structural::from_value`] for custom resources, or [`Selector::parse`] for list
//! requests. Nothing here panics on untrusted input, and recursion is depth-bounded.

mod field;
mod fields;
mod jsonpath;
mod labels;
mod schema;
mod validation;

pub use field::{FieldError, FieldErrorKind, aggregate_message, go_quote, invalid_status_message};
pub use fields::{
    FieldOperator, FieldRequirement, FieldSelector, FieldsError, escape_value, unescape_value,
};
pub use jsonpath::{JsonPath, JsonPathError, format_cell, human_duration, parse_rfc3339};
pub use labels::{LabelsError, Operator, Requirement, Selector};
pub use schema::{
    AdditionalProperties, MAX_SCHEMA_DEPTH, Pattern, RuleOutcome, SchemaError, Structural,
    ValidationRule, blocking_error, default, drop_non_nullable_nulls, prune, rule_errors, validate,
    validate_rules, validate_schema, validate_update,
};
pub use validation::{
    DNS1035_LABEL_MAX_LENGTH, DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH,
    LABEL_VALUE_MAX_LENGTH, TOTAL_ANNOTATION_SIZE_LIMIT, is_dns1035_label, is_dns1123_label,
    is_dns1123_subdomain, is_qualified_name, is_valid_label_value, is_valid_path_segment_name,
    max_len_error, name_is_dns_label, name_is_dns_subdomain, name_is_dns1035_label, regex_error,
    validate_annotations, validate_finalizers, validate_labels,
};
