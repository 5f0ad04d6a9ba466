//! Label selectors: parsing of the query-string syntax, conversion from a metav1
//! `LabelSelector`, and matching, with kube-apiserver's validation and error messages.
//!
//! Start with [`Selector::parse`] (`app=web,tier in (a,b),!canary`) or
//! [`Selector::from_label_selector`] (a `{"matchLabels":…, "matchExpressions":…}` JSON), then
//! [`Selector::matches`] against an object's labels.

mod parser;

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Value, json};

use crate::field::{self, FieldError};
use crate::validation::{is_qualified_name, is_valid_label_value};

/// Errors from building a label selector; `Display` is the Kubernetes message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelsError {
    /// The selector string could not be parsed, e.g. `found ')', expected: identifier`.
    #[error("{0}")]
    Parse(String),
    /// A requirement failed validation; the message is the aggregated field errors.
    #[error("{0}")]
    InvalidRequirement(String),
    /// A `matchExpressions` operator is not In, NotIn, Exists or DoesNotExist.
    #[error("{0:?} is not a valid label selector operator")]
    InvalidOperator(String),
    /// The LabelSelector JSON is not shaped like a metav1 LabelSelector.
    #[error("{0}")]
    Malformed(String),
}

/// A requirement operator (`selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `=`
    Equals,
    /// `==`
    DoubleEquals,
    /// `!=`
    NotEquals,
    /// `in`
    In,
    /// `notin`
    NotIn,
    /// `key` alone
    Exists,
    /// `!key`
    DoesNotExist,
    /// `>` (`gt`)
    GreaterThan,
    /// `<` (`lt`)
    LessThan,
}

/// One `key op values` clause of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Builds and validates a requirement like `labels.NewRequirement` (values are sorted and
    /// deduplicated). Errors name the offending key or value, e.g.
    /// `values[0][app]: Invalid value: "-x": a valid label must be …`.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Self, LabelsError> {
        let mut errs = Vec::new();
        let key_errs = is_qualified_name(key);
        if !key_errs.is_empty() {
            errs.push(FieldError::invalid("key", json!(key), key_errs.join("; ")));
        }
        let vals_json = json!(values);
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(FieldError::invalid(
                "values",
                vals_json.clone(),
                "for 'in', 'notin' operators, values set can't be empty",
            )),
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(FieldError::invalid(
                    "values",
                    vals_json.clone(),
                    "exact-match compatibility requires one single value",
                ))
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                errs.push(FieldError::invalid(
                    "values",
                    vals_json.clone(),
                    "values set must be empty for exists and does not exist",
                ))
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(FieldError::invalid(
                        "values",
                        vals_json.clone(),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(FieldError::invalid(
                            field::index("values", i),
                            json!(v),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let v_errs = is_valid_label_value(v);
            if !v_errs.is_empty() {
                errs.push(FieldError::invalid(
                    field::key(&field::index("values", i), key),
                    json!(v),
                    v_errs.join("; "),
                ));
            }
        }
        if !errs.is_empty() {
            return Err(LabelsError::InvalidRequirement(field::aggregate_message(
                &errs,
            )));
        }
        let mut values = values;
        values.sort();
        values.dedup();
        Ok(Self {
            key: key.to_string(),
            operator,
            values,
        })
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether a label set satisfies this requirement (`Requirement.Matches`).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let got = labels.get(&self.key);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                got.is_some_and(|v| self.values.contains(v))
            }
            Operator::NotIn | Operator::NotEquals => got.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => got.is_some(),
            Operator::DoesNotExist => got.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(got), [want]) = (got, self.values.as_slice()) else {
                    return false;
                };
                let (Ok(got), Ok(want)) = (got.parse::<i64>(), want.parse::<i64>()) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    got > want
                } else {
                    got < want
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.operator {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
        };
        f.write_str(op)?;
        let set = matches!(self.operator, Operator::In | Operator::NotIn);
        if set {
            f.write_str("(")?;
        }
        f.write_str(&self.values.join(","))?;
        if set {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A label selector: a conjunction of requirements, or the selector that matches nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// The selector that matches everything (an empty selector string).
    pub fn everything() -> Self {
        Self::default()
    }

    /// The selector that matches nothing (a null LabelSelector).
    pub fn nothing() -> Self {
        Self {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Builds a selector from requirements (sorted by key, like `Selector.Add`).
    pub fn from_requirements(mut requirements: Vec<Requirement>) -> Self {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Self {
            requirements,
            nothing: false,
        }
    }

    /// Parses the query-string syntax (`labels.Parse`): `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
    /// `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, joined by `,`.
    pub fn parse(selector: &str) -> Result<Self, LabelsError> {
        parser::parse(selector).map(Self::from_requirements)
    }

    /// Converts a metav1 LabelSelector JSON (`LabelSelectorAsSelector`): `null` matches nothing,
    /// `{}` matches everything.
    pub fn from_label_selector(selector: &Value) -> Result<Self, LabelsError> {
        let obj = match selector {
            Value::Null => return Ok(Self::nothing()),
            Value::Object(obj) => obj,
            _ => {
                return Err(LabelsError::Malformed(
                    "label selector must be an object".to_string(),
                ));
            }
        };
        let mut reqs = Vec::new();
        match obj.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                for (k, v) in labels {
                    let v = v.as_str().ok_or_else(|| {
                        LabelsError::Malformed(format!("matchLabels[{k}] must be a string"))
                    })?;
                    reqs.push(Requirement::new(k, Operator::Equals, vec![v.to_string()])?);
                }
            }
            Some(_) => {
                return Err(LabelsError::Malformed(
                    "matchLabels must be an object".to_string(),
                ));
            }
        }
        match obj.get("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for expr in exprs {
                    reqs.push(expression_requirement(expr)?);
                }
            }
            Some(_) => {
                return Err(LabelsError::Malformed(
                    "matchExpressions must be an array".to_string(),
                ));
            }
        }
        Ok(Self::from_requirements(reqs))
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether this selector matches everything.
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether a label set satisfies every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Matches the `metadata.labels` of a JSON object (missing labels are an empty set).
    pub fn matches_object(&self, object: &Value) -> bool {
        let labels: BTreeMap<String, String> = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        self.matches(&labels)
    }
}

