//! Admission webhooks: the `admissionregistration.k8s.io/v1` Validating- and
//! MutatingWebhookConfigurations as kube-apiserver acts on them.
//!
//! A [`Snapshot`] is every configured webhook, parsed once per change of the configurations
//! (sorted by configuration name, then in their order within, as upstream calls them), with
//! its match conditions compiled and its TLS client configuration built. `rules` decides which
//! webhooks a request matches (operations, groups, versions, resources and subresources,
//! scope, the namespace and object selectors, the CEL `matchConditions`); `review` builds the
//! AdmissionReview v1 request and reads the response (patches, warnings, denials, each failure
//! worded as upstream words it); `client` posts it over HTTPS, verifying the `caBundle`;
//! `config` defaults and validates the configurations when they are written.
//!
//! This module holds no state and does no storage: the state layer (`state::hooks`) resolves
//! a `clientConfig.service` to an address, looks up namespace labels, and runs the mutating
//! and validating phases around the rest of admission.

mod client;
mod config;
mod review;
mod rules;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::admissionregistration::v1 as reg;
use serde_json::Value;

pub(crate) use client::{Endpoint, Pool, post, with_timeout};
pub(crate) use config::{
    default_configuration, expression, match_conditions, one_of, rule, validate_configuration,
};
pub(crate) use review::{Attributes, Operation, Outcome, call_failed, request, response};
pub(crate) use rules::{Conditions, Matcher, Rule, selector, to_cel};

/// Why a webhook could not be called or its answer not used; the state layer words these
/// as kube-apiserver does (`failed calling webhook "NAME": …`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// The TCP connection, the TLS handshake or the HTTP exchange failed.
    #[error("failed to call webhook: Post \"{url}\": {reason}")]
    Call {
        /// The URL called, `?timeout=` included.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// No answer within `timeoutSeconds`.
    #[error("failed to call webhook: Post \"{url}\": context deadline exceeded")]
    Timeout {
        /// The URL called.
        url: String,
    },
    /// The webhook answered with a non-2xx HTTP status.
    #[error("failed to call webhook: the server responded with the status code {code}")]
    Status {
        /// The HTTP status.
        code: u16,
    },
    /// The response is not an AdmissionReview the server can use.
    #[error("received invalid webhook response: {0}")]
    Response(String),
    /// The `clientConfig` cannot be used (bad URL, unknown Service, bad `caBundle`).
    #[error("{0}")]
    Config(String),
    /// A `matchConditions` expression failed to compile or to evaluate.
    #[error("{0}")]
    MatchCondition(String),
}

/// Where a webhook is called.
#[derive(Debug, Clone)]
pub(crate) enum Destination {
    /// `clientConfig.url`.
    Url(String),
    /// `clientConfig.service`: resolved to one of the Service's ready endpoints.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The Service port (default 443).
        port: i32,
        /// The URL path (default `/`).
        path: String,
    },
}

/// One webhook of a configuration, parsed and defaulted as kube-apiserver defaults it.
#[derive(Debug)]
pub(crate) struct Webhook {
    /// `webhooks[].name`.
    pub name: String,
    /// Whether it comes from a MutatingWebhookConfiguration.
    pub mutating: bool,
    /// `rules` and the namespace and object selectors.
    pub matcher: Matcher,
    /// `matchConditions`, compiled.
    pub conditions: Conditions,
    /// `failurePolicy: Ignore`.
    pub ignore_failures: bool,
    /// `timeoutSeconds` (default 10).
    pub timeout: Duration,
    /// `sideEffects` is `None` or `NoneOnDryRun`: the webhook may be called on dry runs.
    pub dry_run_safe: bool,
    /// `admissionReviewVersions` includes `v1`.
    pub speaks_v1: bool,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke: bool,
    /// `clientConfig`.
    pub destination: Destination,
    /// The TLS client configuration trusting `caBundle` (or the system roots), or why the
    /// bundle is unusable.
    pub tls: Result<Arc<rustls::ClientConfig>, String>,
}

/// Every configured webhook, in calling order.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// The MutatingWebhookConfigurations' webhooks.
    pub mutating: Vec<Arc<Webhook>>,
    /// The ValidatingWebhookConfigurations' webhooks.
    pub validating: Vec<Arc<Webhook>>,
    /// Connections to these webhooks, kept between calls.
    pub connections: Pool,
}

