//! AdmissionReview v1: the request sent to a webhook and what its response means.
//!
//! The request carries the operation, the kind and resource (and subresource) as served, the
//! object and the old object, the authenticated user, `dryRun` and the operation's options.
//! The response must be an `admission.k8s.io/v1` AdmissionReview answering the same `uid`; a
//! denial becomes the webhook's `status.code` (403 by default) with upstream's message
//! `admission webhook "NAME" denied the request: MSG`.

use mni_rbac::UserInfo;
use serde_json::{Value, json};

use super::{Error, Webhook};
use crate::error::ApiError;
use crate::registry::ResourceInfo;

/// An admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// A create.
    Create,
    /// An update, a patch or an apply to an existing object.
    Update,
    /// A delete.
    Delete,
}

impl Operation {
    /// `CREATE`, `UPDATE`, `DELETE`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }

    /// The kind of the request's `options`.
    fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
        }
    }
}

/// What a request is, independent of the objects.
#[derive(Debug, Clone)]
pub(crate) struct Attributes<'a> {
    /// The operation.
    pub operation: Operation,
    /// The resource written.
    pub info: &'a ResourceInfo,
    /// `status`, `scale`, …
    pub subresource: Option<&'a str>,
    /// The object's namespace, for namespaced resources.
    pub namespace: Option<&'a str>,
    /// The object's name.
    pub name: &'a str,
    /// Who is asking.
    pub user: &'a UserInfo,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// The AdmissionReview sent to a webhook, with a fresh `uid`.
pub(crate) fn request(
    a: &Attributes<'_>,
    uid: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Value {
    let info = a.info;
    let kind = json!({"group": info.group, "version": info.version, "kind": info.kind});
    let resource = json!({"group": info.group, "version": info.version, "resource": info.plural});
    let mut user = json!({"username": a.user.name, "groups": a.user.groups});
    if !a.user.uid.is_empty() {
        user["uid"] = json!(a.user.uid);
    }
    if !a.user.extra.is_empty() {
        user["extra"] = json!(a.user.extra);
    }
    let mut req = json!({
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": a.name,
        "operation": a.operation.as_str(),
        "userInfo": user,
        "object": object,
        "oldObject": old,
        "dryRun": a.dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": a.operation.options_kind()},
    });
    if let Some(sub) = a.subresource {
        req["subResource"] = json!(sub);
        req["requestSubResource"] = json!(sub);
    }
    if let Some(ns) = a.namespace {
        req["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": req,
    })
}

/// What a webhook answered.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The denial to return to the client, if the webhook refused.
    pub denial: Option<ApiError>,
    /// The JSONPatch to apply (mutating webhooks that allowed).
    pub patch: Option<json_patch::Patch>,
    /// `response.warnings`.
    pub warnings: Vec<String>,
}

/// Reads a webhook's response to the request with `uid`.
pub(crate) fn response(w: &Webhook, uid: &str, body: &[u8]) -> Result<Outcome, Error> {
    let review: Value = serde_json::from_slice(body)
        .map_err(|e| Error::Response(format!("the response is not JSON: {e}")))?;
    let (api_version, kind) = (&review["apiVersion"], &review["kind"]);
    if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
        return Err(Error::Response(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}, Kind={}",
            api_version.as_str().unwrap_or_default(),
            kind.as_str().unwrap_or_default()
        )));
    }
    let Some(resp) = review.get("response").filter(|r| r.is_object()) else {
        return Err(Error::Response("response was absent".into()));
    };
    let got = resp["uid"].as_str().unwrap_or_default();
    if got != uid {
        return Err(Error::Response(format!(
            "expected response.uid=\"{uid}\", got \"{got}\""
        )));
    }
    let warnings = resp["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    if resp["allowed"] != true {
        return Ok(Outcome {
            denial: Some(denial(w, &resp["status"])),
            patch: None,
            warnings,
        });
    }
    let patch = match resp.get("patch").and_then(Value::as_str) {
        Some(p) if w.mutating => {
            match resp.get("patchType").and_then(Value::as_str) {
                Some("JSONPatch") => {}
                other => {
                    return Err(Error::Response(format!(
                        "webhook returned a patch with unsupported patchType {}",
                        other.unwrap_or("(none)")
                    )));
                }
            }
            Some(super::decode_patch(p)?)
        }
        Some(_) => {
            return Err(Error::Response(
                "validating webhook may not return a patch".into(),
            ));
        }
        None => None,
    };
    Ok(Outcome {
        denial: None,
        patch,
        warnings,
    })
}

