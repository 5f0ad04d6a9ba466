//! Structural OpenAPI v3 schemas as used by CustomResourceDefinitions (`openAPIV3Schema`).
//!
//! [`Structural::from_value`] parses a schema; [`validate_schema`] checks a CRD schema is
//! structural enough to serve; for objects, [`validate`] reports kube-apiserver's field errors,
//! [`prune`] removes unknown fields (returning the paths kube-apiserver warns about),
//! [`drop_non_nullable_nulls`] and [`default`] apply apiextensions' null handling and defaults.
//! The usual order for a request body is prune, drop nulls, default, then validate.
//! [`validate_update`] also evaluates the CEL validation rules (`x-kubernetes-validations`,
//! see [`ValidationRule`]) with the old object for transition rules.

mod check;
pub(crate) mod formats;
mod mutate;
mod parse;
mod rules;
mod validate;

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

pub use check::validate_schema;
pub use mutate::{default, drop_non_nullable_nulls, prune};
pub use rules::{RuleOutcome, ValidationRule, blocking_error, rule_errors, validate_rules};
pub use validate::{validate, validate_update};

/// The maximum nesting of schema nodes accepted by [`Structural::from_value`].
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// The maximum nesting of JSON values walked without a schema.
pub(crate) const MAX_VALUE_DEPTH: usize = 512;

/// Errors from parsing a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A keyword has a value of the wrong JSON type, e.g. `maxLength` that is not an integer.
    #[error("{path}: {keyword} must be {expected}")]
    InvalidKeyword {
        /// The path of the schema node, e.g. `properties[spec]`.
        path: String,
        /// The keyword.
        keyword: String,
        /// What was expected, e.g. `an integer`.
        expected: &'static str,
    },
    /// The schema is nested deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("{path}: schema is nested too deeply")]
    TooDeep {
        /// The path where the limit was hit.
        path: String,
    },
}

/// `additionalProperties`: a boolean or a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum AdditionalProperties {
    /// `additionalProperties: true|false`.
    Bool(bool),
    /// `additionalProperties: {schema}`.
    Schema(Box<Structural>),
}

/// A `pattern` with its compiled regex (or the compile error, reported at validation).
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as written.
    pub source: String,
    compiled: Result<Regex, String>,
}

impl Pattern {
    pub(crate) fn new(source: &str) -> Self {
        let compiled = regex::RegexBuilder::new(source)
            .size_limit(1 << 20)
            .dfa_size_limit(1 << 20)
            .build()
            .map_err(|e| e.to_string());
        Self {
            source: source.to_string(),
            compiled,
        }
    }

    /// The compiled regex, or the compile error.
    pub fn regex(&self) -> Result<&Regex, &str> {
        self.compiled.as_ref().map_err(String::as_str)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// One node of a structural schema, with its value validations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Structural {
    /// `type`: object, array, string, integer, number or boolean.
    pub type_: Option<String>,
    /// `format`.
    pub format: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `nullable`.
    pub nullable: bool,
    /// `default`.
    pub default: Option<Value>,
    /// `properties`.
    pub properties: BTreeMap<String, Structural>,
    /// `additionalProperties`.
    pub additional_properties: Option<AdditionalProperties>,
    /// `items` (a single schema).
    pub items: Option<Box<Structural>>,
    /// `required`.
    pub required: Vec<String>,
    /// `enum`.
    pub enumeration: Option<Vec<Value>>,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength` (characters).
    pub max_length: Option<i64>,
    /// `minLength` (characters).
    pub min_length: Option<i64>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `allOf`.
    pub all_of: Vec<Structural>,
    /// `anyOf`.
    pub any_of: Vec<Structural>,
    /// `oneOf`.
    pub one_of: Vec<Structural>,
    /// `not`.
    pub not: Option<Box<Structural>>,
    /// `x-kubernetes-preserve-unknown-fields` (None when absent).
    pub preserve_unknown_fields: Option<bool>,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-list-type`: atomic, set or map.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// `x-kubernetes-validations`, compiled.
    pub validations: Vec<ValidationRule>,
}

impl Structural {
    /// Parses a schema node (a `JSONSchemaProps` JSON). Unknown keywords are ignored.
    pub fn from_value(schema: &Value) -> Result<Self, SchemaError> {
        parse::parse(schema, "", 0)
    }

