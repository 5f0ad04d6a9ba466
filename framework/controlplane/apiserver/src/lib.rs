//! `mni-apiserver`: an embedded, Kubernetes-compatible API server for development and tests.
//!
//! kubectl and kube-rs talk to it as to kube-apiserver: discovery, OpenAPI, CRUD, patches,
//! list/watch with resourceVersion semantics, CustomResourceDefinitions with structural-schema
//! validation, pruning and defaulting. Objects live in [`mni_store`], a revisioned SQLite log
//! whose revision is the resourceVersion.
//!
//! Start with [`Server::builder`]:
//!
//! ```no_run
//! # async fn run() -> Result<(), mni_apiserver::Error> {
//! let server = mni_apiserver::Server::builder().start().await?; // in memory, ephemeral port
//! println!("serving at {}", server.url());
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Code map, in layers; each module uses only the layers below it, and no module imports the
//! module that imports it (`tests/integration/layers.rs` checks this):
//!
//! 1. `server`: the builder, the running [`Server`] and the routing of each request (by path
//!    and verb) to a handler. Start here.
//! 2. `handlers` (one module per verb family: `read`, `list`, `watch`, `create`, `update`
//!    for put and patch, `delete` for delete and deletecollection, `subresources`, `reviews`,
//!    `discovery`) and `controllers` (the built-in controllers: `namespaces` and the garbage
//!    collector `gc`). Both are clients of the state layer, never of each other.
//! 3. `state`: what the server holds (store, registry, watch fan-out, caches, credentials,
//!    settings) behind a narrow API: read, list, create, update, patch and delete with
//!    preconditions, each write through admission.
//! 4. Helpers, without state: `admission` (decode, default, validate), `auth` (credentials,
//!    RBAC), `crd` (custom resources), `builtin`, `defaults` and `validation` (built-in kinds),
//!    `conversion` (built-in kinds served in two shapes), `quota` and `limits` (ResourceQuota
//!    and LimitRange arithmetic), `fields` (managedFields, apply), `webhooks` (admission
//!    webhooks: matching, reviews, the HTTPS client), `policies` (ValidatingAdmissionPolicies:
//!    CEL evaluation, validation actions, type checking), `patch`, `scale`, `object`,
//!    `ipalloc`, `openapi`,
//!    `discovery`, `table` (kubectl's tables), `request` (paths, query, media types),
//!    `typemeta` (the `apiVersion` and `kind` of bodies, defaulted from the path),
//!    `registry` (served resources), `error`; and `tls`, `https`, `kubeconfig` for serving.

mod admission;
mod auth;
mod builtin;
mod controllers;
mod conversion;
mod crd;
mod defaults;
mod discovery;
mod error;
mod fields;
mod handlers;
mod https;
mod ipalloc;
pub mod kubeconfig;
mod limits;
mod metrics;
mod object;
mod openapi;
mod patch;
mod policies;
mod quota;
mod registry;
mod request;
mod scale;
mod server;
mod serviceaccount;
mod state;
mod table;
pub mod tls;
mod typemeta;
mod validation;
mod webhooks;

pub use auth::ADMIN_USER;
pub use error::ApiError;
pub use server::{Error, Server, ServerBuilder};
