// SPDX-License-Identifier: MIT

//! `ledger_backend`: the ledger service's HTTP API.
//!
//! It serves LedgerAccounts — create, list, read, replace, delete — through the Kubernetes
//! API, so the API server stays the source of truth and the operator sees every change. The
//! routes, the JSON shapes and the error body are `mni-web`'s ([`mni_web::CrudRouter`]); this
//! crate names the domain kind and adds what is the service's own at the `+mni:scaffold:`
//! markers (`modules`; `routes`, where the domain's hooks, routes and OpenAPI paths go). `src/main.rs` parses the flags
//! and serves [`router`].
//!
//! | Route | |
//! |---|---|
//! | `GET /api/v1/ledgeraccounts` | list |
//! | `POST /api/v1/ledgeraccounts` | create from `{"name": …, "spec": …}` |
//! | `GET /api/v1/ledgeraccounts/{name}` | read |
//! | `PUT /api/v1/ledgeraccounts/{name}` | replace the spec with `{"spec": …}` |
//! | `DELETE /api/v1/ledgeraccounts/{name}` | delete |
//! | `GET /api/openapi.json` | the OpenAPI 3 document of the API |
//! | `GET /healthz`, `GET /readyz` | liveness; readiness (the Kubernetes API answers) |

// +mni:scaffold:modules

use axum::Router;
use kube::Client;
use mni_web::{CrudRouter, Domain, OpenApi, View};

use ledger_operator::api::ledger_v1alpha1::LedgerAccount;
use ledger_operator::api::ledger_v1alpha1::LedgerAccountSpec;

pub use mni_web::ApiError;

/// A LedgerAccount as the API shows it: its name, spec, status and creation time.
pub type LedgerAccountView = View<LedgerAccount>;

/// The body of `POST /api/v1/ledgeraccounts`.
pub type CreateRequest = mni_web::CreateRequest<LedgerAccountSpec>;

/// The body of `PUT /api/v1/ledgeraccounts/{name}`.
pub type ReplaceRequest = mni_web::ReplaceRequest<LedgerAccountSpec>;

/// The body of `GET /api/v1/ledgeraccounts`.
pub type ListResponse = mni_web::ListResponse<LedgerAccount>;

/// The path of the LedgerAccount collection.
pub const COLLECTION: &str = "/api/v1/ledgeraccounts";

/// The path of one LedgerAccount.
pub const ITEM: &str = "/api/v1/ledgeraccounts/{name}";

/// The service, as the OpenAPI document's title and description name it.
const SERVICE: &str = "ledger";

/// The API version, as the OpenAPI document names it.
const VERSION: &str = "v1alpha1";

/// Every route of the API, serving the LedgerAccounts of `namespace` through `client`. See
/// the [crate docs](crate). The OpenAPI document's LedgerAccount schemas are the CRD's, so it
/// cannot drift from what the Kubernetes API validates.
pub fn router(client: Client, namespace: &str) -> Router {
    let domain = Domain::new(client, namespace, LedgerAccount::new);
    let openapi = OpenApi::new(SERVICE, VERSION);
    let routes = CrudRouter::new(COLLECTION);
    // +mni:scaffold:routes
    routes.with_openapi(openapi).router(domain)
}
