//! The `metav1.LabelSelector` that ClusterRole aggregation needs, on `mni-apimachinery`'s
//! selector: `matchLabels` and `matchExpressions` (`In`, `NotIn`, `Exists`, `DoesNotExist`),
//! ANDed.
//!
//! An empty selector (`{}`) matches every ClusterRole, as in Kubernetes. A selector that is not
//! well formed is a [`SelectorError`]; the aggregation skips it (it matches nothing).

use std::collections::BTreeMap;

use serde_json::Value;

/// Why a label selector is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectorError {
    /// The selector is not a well-formed `metav1.LabelSelector` (Kubernetes' message).
    #[error("invalid label selector: {0}")]
    Malformed(String),
}

/// A parsed `metav1.LabelSelector`.
#[derive(Debug, Clone)]
pub struct LabelSelector {
    inner: mni_apimachinery::Selector,
}

impl LabelSelector {
    /// Parses a `metav1.LabelSelector` given as JSON.
    pub fn from_value(value: &Value) -> Result<Self, SelectorError> {
        if !value.is_object() {
            return Err(SelectorError::Malformed(
                "selector must be an object".into(),
            ));
        }
        mni_apimachinery::Selector::from_label_selector(value)
            .map(|inner| Self { inner })
            .map_err(|e| SelectorError::Malformed(e.to_string()))
    }

    /// Whether a set of labels satisfies every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.inner.matches(labels)
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
