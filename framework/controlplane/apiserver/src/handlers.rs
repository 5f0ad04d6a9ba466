//! The HTTP handlers, one module per verb family.
//!
//! Each handler decodes what it needs from the request (body, query, headers), calls the
//! [`State`](crate::state::State) layer and shapes the answer: `read` (get), `list`, `watch`,
//! `create`, `update` (put and patch, server-side apply included), `delete` (delete and
//! deletecollection), `subresources` (what `scale` adds), `logs` (`pods/log`, from a node agent's files), `reviews` (the computed endpoints:
//! TokenRequest and the access and token reviews), `components` (the computed, read-only
//! ComponentStatuses) and `discovery` (version, discovery and OpenAPI documents). Handlers
//! depend on the state layer and the helper modules, never on the server that routes to them,
//! nor on each other except through `subresources`.

pub(crate) mod components;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod discovery;
pub(crate) mod list;
pub(crate) mod logs;
pub(crate) mod read;
pub(crate) mod reviews;
pub(crate) mod subresources;
pub(crate) mod update;
pub(crate) mod watch;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, header};
use serde_json::Value;

use crate::request::Output;
use crate::state::Written;

/// A successful response: HTTP code, body and `Warning` headers.
#[derive(Debug)]
pub(crate) struct Reply {
    /// HTTP status code.
    pub code: u16,
    /// Response body (an object, list or Status).
    pub body: Value,
    /// Warnings for the `Warning: 299` header.
    pub warnings: Vec<String>,
}

impl Reply {
    /// `200 OK` with a written object.
    fn ok(written: Written) -> Self {
        Reply {
            code: 200,
            body: written.object,
            warnings: written.warnings,
        }
    }

    /// `201 Created` with a created object.
    fn created(written: Written) -> Self {
        Reply {
            code: 201,
            ..Reply::ok(written)
        }
    }

    /// The response, with the body in the shape `Accept` asked for.
    pub(crate) fn into_response(self, output: Output) -> Response {
        let body = match output {
            Output::Metadata if self.body.get("metadata").is_some() => {
                crate::object::partial_metadata(&self.body)
            }
            _ => self.body,
        };
        json_response(self.code, &body, &self.warnings)
    }
}

/// A JSON response with `Warning: 299` headers.
pub(crate) fn json_response(code: u16, body: &Value, warnings: &[String]) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = Response::new(Body::from(bytes));
    *resp.status_mut() = http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::OK);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for w in warnings {
        let value = format!("299 - {}", serde_json::to_string(w).unwrap_or_default());
        if let Ok(v) = HeaderValue::from_str(&value) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

/// Decodes a create or update body as an object of `want`, its `apiVersion` and `kind`
/// defaulted from the path (see `typemeta`).
fn decode_object(
    state: &crate::state::State,
    want: &crate::typemeta::BodyKind,
    headers: &http::HeaderMap,
    body: &[u8],
) -> crate::error::ApiResult<Value> {
    let api_version = want.api_version();
    let defaults = want
        .typed
        .then_some((api_version.as_str(), want.kind.as_str()));
    let mut obj = crate::request::decode_body_as(headers, body, defaults)?;
    let registry = state.registry();
    crate::typemeta::decode_kind(want, &mut obj, body, crate::typemeta::known_to(&registry))?;
    Ok(obj)
}

/// `force` is for server-side apply only: PUT and the other patches refuse it.
fn refuse_force(opts: &crate::state::WriteOptions) -> crate::error::ApiResult<()> {
    if opts.force {
        return Err(crate::error::ApiError::new(
            422,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch",
        ));
    }
    Ok(())
}