fn expression_requirement(expr: &Value) -> Result<Requirement, LabelsError> {
    let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
    let op = expr
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let operator = match op {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        other => return Err(LabelsError::InvalidOperator(other.to_string())),
    };
    let values = match expr.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(vs)) => vs
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                LabelsError::Malformed("matchExpressions values must be strings".to_string())
            })?,
        Some(_) => {
            return Err(LabelsError::Malformed(
                "matchExpressions values must be an array".to_string(),
            ));
        }
    };
    Requirement::new(key, operator, values)
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Parses `input`; `expected` is the normalized selector or `Err(message)`.
    fn check(input: &str, expected: Result<&str, &str>) {
        let got = Selector::parse(input)
            .map(|s| s.to_string())
            .map_err(|e| e.to_string());
        assert_eq!(
            got.as_deref().map_err(String::as_str),
            expected,
            "input {input:?}"
        );
    }

    const VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    #[test]
    fn parse_valid() {
        check("", Ok(""));
        check("  ", Ok(""));
        check("a=b", Ok("a=b"));
        check("a==b", Ok("a==b"));
        check("a!=b", Ok("a!=b"));
        check("x=", Ok("x="));
        check("b in (y,x,x), a", Ok("a,b in (x,y)"));
        check("a notin ()", Ok("a notin ()"));
        check("a in (,x)", Ok("a in (,x)"));
        check("!a,b", Ok("!a,b"));
        check("a>1,b<2", Ok("a>1,b<2"));
        check(
            "app.kubernetes.io/name=web",
            Ok("app.kubernetes.io/name=web"),
        );
        check("in=notin", Ok("in=notin"));
    }

    #[test]
    fn parse_errors() {
        check("a=b,", Err("found '', expected: identifier after ','"));
        check(
            ",a",
            Err("found ',', expected: !, identifier, or 'end of string'"),
        );
        check(
            "a b",
            Err("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        );
        check(
            "a=(b)",
            Err("unable to parse requirement: found '(', expected: identifier"),
        );
        check(
            "a in b",
            Err("unable to parse requirement: found 'b' expected: '('"),
        );
        check(
            "a in (b",
            Err("unable to parse requirement: found '', expected: ',' or ')'"),
        );
        check(
            "a in (b c)",
            Err("unable to parse requirement: found 'c', expected: ',' or ')'"),
        );
        check("a=b c", Err("found 'c', expected: ',' or 'end of string'"));
        check(
            "!",
            Err("unable to parse requirement: found '', expected: identifier"),
        );
        check(
            "a>x",
            Err(
                "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        );
        check(
            "a=-x",
            Err(&format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"-x\": {VALUE_ERR}"
            )),
        );
        check(
            "-a=x",
            Err(
                "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        );
    }

    #[test]
    fn matching() {
        let l = labels(&[("app", "web"), ("n", "5")]);
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("app=web", true),
            ("app=db", false),
            ("app!=db", true),
            ("x!=db", true),
            ("app in (db,web)", true),
            ("app notin (web)", false),
            ("x notin (web)", true),
            ("app", true),
            ("!app", false),
            ("!x", true),
            ("n>4", true),
            ("n<5", false),
            ("app>1", false),
            ("app=web,n>9", false),
        ];
        for (sel, want) in cases {
            assert_eq!(
                Selector::parse(sel).map(|s| s.matches(&l)),
                Ok(*want),
                "{sel}"
            );
        }
        assert!(!Selector::nothing().matches(&l));
        let obj = json!({"metadata": {"labels": {"app": "web"}}});
        assert!(Selector::parse("app=web").is_ok_and(|s| s.matches_object(&obj)));
    }

    #[test]
    fn from_label_selector() {
        let sel = json!({"matchLabels": {"app": "web"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "canary", "operator": "DoesNotExist"}
        ]});
        let s = Selector::from_label_selector(&sel).map(|s| s.to_string());
        // Requirements sort by key: app, canary, tier.
        assert_eq!(s, Ok("app=web,!canary,tier in (a,b)".to_string()));
        assert_eq!(
            Selector::from_label_selector(&Value::Null),
            Ok(Selector::nothing())
        );
        assert!(Selector::from_label_selector(&json!({})).is_ok_and(|s| s.is_empty()));
        let bad_op = json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]});
        assert_eq!(
            Selector::from_label_selector(&bad_op).map_err(|e| e.to_string()),
            Err("\"Foo\" is not a valid label selector operator".to_string())
        );
        let empty_in = json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]});
        assert_eq!(
            Selector::from_label_selector(&empty_in).map_err(|e| e.to_string()),
            Err(
                "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"
                    .to_string()
            )
        );
        let bad_key = json!({"matchLabels": {"-a": "b"}});
        assert!(
            Selector::from_label_selector(&bad_key)
                .map_err(|e| e.to_string())
                .is_err_and(|e| e.starts_with("key: Invalid value: \"-a\": name part must"))
        );
    }
}
