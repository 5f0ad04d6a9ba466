//! [`CrudRouter`]: the HTTP API of a domain kind — list, read, create, replace and delete
//! through the Kubernetes API — with the OpenAPI document, the probes, a JSON 404 for every
//! other path and one log line per request.
//!
//! | Route | |
//! |---|---|
//! | `GET COLLECTION` | list ([`ListResponse`]) |
//! | `POST COLLECTION` | create from [`CreateRequest`] (`{"name": …, "spec": …}`), 201 |
//! | `GET COLLECTION/{name}` | read ([`View`]) |
//! | `PUT COLLECTION/{name}` | replace the spec with [`ReplaceRequest`] (`{"spec": …}`) |
//! | `DELETE COLLECTION/{name}` | delete, 204 |
//! | `GET /api/openapi.json` | the OpenAPI document, when one is given |
//! | `GET /healthz`, `GET /readyz` | liveness; readiness (the Kubernetes API answers) |
//!
//! A service adds its own routes with [`CrudRouter::with_routes`]; their handlers get the same
//! [`Domain`] state.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::ApiError;
use crate::domain::{CreateRequest, Domain, Kind, ListResponse, ReplaceRequest, Spec, View};
use crate::openapi::OpenApi;

/// The path of the OpenAPI document.
pub const OPENAPI_PATH: &str = "/api/openapi.json";

/// Builds the [`Router`] of a domain kind's API. See the docs atop `src/crud.rs`.
#[must_use = "a CrudRouter does nothing until `router` is called"]
pub struct CrudRouter<K: Kind> {
    collection: String,
    openapi: Option<OpenApi<K>>,
    routes: Router<Domain<K>>,
}

impl<K: Kind> std::fmt::Debug for CrudRouter<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrudRouter")
            .field("collection", &self.collection)
            .finish_non_exhaustive()
    }
}

impl<K: Kind> CrudRouter<K> {
    /// The API of the collection at `collection`, e.g. `/api/v1/ledgeraccounts`; one object
    /// is at `{collection}/{name}`.
    pub fn new(collection: &str) -> Self {
        Self {
            collection: collection.trim_end_matches('/').to_owned(),
            openapi: None,
            routes: Router::new(),
        }
    }

    /// Serves `openapi`'s document, with the CRUD routes, at [`OPENAPI_PATH`].
    pub fn with_openapi(mut self, openapi: OpenApi<K>) -> Self {
        self.openapi = Some(openapi);
        self
    }

    /// Adds the service's own routes; their handlers take `State<Domain<K>>`.
    pub fn with_routes(mut self, routes: Router<Domain<K>>) -> Self {
        self.routes = self.routes.merge(routes);
        self
    }

    /// The path of one object, `{collection}/{name}`.
    #[must_use]
    pub fn item(&self) -> String {
        format!("{}/{{name}}", self.collection)
    }

    /// Every route, serving `domain`.
    pub fn router(self, domain: Domain<K>) -> Router {
        let item = self.item();
        let mut router = self
            .routes
            .route(&self.collection, get(list::<K>).post(create::<K>))
            .route(&item, get(read::<K>).put(replace::<K>).delete(remove::<K>))
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz::<K>));
        if let Some(openapi) = &self.openapi {
            let document = Arc::new(openapi.document(&self.collection));
            router = router.route(
                OPENAPI_PATH,
                get(move || {
                    let document = Arc::clone(&document);
                    async move { Json(document.as_ref().clone()) }
                }),
            );
        }
        router
            .fallback(not_found)
            .layer(middleware::from_fn(log_request))
            .with_state(domain)
    }
}

async fn list<K: Kind>(State(domain): State<Domain<K>>) -> Result<Json<ListResponse<K>>, ApiError> {
    let items = domain.list().await?.iter().map(View::of).collect();
    Ok(Json(ListResponse { items }))
}

async fn create<K: Kind>(
    State(domain): State<Domain<K>>,
    body: Result<Json<CreateRequest<Spec<K>>>, JsonRejection>,
) -> Result<(StatusCode, Json<View<K>>), ApiError> {
    let Json(request) = body?;
    let created = domain.create(&request.name, request.spec).await?;
    Ok((StatusCode::CREATED, Json(View::of(&created))))
}

async fn read<K: Kind>(
    State(domain): State<Domain<K>>,
    Path(name): Path<String>,
) -> Result<Json<View<K>>, ApiError> {
    Ok(Json(View::of(&domain.get(&name).await?)))
}

async fn replace<K: Kind>(
    State(domain): State<Domain<K>>,
    Path(name): Path<String>,
    body: Result<Json<ReplaceRequest<Spec<K>>>, JsonRejection>,
) -> Result<Json<View<K>>, ApiError> {
    let Json(request) = body?;
    let obj = domain.get(&name).await?;
    let replaced = domain.replace_spec(obj, request.spec).await?;
    Ok(Json(View::of(&replaced)))
}

async fn remove<K: Kind>(
    State(domain): State<Domain<K>>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    domain.delete(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Ready when the Kubernetes API answers a list of the domain kind: the API can serve.
async fn readyz<K: Kind>(State(domain): State<Domain<K>>) -> Result<Json<Value>, ApiError> {
    domain.ready().await?;
    Ok(Json(json!({ "status": "ready" })))
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::NotFound(uri.path().to_owned())
}

/// Logs one line per request: method, path, status and duration.
pub(crate) async fn log_request(request: Request, next: Next) -> Response {
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
