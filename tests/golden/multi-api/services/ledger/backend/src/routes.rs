// SPDX-License-Identifier: MIT

//! The handlers: LedgerAccount CRUD through the Kubernetes API, probes and the OpenAPI
//! document. Each returns JSON, or an [`ApiError`] that becomes JSON.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use kube::ResourceExt;
use kube::api::{DeleteParams, ListParams, PostParams};
use serde::{Deserialize, Serialize};

use ledger_operator::api::ledger_v1alpha1::LedgerAccount;
use ledger_operator::api::ledger_v1alpha1::LedgerAccountSpec;
use ledger_operator::api::ledger_v1alpha1::LedgerAccountStatus;

use crate::{ApiError, AppState};

/// A LedgerAccount as the API shows it: its name, what it asks for and what the operator
/// reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerAccountView {
    /// The object's name, unique in its namespace.
    pub name: String,
    /// What it asks for.
    pub spec: LedgerAccountSpec,
    /// What the operator last reported, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LedgerAccountStatus>,
    /// When it was created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

impl From<LedgerAccount> for LedgerAccountView {
    fn from(obj: LedgerAccount) -> Self {
        Self {
            name: obj.name_any(),
            created_at: obj
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string()),
            spec: obj.spec,
            status: obj.status,
        }
    }
}

/// The body of `POST /api/v1/ledgeraccounts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreateRequest {
    /// The new object's name: lowercase letters, digits and '-'.
    pub name: String,
    /// What it asks for.
    pub spec: LedgerAccountSpec,
}

/// The body of `PUT /api/v1/ledgeraccounts/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaceRequest {
    /// What it asks for from now on.
    pub spec: LedgerAccountSpec,
}

/// The body of `GET /api/v1/ledgeraccounts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListResponse {
    /// Every LedgerAccount of the namespace, by name.
    pub items: Vec<LedgerAccountView>,
}

pub(crate) async fn list(State(state): State<AppState>) -> Result<Json<ListResponse>, ApiError> {
    let list = state.api.list(&ListParams::default()).await?;
    let mut response = ListResponse {
        items: list.items.into_iter().map(Into::into).collect(),
    };
    response.items.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Json(response))
}

pub(crate) async fn create(
    State(state): State<AppState>,
    body: Result<Json<CreateRequest>, JsonRejection>,
) -> Result<(StatusCode, Json<LedgerAccountView>), ApiError> {
    let Json(request) = body?;
    let obj = LedgerAccount::new(&request.name, request.spec);
    let created = state.api.create(&PostParams::default(), &obj).await?;
    tracing::info!(name = %created.name_any(), namespace = state.namespace(), "created");
    Ok((StatusCode::CREATED, Json(created.into())))
}

pub(crate) async fn read(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<LedgerAccountView>, ApiError> {
    Ok(Json(state.api.get(&name).await?.into()))
}

pub(crate) async fn replace(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Result<Json<ReplaceRequest>, JsonRejection>,
) -> Result<Json<LedgerAccountView>, ApiError> {
    let Json(request) = body?;
    let mut obj = state.api.get(&name).await?;
    obj.spec = request.spec;
    let replaced = state
        .api
        .replace(&name, &PostParams::default(), &obj)
        .await?;
    tracing::info!(%name, namespace = state.namespace(), "replaced");
    Ok(Json(replaced.into()))
}

pub(crate) async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.api.delete(&name, &DeleteParams::default()).await?;
    tracing::info!(%name, namespace = state.namespace(), "deleted");
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn openapi(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(state.openapi.as_ref().clone())
}

pub(crate) async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// Ready when the Kubernetes API answers a list of LedgerAccounts: the backend can serve.
pub(crate) async fn readyz(
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    state.api.list(&ListParams::default().limit(1)).await?;
    Ok(Json(serde_json::json!({ "status": "ready" })))
}

pub(crate) async fn not_found(uri: Uri) -> ApiError {
    ApiError::NotFound(uri.path().to_owned())
}
