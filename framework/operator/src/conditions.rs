//! Status conditions: the well-known condition types and the merge rule for a condition list.
//!
//! mNi services report `Ready`, `Progressing` and `Degraded` as `metav1.Condition`s. Setting a
//! condition keeps its `lastTransitionTime` unless its status flips, like apimachinery's
//! `meta.SetStatusCondition`, so re-running a reconcile leaves the list unchanged.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// The object is in its desired state and serving.
pub const READY: &str = "Ready";
/// The object is moving towards its desired state.
pub const PROGRESSING: &str = "Progressing";
/// The object is failing to reach or keep its desired state.
pub const DEGRADED: &str = "Degraded";

/// A condition of `type_` that is `True` or `False`, stamped now.
///
/// `reason` should be CamelCase (`ReconcileSucceeded`), `message` a sentence for humans.
pub fn new_condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: impl Into<String>,
) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: if status { "True" } else { "False" }.to_string(),
        reason: reason.to_string(),
        message: message.into(),
        observed_generation: None,
        last_transition_time: Time(jiff::Timestamp::now()),
    }
}

/// Sets `condition` in `conditions`, replacing the one of the same type.
///
/// The existing `lastTransitionTime` is kept when the status does not change. Returns whether
/// anything (status, reason, message or observed generation) changed.
pub fn set_condition(conditions: &mut Vec<Condition>, mut condition: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        None => {
            conditions.push(condition);
            true
        }
        Some(existing) => {
            if existing.status == condition.status {
                condition.last_transition_time = existing.last_transition_time.clone();
            }
            let changed = existing.status != condition.status
                || existing.reason != condition.reason
                || existing.message != condition.message
                || existing.observed_generation != condition.observed_generation;
            *existing = condition;
            changed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_condition_keeps_transition_time_and_reports_no_change() {
        let mut list = Vec::new();
        assert!(set_condition(
            &mut list,
            new_condition(READY, false, "Waiting", "not yet")
        ));
        let first = list[0].last_transition_time.clone();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(!set_condition(
            &mut list,
            new_condition(READY, false, "Waiting", "not yet")
        ));
        assert_eq!(list[0].last_transition_time, first);
        assert!(set_condition(
            &mut list,
            new_condition(READY, false, "Failed", "boom")
        ));
        assert_eq!(
            list[0].last_transition_time, first,
            "same status keeps the time"
        );
        assert!(set_condition(
            &mut list,
            new_condition(READY, true, "Done", "ok")
        ));
        assert_ne!(list[0].last_transition_time, first, "a flip moves the time");
        assert!(set_condition(
            &mut list,
            new_condition(DEGRADED, false, "Fine", "")
        ));
        assert_eq!(list.len(), 2);
    }
}
