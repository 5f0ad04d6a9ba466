//! API errors as Kubernetes `Status` objects.
//!
//! Every failure the server reports to a client is an [`ApiError`]: an HTTP code, a machine
//! readable `reason` (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, …), a message worded
//! the way kube-apiserver words it, and optional `details`. Clients (kubectl, client-go,
//! kube-rs) branch on `code` and `reason`, and people read `message`, so both follow upstream.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use mni_apimachinery::FieldError;
use serde_json::{Value, json};

/// A Kubernetes `Status` failure.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status code.
    pub code: u16,
    /// The `reason` field (`NotFound`, `Invalid`, …).
    pub reason: &'static str,
    /// The human readable message.
    pub message: String,
    /// The `details` object, if any.
    pub details: Option<Value>,
}

/// The group/resource pair used in messages: `configmaps`, `deployments.apps`.
#[derive(Debug, Clone, Copy)]
pub struct GroupResource<'a> {
    /// API group, empty for the core group.
    pub group: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
}

impl std::fmt::Display for GroupResource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

fn details(gr: GroupResource<'_>, name: &str) -> Value {
    let mut d = json!({ "name": name, "kind": gr.resource });
    if !gr.group.is_empty() {
        d["group"] = json!(gr.group);
    }
    d
}

impl ApiError {
    /// A bare error with a code, reason and message.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 404 NotFound for an object.
    pub fn not_found(gr: GroupResource<'_>, name: &str) -> Self {
        ApiError {
            details: Some(details(gr, name)),
            ..Self::new(404, "NotFound", format!("{gr} \"{name}\" not found"))
        }
    }

    /// 404 NotFound for a path that names no resource.
    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str, what: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!(
                "the server does not allow this method on the requested resource: {method} is not supported on {what}"
            ),
        )
    }

    /// 409 AlreadyExists.
    pub fn already_exists(gr: GroupResource<'_>, name: &str) -> Self {
        ApiError {
            details: Some(details(gr, name)),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{gr} \"{name}\" already exists"),
            )
        }
    }

    /// 409 Conflict for a stale resourceVersion or failed precondition.
    pub fn conflict(gr: GroupResource<'_>, name: &str, why: &str) -> Self {
        ApiError {
            details: Some(details(gr, name)),
            ..Self::new(
                409,
                "Conflict",
                format!("Operation cannot be fulfilled on {gr} \"{name}\": {why}"),
            )
        }
    }

    /// The standard optimistic-concurrency conflict.
    pub fn stale(gr: GroupResource<'_>, name: &str) -> Self {
        Self::conflict(
            gr,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 410 Expired for a compacted resourceVersion.
    pub fn expired(requested: i64, compacted: i64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({compacted})"),
        )
    }

    /// 413 for a body over the limit.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 415 for an unsupported content type.
    pub fn unsupported_media_type(got: &str, accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {} (got {got:?})",
                accepted.join(", ")
            ),
        )
    }

    /// 422 Invalid with one cause per field error.
    pub fn invalid(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let causes: Vec<Value> = errors.iter().map(FieldError::status_cause).collect();
        // StatusDetails' order; its name and group are omitempty.
        let mut d = serde_json::Map::new();
        if !name.is_empty() {
            d.insert("name".into(), json!(name));
        }
        if !group.is_empty() {
            d.insert("group".into(), json!(group));
        }
        d.insert("kind".into(), json!(kind));
        d.insert("causes".into(), Value::Array(causes));
        let d = Value::Object(d);
        ApiError {
            details: Some(d),
            ..Self::new(
                422,
                "Invalid",
                format!(
                    "{qualified} \"{name}\" is invalid: {}",
                    mni_apimachinery::aggregate_message(errors)
                ),
            )
        }
    }

    /// 403 Forbidden.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 500 InternalError: only for failures of the server itself, never for client input.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// 504 Timeout.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", message)
    }

    /// The error as a `Status` object.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

impl From<mni_store::Error> for ApiError {
    fn from(e: mni_store::Error) -> Self {
        match e {
            mni_store::Error::Compacted {
                requested,
                compacted,
            } => ApiError::expired(requested, compacted),
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self.to_status()).unwrap_or_default();
        let mut resp = (code, body).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        resp
    }
}

/// Shorthand for handler results.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_details_leave_out_an_empty_name_and_group() {
        let errs = [FieldError::required("metadata.name", "")];
        let e = ApiError::invalid("ConfigMap", "", "", &errs);
        let d = e.details.expect("details");
        assert!(d.get("name").is_none() && d.get("group").is_none(), "{d}");
        let e = ApiError::invalid("Job", "batch", "j", &errs);
        let d = e.details.expect("details");
        let keys: Vec<&String> = d.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["name", "group", "kind", "causes"]);
    }

    #[test]
    fn messages_match_kube_apiserver() {
        let gr = GroupResource {
            group: "apps",
            resource: "deployments",
        };
        assert_eq!(
            ApiError::not_found(gr, "web").message,
            "deployments.apps \"web\" not found"
        );
        let core = GroupResource {
            group: "",
            resource: "configmaps",
        };
        let e = ApiError::stale(core, "cm");
        assert_eq!(e.code, 409);
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes to the latest version and try again"
        );
        let s = ApiError::already_exists(core, "cm").to_status();
        assert_eq!(s["reason"], "AlreadyExists");
        assert_eq!(s["details"]["kind"], "configmaps");
        assert!(s["details"].get("group").is_none());
    }
}
