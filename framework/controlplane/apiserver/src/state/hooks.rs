//! The admission webhooks around each write: the mutating phase before schema validation, the
//! validating phase after it (see `webhooks` for matching, the review and the client), with
//! the ValidatingAdmissionPolicies run first in the validating phase (see `policies`).
//!
//! The configured webhooks and policies are read from the store into an [`Admission`] when
//! first needed and again after any write of a webhook configuration, a policy or a binding.
//! A `clientConfig.service` is resolved to
//! one ready endpoint of the Service, through its EndpointSlices (or its Endpoints), since a
//! development server has no cluster network to route a ClusterIP. Writes the server makes
//! itself (controllers, the garbage collector) and writes of the webhook configurations,
//! policies and bindings do not go through webhooks or policies, as upstream exempts them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::State;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::policies::PolicySet;
use crate::registry::ResourceInfo;
use crate::webhooks::{self, Attributes, Destination, Endpoint, Outcome, Snapshot, Webhook};

/// The configurations' store prefixes.
const MUTATING_PREFIX: &str =
    "/registry/admissionregistration.k8s.io/mutatingwebhookconfigurations/";
const VALIDATING_PREFIX: &str =
    "/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/";
const POLICY_PREFIX: &str = "/registry/admissionregistration.k8s.io/validatingadmissionpolicies/";
const BINDING_PREFIX: &str =
    "/registry/admissionregistration.k8s.io/validatingadmissionpolicybindings/";

/// Whether `info` is a webhook configuration, a policy or a binding (never sent to webhooks
/// or policies, and a write of one renews the snapshot).
pub(super) fn is_admission_configuration(info: &ResourceInfo) -> bool {
    info.group == "admissionregistration.k8s.io"
        && (info.plural.ends_with("webhookconfigurations")
            || info.plural.starts_with("validatingadmissionpolic"))
}

/// Everything configured to admit writes: the webhooks and the bound policies.
#[derive(Debug, Default)]
pub(crate) struct Admission {
    /// The webhooks.
    pub webhooks: Snapshot,
    /// The ValidatingAdmissionPolicies with their bindings.
    pub policies: PolicySet,
}

impl State {
    /// Drops the webhook and policy snapshot after a configuration changed.
    pub(super) fn webhooks_changed(&self) {
        self.webhook_generation.fetch_add(1, Ordering::SeqCst);
        *self.webhooks.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The webhooks and policies a write of `info` may go to, or `None` when none applies at
    /// all (no user: the server's own write; an admission configuration; none configured).
    pub(super) fn webhooks_for(
        &self,
        info: &ResourceInfo,
        has_user: bool,
    ) -> ApiResult<Option<Arc<Admission>>> {
        if !has_user || is_admission_configuration(info) {
            return Ok(None);
        }
        let snapshot = self.webhook_snapshot()?;
        Ok((!snapshot.webhooks.is_empty() || !snapshot.policies.is_empty()).then_some(snapshot))
    }

    fn webhook_snapshot(&self) -> ApiResult<Arc<Admission>> {
        if let Some(s) = self
            .webhooks
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(s.clone());
        }
        let generation = self.webhook_generation.load(Ordering::SeqCst);
        let objects = |prefix: &str| -> ApiResult<Vec<Value>> {
            self.list_stored(prefix)?
                .items
                .iter()
                .map(object::from_stored)
                .collect()
        };
        let snapshot = Arc::new(Admission {
            webhooks: Snapshot::build(&objects(MUTATING_PREFIX)?, &objects(VALIDATING_PREFIX)?),
            policies: PolicySet::build(&objects(POLICY_PREFIX)?, &objects(BINDING_PREFIX)?),
        });
        let mut slot = self.webhooks.write().unwrap_or_else(|e| e.into_inner());
        // A configuration written while this one was read: leave the cache empty.
        if self.webhook_generation.load(Ordering::SeqCst) == generation {
            *slot = Some(snapshot.clone());
        }
        Ok(snapshot)
    }

