// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! [`ApiError`]: every failure as a JSON body with the matching HTTP status,
//! `{"error": {"code": 404, "reason": "NotFound", "message": "…"}}`, whether it came from the
//! Kubernetes API (whose code, reason and message are passed on), the request or the route.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Why a request failed. See the [module docs](self).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The Kubernetes API refused the request (not found, already exists, invalid, forbidden,
    /// conflict, …).
    #[error("{message}")]
    Kubernetes {
        /// The HTTP status the API server answered with.
        code: u16,
        /// Its machine-readable reason, e.g. `NotFound`.
        reason: String,
        /// Its message.
        message: String,
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
}

impl From<kube::Error> for ApiError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) => Self::Kubernetes {
                code: status.code,
                reason: status.reason.clone(),
                message: status.message.clone(),
            },
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
        let body = json!({
            "error": {
                "code": status.as_u16(),
                "reason": self.reason(),
                "message": self.to_string(),
            }
        });
        (status, Json(body)).into_response()
    }
}
