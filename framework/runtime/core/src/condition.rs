//! Status conditions with the semantics of Kubernetes' `metav1.Condition`.
//!
//! A service's custom resource reports its state as a list of [`Condition`]s under
//! `status.conditions`. [`Conditions`] (implemented for `Vec<Condition>`) keeps that list the
//! way `k8s.io/apimachinery/pkg/api/meta.SetStatusCondition` does: one entry per type, and a
//! `lastTransitionTime` that moves **only when the status changes** — a new reason, message or
//! observed generation updates the entry but keeps its transition time. [`Conditions::set`]
//! says whether anything changed, so a reconciler writes status only when it has to.
//!
//! Types and reasons are CamelCase ([`READY`], [`reasons::RECONCILED`]); [`Conditions::try_set`]
//! and [`Condition::validate`] check them against the patterns the API server enforces
//! ([`TYPE_PATTERN`], [`REASON_PATTERN`]).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, Time};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// Condition type: the object does what its spec asks and can be used.
pub const READY: &str = "Ready";

/// Condition type: the object is moving towards its spec (a rollout, a scale, a first start).
pub const PROGRESSING: &str = "Progressing";

/// Condition type: the object works, but worse than its spec asks (some replicas down, a
/// dependency missing).
pub const DEGRADED: &str = "Degraded";

/// The pattern of a condition type, as in `metav1.Condition`: an optional DNS-subdomain prefix
/// and `/`, then a name of letters, digits, `-`, `_` and `.` that starts and ends with a letter or
/// digit (at most 316 characters).
pub const TYPE_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

/// The pattern of a condition reason, as in `metav1.Condition`: CamelCase, a letter first, then
/// letters, digits, `_`, `,` or `:`, not ending in `,` or `:` (1 to 1024 characters).
pub const REASON_PATTERN: &str = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$";

const TYPE_MAX: usize = 316;
const REASON_MAX: usize = 1024;
const MESSAGE_MAX: usize = 32768;

pub mod reasons {
    //! Reasons shared by mNi operators, so that dashboards and tests can rely on them.
    //!
    //! A service may define its own reasons; they must match
    //! [`REASON_PATTERN`](crate::REASON_PATTERN).

    /// Everything in the spec is applied and observed (`Ready=True`, `Progressing=False`).
    pub const RECONCILED: &str = "Reconciled";
    /// Changes are being applied or rolled out (`Progressing=True`, `Ready=Unknown`).
    pub const RECONCILING: &str = "Reconciling";
    /// The last reconcile failed; the message says why (`Ready=False` or `Degraded=True`).
    pub const RECONCILE_FAILED: &str = "ReconcileFailed";
    /// The workloads have their minimum of available replicas.
    pub const AVAILABLE: &str = "Available";
    /// Fewer replicas are available than the spec asks for.
    pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";
    /// The spec cannot be realised as written; the message names the field.
    pub const INVALID_SPEC: &str = "InvalidSpec";
    /// The object is being deleted and its finalizer is cleaning up.
    pub const DELETING: &str = "Deleting";
    /// Nothing is wrong (`Degraded=False`).
    pub const AS_EXPECTED: &str = "AsExpected";
}

/// Errors of condition validation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConditionError {
    /// The condition type does not match [`TYPE_PATTERN`] or is too long.
    #[error(
        "condition type {0:?} is invalid: use a CamelCase name such as \"Ready\", optionally \
         prefixed by a DNS subdomain and '/' (at most {TYPE_MAX} characters)"
    )]
    InvalidType(String),
    /// The reason does not match [`REASON_PATTERN`] or is empty or too long.
    #[error(
        "condition reason {0:?} is invalid: use CamelCase such as \"ReconcileFailed\" (a letter, \
         then letters, digits, '_', ',' or ':', not ending in ',' or ':'; at most {REASON_MAX} \
         characters)"
    )]
    InvalidReason(String),
    /// The message is longer than the API server accepts.
    #[error("condition message is {0} bytes long; at most {MESSAGE_MAX} are allowed")]
    MessageTooLong(usize),
    /// A status other than `True`, `False` or `Unknown`.
    #[error("condition status {0:?} is invalid: use \"True\", \"False\" or \"Unknown\"")]
    InvalidStatus(String),
}