impl Snapshot {
    /// Parses the stored configurations; a configuration that does not decode is skipped
    /// (the server validated it when it was written).
    pub(crate) fn build(mutating: &[Value], validating: &[Value]) -> Self {
        let env = mni_cel::Env::kubernetes();
        let mut m: Vec<reg::MutatingWebhookConfiguration> = mutating
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        m.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut v: Vec<reg::ValidatingWebhookConfiguration> = validating
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        v.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mutating = m
            .into_iter()
            .flat_map(|c| c.webhooks.unwrap_or_default())
            .map(|w| {
                Arc::new(Webhook::parse(
                    Parts {
                        name: w.name,
                        rules: w.rules,
                        namespace_selector: w.namespace_selector,
                        object_selector: w.object_selector,
                        match_conditions: w.match_conditions,
                        failure_policy: w.failure_policy,
                        timeout_seconds: w.timeout_seconds,
                        side_effects: w.side_effects,
                        review_versions: w.admission_review_versions,
                        reinvocation: w.reinvocation_policy,
                        client: w.client_config,
                    },
                    true,
                    &env,
                ))
            })
            .collect();
        let validating = v
            .into_iter()
            .flat_map(|c| c.webhooks.unwrap_or_default())
            .map(|w| {
                Arc::new(Webhook::parse(
                    Parts {
                        name: w.name,
                        rules: w.rules,
                        namespace_selector: w.namespace_selector,
                        object_selector: w.object_selector,
                        match_conditions: w.match_conditions,
                        failure_policy: w.failure_policy,
                        timeout_seconds: w.timeout_seconds,
                        side_effects: w.side_effects,
                        review_versions: w.admission_review_versions,
                        reinvocation: None,
                        client: w.client_config,
                    },
                    false,
                    &env,
                ))
            })
            .collect();
        Snapshot {
            mutating,
            validating,
            connections: Pool::default(),
        }
    }

    /// Whether no webhook is configured (the common case: admission skips all of this).
    pub(crate) fn is_empty(&self) -> bool {
        self.mutating.is_empty() && self.validating.is_empty()
    }
}

/// The fields validating and mutating webhooks share.
struct Parts {
    name: String,
    rules: Option<Vec<reg::RuleWithOperations>>,
    namespace_selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    object_selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    match_conditions: Option<Vec<reg::MatchCondition>>,
    failure_policy: Option<String>,
    timeout_seconds: Option<i32>,
    side_effects: String,
    review_versions: Vec<String>,
    reinvocation: Option<String>,
    client: reg::WebhookClientConfig,
}

impl Webhook {
    fn parse(p: Parts, mutating: bool, env: &mni_cel::Env) -> Self {
        let destination = match (p.client.url, p.client.service) {
            (Some(url), _) => Destination::Url(url),
            (None, Some(s)) => Destination::Service {
                namespace: s.namespace,
                name: s.name,
                port: s.port.unwrap_or(443),
                path: s.path.unwrap_or_else(|| "/".to_string()),
            },
            (None, None) => Destination::Url(String::new()),
        };
        let ca = p.client.ca_bundle.map(|b| b.0);
        Webhook {
            matcher: Matcher {
                rules: p
                    .rules
                    .unwrap_or_default()
                    .iter()
                    .map(rules::Rule::from_api)
                    .collect(),
                exclude: Vec::new(),
                namespace_selector: selector(p.namespace_selector),
                object_selector: selector(p.object_selector),
            },
            conditions: Conditions::compile(env, p.match_conditions.unwrap_or_default()),
            ignore_failures: p.failure_policy.as_deref() == Some("Ignore"),
            timeout: Duration::from_secs(
                p.timeout_seconds
                    .unwrap_or(10)
                    .clamp(1, 30)
                    .unsigned_abs()
                    .into(),
            ),
            dry_run_safe: matches!(p.side_effects.as_str(), "None" | "NoneOnDryRun"),
            speaks_v1: p.review_versions.iter().any(|v| v == "v1"),
            reinvoke: mutating && p.reinvocation.as_deref() == Some("IfNeeded"),
            destination,
            tls: client::tls_config(ca.as_deref().filter(|c| !c.is_empty())),
            name: p.name,
            mutating,
        }
    }
}

/// Decodes a JSONPatch the way a webhook sends it (base64 of the JSON array).
pub(crate) fn decode_patch(patch: &str) -> Result<json_patch::Patch, Error> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(patch.trim())
        .map_err(|e| Error::Response(format!("patch is not base64: {e}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Response(format!("patch is not a JSONPatch: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn configurations_are_defaulted_and_ordered_by_name() {
        let config = |name: &str, hook: &str| {
            json!({
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": name},
                "webhooks": [{
                    "name": hook,
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
                    "reinvocationPolicy": "IfNeeded",
                }],
            })
        };
        let s = Snapshot::build(&[config("b", "second"), config("a", "first")], &[]);
        let names: Vec<_> = s.mutating.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
        let w = &s.mutating[0];
        assert_eq!(w.timeout, Duration::from_secs(10));
        assert!(!w.ignore_failures && w.dry_run_safe && w.speaks_v1 && w.reinvoke);
        match &w.destination {
            Destination::Service { port, path, .. } => {
                assert_eq!((*port, path.as_str()), (443, "/"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn patches_are_base64_json_patches() {
        let p = base64::engine::general_purpose::STANDARD
            .encode(br#"[{"op":"add","path":"/a","value":1}]"#);
        assert_eq!(decode_patch(&p).expect("decodes").0.len(), 1);
        assert!(matches!(decode_patch("!!"), Err(Error::Response(_))));
    }
}
