// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `metal_backend`: the metal service's HTTP API.
//!
//! It serves Servers — create, list, read, replace, delete — through the Kubernetes
//! API, so the API server stays the source of truth and the operator sees every change. The
//! routes, the JSON shapes and the error body are `mni-web`'s ([`mni_web::CrudRouter`]); this
//! crate names the domain kind and adds what is the service's own at the `+mni:scaffold:`
//! markers (`modules`; `routes`, where the domain's hooks, routes and OpenAPI paths go). `src/main.rs` parses the flags
//! and serves [`router`].
//!
//! | Route | |
//! |---|---|
//! | `GET /api/v1/servers` | list |
//! | `POST /api/v1/servers` | create from `{"name": …, "spec": …}` |
//! | `GET /api/v1/servers/{name}` | read |
//! | `PUT /api/v1/servers/{name}` | replace the spec with `{"spec": …}` |
//! | `DELETE /api/v1/servers/{name}` | delete |
//! | `GET /api/openapi.json` | the OpenAPI 3 document of the API |
//! | `GET /healthz`, `GET /readyz` | liveness; readiness (the Kubernetes API answers) |

// +mni:fragment:modules:baremetal.mni.dev/v1
pub mod actions;
mod validation;
// +mni:fragment-end:modules:baremetal.mni.dev/v1
// +mni:scaffold:modules

use axum::Router;
use kube::Client;
use mni_web::{CrudRouter, Domain, OpenApi, View};

use metal_operator::api::metal_v1alpha1::Server;
use metal_operator::api::metal_v1alpha1::ServerSpec;

pub use mni_web::ApiError;

/// A Server as the API shows it: its name, spec, status and creation time.
pub type ServerView = View<Server>;

/// The body of `POST /api/v1/servers`.
pub type CreateRequest = mni_web::CreateRequest<ServerSpec>;

/// The body of `PUT /api/v1/servers/{name}`.
pub type ReplaceRequest = mni_web::ReplaceRequest<ServerSpec>;

/// The body of `GET /api/v1/servers`.
pub type ListResponse = mni_web::ListResponse<Server>;

/// The path of the Server collection.
pub const COLLECTION: &str = "/api/v1/servers";

/// The path of one Server.
pub const ITEM: &str = "/api/v1/servers/{name}";

/// The service, as the OpenAPI document's title and description name it.
const SERVICE: &str = "metal";

/// The API version, as the OpenAPI document names it.
const VERSION: &str = "v1alpha1";

/// Every route of the API, serving the Servers of `namespace` through `client`. See
/// the [crate docs](crate). The OpenAPI document's Server schemas are the CRD's, so it
/// cannot drift from what the Kubernetes API validates.
pub fn router(client: Client, namespace: &str) -> Router {
    let domain = Domain::new(client, namespace, Server::new);
    let openapi = OpenApi::new(SERVICE, VERSION);
    let routes = CrudRouter::new(COLLECTION);
    // +mni:fragment:routes:baremetal.mni.dev/v1
    // Servers are checked with the operator's rules and have power and provisioning routes.
    let domain = domain.with_validation(validation::check);
    let openapi = actions::openapi(openapi);
    let routes = routes.with_routes(actions::routes());
    // +mni:fragment-end:routes:baremetal.mni.dev/v1
    // +mni:scaffold:routes
    routes.with_openapi(openapi).router(domain)
}