    /// The mutating phase: calls each matching mutating webhook in order, applying its patch
    /// to `obj` (`null` for a delete, whose patches are ignored), then once more those with `reinvocationPolicy: IfNeeded` that saw the object
    /// before a later webhook changed it. Returns the warnings and whether `obj` changed.
    pub(super) async fn mutate(
        &self,
        admission: &Admission,
        a: &Attributes<'_>,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> ApiResult<(Vec<String>, bool)> {
        let hooks = &admission.webhooks;
        let mut warnings = Vec::new();
        let original = obj.clone();
        let ns_labels = self.namespace_labels(a);
        let mut called_reinvokable: Vec<usize> = Vec::new();
        let mut reinvoke = BTreeSet::new();
        for (i, w) in hooks.mutating.iter().enumerate() {
            let object = Some(&*obj).filter(|o| !o.is_null());
            let Some(outcome) = self
                .call(hooks, w, a, object, old, ns_labels.as_ref())
                .await?
            else {
                continue;
            };
            if apply_outcome(w, outcome, obj, &mut warnings)? {
                reinvoke.extend(called_reinvokable.iter().copied());
            }
            if w.reinvoke {
                called_reinvokable.push(i);
            }
        }
        for i in reinvoke {
            let w = &hooks.mutating[i];
            let object = Some(&*obj).filter(|o| !o.is_null());
            if let Some(outcome) = self
                .call(hooks, w, a, object, old, ns_labels.as_ref())
                .await?
            {
                apply_outcome(w, outcome, obj, &mut warnings)?;
            }
        }
        let changed = *obj != original;
        Ok((warnings, changed))
    }

