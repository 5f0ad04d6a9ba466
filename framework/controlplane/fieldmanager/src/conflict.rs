//! Apply errors as kube-apiserver reports them: [`ApplyError`], the 409 conflict list.
//!
//! [`ApplyError::Conflicts`] renders kube's message (`Apply failed with 1 conflict: conflict
//! with "m" using apps/v1: .spec.replicas`, or the plural form grouped by manager), and
//! [`ApplyError::to_status`] the `metav1.Status` body with one `FieldManagerConflict` cause per
//! field.

use serde_json::{Value, json};

use crate::managed::{ManagerKey, Operation};
use crate::typed::ValueError;

/// Errors from [`apply`](crate::apply()) and [`try_update`](crate::try_update).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// Other managers own fields the applied configuration changes (HTTP 409).
    #[error("{}", conflicts_message(.0))]
    Conflicts(Vec<Conflict>),
    /// The applied configuration is not a JSON object (HTTP 400).
    #[error("error decoding YAML: the apply configuration must be an object")]
    NotAnObject,
    /// `apiVersion`/`kind` missing or not the endpoint's (HTTP 400); holds the applied GVK
    /// as kube prints it, e.g. `apps/v1, Kind=`.
    #[error("invalid object type: {0}")]
    InvalidObjectType(String),
    /// The applied configuration sets `metadata.managedFields` (HTTP 400).
    #[error("metadata.managedFields must be nil")]
    ManagedFieldsSet,
    /// The applied configuration does not fit the type (HTTP 400), e.g. a keyed list item
    /// without its key.
    #[error("failed to create typed patch object ({gvk}): {source}")]
    InvalidPatch {
        /// The GVK as kube prints it.
        gvk: String,
        /// What is wrong.
        source: ValueError,
    },
    /// The live or new object does not fit the type (HTTP 500 in kube).
    #[error("failed to create typed live object ({gvk}): {source}")]
    InvalidObject {
        /// The GVK as kube prints it.
        gvk: String,
        /// What is wrong.
        source: ValueError,
    },
}

/// One field owned by another manager that an apply would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// Its operation.
    pub operation: Operation,
    /// Its API version (Update entries only, as kube prints it).
    pub api_version: String,
    /// Its subresource, if any.
    pub subresource: Option<String>,
    /// The field, as kube prints it: `.spec.containers[name="c"].image`.
    pub path: String,
}

impl Conflict {
    fn key(&self) -> ManagerKey {
        ManagerKey::new(
            &self.manager,
            self.operation,
            &self.api_version,
            self.subresource.as_deref(),
        )
    }

    /// kube's printed manager: `"m"`, `"m" using apps/v1`, `"m" with subresource "status"`.
    pub fn manager_display(&self) -> String {
        self.key().display()
    }
}

fn conflicts_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            only.manager_display(),
            only.path
        );
    }
    let mut by_manager: std::collections::BTreeMap<ManagerKey, Vec<&str>> = Default::default();
    for c in conflicts {
        by_manager.entry(c.key()).or_default().push(&c.path);
    }
    let mut lines = Vec::new();
    for (key, paths) in by_manager {
        lines.push(format!("conflicts with {}:", key.display()));
        lines.extend(paths.iter().map(|p| format!("- {p}")));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

impl ApplyError {
    /// The HTTP status code kube-apiserver answers with.
    pub fn code(&self) -> u16 {
        match self {
            Self::Conflicts(_) => 409,
            Self::InvalidObject { .. } => 500,
            _ => 400,
        }
    }

    /// The `metav1.Status` kube-apiserver answers with, including the conflict causes
    /// (`reason: FieldManagerConflict`, `message: conflict with "m" using v1`, `field`).
    pub fn to_status(&self) -> Value {
        let (reason, causes) = match self {
            Self::Conflicts(conflicts) => (
                "Conflict",
                conflicts
                    .iter()
                    .map(|c| {
                        json!({
                            "reason": "FieldManagerConflict",
                            "message": format!("conflict with {}", c.manager_display()),
                            "field": c.path,
                        })
                    })
                    .collect(),
            ),
            Self::InvalidObject { .. } => ("InternalError", Vec::new()),
            _ => ("BadRequest", Vec::new()),
        };
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_string(),
            "reason": reason,
            "code": self.code(),
        });
        if !causes.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.insert("details".into(), json!({ "causes": causes }));
        }
        status
    }
}

/// kube's `GroupVersionKind.String()` of an object: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`.
pub fn gvk_string(obj: &Value) -> String {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}
