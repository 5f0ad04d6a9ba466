//! The ValidatingAdmissionPolicies of each write, run at the start of the validating phase
//! (after mutation and schema validation, before the validating webhooks), as kube-apiserver
//! orders its admission plugins.
//!
//! For each binding whose policy and `matchResources` match the request, this finds the
//! parameter objects (`paramRef` by name or selector, in the `paramRef.namespace` or the
//! request's namespace) and the request's Namespace, and lets `policies` evaluate and decide.
//! Written policies get their type-checked `status` here too.

use serde_json::Value;

use super::State;
use crate::error::ApiResult;
use crate::object;
use crate::policies::{self, Binding, Input, PolicySet, Verdict};
use crate::registry::ResourceInfo;
use crate::webhooks::{self, Attributes};

/// Whether `info` is ValidatingAdmissionPolicies, whose writes get a type-checked status.
pub(super) fn is_policy(info: &ResourceInfo) -> bool {
    info.group == "admissionregistration.k8s.io" && info.plural == "validatingadmissionpolicies"
}

impl State {
    /// Sets the `status` of a policy being written (not through its `status` subresource).
    pub(super) fn type_check_policy(
        &self,
        info: &ResourceInfo,
        subresource: Option<&str>,
        obj: &mut Value,
    ) {
        if is_policy(info) && subresource.is_none() {
            policies::write_status(&self.registry(), obj);
        }
    }

    /// Runs every bound policy that matches the request. Returns the warnings of `Warn`
    /// bindings, or the first denial of a `Deny` binding.
    pub(super) fn validate_with_policies(
        &self,
        set: &PolicySet,
        a: &Attributes<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        if set.is_empty() {
            return Ok(Vec::new());
        }
        let namespace = self.request_namespace(a);
        let ns_labels = namespace.as_ref().map(object::labels);
        let mut request = webhooks::request(a, &object::uid(), None, None)["request"].take();
        if let Some(r) = request.as_object_mut() {
            r.remove("object");
            r.remove("oldObject");
        }
        let mut verdict = Verdict::default();
        for b in &set.bindings {
            let matched = b.matches(a, obj, old, ns_labels.as_ref());
            match matched {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    b.config_failure(a.info, a.name, &e.to_string(), &mut verdict);
                    continue;
                }
            }
            let params = match self.params(b, a) {
                Ok(p) => p,
                Err(e) => {
                    b.config_failure(a.info, a.name, &e, &mut verdict);
                    continue;
                }
            };
            for p in params.iter().map(Some).chain(
                // No paramKind: one run without params.
                b.policy.param_kind.is_none().then_some(None),
            ) {
                let input = Input {
                    object: obj,
                    old,
                    request: &request,
                    params: p,
                    namespace: namespace.as_ref(),
                };
                if let Some(decisions) = b.policy.evaluate(&input) {
                    b.enforce(a.info, a.name, decisions, &mut verdict);
                }
            }
        }
        match verdict.denial {
            Some(d) => Err(d),
            None => Ok(verdict.warnings),
        }
    }

    /// The request's Namespace object, for namespaced resources (or the Namespace itself).
    fn request_namespace(&self, a: &Attributes<'_>) -> Option<Value> {
        let ns = a.namespace.filter(|_| a.info.namespaced)?;
        let kv = self.store.get(&format!("/registry/core/namespaces/{ns}"))?;
        object::from_stored(&kv).ok()
    }

    /// The parameter objects of a binding: none without a `paramKind`; the one named, or
    /// those selected, by `paramRef`. None found is an error under
    /// `parameterNotFoundAction: Deny`.
    fn params(&self, b: &Binding, a: &Attributes<'_>) -> Result<Vec<Value>, String> {
        let Some((api_version, kind)) = &b.policy.param_kind else {
            return Ok(Vec::new());
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let info = self
            .registry()
            .find_kind(group, version, kind)
            .ok_or_else(|| {
                format!(
                    "failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'"
                )
            })?;
        let Some(r) = &b.param_ref else {
            return Err(format!(
                "policy '{}' has paramKind but binding has no paramRef",
                b.policy.name
            ));
        };
        let namespace = match (info.namespaced, r.namespace.as_deref()) {
            (false, _) => None,
            (true, Some(ns)) if !ns.is_empty() => Some(ns.to_string()),
            (true, _) => match a.namespace.filter(|_| a.info.namespaced) {
                Some(ns) => Some(ns.to_string()),
                None => {
                    return Err(
                        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                            .to_string(),
                    );
                }
            },
        };
        let found: Vec<Value> = match (&r.name, &r.selector) {
            (Some(name), _) if !name.is_empty() => self
                .store
                .get(&info.key(namespace.as_deref(), name))
                .and_then(|kv| object::from_stored(&kv).ok())
                .into_iter()
                .collect(),
            (_, selector) => {
                let selector = webhooks::selector(selector.clone())?;
                self.list_stored(&info.collection_prefix(namespace.as_deref()))
                    .map_err(|e| e.message)?
                    .items
                    .iter()
                    .filter_map(|kv| object::from_stored(kv).ok())
                    .filter(|o| selector.matches(&object::labels(o)))
                    .collect()
            }
        };
        if found.is_empty() && r.parameter_not_found_action.as_deref() == Some("Deny") {
            return Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
                    .to_string(),
            );
        }
        Ok(found)
    }
}
