// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! A Server's power and provisioning actions, as routes of their own:
//!
//! | Route | |
//! |---|---|
//! | `POST /api/v1/servers/{name}/power-on` | power it on: `online: true` |
//! | `POST /api/v1/servers/{name}/power-off` | power it off: `online: false` |
//! | `POST /api/v1/servers/{name}/reboot` | reboot it (body optional: `{"mode": "soft"}` or `{"mode": "hard"}`) |
//! | `POST /api/v1/servers/{name}/provision` | provision the image of the body (`{"url": …, "checksum": …}`) |
//! | `POST /api/v1/servers/{name}/deprovision` | deprovision it: no image |
//!
//! Each reads the Server, changes its spec and replaces it through the backend's `Domain`, so
//! the change is validated like any other write (a second image without deprovisioning is
//! HTTP 422) and a concurrent change is HTTP 409. Metal3 does the work; the status shows it.
//!
//! A reboot is not a spec change but a request: the route records it on the Server as the
//! annotation `REBOOT_ANNOTATION` (an id and the mode), which the operator hands to Metal3
//! once, and `status.reboot` follows it (`Rebooting`, then `Completed`). It is idempotent: while
//! a request is not finished, asking again returns the Server as it is. A mode other than
//! `soft` or `hard` is HTTP 422 naming `mode`; a server that is not `provisioned` is HTTP 409.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use kube::ResourceExt;
use kube::api::PostParams;
use mni_web::{ApiError, Domain, OpenApi, View, path_parameter};
use serde_json::{Value, json};

use metal_operator::api::metal_v1alpha1::Image;
use metal_operator::api::metal_v1alpha1::REBOOT_ANNOTATION;
use metal_operator::api::metal_v1alpha1::REBOOT_REFUSED;
use metal_operator::api::metal_v1alpha1::REBOOTED;
use metal_operator::api::metal_v1alpha1::RebootMode;
use metal_operator::api::metal_v1alpha1::RebootRequest;
use metal_operator::api::metal_v1alpha1::Server;

/// The path of a Server's power-on action.
pub const POWER_ON: &str = "/api/v1/servers/{name}/power-on";

/// The path of a Server's power-off action.
pub const POWER_OFF: &str = "/api/v1/servers/{name}/power-off";

/// The path of a Server's reboot action.
pub const REBOOT: &str = "/api/v1/servers/{name}/reboot";

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
        .route(REBOOT, post(reboot))
        .route(PROVISION, post(provision))
        .route(DEPROVISION, post(deprovision))
}

/// `openapi` with the action routes.
pub(crate) fn openapi(openapi: OpenApi<Server>) -> OpenApi<Server> {
    let image = openapi.crd_schema("/spec/properties/image");
    let mut openapi = openapi.with_schema("Image", image).with_schema(
        "Reboot",
        json!({
            "type": "object",
            "description": "How to power the server off; without a mode, soft, then hard.",
            "properties": { "mode": { "type": "string", "enum": ["soft", "hard"] } },
        }),
    );
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
            REBOOT,
            "reboot",
            "Reboot a provisioned Server (Metal3 powers it off and on again)",
            Some("Reboot"),
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

async fn reboot(
    State(servers): State<Servers>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Json<View<Server>>, ApiError> {
    let mode = reboot_mode(&body)?;
    let mut obj = servers.get(&name).await?;
    let state = obj.status.as_ref().and_then(|s| s.state.clone());
    if state.as_deref() != Some("provisioned") {
        return Err(ApiError::kubernetes(
            409,
            "Conflict",
            format!(
                "state: server {name} is {}; only a provisioned server can be rebooted",
                state.as_deref().unwrap_or("not registered yet")
            ),
        ));
    }
    if reboot_pending(&obj) {
        return Ok(Json(View::of(&obj)));
    }
    let request = RebootRequest::now(mode);
    let value = serde_json::to_string(&request)
        .map_err(|e| ApiError::BadRequest(format!("reboot request: {e}")))?;
    obj.annotations_mut()
        .insert(REBOOT_ANNOTATION.to_owned(), value);
    let written = servers
        .api()
        .replace(&name, &PostParams::default(), &obj)
        .await?;
    tracing::info!(%name, id = request.id, "reboot requested");
    Ok(Json(View::of(&written)))
}

/// The mode of a reboot request's body: empty, `{}` or `{"mode": null}` is none (soft, then
/// hard); otherwise `mode` must be `soft` or `hard`.
fn reboot_mode(body: &[u8]) -> Result<Option<RebootMode>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("the body is not JSON: {e}")))?;
    let Some(fields) = value.as_object() else {
        return Err(ApiError::invalid(
            "body: expected an object with an optional mode, soft or hard",
        ));
    };
    match fields.get("mode") {
        None | Some(Value::Null) => Ok(None),
        Some(mode) => serde_json::from_value(mode.clone())
            .map(Some)
            .map_err(|_| ApiError::invalid(format!("mode: must be soft or hard, not {mode}"))),
    }
}

/// Whether the Server has a reboot request the operator has not finished (or refused).
fn reboot_pending(obj: &Server) -> bool {
    let Some(request) = obj
        .annotations()
        .get(REBOOT_ANNOTATION)
        .and_then(|v| serde_json::from_str::<RebootRequest>(v).ok())
    else {
        return false;
    };
    !obj.status
        .as_ref()
        .and_then(|s| s.reboot.as_ref())
        .is_some_and(|r| r.id == request.id && (r.phase == REBOOTED || r.phase == REBOOT_REFUSED))
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
