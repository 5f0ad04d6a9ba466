//! The `metav1.LabelSelector` subset that ClusterRole aggregation needs: `matchLabels` and
//! `matchExpressions` (`In`, `NotIn`, `Exists`, `DoesNotExist`), ANDed.
//!
//! An empty selector (`{}`) matches every ClusterRole, as in Kubernetes. A selector that is not
//! well formed is a [`SelectorError`]; the aggregation skips it (it matches nothing).

use std::collections::BTreeMap;

use serde_json::Value;

/// Why a label selector could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectorError {
    /// The selector or one of its parts has the wrong JSON shape.
    #[error("invalid label selector: {0}")]
    Malformed(String),
    /// An expression uses an operator other than In, NotIn, Exists, DoesNotExist.
    #[error("{0:?} is not a valid label selector operator")]
    UnknownOperator(String),
    /// In/NotIn without values, or Exists/DoesNotExist with values.
    #[error("values: Invalid value: {values:?}: {reason}")]
    BadValues {
        /// The offending values.
        values: Vec<String>,
        /// What the operator requires.
        reason: &'static str,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses a `metav1.LabelSelector` JSON object.
    pub fn from_value(value: &Value) -> Result<Self, SelectorError> {
        let obj = value
            .as_object()
            .ok_or_else(|| SelectorError::Malformed("selector must be an object".into()))?;
        let mut requirements = Vec::new();
        match obj.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                for (k, v) in labels {
                    let v = v.as_str().ok_or_else(|| {
                        SelectorError::Malformed(format!("matchLabels[{k:?}] must be a string"))
                    })?;
                    requirements.push(Requirement::Equals(k.clone(), v.to_string()));
                }
            }
            Some(_) => return Err(SelectorError::Malformed("matchLabels must be a map".into())),
        }
        match obj.get("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for e in exprs {
                    requirements.push(expression(e)?);
                }
            }
            Some(_) => {
                return Err(SelectorError::Malformed(
                    "matchExpressions must be a list".into(),
                ));
            }
        }
        Ok(Self { requirements })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        })
    }
}

fn expression(e: &Value) -> Result<Requirement, SelectorError> {
    let malformed = |m: &str| SelectorError::Malformed(m.to_string());
    let e = e
        .as_object()
        .ok_or_else(|| malformed("matchExpressions entries must be objects"))?;
    let key = e
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("matchExpressions key must be a string"))?
        .to_string();
    let op = e
        .get("operator")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("matchExpressions operator must be a string"))?;
    let values: Vec<String> = match e.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(vs)) => vs
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| malformed("matchExpressions values must be strings"))?,
        Some(_) => return Err(malformed("matchExpressions values must be a list")),
    };
    let need_values = |values: Vec<String>| {
        if values.is_empty() {
            Err(SelectorError::BadValues {
                values: Vec::new(),
                reason: "for 'in', 'notin' operators, values set can't be empty",
            })
        } else {
            Ok(values)
        }
    };
    let no_values = |values: &[String]| {
        if values.is_empty() {
            Ok(())
        } else {
            Err(SelectorError::BadValues {
                values: values.to_vec(),
                reason: "values set must be empty for exists and does not exist",
            })
        }
    };
    match op {
        "In" => Ok(Requirement::In(key, need_values(values)?)),
        "NotIn" => Ok(Requirement::NotIn(key, need_values(values)?)),
        "Exists" => no_values(&values).map(|()| Requirement::Exists(key)),
        "DoesNotExist" => no_values(&values).map(|()| Requirement::DoesNotExist(key)),
        other => Err(SelectorError::UnknownOperator(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn match_labels_and_expressions() {
        let s = LabelSelector::from_value(&json!({
            "matchLabels": {"a": "1"},
            "matchExpressions": [
                {"key": "b", "operator": "In", "values": ["x", "y"]},
                {"key": "c", "operator": "DoesNotExist"},
                {"key": "d", "operator": "NotIn", "values": ["z"]},
            ]
        }))
        .unwrap();
        assert!(s.matches(&labels(&[("a", "1"), ("b", "y")])));
        assert!(s.matches(&labels(&[("a", "1"), ("b", "x"), ("d", "q")])));
        assert!(!s.matches(&labels(&[("a", "1"), ("b", "x"), ("d", "z")])));
        assert!(!s.matches(&labels(&[("a", "1"), ("b", "x"), ("c", "")])));
        assert!(!s.matches(&labels(&[("a", "2"), ("b", "x")])));
        let exists = LabelSelector::from_value(
            &json!({"matchExpressions": [{"key": "k", "operator": "Exists"}]}),
        )
        .unwrap();
        assert!(exists.matches(&labels(&[("k", "")])));
        assert!(!exists.matches(&labels(&[])));
    }

    #[test]
    fn empty_selector_matches_everything() {
        let s = LabelSelector::from_value(&json!({})).unwrap();
        assert!(s.matches(&labels(&[])));
    }

    #[test]
    fn malformed_selectors_are_errors() {
        for bad in [
            json!([]),
            json!({"matchLabels": []}),
            json!({"matchLabels": {"a": 1}}),
            json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "In"}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            json!({"matchExpressions": [{"operator": "Exists"}]}),
        ] {
            assert!(LabelSelector::from_value(&bad).is_err(), "{bad}");
        }
    }
}
