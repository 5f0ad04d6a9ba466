// SPDX-License-Identifier: MIT

//! `ledger_backend`: the ledger service's HTTP API.
//!
//! It serves LedgerAccounts — create, list, read, replace, delete — through the Kubernetes
//! API, so the API server stays the source of truth and the operator sees every change. Start
//! with [`router`] (every route), then `routes` (the handlers) and `error` (how failures become
//! JSON). `src/main.rs` parses the flags and runs [`serve`].
//!
//! | Route | |
//! |---|---|
//! | `GET /api/v1/ledgeraccounts` | list |
//! | `POST /api/v1/ledgeraccounts` | create from `{"name": …, "spec": …}` |
//! | `GET /api/v1/ledgeraccounts/{name}` | read |
//! | `PUT /api/v1/ledgeraccounts/{name}` | replace the spec with `{"spec": …}` |
//! | `DELETE /api/v1/ledgeraccounts/{name}` | delete |
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
use axum::routing::get;
use kube::{Api, Client};
use tokio::net::TcpListener;

use ledger_operator::api::ledger_v1alpha1::LedgerAccount;

pub use error::ApiError;
pub use openapi::document as openapi;
pub use routes::{CreateRequest, ListResponse, ReplaceRequest};

pub use routes::LedgerAccountView;

/// The path of the LedgerAccount collection.
pub const COLLECTION: &str = "/api/v1/ledgeraccounts";

/// The path of one LedgerAccount.
pub const ITEM: &str = "/api/v1/ledgeraccounts/{name}";

/// What every handler shares: the LedgerAccount API of one namespace.
#[derive(Clone)]
pub struct AppState {
    api: Api<LedgerAccount>,
    namespace: String,
    openapi: Arc<serde_json::Value>,
}

impl AppState {
    /// Serves the LedgerAccounts of `namespace` through `client`.
    #[must_use]
    pub fn new(client: Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            openapi: Arc::new(openapi::document()),
        }
    }

    /// The namespace whose LedgerAccounts are served.
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
