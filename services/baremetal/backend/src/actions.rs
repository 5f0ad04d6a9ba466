// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! A Server's power and provisioning actions, as routes of their own:
//!
//! | Route | |
//! |---|---|
//! | `POST /api/v1/servers/{name}/power-on` | power it on: `online: true` |
//! | `POST /api/v1/servers/{name}/power-off` | power it off: `online: false` |
//! | `POST /api/v1/servers/{name}/provision` | provision the image of the body (`{"url": …, "checksum": …}`) |
//! | `POST /api/v1/servers/{name}/deprovision` | deprovision it: no image |
//!
//! Each reads the Server, changes its spec and replaces it through the backend's `Domain`, so
//! the change is validated like any other write (a second image without deprovisioning is
//! HTTP 422) and a concurrent change is HTTP 409. Metal3 does the work; the status shows it.

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use mni_web::{ApiError, Domain, OpenApi, View, path_parameter};
use serde_json::json;

use metal_operator::api::metal_v1alpha1::Image;
use metal_operator::api::metal_v1alpha1::Server;

/// The path of a Server's power-on action.
pub const POWER_ON: &str = "/api/v1/servers/{name}/power-on";

/// The path of a Server's power-off action.
pub const POWER_OFF: &str = "/api/v1/servers/{name}/power-off";

/// The path of a Server's provision action.
pub const PROVISION: &str = "/api/v1/servers/{name}/provision";

/// The path of a Server's deprovision action.
pub const DEPROVISION: &str = "/api/v1/servers/{name}/deprovision";

type Servers = Domain<Server>;

/// The action routes. See the [module docs](self).
pub(crate) fn routes() -> Router<Servers> {
    Router::new()
        .route(POWER_ON, post(power_on))
        .route(POWER_OFF, post(power_off))
        .route(PROVISION, post(provision))
        .route(DEPROVISION, post(deprovision))
}

/// `openapi` with the action routes.
pub(crate) fn openapi(openapi: OpenApi<Server>) -> OpenApi<Server> {
    let image = openapi.crd_schema("/spec/properties/image");
    let mut openapi = openapi.with_schema("Image", image);
    for (path, verb, summary, request) in [
        (
            POWER_ON,
            "powerOn",
            "Power a Server on (online: true)",
            None,
        ),
        (
            POWER_OFF,
            "powerOff",
            "Power a Server off (online: false)",
            None,
        ),
        (
            PROVISION,
            "provision",
            "Provision an image onto a Server",
            Some("Image"),
        ),
        (
            DEPROVISION,
            "deprovision",
            "Deprovision a Server (remove its image)",
            None,
        ),
    ] {
        let operation = openapi.operation(verb, summary, request, "200", "Server");
        openapi = openapi.with_path(
            path,
            json!({ "parameters": [path_parameter("name")], "post": operation }),
        );
    }
    openapi
}

async fn power_on(
    State(servers): State<Servers>,
    Path(name): Path<String>,
) -> Result<Json<View<Server>>, ApiError> {
    change(&servers, &name, |spec| spec.online = true).await
}

async fn power_off(
    State(servers): State<Servers>,
    Path(name): Path<String>,
) -> Result<Json<View<Server>>, ApiError> {
    change(&servers, &name, |spec| spec.online = false).await
}

async fn provision(
    State(servers): State<Servers>,
    Path(name): Path<String>,
    Json(image): Json<Image>,
) -> Result<Json<View<Server>>, ApiError> {
    change(&servers, &name, move |spec| spec.image = Some(image)).await
}

async fn deprovision(
    State(servers): State<Servers>,
    Path(name): Path<String>,
) -> Result<Json<View<Server>>, ApiError> {
    change(&servers, &name, |spec| spec.image = None).await
}

/// Reads Server `name`, applies `edit` to its spec and replaces it (validated) if it changed.
async fn change(
    servers: &Servers,
    name: &str,
    edit: impl FnOnce(&mut metal_operator::api::metal_v1alpha1::ServerSpec),
) -> Result<Json<View<Server>>, ApiError> {
    let obj = servers.get(name).await?;
    let mut spec = obj.spec.clone();
    edit(&mut spec);
    if spec == obj.spec {
        return Ok(Json(View::of(&obj)));
    }
    let written = servers.replace_spec(obj, spec).await?;
    Ok(Json(View::of(&written)))
}
