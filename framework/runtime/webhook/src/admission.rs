//! Typed admission webhooks: a [`Validator`] and a [`Defaulter`] per kind, served at
//! Kubebuilder's paths ([`validate_path`], [`mutate_path`]).
//!
//! The server decodes the request's `object` (and `oldObject`) into the kind `K`, calls the
//! trait, and answers: a [`Denial`] becomes `allowed: false` with its code, reason and message
//! (what the client sees as the error); [`Warnings`] go back to the client as `Warning`
//! headers; a defaulter's changes become a JSONPatch between the object as sent and as
//! defaulted.

use std::{future::Future, marker::PhantomData, sync::Arc};

use futures::{FutureExt, future::BoxFuture};
use kube::Resource;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::review::{Operation, Request, Verdict, patch_between};

/// Warnings for the client: kube-apiserver passes them on as `Warning` headers, and kubectl
/// prints them.
pub type Warnings = Vec<String>;

/// Why a request is refused: the message the client sees, with an HTTP code and a reason
/// (controller-runtime's defaults: 403 `Forbidden`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Denial {
    /// What the client is told.
    pub message: String,
    /// The HTTP status code of the client's error (default 403).
    pub code: u16,
    /// The `reason` of the client's error (default `Forbidden`).
    pub reason: String,
    /// Warnings to return with the denial.
    pub warnings: Warnings,
}

impl Denial {
    /// A 403 `Forbidden` denial saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 403,
            reason: "Forbidden".into(),
            warnings: Warnings::new(),
        }
    }

    /// A 422 `Invalid` denial, what a failed field validation is.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(message).with_code(422).with_reason("Invalid")
    }

    /// With HTTP status `code`.
    #[must_use]
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    /// With `reason` (a metav1 `StatusReason` such as `Invalid`).
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }

    /// With warnings for the client.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }
}

/// The bounds a kind served by typed webhooks meets (every k8s-openapi type and every
/// `#[derive(CustomResource)]` kind does).
pub trait Kind:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Send + Sync + 'static
{
}

impl<K> Kind for K where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Send + Sync + 'static
{
}

/// Validates objects of kind `K` (Kubebuilder's `CustomValidator`). Each method gets the
/// request (its [`dry_run`](Request::dry_run), user, namespace) beside the typed objects;
/// update and delete allow by default.
pub trait Validator<K: Kind>: Send + Sync + 'static {
    /// Validates a create.
    fn validate_create(
        &self,
        request: &Request,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send;

    /// Validates an update from `old` to `new`.
    fn validate_update(
        &self,
        request: &Request,
        old: &K,
        new: &K,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (request, old, new);
        async { Ok(Warnings::new()) }
    }

    /// Validates a delete of `object`.
    fn validate_delete(
        &self,
        request: &Request,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (request, object);
        async { Ok(Warnings::new()) }
    }
}

/// Sets defaults on objects of kind `K` on create and update (Kubebuilder's
/// `CustomDefaulter`); a [`Denial`] refuses the request instead.
///
/// The object goes through `K` and back, so fields `K` does not know (added by a newer API
/// server) or drops (`null`s) would vanish from it; like controller-runtime by default, the
/// patch therefore never removes a field unless [`REMOVE_FIELDS`](Self::REMOVE_FIELDS) is set.
pub trait Defaulter<K: Kind>: Send + Sync + 'static {
    /// Whether the patch may remove fields (controller-runtime's
    /// `DefaulterRemoveUnknownOrOmitableFields`); default false.
    const REMOVE_FIELDS: bool = false;

    /// Changes `object` in place; the server sends the difference as a JSONPatch.
    fn default(
        &self,
        request: &Request,
        object: &mut K,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send;
}

/// Kubebuilder's path of `K`'s validating webhook: `/validate-<group with dots as dashes>-
/// <version>-<lowercase kind>`, e.g. `/validate-batch-example-com-v1-cronjob`, and
/// `/validate--v1-configmap` for the core group.
pub fn validate_path<K: Kind>() -> String {
    path_of::<K>("validate")
}