/// A denial as kube-apiserver reports it: the webhook's code (403 when it gives none), its
/// reason where it is a known one, and `admission webhook "NAME" denied the request: MSG`.
fn denial(w: &Webhook, status: &Value) -> ApiError {
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(403);
    // Upstream's `ToStatusErr`: the message, else the reason, else no explanation.
    let explained = [&status["message"], &status["reason"]]
        .into_iter()
        .find_map(|v| v.as_str().filter(|m| !m.is_empty()));
    let message = match explained {
        Some(m) => format!("admission webhook \"{}\" denied the request: {m}", w.name),
        None => format!(
            "admission webhook \"{}\" denied the request without explanation",
            w.name
        ),
    };
    ApiError::new(code, reason(status["reason"].as_str(), code), message)
}

/// The `Status.reason` to report: the webhook's when it is one of Kubernetes' reasons, else
/// the one that goes with the code.
fn reason(given: Option<&str>, code: u16) -> &'static str {
    const KNOWN: &[&str] = &[
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    ];
    if let Some(r) = given.and_then(|g| KNOWN.iter().find(|k| **k == g)) {
        return r;
    }
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        404 => "NotFound",
        409 => "Conflict",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Forbidden",
    }
}

/// A webhook that could not be called (or whose answer is unusable) under
/// `failurePolicy: Fail`: 500 `failed calling webhook "NAME": …`, as upstream.
pub(crate) fn call_failed(w: &Webhook, e: &Error) -> ApiError {
    ApiError::internal(format!("failed calling webhook \"{}\": {e}", w.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::Snapshot;

    fn hook(mutating: bool) -> std::sync::Arc<Webhook> {
        let config = json!({
            "metadata": {"name": "c"},
            "webhooks": [{
                "name": "deny.example.com",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://127.0.0.1:1/"},
            }],
        });
        let s = if mutating {
            Snapshot::build(&[config], &[])
        } else {
            Snapshot::build(&[], &[config])
        };
        if mutating {
            s.mutating[0].clone()
        } else {
            s.validating[0].clone()
        }
    }

    fn review(response: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": response,
        }))
        .expect("json")
    }

    #[test]
    fn denials_carry_code_and_message() {
        let w = hook(false);
        let body = review(json!({"uid": "u", "allowed": false,
            "status": {"code": 422, "message": "no", "reason": "Invalid"}}));
        let d = response(&w, "u", &body)
            .expect("reads")
            .denial
            .expect("denied");
        assert_eq!((d.code, d.reason), (422, "Invalid"));
        assert_eq!(
            d.message,
            "admission webhook \"deny.example.com\" denied the request: no"
        );
        let body = review(json!({"uid": "u", "allowed": false}));
        let d = response(&w, "u", &body)
            .expect("reads")
            .denial
            .expect("denied");
        assert_eq!((d.code, d.reason), (403, "Forbidden"));
        assert!(
            d.message
                .ends_with("denied the request without explanation")
        );
        let body =
            review(json!({"uid": "u", "allowed": false, "status": {"reason": "NotAllowed"}}));
        let d = response(&w, "u", &body)
            .expect("reads")
            .denial
            .expect("denied");
        assert_eq!((d.code, d.reason), (403, "Forbidden"));
        assert!(d.message.ends_with("denied the request: NotAllowed"));
    }

    #[test]
    fn bad_responses_are_errors() {
        let w = hook(false);
        let wrong_uid = review(json!({"uid": "other", "allowed": true}));
        assert!(response(&w, "u", &wrong_uid).is_err());
        assert!(response(&w, "u", b"not json").is_err());
        let patch =
            review(json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch"}));
        assert!(
            response(&w, "u", &patch).is_err(),
            "validating webhooks cannot patch"
        );
        let m = hook(true);
        let out = response(&m, "u", &patch).expect("a mutating webhook may patch");
        assert!(out.patch.is_some() && out.denial.is_none());
    }
}
