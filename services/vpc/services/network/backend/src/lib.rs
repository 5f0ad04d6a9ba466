// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `network_backend`: the network service's HTTP API.
//!
//! It serves tenants' VirtualPrivateClouds and their subnets through the Kubernetes API, so
//! the API server stays the source of truth and the operator sees every change. Every write is
//! validated first with the operator's `validate` module, the same rules as the CRD's CEL
//! rules: an invalid address plan is HTTP 422 with the message kubectl shows, and a 422 from
//! the API server is passed on as is. Start with [`router`] (every route), then `routes` (the
//! handlers) and `error` (how failures become JSON). `src/main.rs` parses the flags and runs
//! [`serve`].
//!
//! | Route | |
//! |---|---|
//! | `GET /api/v1/virtualprivateclouds` | list |
//! | `POST /api/v1/virtualprivateclouds` | create from `{"name": …, "spec": …}` |
//! | `GET /api/v1/virtualprivateclouds/{name}` | read |
//! | `PUT /api/v1/virtualprivateclouds/{name}` | replace the spec with `{"spec": …}` |
//! | `DELETE /api/v1/virtualprivateclouds/{name}` | delete |
//! | `POST /api/v1/virtualprivateclouds/{name}/subnets` | add a subnet (a `SubnetSpec`) |
//! | `DELETE /api/v1/virtualprivateclouds/{name}/subnets/{subnet}` | remove a subnet |
//! | `GET /api/openapi.json` | the OpenAPI 3 document of the above |
//! | `GET /healthz`, `GET /readyz` | liveness; readiness (the Kubernetes API answers) |

mod error;
mod openapi;
mod routes;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{delete, get, post};
use kube::{Api, Client};
use tokio::net::TcpListener;

use network_operator::api::network_v1alpha1::VirtualPrivateCloud;

pub use error::ApiError;
pub use openapi::document as openapi;
pub use routes::{CreateRequest, ListResponse, ReplaceRequest};

pub use routes::VirtualPrivateCloudView;

/// The path of the VirtualPrivateCloud collection.
pub const COLLECTION: &str = "/api/v1/virtualprivateclouds";

/// The path of one VirtualPrivateCloud.
pub const ITEM: &str = "/api/v1/virtualprivateclouds/{name}";

/// The path of a VirtualPrivateCloud's subnets.
pub const SUBNETS: &str = "/api/v1/virtualprivateclouds/{name}/subnets";

/// The path of one subnet of a VirtualPrivateCloud.
pub const SUBNET: &str = "/api/v1/virtualprivateclouds/{name}/subnets/{subnet}";

/// What every handler shares: the VirtualPrivateCloud API of one namespace.
#[derive(Clone)]
pub struct AppState {
    api: Api<VirtualPrivateCloud>,
    namespace: String,
    openapi: Arc<serde_json::Value>,
}

impl AppState {
    /// Serves the VirtualPrivateClouds of `namespace` through `client`.
    #[must_use]
    pub fn new(client: Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            openapi: Arc::new(openapi::document()),
        }
    }

    /// The namespace whose VirtualPrivateClouds are served.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

/// Every route of the API. See the [crate docs](crate).
pub fn router(state: AppState) -> Router {
    Router::new()
        .route(COLLECTION, get(routes::list).post(routes::create))
        .route(
            ITEM,
            get(routes::read)
                .put(routes::replace)
                .delete(routes::remove),
        )
        .route(SUBNETS, post(routes::add_subnet))
        .route(SUBNET, delete(routes::remove_subnet))
        .route("/api/openapi.json", get(routes::openapi))
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .fallback(routes::not_found)
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// Logs one line per request: method, path, status and duration.
async fn log_request(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let start = Instant::now();
    let response = next.run(request).await;
    tracing::info!(
        %method,
        path,
        status = response.status().as_u16(),
        millis = start.elapsed().as_millis(),
        "request"
    );
    response
}

/// Serves [`router`] on `listener` until `shutdown` completes, then lets in-flight requests
/// finish.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}