/// Kubebuilder's path of `K`'s mutating (defaulting) webhook: `/mutate-<group>-<version>-<kind>`.
pub fn mutate_path<K: Kind>() -> String {
    path_of::<K>("mutate")
}

fn path_of<K: Kind>(prefix: &str) -> String {
    format!(
        "/{prefix}-{}-{}-{}",
        K::group(&()).replace('.', "-"),
        K::version(&()),
        K::kind(&()).to_lowercase()
    )
}

/// A webhook with its kind erased, as the server routes to it.
pub(crate) trait Handler: Send + Sync {
    fn handle(&self, request: Arc<Request>) -> BoxFuture<'_, Verdict>;
}

/// Decodes `value` as the kind's object; an undecodable object is a 400.
fn decode<K: Kind>(value: &Value, field: &str) -> Result<K, Verdict> {
    K::deserialize(value).map_err(|e| {
        Verdict::deny(
            400,
            "BadRequest",
            format!("decode request.{field} as {}: {e}", K::kind(&())),
            Vec::new(),
        )
    })
}

fn verdict(result: Result<Warnings, Denial>) -> Verdict {
    match result {
        Ok(warnings) => Verdict::allow(warnings),
        Err(d) => Verdict::deny(d.code, &d.reason, d.message, d.warnings),
    }
}

pub(crate) struct Validating<K, V> {
    pub(crate) validator: V,
    pub(crate) kind: PhantomData<fn() -> K>,
}

impl<K: Kind, V: Validator<K>> Handler for Validating<K, V> {
    fn handle(&self, request: Arc<Request>) -> BoxFuture<'_, Verdict> {
        async move {
            let r = &request;
            let result = match r.operation {
                Operation::Create => match decode::<K>(&r.object, "object") {
                    Ok(new) => self.validator.validate_create(r, &new).await,
                    Err(v) => return v,
                },
                Operation::Update => {
                    match (
                        decode::<K>(&r.old_object, "oldObject"),
                        decode::<K>(&r.object, "object"),
                    ) {
                        (Ok(old), Ok(new)) => self.validator.validate_update(r, &old, &new).await,
                        (Err(v), _) | (_, Err(v)) => return v,
                    }
                }
                Operation::Delete => match decode::<K>(&r.old_object, "oldObject") {
                    Ok(old) => self.validator.validate_delete(r, &old).await,
                    Err(v) => return v,
                },
                Operation::Connect => Ok(Warnings::new()),
            };
            verdict(result)
        }
        .boxed()
    }
}

pub(crate) struct Defaulting<K, D> {
    pub(crate) defaulter: D,
    pub(crate) kind: PhantomData<fn() -> K>,
}

