// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `compute_backend`: the compute service's HTTP API.
//!
//! It serves Instances — create, list, read, replace, delete — through the Kubernetes
//! API, so the API server stays the source of truth and the operator sees every change. The
//! routes, the JSON shapes and the error body are `mni-web`'s ([`mni_web::CrudRouter`]); this
//! crate names the domain kind and adds what is the service's own at the `+mni:scaffold:`
//! markers (`modules`; `routes`, where the domain's hooks, routes and OpenAPI paths go). `src/main.rs` parses the flags
//! and serves [`router`].
//!
//! | Route | |
//! |---|---|
//! | `GET /api/v1/instances` | list |
//! | `POST /api/v1/instances` | create from `{"name": …, "spec": …}` |
//! | `GET /api/v1/instances/{name}` | read |
//! | `PUT /api/v1/instances/{name}` | replace the spec with `{"spec": …}` |
//! | `DELETE /api/v1/instances/{name}` | delete |
//! | `GET /api/openapi.json` | the OpenAPI 3 document of the API |
//! | `GET /healthz`, `GET /readyz` | liveness; readiness (the Kubernetes API answers) |

// +mni:fragment:modules:vm.mni.dev/v1
pub mod power;
mod validation;
// +mni:fragment-end:modules:vm.mni.dev/v1
// +mni:scaffold:modules

use axum::Router;
use kube::Client;
use mni_web::{CrudRouter, Domain, OpenApi, View};

use compute_operator::api::compute_v1alpha1::Instance;
use compute_operator::api::compute_v1alpha1::InstanceSpec;

pub use mni_web::ApiError;

/// A Instance as the API shows it: its name, spec, status and creation time.
pub type InstanceView = View<Instance>;

/// The body of `POST /api/v1/instances`.
pub type CreateRequest = mni_web::CreateRequest<InstanceSpec>;

/// The body of `PUT /api/v1/instances/{name}`.
pub type ReplaceRequest = mni_web::ReplaceRequest<InstanceSpec>;

/// The body of `GET /api/v1/instances`.
pub type ListResponse = mni_web::ListResponse<Instance>;

/// The path of the Instance collection.
pub const COLLECTION: &str = "/api/v1/instances";

/// The path of one Instance.
pub const ITEM: &str = "/api/v1/instances/{name}";

/// The service, as the OpenAPI document's title and description name it.
const SERVICE: &str = "compute";

/// The API version, as the OpenAPI document names it.
const VERSION: &str = "v1alpha1";

/// Every route of the API, serving the Instances of `namespace` through `client`. See
/// the [crate docs](crate). The OpenAPI document's Instance schemas are the CRD's, so it
/// cannot drift from what the Kubernetes API validates.
pub fn router(client: Client, namespace: &str) -> Router {
    let domain = Domain::new(client, namespace, Instance::new);
    let openapi = OpenApi::new(SERVICE, VERSION);
    let routes = CrudRouter::new(COLLECTION);
    // +mni:fragment:routes:vm.mni.dev/v1
    // Instances are checked with the operator's rules and have power routes.
    let domain = domain.with_validation(validation::check);
    let openapi = power::openapi(openapi);
    let routes = routes.with_routes(power::routes());
    // +mni:fragment-end:routes:vm.mni.dev/v1
    // +mni:scaffold:routes
    routes.with_openapi(openapi).router(domain)
}
