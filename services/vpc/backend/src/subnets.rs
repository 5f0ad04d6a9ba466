// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The subnets of a VirtualPrivateCloud, as routes of their own:
//!
//! | Route | |
//! |---|---|
//! | `POST /api/v1/virtualprivateclouds/{name}/subnets` | add a subnet (a `SubnetSpec`) |
//! | `DELETE /api/v1/virtualprivateclouds/{name}/subnets/{subnet}` | remove a subnet |
//!
//! Each reads the VirtualPrivateCloud, changes its `spec.subnets` and replaces it through the
//! backend's `Domain`, so the change is validated like any other write (HTTP 422) and a
//! concurrent change is HTTP 409.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};
use mni_web::{ApiError, Domain, OpenApi, View, path_parameter};
use serde_json::json;

use network_operator::api::network_v1alpha1::SubnetSpec;
use network_operator::api::network_v1alpha1::VirtualPrivateCloud;

/// The path of a VirtualPrivateCloud's subnets.
pub const SUBNETS: &str = "/api/v1/virtualprivateclouds/{name}/subnets";

/// The path of one subnet of a VirtualPrivateCloud.
pub const SUBNET: &str = "/api/v1/virtualprivateclouds/{name}/subnets/{subnet}";

type Vpcs = Domain<VirtualPrivateCloud>;

/// The subnet routes. See the [module docs](self).
pub(crate) fn routes() -> Router<Vpcs> {
    Router::new()
        .route(SUBNETS, post(add_subnet))
        .route(SUBNET, delete(remove_subnet))
}

/// `openapi` with the subnet routes and the `SubnetSpec` schema (the CRD's).
pub(crate) fn openapi(openapi: OpenApi<VirtualPrivateCloud>) -> OpenApi<VirtualPrivateCloud> {
    let subnet = openapi.crd_schema("/spec/properties/subnets/items");
    let add = openapi.operation(
        "addSubnet",
        "Add a subnet to a VirtualPrivateCloud",
        Some("SubnetSpec"),
        "201",
        "VirtualPrivateCloud",
    );
    let remove = openapi.operation(
        "removeSubnet",
        "Remove a subnet from a VirtualPrivateCloud",
        None,
        "200",
        "VirtualPrivateCloud",
    );
    openapi
        .with_schema("SubnetSpec", subnet)
        .with_path(
            SUBNETS,
            json!({ "parameters": [path_parameter("name")], "post": add }),
        )
        .with_path(
            SUBNET,
            json!({
                "parameters": [path_parameter("name"), path_parameter("subnet")],
                "delete": remove,
            }),
        )
}

async fn add_subnet(
    State(vpcs): State<Vpcs>,
    Path(name): Path<String>,
    body: Result<Json<SubnetSpec>, JsonRejection>,
) -> Result<(StatusCode, Json<View<VirtualPrivateCloud>>), ApiError> {
    let Json(subnet) = body?;
    let obj = vpcs.get(&name).await?;
    if obj.spec.subnets.iter().any(|s| s.name == subnet.name) {
        let message = format!(
            "VirtualPrivateCloud {name:?} already has a subnet {:?}",
            subnet.name
        );
        return Err(ApiError::kubernetes(409, "AlreadyExists", message));
    }
    let mut spec = obj.spec.clone();
    spec.subnets.push(subnet);
    let written = vpcs.replace_spec(obj, spec).await?;
    Ok((StatusCode::CREATED, Json(View::of(&written))))
}

async fn remove_subnet(
    State(vpcs): State<Vpcs>,
    Path((name, subnet)): Path<(String, String)>,
) -> Result<Json<View<VirtualPrivateCloud>>, ApiError> {
    let obj = vpcs.get(&name).await?;
    if !obj.spec.subnets.iter().any(|s| s.name == subnet) {
        let message = format!("VirtualPrivateCloud {name:?} has no subnet {subnet:?}");
        return Err(ApiError::kubernetes(404, "NotFound", message));
    }
    let mut spec = obj.spec.clone();
    spec.subnets.retain(|s| s.name != subnet);
    let written = vpcs.replace_spec(obj, spec).await?;
    Ok(Json(View::of(&written)))
}