/// The status of a condition: `True`, `False` or `Unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// It cannot be told (yet) whether the condition holds.
    Unknown,
}

impl ConditionStatus {
    /// `"True"`, `"False"` or `"Unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConditionStatus {
    type Err = ConditionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "True" => Ok(ConditionStatus::True),
            "False" => Ok(ConditionStatus::False),
            "Unknown" => Ok(ConditionStatus::Unknown),
            other => Err(ConditionError::InvalidStatus(other.to_string())),
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(b: bool) -> Self {
        if b {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

// Written by hand: a derived schema for an enum with documented variants is a `oneOf` of
// consts, while CRD authors (and kubectl explain) expect a plain string enum.
impl JsonSchema for ConditionStatus {
    fn schema_name() -> Cow<'static, str> {
        "ConditionStatus".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "status of the condition, one of True, False, Unknown.",
            "type": "string",
            "enum": ["True", "False", "Unknown"],
        })
    }
}

/// One aspect of an object's state, as `metav1.Condition` (same JSON, same schema
/// constraints).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    description = "Condition contains details for one aspect of the current state of this API resource."
)]
pub struct Condition {
    /// Type of condition in CamelCase, e.g. `Ready` (see [`TYPE_PATTERN`]).
    #[serde(rename = "type")]
    #[schemars(
        regex(pattern = TYPE_PATTERN),
        length(max = 316),
        description = "type of condition in CamelCase or in foo.example.com/CamelCase."
    )]
    pub type_: String,
    /// Status of the condition, one of `True`, `False`, `Unknown`.
    pub status: ConditionStatus,
    /// The `.metadata.generation` the condition was set for; older than the object's current
    /// generation means the condition is out of date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub observed_generation: Option<i64>,
    /// The last time the condition's status changed.
    pub last_transition_time: Time,
    /// A programmatic identifier, in CamelCase, for the reason of the last transition (see
    /// [`REASON_PATTERN`]).
    #[schemars(
        regex(pattern = REASON_PATTERN),
        length(min = 1, max = 1024),
        description = "reason contains a programmatic identifier, in CamelCase, indicating the reason for the condition's last transition."
    )]
    pub reason: String,
    /// A human-readable message with details about the transition; may be empty.
    #[schemars(length(max = 32768))]
    pub message: String,
}

impl Condition {
    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }

    /// Checks the type, reason and message against what the API server accepts.
    pub fn validate(&self) -> Result<(), ConditionError> {
        validate(&self.type_, &self.reason, &self.message)
    }
}

impl From<Condition> for MetaCondition {
    fn from(c: Condition) -> Self {
        MetaCondition {
            last_transition_time: c.last_transition_time,
            message: c.message,
            observed_generation: c.observed_generation,
            reason: c.reason,
            status: c.status.as_str().to_string(),
            type_: c.type_,
        }
    }
}

impl TryFrom<MetaCondition> for Condition {
    type Error = ConditionError;

    fn try_from(c: MetaCondition) -> Result<Self, Self::Error> {
        Ok(Condition {
            status: c.status.parse()?,
            type_: c.type_,
            observed_generation: c.observed_generation,
            last_transition_time: c.last_transition_time,
            reason: c.reason,
            message: c.message,
        })
    }
}

/// Reading and updating a list of conditions (`status.conditions`) with Kubernetes semantics:
/// at most one condition per type, `lastTransitionTime` changed only on status changes.
///
/// ```
/// use mni_core::{ConditionStatus, Conditions, READY, reasons};
/// use k8s_openapi::jiff::Timestamp;
///
/// let mut conditions = Vec::new();
/// let now = Timestamp::from_second(1_700_000_000).unwrap();
/// let changed = conditions.set(READY, ConditionStatus::True, reasons::RECONCILED, "", Some(1), now);
/// assert!(changed);
/// assert!(conditions.is_true(READY));
/// // The same condition again is no change: no status write needed.
/// assert!(!conditions.set(READY, ConditionStatus::True, reasons::RECONCILED, "", Some(1), now));
/// ```
pub trait Conditions {
    /// The condition of this type, if there is one.
    fn find(&self, type_: &str) -> Option<&Condition>;

