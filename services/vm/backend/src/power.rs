// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! An Instance's power actions, as routes of their own:
//!
//! | Route | |
//! |---|---|
//! | `POST /api/v1/instances/{name}/start` | run it: `runStrategy: Always` |
//! | `POST /api/v1/instances/{name}/stop` | stop it: `runStrategy: Halted` |
//! | `POST /api/v1/instances/{name}/restart` | restart it: a new `restartRequestedAt` |
//!
//! Start and stop change the run strategy as `virtctl start` and `virtctl stop` do for a VM
//! that KubeVirt runs by its strategy; restart asks the operator for one restart of the
//! running instance. Each reads the Instance, changes its spec and replaces it through the
//! backend's `Domain`, so the change is validated like any other write and a concurrent change
//! is HTTP 409.

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use mni_web::{ApiError, Domain, OpenApi, View, path_parameter};
use serde_json::json;

use compute_operator::api::compute_v1alpha1::Instance;

/// The path of an Instance's start action.
pub const START: &str = "/api/v1/instances/{name}/start";

/// The path of an Instance's stop action.
pub const STOP: &str = "/api/v1/instances/{name}/stop";

/// The path of an Instance's restart action.
pub const RESTART: &str = "/api/v1/instances/{name}/restart";

type Instances = Domain<Instance>;

/// The power routes. See the [module docs](self).
pub(crate) fn routes() -> Router<Instances> {
    Router::new()
        .route(START, post(start))
        .route(STOP, post(stop))
        .route(RESTART, post(restart))
}

/// `openapi` with the power routes.
pub(crate) fn openapi(openapi: OpenApi<Instance>) -> OpenApi<Instance> {
    let mut openapi = openapi;
    for (path, id, summary) in [
        (
            START,
            "startInstance",
            "Start an Instance (runStrategy Always)",
        ),
        (
            STOP,
            "stopInstance",
            "Stop an Instance (runStrategy Halted)",
        ),
        (RESTART, "restartInstance", "Restart a running Instance"),
    ] {
        let operation = openapi.operation(id, summary, None, "200", "Instance");
        openapi = openapi.with_path(
            path,
            json!({ "parameters": [path_parameter("name")], "post": operation }),
        );
    }
    openapi
}

async fn start(
    State(instances): State<Instances>,
    Path(name): Path<String>,
) -> Result<Json<View<Instance>>, ApiError> {
    set_run_strategy(&instances, &name, "Always").await
}

async fn stop(
    State(instances): State<Instances>,
    Path(name): Path<String>,
) -> Result<Json<View<Instance>>, ApiError> {
    set_run_strategy(&instances, &name, "Halted").await
}

async fn restart(
    State(instances): State<Instances>,
    Path(name): Path<String>,
) -> Result<Json<View<Instance>>, ApiError> {
    let obj = instances.get(&name).await?;
    let mut spec = obj.spec.clone();
    spec.restart_requested_at = Some(request_stamp());
    let written = instances.replace_spec(obj, spec).await?;
    Ok(Json(View::of(&written)))
}

/// A new value for `restartRequestedAt`: the time of the request, in nanoseconds since the
/// Unix epoch.
fn request_stamp() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:09}", since.as_secs(), since.subsec_nanos())
}

async fn set_run_strategy(
    instances: &Instances,
    name: &str,
    strategy: &str,
) -> Result<Json<View<Instance>>, ApiError> {
    let obj = instances.get(name).await?;
    if obj.spec.run_strategy.as_deref() == Some(strategy) {
        return Ok(Json(View::of(&obj)));
    }
    let mut spec = obj.spec.clone();
    spec.run_strategy = Some(strategy.to_owned());
    let written = instances.replace_spec(obj, spec).await?;
    Ok(Json(View::of(&written)))
}
