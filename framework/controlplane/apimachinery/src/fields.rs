//! Field selectors (`metadata.name=foo,status.phase!=Running`) parsed like
//! `k8s.io/apimachinery/pkg/fields`, with Kubernetes' escaping rules and error messages.
//!
//! Start with [`FieldSelector::parse`]; which fields are supported for a kind is the API
//! server's decision ([`FieldSelector::requirements`] lists them), and matching takes a lookup
//! function from field name to value ([`FieldSelector::matches`]).

use std::collections::BTreeMap;
use std::fmt;

/// Errors from parsing a field selector; `Display` is the Kubernetes message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldsError {
    /// A term has no operator: `invalid selector: '<selector>'; can't understand '<term>'`.
    #[error("invalid selector: '{selector}'; can't understand '{term}'")]
    InvalidTerm {
        /// The whole selector.
        selector: String,
        /// The term that could not be split.
        term: String,
    },
    /// A backslash escape other than `\\`, `\,`, `\=`.
    #[error("invalid field selector: invalid escape sequence: {0}")]
    InvalidEscapeSequence(String),
    /// An unescaped `,` or `=` in a value (Kubernetes prints the rune's code point).
    #[error("invalid field selector: unescaped character in value: {}", *.0 as u32)]
    UnescapedRune(char),
}

/// A field selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldOperator {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

/// One `field op value` term; the value is unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// The field, e.g. `metadata.name`.
    pub field: String,
    /// The operator.
    pub operator: FieldOperator,
    /// The unescaped value.
    pub value: String,
}

impl FieldRequirement {
    /// Whether the field's value (empty when absent, as in Kubernetes) satisfies this term.
    pub fn matches(&self, value: Option<&str>) -> bool {
        let v = value.unwrap_or("");
        match self.operator {
            FieldOperator::Equals => v == self.value,
            FieldOperator::NotEquals => v != self.value,
        }
    }
}

/// A conjunction of field requirements; the empty selector matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses a field selector (`fields.ParseSelector`): terms split on unescaped `,` and sorted,
    /// each split at the first `!=`, `==` or `=`, values unescaped.
    pub fn parse(selector: &str) -> Result<Self, FieldsError> {
        let mut terms = split_terms(selector);
        terms.sort();
        let mut requirements = Vec::new();
        for term in terms {
            if term.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(term) else {
                return Err(FieldsError::InvalidTerm {
                    selector: selector.to_string(),
                    term: term.to_string(),
                });
            };
            let value = unescape_value(rhs)?;
            requirements.push(FieldRequirement {
                field: lhs.to_string(),
                operator: op,
                value,
            });
        }
        Ok(Self { requirements })
    }

    /// The requirements, in the sorted order of their terms.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether the selector has no requirements.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether every requirement holds, looking values up with `get`.
    pub fn matches(&self, get: &dyn Fn(&str) -> Option<String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches(get(&r.field).as_deref()))
    }

    /// Whether every requirement holds against a map of field values.
    pub fn matches_map(&self, fields: &BTreeMap<String, String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches(fields.get(&r.field).map(String::as_str)))
    }

    /// The value required by an `=` term on `field`, if any (`RequiresExactMatch`).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.operator == FieldOperator::Equals)
            .map(|r| r.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| {
                let op = match r.operator {
                    FieldOperator::Equals => "=",
                    FieldOperator::NotEquals => "!=",
                };
                format!("{}{}{}", r.field, op, escape_value(&r.value))
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// Splits on commas not preceded by a backslash escape.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Splits a term at the first position where `!=`, `==` or `=` starts.
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, kind) in [
            ("!=", FieldOperator::NotEquals),
            ("==", FieldOperator::Equals),
            ("=", FieldOperator::Equals),
        ] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], kind, rhs));
            }
        }
    }
    None
}

/// Escapes `\`, `,` and `=` in a value (`fields.EscapeValue`).
pub fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Unescapes a value (`fields.UnescapeValue`).
pub fn unescape_value(s: &str) -> Result<String, FieldsError> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if matches!(c, '\\' | ',' | '=') {
                out.push(c);
            } else {
                return Err(FieldsError::InvalidEscapeSequence(format!("\\{c}")));
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => return Err(FieldsError::UnescapedRune(c)),
            c => out.push(c),
        }
    }
    if in_slash {
        return Err(FieldsError::InvalidEscapeSequence("\\".to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `input`; `expected` is the normalized selector or `Err(message)`.
    fn check(input: &str, expected: Result<&str, &str>) {
        let got = FieldSelector::parse(input)
            .map(|s| s.to_string())
            .map_err(|e| e.to_string());
        assert_eq!(
            got.as_deref().map_err(String::as_str),
            expected,
            "input {input:?}"
        );
    }

    #[test]
    fn parsing() {
        check("", Ok(""));
        check("metadata.name=foo", Ok("metadata.name=foo"));
        check("metadata.name==foo", Ok("metadata.name=foo"));
        check(
            "status.phase!=Running,metadata.name=foo",
            Ok("metadata.name=foo,status.phase!=Running"),
        );
        check("a=", Ok("a="));
        check("a=x\\,y\\=z\\\\", Ok("a=x\\,y\\=z\\\\"));
        check("a=b,,c=d", Ok("a=b,c=d"));
        check(
            "foo",
            Err("invalid selector: 'foo'; can't understand 'foo'"),
        );
        check(
            "a=b,foo",
            Err("invalid selector: 'a=b,foo'; can't understand 'foo'"),
        );
        check(
            "a=b\\x",
            Err("invalid field selector: invalid escape sequence: \\x"),
        );
        check(
            "a=b\\",
            Err("invalid field selector: invalid escape sequence: \\"),
        );
        check(
            "a=b=c",
            Err("invalid field selector: unescaped character in value: 61"),
        );
        check(
            "a!=b=c",
            Err("invalid field selector: unescaped character in value: 61"),
        );
    }

    #[test]
    fn values_and_matching() {
        let s = FieldSelector::parse("a=x\\,y,b!=z").unwrap_or_default();
        assert_eq!(s.requirements()[0].value, "x,y");
        let fields = BTreeMap::from([("a".to_string(), "x,y".to_string())]);
        assert!(s.matches_map(&fields));
        assert!(s.matches(&|f| fields.get(f).cloned()));
        let s = FieldSelector::parse("b=").unwrap_or_default();
        assert!(
            s.matches_map(&fields),
            "absent field matches the empty value"
        );
        let s = FieldSelector::parse("a!=x\\,y").unwrap_or_default();
        assert!(!s.matches_map(&fields));
        let s = FieldSelector::parse("metadata.name=foo").unwrap_or_default();
        assert_eq!(s.requires_exact_match("metadata.name"), Some("foo"));
        assert_eq!(escape_value("a,b=c\\"), "a\\,b\\=c\\\\");
    }
}
