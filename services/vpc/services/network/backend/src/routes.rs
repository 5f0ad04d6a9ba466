// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The handlers: VirtualPrivateCloud and subnet CRUD through the Kubernetes API, probes and
//! the OpenAPI document. Each returns JSON, or an [`ApiError`] that becomes JSON.
//!
//! Writes are validated first with the operator's rules (`validate`); a broken rule is HTTP
//! 422 `Invalid` whose message names the subnet and the rule, as the API server's CEL rules
//! do. Subnet routes read the VirtualPrivateCloud, change its `spec.subnets` and replace it
//! (a concurrent change is HTTP 409).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use kube::ResourceExt;
use kube::api::{DeleteParams, ListParams, PostParams};
use serde::{Deserialize, Serialize};

use network_operator::api::network_v1alpha1::SubnetSpec;
use network_operator::api::network_v1alpha1::VirtualPrivateCloud;
use network_operator::api::network_v1alpha1::VirtualPrivateCloudSpec;
use network_operator::api::network_v1alpha1::VirtualPrivateCloudStatus;
use network_operator::api::network_v1alpha1::validate::message;
use network_operator::api::network_v1alpha1::validate::validate;
use network_operator::api::network_v1alpha1::validate::validate_update;

use crate::{ApiError, AppState};

/// A VirtualPrivateCloud as the API shows it: its name, what it asks for and what the operator
/// reports (per-subnet free IPs, NAT EIPs, conditions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualPrivateCloudView {
    /// The object's name, unique in its namespace.
    pub name: String,
    /// What it asks for.
    pub spec: VirtualPrivateCloudSpec,
    /// What the operator last reported, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<VirtualPrivateCloudStatus>,
    /// When it was created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

impl From<VirtualPrivateCloud> for VirtualPrivateCloudView {
    fn from(obj: VirtualPrivateCloud) -> Self {
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

/// The body of `POST /api/v1/virtualprivateclouds`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreateRequest {
    /// The new object's name: lowercase letters, digits and '-'.
    pub name: String,
    /// What it asks for.
    pub spec: VirtualPrivateCloudSpec,
}

/// The body of `PUT /api/v1/virtualprivateclouds/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaceRequest {
    /// What it asks for from now on.
    pub spec: VirtualPrivateCloudSpec,
}

/// The body of `GET /api/v1/virtualprivateclouds`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListResponse {
    /// Every VirtualPrivateCloud of the namespace, by name.
    pub items: Vec<VirtualPrivateCloudView>,
}

/// HTTP 422 when `spec` (replacing `old`, if any) breaks a rule, worded like the API server.
fn check(
    name: &str,
    spec: &VirtualPrivateCloudSpec,
    old: Option<&VirtualPrivateCloudSpec>,
) -> Result<(), ApiError> {
    let mut errors = validate(spec);
    if let Some(old) = old {
        let pairs = old
            .subnets
            .iter()
            .map(|s| (s.name.as_str(), s.cidr_block.as_str()));
        errors.extend(validate_update(pairs, spec));
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::Kubernetes {
        code: 422,
        reason: "Invalid".to_owned(),
        message: format!(
            "VirtualPrivateCloud {name:?} is invalid: {}",
            message(&errors)
        ),
    })
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
) -> Result<(StatusCode, Json<VirtualPrivateCloudView>), ApiError> {
    let Json(request) = body?;
    check(&request.name, &request.spec, None)?;
    let obj = VirtualPrivateCloud::new(&request.name, request.spec);
    let created = state.api.create(&PostParams::default(), &obj).await?;
    tracing::info!(name = %created.name_any(), namespace = state.namespace(), "created");
    Ok((StatusCode::CREATED, Json(created.into())))
}

pub(crate) async fn read(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<VirtualPrivateCloudView>, ApiError> {
    Ok(Json(state.api.get(&name).await?.into()))
}

pub(crate) async fn replace(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Result<Json<ReplaceRequest>, JsonRejection>,
) -> Result<Json<VirtualPrivateCloudView>, ApiError> {
    let Json(request) = body?;
    let obj = state.api.get(&name).await?;
    Ok(Json(write_spec(&state, obj, request.spec).await?.into()))
}

/// Validates `spec` against `obj`'s and replaces `obj`'s spec with it.
async fn write_spec(
    state: &AppState,
    mut obj: VirtualPrivateCloud,
    spec: VirtualPrivateCloudSpec,
) -> Result<VirtualPrivateCloud, ApiError> {
    let name = obj.name_any();
    check(&name, &spec, Some(&obj.spec))?;
    obj.spec = spec;
    let replaced = state
        .api
        .replace(&name, &PostParams::default(), &obj)
        .await?;
    tracing::info!(%name, namespace = state.namespace(), "replaced");
    Ok(replaced)
}

pub(crate) async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.api.delete(&name, &DeleteParams::default()).await?;
    tracing::info!(%name, namespace = state.namespace(), "deleted");
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn add_subnet(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Result<Json<SubnetSpec>, JsonRejection>,
) -> Result<(StatusCode, Json<VirtualPrivateCloudView>), ApiError> {
    let Json(subnet) = body?;
    let obj = state.api.get(&name).await?;
    if obj.spec.subnets.iter().any(|s| s.name == subnet.name) {
        return Err(ApiError::Kubernetes {
            code: 409,
            reason: "AlreadyExists".to_owned(),
            message: format!(
                "VirtualPrivateCloud {name:?} already has a subnet {:?}",
                subnet.name
            ),
        });
    }
    let mut spec = obj.spec.clone();
    spec.subnets.push(subnet);
    let written = write_spec(&state, obj, spec).await?;
    Ok((StatusCode::CREATED, Json(written.into())))
}

pub(crate) async fn remove_subnet(
    State(state): State<AppState>,
    Path((name, subnet)): Path<(String, String)>,
) -> Result<Json<VirtualPrivateCloudView>, ApiError> {
    let obj = state.api.get(&name).await?;
    if !obj.spec.subnets.iter().any(|s| s.name == subnet) {
        return Err(ApiError::Kubernetes {
            code: 404,
            reason: "NotFound".to_owned(),
            message: format!("VirtualPrivateCloud {name:?} has no subnet {subnet:?}"),
        });
    }
    let mut spec = obj.spec.clone();
    spec.subnets.retain(|s| s.name != subnet);
    Ok(Json(write_spec(&state, obj, spec).await?.into()))
}

pub(crate) async fn openapi(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(state.openapi.as_ref().clone())
}

pub(crate) async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// Ready when the Kubernetes API answers a list of VirtualPrivateClouds: the backend can serve.
pub(crate) async fn readyz(
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    state.api.list(&ListParams::default().limit(1)).await?;
    Ok(Json(serde_json::json!({ "status": "ready" })))
}

pub(crate) async fn not_found(uri: Uri) -> ApiError {
    ApiError::NotFound(uri.path().to_owned())
}