    /// Whether unknown fields are kept here (`x-kubernetes-preserve-unknown-fields: true`).
    pub fn preserves_unknown_fields(&self) -> bool {
        self.preserve_unknown_fields == Some(true)
    }

    /// The schema of a child field: a property, else the `additionalProperties` schema.
    pub fn field(&self, name: &str) -> Option<&Structural> {
        self.properties
            .get(name)
            .or(match &self.additional_properties {
                Some(AdditionalProperties::Schema(s)) => Some(s),
                _ => None,
            })
    }

    /// The schema node at a field path, e.g. `&["spec", "replicas"]`; `"[]"` steps into items.
    pub fn at_path(&self, path: &[&str]) -> Option<&Structural> {
        let mut node = self;
        for step in path {
            node = if *step == "[]" {
                node.items.as_deref()?
            } else {
                node.field(step)?
            };
        }
        Some(node)
    }

    /// The schema node for a scale subresource JSON path such as `.spec.replicas`.
    pub fn at_json_path(&self, json_path: &str) -> Option<&Structural> {
        let trimmed = json_path.strip_prefix('.')?;
        let steps: Vec<&str> = trimmed.split('.').collect();
        if steps.iter().any(|s| s.is_empty()) {
            return None;
        }
        self.at_path(&steps)
    }

    /// Whether this node or any node below it has `x-kubernetes-validations`.
    pub fn has_validation_rules(&self) -> bool {
        !self.validations.is_empty()
            || self
                .properties
                .values()
                .any(Structural::has_validation_rules)
            || self
                .items
                .as_deref()
                .is_some_and(Structural::has_validation_rules)
            || matches!(&self.additional_properties, Some(AdditionalProperties::Schema(a)) if a.has_validation_rules())
    }

    /// Whether the schema declares a top-level property (e.g. `status`, `spec`).
    pub fn has_property(&self, name: &str) -> bool {
        self.properties.contains_key(name)
    }

    /// The effective `type` list for validation (`integer,string` for int-or-string).
    pub(crate) fn types(&self) -> Vec<&str> {
        if self.int_or_string {
            vec!["integer", "string"]
        } else {
            self.type_.as_deref().into_iter().collect()
        }
    }
}

/// The JSON type name of a value as kube-openapi infers it (int64 → integer, float64 → number).
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.as_i64().is_some() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_helpers() {
        let s = Structural::from_value(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                "status": {"type": "object", "additionalProperties": {"type": "string"}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}}
            }
        }))
        .unwrap_or_default();
        assert!(s.has_property("status"));
        assert_eq!(
            s.at_path(&["spec", "replicas"])
                .and_then(|n| n.type_.as_deref()),
            Some("integer")
        );
        assert_eq!(
            s.at_json_path(".spec.replicas")
                .and_then(|n| n.type_.as_deref()),
            Some("integer")
        );
        assert_eq!(
            s.at_path(&["status", "anything"])
                .and_then(|n| n.type_.as_deref()),
            Some("string")
        );
        assert_eq!(
            s.at_path(&["list", "[]", "n"])
                .and_then(|n| n.type_.as_deref()),
            Some("string")
        );
        assert!(s.at_json_path("spec.replicas").is_none());
        assert!(s.at_path(&["spec", "nope"]).is_none());
    }

    #[test]
    fn parse_errors() {
        let err = Structural::from_value(&json!({"properties": {"a": {"maxLength": "x"}}}));
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("properties[a]: maxLength must be an integer".to_string())
        );
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "array", "items": deep});
        }
        assert!(matches!(
            Structural::from_value(&deep),
            Err(SchemaError::TooDeep { .. })
        ));
        let bad_pattern = Structural::from_value(&json!({"pattern": "("})).unwrap_or_default();
        assert!(bad_pattern.pattern.is_some_and(|p| p.regex().is_err()));
    }
}
