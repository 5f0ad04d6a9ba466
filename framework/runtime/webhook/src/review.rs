//! The `admission.k8s.io/v1` AdmissionReview on the wire: [`Request`] as kube-apiserver sends
//! it, the response this server answers with, and the JSONPatch of a mutation.
//!
//! Decoding is strict about what the server needs (`apiVersion`, `kind`, `request.uid`,
//! `request.operation`) and lenient about the rest, so a review from a newer API server still
//! decodes.

use base64::Engine;
use k8s_openapi::api::authentication::v1::UserInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The only AdmissionReview version this server speaks (list it in the configuration's
/// `admissionReviewVersions`).
pub const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";

/// Errors of decoding an AdmissionReview; the server answers them with HTTP 400.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// The body is not an AdmissionReview.
    #[error("the body is not an admission.k8s.io/v1 AdmissionReview: {0}")]
    Malformed(#[source] serde_json::Error),
    /// `apiVersion`/`kind` name something else.
    #[error(
        "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got {api_version:?} {kind:?} (list only v1 in admissionReviewVersions)"
    )]
    WrongType {
        /// The `apiVersion` sent.
        api_version: String,
        /// The `kind` sent.
        kind: String,
    },
    /// The review has no `request`.
    #[error("the AdmissionReview has no request")]
    NoRequest,
}

/// The operation an admission request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// A create.
    Create,
    /// An update (also a patch or an apply).
    Update,
    /// A delete.
    Delete,
    /// A connect (exec, attach, port-forward, proxy).
    Connect,
}

/// A group, version and kind (or resource), as the request names them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// The API group (empty for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

/// A group, version and resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionResource {
    /// The API group (empty for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The resource (plural).
    #[serde(default)]
    pub resource: String,
}

/// An admission request: what is being done to which object, by whom. Validators and
/// defaulters get it beside the typed object, e.g. to see [`dry_run`](Self::dry_run).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Request {
    /// Identifies this request; the response echoes it.
    pub uid: String,
    /// The kind of the object.
    #[serde(default)]
    pub kind: GroupVersionKind,
    /// The resource being changed.
    #[serde(default)]
    pub resource: GroupVersionResource,
    /// The subresource, if any (`status`, `scale`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// The object's name (may be empty on a create with `generateName`).
    #[serde(default)]
    pub name: String,
    /// The object's namespace (empty for cluster-scoped objects).
    #[serde(default)]
    pub namespace: String,
    /// The operation.
    pub operation: Operation,
    /// Who asked.
    #[serde(default)]
    pub user_info: UserInfo,
    /// The new object (create, update), `null` on delete.
    #[serde(default)]
    pub object: Value,
    /// The object before the update, or the object being deleted.
    #[serde(default)]
    pub old_object: Value,
    /// Whether nothing will be persisted (`?dryRun=All`): a webhook with side effects must not
    /// make them.
    #[serde(default)]
    pub dry_run: bool,
    /// The operation's options (CreateOptions, UpdateOptions, DeleteOptions).
    #[serde(default)]
    pub options: Value,
}

impl Request {
    /// A request for `operation` on `object` (the old object, the dry run and the rest
    /// empty), e.g. to call a validator in a unit test.
    pub fn new(operation: Operation, object: Value) -> Self {
        Self {
            uid: String::new(),
            kind: GroupVersionKind::default(),
            resource: GroupVersionResource::default(),
            sub_resource: None,
            name: String::new(),
            namespace: String::new(),
            operation,
            user_info: UserInfo::default(),
            object,
            old_object: Value::Null,
            dry_run: false,
            options: Value::Null,
        }
    }

    /// With `old_object` (an update's previous object, a delete's object).
    #[must_use]
    pub fn with_old_object(mut self, old_object: Value) -> Self {
        self.old_object = old_object;
        self
    }

    /// With [`dry_run`](Self::dry_run) set to `dry_run`.
    #[must_use]
    pub fn with_dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review<R> {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<R>,
}

/// Decodes an AdmissionReview body into its request.
pub fn decode_review(body: &[u8]) -> Result<Request, ReviewError> {
    let review: Review<Request> = serde_json::from_slice(body).map_err(ReviewError::Malformed)?;
    if review.api_version != ADMISSION_API_VERSION || review.kind != "AdmissionReview" {
        return Err(ReviewError::WrongType {
            api_version: review.api_version,
            kind: review.kind,
        });
    }
    review.request.ok_or(ReviewError::NoRequest)
}

/// The verdict of a webhook, before it is encoded as an AdmissionReview response.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Verdict {
    pub(crate) allowed: bool,
    /// `(code, reason, message)` of a denial.
    pub(crate) status: Option<(u16, String, String)>,
    pub(crate) warnings: Vec<String>,
    /// The JSONPatch of a mutation; empty for none.
    pub(crate) patch: Vec<json_patch::PatchOperation>,
}

