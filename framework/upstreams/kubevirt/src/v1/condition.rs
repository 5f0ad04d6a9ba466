//! KubeVirt's condition shape (`v1.VirtualMachineCondition`,
//! `v1.VirtualMachineInstanceCondition`): `type`, `status`, `reason`, `message`,
//! `lastProbeTime`, `lastTransitionTime` — no `observedGeneration`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The condition virt-controller sets once a VMI's guest is up (and on its VM).
pub const READY: &str = "Ready";

/// The condition virt-controller sets (to `False`) while a VMI's pod cannot be scheduled.
pub const POD_SCHEDULED: &str = "PodScheduled";

/// The condition a VM carries while a start or stop failed (`Failure`).
pub const FAILURE: &str = "Failure";

/// `status: "True"`.
pub const STATUS_TRUE: &str = "True";

/// `status: "False"`.
pub const STATUS_FALSE: &str = "False";

/// One entry of a VirtualMachine's or VirtualMachineInstance's `status.conditions`.
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
    /// When the condition was last probed (upstream often writes `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
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

    #[test]
    fn finds_conditions_by_type() {
        let conditions = vec![
            Condition {
                type_: READY.into(),
                status: STATUS_TRUE.into(),
                ..Condition::default()
            },
            Condition {
                type_: FAILURE.into(),
                status: STATUS_FALSE.into(),
                ..Condition::default()
            },
        ];
        assert!(is_condition_true(&conditions, READY));
        assert!(!is_condition_true(&conditions, FAILURE));
        assert!(find_condition(&conditions, POD_SCHEDULED).is_none());
    }
}
