//! The operator runtime's webhook server, as controller-runtime's `webhook.Server` and
//! Kubebuilder's `CustomValidator`/`CustomDefaulter` give Go operators.
//!
//! Start reading at [`Validator`] and [`Defaulter`] (what you implement per kind), then
//! [`WebhookServer::builder`] (what serves them):
//!
//! - **TLS** from a certificate directory in cert-manager's layout (`tls.crt`, `tls.key`;
//!   default [`DEFAULT_CERT_DIR`]), reloaded when the files change: new connections get the new
//!   pair, a broken pair is logged and the old one keeps serving ([`CertWatcher`]).
//! - **Admission** (`admission.k8s.io/v1` AdmissionReview) at Kubebuilder's paths
//!   ([`validate_path`], [`mutate_path`]): objects are decoded into your kind, a [`Denial`]
//!   reaches the client with its code and message, [`Warnings`] as `Warning` headers, and a
//!   defaulter's changes as a JSONPatch. The [`Request`] says whether it is a dry run.
//! - **Conversion** (`apiextensions.k8s.io/v1` ConversionReview) at `/convert`, hub and spoke
//!   ([`Hub`], [`Spoke`], [`Conversion`]).
//! - **In a manager**: [`WebhookServerBuilder::add_to`] makes the server a runnable of an
//!   `mni_operator` manager, which starts and stops it, and reports it in `/readyz`.
//! - **Metrics** under controller-runtime's names in the manager's registry
//!   ([`WebhookServerBuilder::with_metrics`]): `controller_runtime_webhook_requests_total`,
//!   `controller_runtime_webhook_requests_in_flight`, `controller_runtime_webhook_latency_seconds`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use mni_webhook::{Defaulter, Denial, Request, Validator, Warnings, WebhookServer};
//!
//! /// Refuses ConfigMaps without data; warns about dry runs.
//! struct NeedsData;
//!
//! impl Validator<ConfigMap> for NeedsData {
//!     async fn validate_create(&self, req: &Request, cm: &ConfigMap) -> Result<Warnings, Denial> {
//!         if cm.data.as_ref().is_none_or(|d| d.is_empty()) {
//!             return Err(Denial::invalid("data: must not be empty"));
//!         }
//!         Ok(if req.dry_run { vec!["dry run".into()] } else { Warnings::new() })
//!     }
//! }
//!
//! /// Labels every ConfigMap with a team.
//! struct TeamLabel;
//!
//! impl Defaulter<ConfigMap> for TeamLabel {
//!     async fn default(&self, _: &Request, cm: &mut ConfigMap) -> Result<Warnings, Denial> {
//!         let labels = cm.metadata.labels.get_or_insert_default();
//!         labels.entry("team".into()).or_insert_with(|| "platform".into());
//!         Ok(Warnings::new())
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let webhooks = WebhookServer::builder()
//!     .with_validator(NeedsData)     // POST /validate--v1-configmap
//!     .with_defaulter(TeamLabel);    // POST /mutate--v1-configmap
//! let client = kube::Client::try_default().await?;
//! // The manager serves the webhooks' metrics and readiness, and starts and stops the server.
//! let manager = webhooks.add_to(mni_operator::Manager::builder(client)).build();
//! manager.run().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Code map: `admission` (the traits, Kubebuilder's paths), `review` (the AdmissionReview
//! wire format and JSONPatch), `conversion` (hub and spoke, ConversionReview), `certs` (the
//! certificate directory and its reload), `metrics`, `server` (the builder, TLS, routing).

mod admission;
mod certs;
mod conversion;
mod metrics;
mod review;
mod server;

pub use admission::{Defaulter, Denial, Kind, Validator, Warnings, mutate_path, validate_path};
pub use certs::{CERT_FILE, CertError, CertWatcher, KEY_FILE};
pub use conversion::{CONVERSION_API_VERSION, Conversion, ConversionReviewError, Hub, Spoke};
pub use review::{
    ADMISSION_API_VERSION, GroupVersionKind, GroupVersionResource, Operation, Request, ReviewError,
    decode_review,
};
pub use server::{
    CONVERT_PATH, DEFAULT_CERT_DIR, DEFAULT_CERT_POLL_INTERVAL, DEFAULT_PORT, RunningWebhookServer,
    ServerError, WebhookServer, WebhookServerBuilder,
};