    /// Whether the condition of this type is present and `True`.
    fn is_true(&self, type_: &str) -> bool {
        self.find(type_).is_some_and(Condition::is_true)
    }

    /// Whether the condition of this type is present and `False`.
    fn is_false(&self, type_: &str) -> bool {
        self.find(type_)
            .is_some_and(|c| c.status == ConditionStatus::False)
    }

    /// Adds or updates the condition of this type and returns whether anything changed.
    ///
    /// `lastTransitionTime` becomes `now` when the condition is new or its status changes, and
    /// is kept otherwise. Reason, message and observed generation are always updated.
    ///
    /// Type and reason are not checked here (they are usually constants); the CRD schema makes
    /// the API server reject invalid ones. Use [`try_set`](Self::try_set) for values built at
    /// run time.
    fn set(
        &mut self,
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
        observed_generation: Option<i64>,
        now: impl Into<Time>,
    ) -> bool;

    /// [`set`](Self::set) after checking type, reason and message; on error nothing changes.
    fn try_set(
        &mut self,
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
        observed_generation: Option<i64>,
        now: impl Into<Time>,
    ) -> Result<bool, ConditionError> {
        validate(type_, reason, message)?;
        Ok(self.set(type_, status, reason, message, observed_generation, now))
    }

    /// Removes the condition of this type; returns whether there was one.
    ///
    /// Not named `remove`: `Vec::remove(usize)` is an inherent method and would win.
    fn remove_condition(&mut self, type_: &str) -> bool;
}

impl Conditions for Vec<Condition> {
    fn find(&self, type_: &str) -> Option<&Condition> {
        self.iter().find(|c| c.type_ == type_)
    }

    fn set(
        &mut self,
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
        observed_generation: Option<i64>,
        now: impl Into<Time>,
    ) -> bool {
        let Some(existing) = self.iter_mut().find(|c| c.type_ == type_) else {
            self.push(Condition {
                type_: type_.to_string(),
                status,
                observed_generation,
                last_transition_time: now.into(),
                reason: reason.to_string(),
                message: message.to_string(),
            });
            return true;
        };
        let mut changed = false;
        if existing.status != status {
            existing.status = status;
            existing.last_transition_time = now.into();
            changed = true;
        }
        if existing.reason != reason {
            existing.reason = reason.to_string();
            changed = true;
        }
        if existing.message != message {
            existing.message = message.to_string();
            changed = true;
        }
        if existing.observed_generation != observed_generation {
            existing.observed_generation = observed_generation;
            changed = true;
        }
        changed
    }

    fn remove_condition(&mut self, type_: &str) -> bool {
        let before = self.len();
        self.retain(|c| c.type_ != type_);
        self.len() != before
    }
}

/// Checks a condition's type, reason and message as the API server would.
fn validate(type_: &str, reason: &str, message: &str) -> Result<(), ConditionError> {
    if !is_valid_type(type_) {
        return Err(ConditionError::InvalidType(type_.to_string()));
    }
    if !is_valid_reason(reason) {
        return Err(ConditionError::InvalidReason(reason.to_string()));
    }
    if message.len() > MESSAGE_MAX {
        return Err(ConditionError::MessageTooLong(message.len()));
    }
    Ok(())
}

/// Whether `reason` matches [`REASON_PATTERN`] and is at most 1024 characters long.
pub fn is_valid_reason(reason: &str) -> bool {
    let b = reason.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    b.len() <= REASON_MAX
        && first.is_ascii_alphabetic()
        && (last.is_ascii_alphanumeric() || *last == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// Whether `type_` matches [`TYPE_PATTERN`] and is at most 316 characters long.
pub fn is_valid_type(type_: &str) -> bool {
    if type_.len() > TYPE_MAX {
        return false;
    }
    let (prefix, name) = match type_.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, type_),
    };
    let b = name.as_bytes();
    let name_ok = match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    };
    name_ok && prefix.is_none_or(mni_formats::names::matches_dns1123_subdomain)
}

#[cfg(test)]
mod tests;
