// SPDX-License-Identifier: MIT

//! The admission webhooks of the `fleet` operator: one module per kind, each a
//! `mni_webhook::Defaulter` and/or `mni_webhook::Validator` (`mni-scaffold create webhook`).
//!
//! [`server`] is the webhook server with every webhook below; [`register`] starts it beside the
//! controllers in `src/main.rs`. The Kubernetes side is under `config/webhook/` (the webhook
//! configurations and their Service) and `config/certmanager/` (the serving certificate).

use mni_operator::ManagerBuilder;
use mni_webhook::{WebhookServer, WebhookServerBuilder};

// +mni:fragment:webhook-modules:ships_v1_harbor
pub mod ships_v1_harbor;
// +mni:fragment-end:webhook-modules:ships_v1_harbor
// +mni:fragment:webhook-modules:crew_v1alpha1_sailor
pub mod crew_v1alpha1_sailor;
// +mni:fragment-end:webhook-modules:crew_v1alpha1_sailor
// +mni:scaffold:webhook-modules

/// The webhook server with this operator's webhooks, not started: on
/// `mni_webhook::DEFAULT_PORT` (9443) with the certificate in `mni_webhook::DEFAULT_CERT_DIR`,
/// where `config/default` mounts the Secret cert-manager writes.
#[must_use]
pub fn server() -> WebhookServerBuilder {
    let server = WebhookServer::builder();
    // +mni:fragment:webhooks:ships_v1_harbor
    let server = ships_v1_harbor::register(server);
    // +mni:fragment-end:webhooks:ships_v1_harbor
    // +mni:fragment:webhooks:crew_v1alpha1_sailor
    let server = crew_v1alpha1_sailor::register(server);
    // +mni:fragment-end:webhooks:crew_v1alpha1_sailor
    // +mni:scaffold:webhooks
    server
}

/// Adds the webhook server to `manager`, as controller-runtime's manager runs its webhook
/// server: requests are counted in the manager's `/metrics`, `/readyz` fails until the server
/// listens, and the server is one of the manager's runnables — started before the controllers,
/// stopped gracefully with them. A server that cannot start (no certificate, port taken) stops
/// the manager with an error. With `ENABLE_WEBHOOKS=false` (to run the operator outside the
/// cluster, as Kubebuilder's `make run` does) nothing is added.
pub fn register(manager: ManagerBuilder) -> ManagerBuilder {
    if std::env::var("ENABLE_WEBHOOKS").is_ok_and(|v| v == "false") {
        return manager;
    }
    server().add_to(manager)
}
