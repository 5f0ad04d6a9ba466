// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `network_backend`: the network service's HTTP API.
//!
//! It serves VirtualPrivateClouds — create, list, read, replace, delete — through the Kubernetes
//! API, so the API server stays the source of truth and the operator sees every change. The
//! routes, the JSON shapes and the error body are `mni-web`'s ([`mni_web::CrudRouter`]); this
//! crate names the domain kind and adds what is the service's own at the `+mni:scaffold:`
//! markers (`modules`; `routes`, where the domain's hooks, routes and OpenAPI paths go). `src/main.rs` parses the flags
//! and serves [`router`].
//!
//! | Route | |
//! |---|---|
//! | `GET /api/v1/virtualprivateclouds` | list |
//! | `POST /api/v1/virtualprivateclouds` | create from `{"name": …, "spec": …}` |
//! | `GET /api/v1/virtualprivateclouds/{name}` | read |
//! | `PUT /api/v1/virtualprivateclouds/{name}` | replace the spec with `{"spec": …}` |
//! | `DELETE /api/v1/virtualprivateclouds/{name}` | delete |
//! | `GET /api/openapi.json` | the OpenAPI 3 document of the API |
//! | `GET /healthz`, `GET /readyz` | liveness; readiness (the Kubernetes API answers) |

// +mni:fragment:modules:vpc.mni.dev/v1
pub mod subnets;
mod validation;
// +mni:fragment-end:modules:vpc.mni.dev/v1
// +mni:scaffold:modules

use axum::Router;
use kube::Client;
use mni_web::{CrudRouter, Domain, OpenApi, View};

use network_operator::api::network_v1alpha1::VirtualPrivateCloud;
use network_operator::api::network_v1alpha1::VirtualPrivateCloudSpec;

pub use mni_web::ApiError;

/// A VirtualPrivateCloud as the API shows it: its name, spec, status and creation time.
pub type VirtualPrivateCloudView = View<VirtualPrivateCloud>;

/// The body of `POST /api/v1/virtualprivateclouds`.
pub type CreateRequest = mni_web::CreateRequest<VirtualPrivateCloudSpec>;

/// The body of `PUT /api/v1/virtualprivateclouds/{name}`.
pub type ReplaceRequest = mni_web::ReplaceRequest<VirtualPrivateCloudSpec>;

/// The body of `GET /api/v1/virtualprivateclouds`.
pub type ListResponse = mni_web::ListResponse<VirtualPrivateCloud>;

/// The path of the VirtualPrivateCloud collection.
pub const COLLECTION: &str = "/api/v1/virtualprivateclouds";

/// The path of one VirtualPrivateCloud.
pub const ITEM: &str = "/api/v1/virtualprivateclouds/{name}";

/// The service, as the OpenAPI document's title and description name it.
const SERVICE: &str = "network";

/// The API version, as the OpenAPI document names it.
const VERSION: &str = "v1alpha1";

/// Every route of the API, serving the VirtualPrivateClouds of `namespace` through `client`. See
/// the [crate docs](crate). The OpenAPI document's VirtualPrivateCloud schemas are the CRD's, so it
/// cannot drift from what the Kubernetes API validates.
pub fn router(client: Client, namespace: &str) -> Router {
    let domain = Domain::new(client, namespace, VirtualPrivateCloud::new);
    let openapi = OpenApi::new(SERVICE, VERSION);
    let routes = CrudRouter::new(COLLECTION);
    // +mni:fragment:routes:vpc.mni.dev/v1
    // VPCs are checked with the operator's rules and have subnet routes.
    let domain = domain.with_validation(validation::check);
    let openapi = subnets::openapi(openapi);
    let routes = routes.with_routes(subnets::routes());
    // +mni:fragment-end:routes:vpc.mni.dev/v1
    // +mni:scaffold:routes
    routes.with_openapi(openapi).router(domain)
}
