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
//! Code map: `server` (builder, routing), `request` (paths, query, media types), `rest`
//! (writes), `list` and `watch` (reads), `admission` (decode, default, validate), `builtin`,
//! `defaults` and `validation` (built-in kinds), `crd` (custom resources), `discovery`,
//! `openapi`, `table` (kubectl's tables), `controllers` (namespace lifecycle).

mod admission;
mod auth;
mod builtin;
mod controllers;
mod crd;
mod defaults;
mod discovery;
mod error;
mod fields;
mod handlers;
mod https;
mod ipalloc;
pub mod kubeconfig;
mod object;
mod openapi;
mod patch;
mod registry;
mod request;
mod scale;
mod server;
mod state;
mod table;
pub mod tls;
mod validation;

pub use auth::ADMIN_USER;
pub use error::ApiError;
pub use server::{Error, Server, ServerBuilder};
