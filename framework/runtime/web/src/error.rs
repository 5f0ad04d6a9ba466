//! [`ApiError`]: every failure of a service's API as one JSON problem body with the matching
//! HTTP status,
//!
//! ```json
//! {"error": {"code": 422, "reason": "Invalid", "message": "…", "causes": [{"field": "spec.x", "message": "…"}]}}
//! ```
//!
//! whether it came from the Kubernetes API (whose code, reason, message and field causes are
//! passed on, so the body names the field that is wrong), the request or the route. `causes`
//! is present only when there are some.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One field-level cause of a failure, as the Kubernetes API reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// The field path, e.g. `spec.subnets[0].cidrBlock` (empty when the API names none).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// Why a request failed. See the docs atop `src/error.rs`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The Kubernetes API refused the request (not found, already exists, invalid, forbidden,
    /// conflict, …), or a validation hook did, in the API server's words.
    #[error("{message}")]
    Kubernetes {
        /// The HTTP status the API server answered with.
        code: u16,
        /// Its machine-readable reason, e.g. `NotFound`.
        reason: String,
        /// Its message.
        message: String,
        /// The fields it names, if any.
        causes: Vec<Cause>,
    },
    /// The request body is not what the route expects.
    #[error("{0}")]
    BadRequest(String),
    /// No route matches.
    #[error("no route for {0}")]
    NotFound(String),
    /// The Kubernetes API could not be reached or answered garbage.
    #[error("the Kubernetes API is unavailable: {0}")]
    Unavailable(String),
}

impl ApiError {
    /// A refusal worded as the API server words it: HTTP `code`, `reason` (e.g. `Invalid`,
    /// `AlreadyExists`) and `message`, without field causes.
    #[must_use]
    pub fn kubernetes(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self::Kubernetes {
            code,
            reason: reason.to_owned(),
            message: message.into(),
            causes: Vec::new(),
        }
    }

    /// HTTP 422 `Invalid`, as the API server answers an object that breaks a rule.
    #[must_use]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::kubernetes(422, "Invalid", message)
    }

    /// The HTTP status of the response.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Kubernetes { code, .. } => {
                StatusCode::from_u16(*code).unwrap_or(StatusCode::BAD_GATEWAY)
            }
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The machine-readable reason, as Kubernetes names them.
    #[must_use]
    pub fn reason(&self) -> &str {
        match self {
            Self::Kubernetes { reason, .. } => reason,
            Self::BadRequest(_) => "BadRequest",
            Self::NotFound(_) => "NotFound",
            Self::Unavailable(_) => "ServiceUnavailable",
        }
    }

    /// The JSON body of the response. See the docs atop `src/error.rs`.
    #[must_use]
    pub fn body(&self) -> Value {
        let mut error = json!({
            "code": self.status().as_u16(),
            "reason": self.reason(),
            "message": self.to_string(),
        });
        if let Self::Kubernetes { causes, .. } = self
            && !causes.is_empty()
        {
            error["causes"] = causes
                .iter()
                .map(|c| json!({ "field": c.field, "message": c.message }))
                .collect();
        }
        json!({ "error": error })
    }
}

impl From<kube::Error> for ApiError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) => {
                let causes = status
                    .details
                    .as_ref()
                    .map(|d| {
                        d.causes
                            .iter()
                            .map(|c| Cause {
                                field: c.field.clone(),
                                message: c.message.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Self::Kubernetes {
                    code: status.code,
                    reason: status.reason.clone(),
                    message: status.message.clone(),
                    causes,
                }
            }
            other => Self::Unavailable(other.to_string()),
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(e: JsonRejection) -> Self {
        Self::BadRequest(e.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!(error = %self, "request failed");
        }
        (status, Json(self.body())).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kubernetes_refusal_keeps_its_code_reason_and_fields() {
        let status: kube::core::Status = serde_json::from_value(json!({
            "code": 422, "reason": "Invalid", "message": "x is invalid",
            "details": { "causes": [{ "field": "spec.x", "message": "must be set" }] },
        }))
        .expect("a Status");
        let e = ApiError::from(kube::Error::Api(Box::new(status)));
        assert_eq!(e.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            e.body(),
            json!({ "error": {
                "code": 422, "reason": "Invalid", "message": "x is invalid",
                "causes": [{ "field": "spec.x", "message": "must be set" }],
            }})
        );
    }

    #[test]
    fn the_api_s_own_errors_have_kubernetes_reasons() {
        let e = ApiError::NotFound("/nowhere".to_owned());
        assert_eq!(e.status(), StatusCode::NOT_FOUND);
        assert_eq!(e.body()["error"]["message"], "no route for /nowhere");
        assert!(e.body()["error"].get("causes").is_none());
        assert_eq!(ApiError::invalid("no").reason(), "Invalid");
    }
}
