//! Kube-OVN's condition shape: `metav1.Condition`'s fields plus `lastUpdateTime`, all but
//! `type` and `status` optional.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The condition Kube-OVN sets once an object is realised in OVN (`Ready`).
pub const READY: &str = "Ready";

/// The condition Kube-OVN sets on a Subnet once its spec passed validation.
pub const VALIDATED: &str = "Validated";

/// The condition Kube-OVN sets (to `True`) while an object cannot be realised.
pub const ERROR: &str = "Error";

/// `status: "True"`.
pub const STATUS_TRUE: &str = "True";

/// `status: "False"`.
pub const STATUS_FALSE: &str = "False";

/// `status: "Unknown"`.
pub const STATUS_UNKNOWN: &str = "Unknown";

/// One entry of a Kube-OVN object's `status.conditions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason for the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A human-readable message about the transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `metadata.generation` the condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When the condition was last probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// The condition of type `type_`, if there is one.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of type `type_` is present with `status: "True"`.
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == STATUS_TRUE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_upstream_shape() {
        let value = json!({
            "type": "Ready",
            "status": "True",
            "reason": "Init",
            "observedGeneration": 3,
            "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        });
        let c: Condition = serde_json::from_value(value.clone()).expect("condition");
        assert_eq!(c.observed_generation, Some(3));
        assert_eq!(serde_json::to_value(&c).expect("json"), value);
        assert!(is_condition_true(std::slice::from_ref(&c), READY));
        assert!(!is_condition_true(&[c], ERROR));
        let minimal: Condition =
            serde_json::from_value(json!({"type": "Error", "status": "False"})).expect("minimal");
        assert_eq!(
            find_condition(&[minimal], ERROR).map(|c| c.status.as_str()),
            Some("False")
        );
    }
}