impl<K: Kind, D: Defaulter<K>> Handler for Defaulting<K, D> {
    fn handle(&self, request: Arc<Request>) -> BoxFuture<'_, Verdict> {
        async move {
            if !matches!(request.operation, Operation::Create | Operation::Update) {
                return Verdict::allow(Warnings::new());
            }
            let mut object = match decode::<K>(&request.object, "object") {
                Ok(object) => object,
                Err(v) => return v,
            };
            let warnings = match self.defaulter.default(&request, &mut object).await {
                Ok(warnings) => warnings,
                Err(d) => return verdict(Err(d)),
            };
            let defaulted = match serde_json::to_value(&object) {
                Ok(value) => value,
                Err(e) => {
                    return Verdict::deny(
                        500,
                        "InternalError",
                        format!("encode the defaulted {}: {e}", K::kind(&())),
                        warnings,
                    );
                }
            };
            let mut verdict = Verdict::allow(warnings);
            verdict.patch = patch_between(&request.object, &defaulted);
            if !D::REMOVE_FIELDS {
                verdict
                    .patch
                    .retain(|op| !matches!(op, json_patch::PatchOperation::Remove(_)));
            }
            verdict
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
    use serde_json::json;

    use super::*;

    struct NoBadNames;

    impl Validator<ConfigMap> for NoBadNames {
        async fn validate_create(&self, r: &Request, cm: &ConfigMap) -> Result<Warnings, Denial> {
            match cm.metadata.name.as_deref() {
                Some("bad") => Err(Denial::invalid("bad is a bad name")),
                _ if r.dry_run => Ok(vec!["dry run".into()]),
                _ => Ok(Warnings::new()),
            }
        }
    }

    struct Team;

    impl Defaulter<ConfigMap> for Team {
        async fn default(&self, _: &Request, cm: &mut ConfigMap) -> Result<Warnings, Denial> {
            cm.metadata
                .labels
                .get_or_insert_default()
                .entry("team".into())
                .or_insert_with(|| "blue".into());
            Ok(Warnings::new())
        }
    }

    fn request(operation: &str, object: Value) -> Arc<Request> {
        let operation = serde_json::from_value(json!(operation)).unwrap();
        Arc::new(Request::new(operation, object).with_dry_run(true))
    }

    #[test]
    fn paths_are_kubebuilders() {
        assert_eq!(validate_path::<ConfigMap>(), "/validate--v1-configmap");
        assert_eq!(mutate_path::<Deployment>(), "/mutate-apps-v1-deployment");
    }

    #[tokio::test]
    async fn a_validator_sees_the_typed_object_and_the_dry_run() {
        let h = Validating {
            validator: NoBadNames,
            kind: PhantomData::<fn() -> ConfigMap>,
        };
        let denied = h
            .handle(request("CREATE", json!({"metadata": {"name": "bad"}})))
            .await;
        assert_eq!(
            denied.status,
            Some((422, "Invalid".into(), "bad is a bad name".into()))
        );
        let allowed = h
            .handle(request("CREATE", json!({"metadata": {"name": "ok"}})))
            .await;
        assert!(allowed.allowed);
        assert_eq!(allowed.warnings, vec!["dry run".to_string()]);
        // Update and delete allow by default; an object of the wrong shape is a 400.
        let old = json!({"metadata": {"name": "bad"}});
        let delete = Request::new(Operation::Delete, Value::Null).with_old_object(old);
        assert!(h.handle(Arc::new(delete)).await.allowed);
        let wrong = h
            .handle(request("CREATE", json!({"metadata": {"name": 7}})))
            .await;
        let (code, _, message) = wrong.status.unwrap();
        assert_eq!(code, 400);
        assert!(
            message.contains("decode request.object as ConfigMap"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_defaulter_answers_with_the_patch_of_its_changes() {
        let h = Defaulting {
            defaulter: Team,
            kind: PhantomData::<fn() -> ConfigMap>,
        };
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let verdict = h.handle(request("CREATE", object)).await;
        assert!(verdict.allowed);
        assert_eq!(
            serde_json::to_value(&verdict.patch).unwrap(),
            json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "blue"}}])
        );
        let labelled = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"team": "red"}}});
        assert!(h.handle(request("UPDATE", labelled)).await.patch.is_empty());
        // Fields ConfigMap does not know, and nulls, are not removed.
        let newer = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"team": "red"}, "creationTimestamp": null},
            "fieldOfAFutureRelease": {"x": 1}});
        assert!(h.handle(request("UPDATE", newer)).await.patch.is_empty());
    }

    struct DropData;

    impl Defaulter<ConfigMap> for DropData {
        const REMOVE_FIELDS: bool = true;

        async fn default(&self, _: &Request, cm: &mut ConfigMap) -> Result<Warnings, Denial> {
            cm.data = None;
            Ok(Warnings::new())
        }
    }

    #[tokio::test]
    async fn a_defaulter_that_asks_for_it_removes_fields() {
        let h = Defaulting {
            defaulter: DropData,
            kind: PhantomData::<fn() -> ConfigMap>,
        };
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
            "data": {"k": "v"}});
        let verdict = h.handle(request("CREATE", object)).await;
        assert_eq!(
            serde_json::to_value(&verdict.patch).unwrap(),
            json!([{"op": "remove", "path": "/data"}])
        );
    }
}