impl Verdict {
    pub(crate) fn allow(warnings: Vec<String>) -> Self {
        Self {
            allowed: true,
            warnings,
            ..Self::default()
        }
    }

    pub(crate) fn deny(code: u16, reason: &str, message: String, warnings: Vec<String>) -> Self {
        Self {
            allowed: false,
            status: Some((code, reason.to_string(), message)),
            warnings,
            patch: Vec::new(),
        }
    }

    /// The AdmissionReview answering request `uid`.
    pub(crate) fn into_review(self, uid: &str) -> Value {
        let mut response = json!({"uid": uid, "allowed": self.allowed});
        if let Some((code, reason, message)) = self.status {
            // A metav1.Status, as kube-apiserver reads it back into the client's error.
            response["status"] = json!({
                "metadata": {},
                "status": "Failure",
                "code": code,
                "reason": reason,
                "message": message,
            });
        }
        if !self.warnings.is_empty() {
            response["warnings"] = json!(self.warnings);
        }
        if !self.patch.is_empty() {
            let ops = serde_json::to_vec(&self.patch).unwrap_or_default();
            response["patchType"] = json!("JSONPatch");
            response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(ops));
        }
        json!({
            "apiVersion": ADMISSION_API_VERSION,
            "kind": "AdmissionReview",
            "response": response,
        })
    }
}

/// The JSONPatch that turns `original` into `defaulted` (json-patch's diff).
pub(crate) fn patch_between(
    original: &Value,
    defaulted: &Value,
) -> Vec<json_patch::PatchOperation> {
    json_patch::diff(original, defaulted).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(request: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": request,
        }))
        .unwrap()
    }

    #[test]
    fn decodes_a_request_with_the_fields_webhooks_use() {
        let body = review(json!({
            "uid": "u-1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "a",
            "namespace": "default",
            "operation": "UPDATE",
            "userInfo": {"username": "alice", "groups": ["devs"]},
            "object": {"data": {"k": "new"}},
            "oldObject": {"data": {"k": "old"}},
            "dryRun": true,
            "someFutureField": 1,
        }));
        let request = decode_review(&body).unwrap();
        assert_eq!(request.uid, "u-1");
        assert_eq!(request.operation, Operation::Update);
        assert_eq!(request.kind.kind, "ConfigMap");
        assert_eq!(request.resource.resource, "configmaps");
        assert_eq!(request.user_info.username.as_deref(), Some("alice"));
        assert_eq!(request.old_object["data"]["k"], "old");
        assert!(request.dry_run);
    }

    #[test]
    fn malformed_reviews_are_errors_naming_the_problem() {
        assert!(matches!(
            decode_review(b"not json"),
            Err(ReviewError::Malformed(_))
        ));
        let v1beta1 = serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "CREATE"},
        }))
        .unwrap();
        let e = decode_review(&v1beta1).unwrap_err();
        assert!(e.to_string().contains("admission.k8s.io/v1beta1"), "{e}");
        let none = serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        }))
        .unwrap();
        assert!(matches!(decode_review(&none), Err(ReviewError::NoRequest)));
        // A request without an operation is malformed, not a panic.
        let e = decode_review(&review(json!({"uid": "u"}))).unwrap_err();
        assert!(e.to_string().contains("operation"), "{e}");
    }

    #[test]
    fn encodes_denials_as_a_failure_status_with_code_and_message() {
        let review = Verdict::deny(422, "Invalid", "bad name".into(), vec!["careful".into()])
            .into_review("u-2");
        assert_eq!(
            review,
            json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {
                    "uid": "u-2",
                    "allowed": false,
                    "status": {"metadata": {}, "status": "Failure", "code": 422,
                        "reason": "Invalid", "message": "bad name"},
                    "warnings": ["careful"],
                },
            })
        );
        let allowed = Verdict::allow(Vec::new()).into_review("u-3");
        assert_eq!(allowed["response"], json!({"uid": "u-3", "allowed": true}));
    }

    #[test]
    fn a_mutation_is_a_base64_json_patch_of_the_difference() {
        let original = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        let defaulted =
            json!({"metadata": {"name": "a", "labels": {"team": "blue"}}, "data": {"k": "v"}});
        let mut verdict = Verdict::allow(Vec::new());
        verdict.patch = patch_between(&original, &defaulted);
        let review = verdict.into_review("u");
        assert_eq!(review["response"]["patchType"], "JSONPatch");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(review["response"]["patch"].as_str().unwrap())
            .unwrap();
        let ops: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            ops,
            json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "blue"}}])
        );
        let mut patched = original.clone();
        json_patch::patch(
            &mut patched,
            &serde_json::from_value::<json_patch::Patch>(ops).unwrap(),
        )
        .unwrap();
        assert_eq!(patched, defaulted);
        // No change, no patch.
        assert!(patch_between(&original, &original).is_empty());
    }
}