    /// The validating phase: runs the policies, then calls every matching validating webhook
    /// at once; the first denial or failure (in configuration order) is the answer. Returns
    /// the warnings.
    pub(super) async fn validate_with_webhooks(
        &self,
        admission: &Admission,
        a: &Attributes<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let mut warnings = self.validate_with_policies(&admission.policies, a, obj, old)?;
        let hooks = &admission.webhooks;
        let ns_labels = self.namespace_labels(a);
        let calls = hooks
            .validating
            .iter()
            .map(|w| self.call(hooks, w, a, obj, old, ns_labels.as_ref()));
        let mut first_error = None;
        for result in futures::future::join_all(calls).await {
            match result {
                Ok(Some(outcome)) => {
                    warnings.extend(outcome.warnings);
                    if let Some(d) = outcome.denial {
                        first_error.get_or_insert(d);
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(warnings),
        }
    }

    /// The labels of the request's namespace, for `namespaceSelector`.
    fn namespace_labels(&self, a: &Attributes<'_>) -> Option<BTreeMap<String, String>> {
        let ns = a.namespace.filter(|_| a.info.namespaced)?;
        let kv = self.store.get(&format!("/registry/core/namespaces/{ns}"))?;
        Some(object::labels(&object::from_stored(&kv).ok()?))
    }

    /// Calls one webhook if it matches the request. `None`: it does not match, or it failed
    /// and its failure policy is `Ignore`.
    async fn call(
        &self,
        hooks: &Snapshot,
        w: &Webhook,
        a: &Attributes<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
        ns_labels: Option<&BTreeMap<String, String>>,
    ) -> ApiResult<Option<Outcome>> {
        if !w.matcher.matches_rules(a) {
            return Ok(None);
        }
        let uid = object::uid();
        let review = webhooks::request(a, &uid, obj, old);
        let outcome = async {
            if !w.matcher.matches_selectors(a, obj, old, ns_labels)? {
                return Ok(None);
            }
            if !w.conditions.is_empty() {
                // `request` is the AdmissionRequest without the objects, which are variables
                // of their own.
                let mut request = review["request"].clone();
                if let Some(r) = request.as_object_mut() {
                    r.remove("object");
                    r.remove("oldObject");
                }
                if !w.conditions.evaluate(obj, old, &request)? {
                    return Ok(None);
                }
            }
            if a.dry_run && !w.dry_run_safe {
                return Err(Refusal::DryRun);
            }
            if !w.speaks_v1 {
                return Err(webhooks::Error::Config(
                    "webhook does not accept known AdmissionReview versions".into(),
                )
                .into());
            }
            let endpoint = self.endpoint(w)?;
            let tls = w.tls.clone().map_err(webhooks::Error::Config)?;
            let body = serde_json::to_vec(&review).unwrap_or_default();
            let bytes =
                webhooks::post(&hooks.connections, &w.name, &endpoint, tls, body, w.timeout)
                    .await?;
            Ok(Some(webhooks::response(w, &uid, &bytes)?))
        }
        .await;
        match outcome {
            Ok(o) => Ok(o),
            Err(Refusal::DryRun) => Err(ApiError::bad_request(format!(
                "admission webhook \"{}\" does not support dry run",
                w.name
            ))),
            Err(Refusal::Failed(e)) if w.ignore_failures => {
                tracing::warn!(webhook = %w.name, error = %e, "failed calling webhook, failing open");
                Ok(None)
            }
            Err(Refusal::Failed(e)) => Err(webhooks::call_failed(w, &e)),
        }
    }

    /// Where to call `w`: its URL, or a ready endpoint of its Service.
    fn endpoint(&self, w: &Webhook) -> Result<Endpoint, webhooks::Error> {
        let (namespace, name, port, path) = match &w.destination {
            Destination::Url(url) => return Endpoint::from_url(url, w.timeout),
            Destination::Service {
                namespace,
                name,
                port,
                path,
            } => (namespace, name, *port, path),
        };
        let server_name = format!("{name}.{namespace}.svc");
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path.as_str(), None),
        };
        let path = webhooks::with_timeout(path, query, w.timeout);
        let fail = |reason: String| webhooks::Error::Call {
            url: format!("https://{server_name}:{port}{path}"),
            reason,
        };
        let svc = self
            .store
            .get(&format!("/registry/core/services/{namespace}/{name}"))
            .and_then(|kv| object::from_stored(&kv).ok())
            .ok_or_else(|| fail(format!("service \"{name}\" not found")))?;
        let svc_port = svc["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["port"].as_i64() == Some(i64::from(port)))
            .ok_or_else(|| {
                fail(format!(
                    "no service port {port} found for service \"{name}\""
                ))
            })?;
        let port_name = svc_port["name"].as_str().unwrap_or_default();
        let (host, target) = self
            .ready_endpoint(namespace, name, port_name)
            .ok_or_else(|| fail(format!("no endpoints available for service \"{name}\"")))?;
        Ok(Endpoint {
            host,
            port: target,
            server_name,
            path,
        })
    }

    /// A ready address of the Service and the port named `port_name`, from its EndpointSlices
    /// or else its Endpoints.
    fn ready_endpoint(
        &self,
        namespace: &str,
        name: &str,
        port_name: &str,
    ) -> Option<(String, u16)> {
        let slices = self
            .list_stored(&format!(
                "/registry/discovery.k8s.io/endpointslices/{namespace}/"
            ))
            .ok()?;
        let same_port = |p: &&Value| p["name"].as_str().unwrap_or_default() == port_name;
        for kv in &slices.items {
            let Ok(slice) = object::from_stored(kv) else {
                continue;
            };
            if slice["metadata"]["labels"]["kubernetes.io/service-name"] != name {
                continue;
            }
            let Some(port) = slice["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .find(same_port)
                .and_then(|p| p["port"].as_u64())
                .and_then(|p| u16::try_from(p).ok())
            else {
                continue;
            };
            let ready = slice["endpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["conditions"]["ready"] != false)
                .find_map(|e| e["addresses"][0].as_str());
            if let Some(address) = ready {
                return Some((address.to_string(), port));
            }
        }
        let kv = self
            .store
            .get(&format!("/registry/core/endpoints/{namespace}/{name}"))?;
        let endpoints = object::from_stored(&kv).ok()?;
        endpoints["subsets"].as_array()?.iter().find_map(|s| {
            let port = s["ports"]
                .as_array()?
                .iter()
                .find(same_port)?
                .get("port")?
                .as_u64()?;
            let ip = s["addresses"].as_array()?.first()?["ip"].as_str()?;
            Some((ip.to_string(), u16::try_from(port).ok()?))
        })
    }
}

/// Why a webhook was not called, or its call failed.
enum Refusal {
    /// The request is a dry run and the webhook has side effects.
    DryRun,
    /// A failure its failure policy decides on.
    Failed(webhooks::Error),
}

impl From<webhooks::Error> for Refusal {
    fn from(e: webhooks::Error) -> Self {
        Refusal::Failed(e)
    }
}

/// Takes a mutating webhook's answer: its warnings, its denial, its patch applied to `obj`.
/// Returns whether the patch changed `obj`. A patch that cannot be applied fails the request
/// whatever the failure policy, as upstream.
fn apply_outcome(
    w: &Webhook,
    outcome: Outcome,
    obj: &mut Value,
    warnings: &mut Vec<String>,
) -> ApiResult<bool> {
    warnings.extend(outcome.warnings);
    if let Some(d) = outcome.denial {
        return Err(d);
    }
    // A delete has no object to patch.
    let Some(patch) = outcome.patch.filter(|_| !obj.is_null()) else {
        return Ok(false);
    };
    let before = obj.clone();
    // `json_patch::patch` leaves `obj` as it was when an operation fails.
    json_patch::patch(obj, &patch.0).map_err(|e| {
        ApiError::internal(format!(
            "admission webhook \"{}\" returned a patch that cannot be applied: {e}",
            w.name
        ))
    })?;
    Ok(*obj != before)
}
