//! `mni-testkit`: a test environment for mNi operators, in the manner of controller-runtime's
//! envtest — but in-process, started in milliseconds, and enforcing RBAC.
//!
//! Start with [`TestEnv::start`] (or [`TestEnv::builder`]): it runs `mni-apiserver` inside the
//! test process (in memory, on an ephemeral loopback port) and hands out kube-rs clients for
//! it. A test then installs its CRDs, runs the operator under a least-privilege client from
//! [`TestEnv::service_account_client`], and checks the outcome with [`wait_for`],
//! [`wait_for_condition`], [`wait_deleted`] and [`TestEnv::assert_event`]:
//!
//! ```no_run
//! use std::time::Duration;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::rbac::v1::PolicyRule;
//! use kube::Api;
//!
//! # async fn run() -> mni_testkit::Result<()> {
//! let env = mni_testkit::TestEnv::builder().with_simulator(true).start().await?;
//! let rules = vec![PolicyRule {
//!     api_groups: Some(vec!["apps".into()]),
//!     resources: Some(vec!["deployments".into()]),
//!     verbs: ["get", "list", "watch", "create", "patch"].map(String::from).to_vec(),
//!     ..PolicyRule::default()
//! }];
//! let operator_client = env.service_account_client("billing", "operator", rules).await?;
//! // ... run the operator with `operator_client`, create its custom resource ...
//! let deployments: Api<Deployment> = Api::namespaced(env.client(), "billing");
//! mni_testkit::wait_for_condition(&deployments, "billing-backend", "Available", "True",
//!     Duration::from_secs(10)).await?;
//! env.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! With [`TestEnvBuilder::with_simulator`], `mni-workloads` plays the controllers and kubelet
//! the embedded server does not have, so Deployments get ready pods and become `Available`.
//!
//! Code map: `env` ([`TestEnv`], [`TestEnvBuilder`], CRD installation), `identity`
//! (ServiceAccount clients, [`TestEnv::operator_client`] with an operator's RBAC manifest),
//! `wait` (watch-based waits), `owner` ([`get_controlled`]), `events` (event assertions),
//! `manifests` ([`assert_crds_checked_in`]: the checked-in CRDs match the code), `webhooks`
//! ([`WebhookCerts`]: a serving certificate and webhook configurations for admission webhooks
//! under test), `error`
//! ([`Error`]).
//!
//! **Architecture Invariant:** the test kit only talks to the server over HTTP with kube-rs
//! clients, as an operator would; it never reaches into the server's store. What passes here
//! passes against a real API server with the same RBAC.
//!
//! The shared API types (conditions, workload specs) are in `mni-core`; the operator runtime
//! under test is `mni-operator`.

mod env;
mod error;
mod events;
mod identity;
mod manifests;
mod owner;
pub mod reference;
mod wait;
mod webhooks;

pub use env::{DEFAULT_TIMEOUT, TestEnv, TestEnvBuilder};
pub use error::{Error, Result};
pub use manifests::assert_crds_checked_in;
pub use owner::get_controlled;
pub use wait::{wait_deleted, wait_for, wait_for_condition};
pub use webhooks::{AdmissionWebhook, WebhookCerts};

/// The Redfish test harness of `mni-redfish` (`sushy-emulator` on loopback, installed by
/// `scripts/sushy-emulator.sh`), for services whose BMCs the Metal3 simulator drives
/// ([`TestEnvBuilder::with_metal3`]): their tests depend on `mni-testkit` only.
pub use mni_redfish::testing as redfish;
