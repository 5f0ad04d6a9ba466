// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The console: the platform's front page, listing the tenants and the installed services
//! with a link to each service's own web UI.
//!
//! [`router`] serves the page (`/`, `/console.js`, `/console.css`, embedded from
//! `src/console/`) and its JSON API: `/api/tenants` (every `Tenant`, with its namespaces and
//! readiness) and `/api/services` ([`crate::registry::services`]). The page renders with
//! `textContent` only and the responses carry a strict Content-Security-Policy, so nothing a
//! tenant or a CSV writes can run as script. A refusal of the API server (say, the console's
//! ServiceAccount lacks a rule of `config/rbac/console_role.yaml`) answers `502` with a JSON
//! body naming what could not be read. `src/bin/mni-console.rs` serves it.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use kube::api::{Api, ListParams};
use serde::Serialize;
use serde_json::json;

use crate::api::platform_v1alpha1::Tenant;
use crate::registry;

const INDEX: &str = include_str!("console/index.html");
const SCRIPT: &str = include_str!("console/console.js");
const STYLE: &str = include_str!("console/console.css");
/// What the page may load: its own script and style, its own API; nothing inline, no frames.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A tenant, as the console lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantView {
    /// The Tenant's name.
    pub name: String,
    /// Its parent, for a sub-tenant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Its namespaces, as created.
    pub namespaces: Vec<String>,
    /// Its `Ready` condition's status (`True`, `False`, or `Unknown` before the first
    /// reconcile).
    pub ready: String,
    /// Why, when it is not ready.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl From<&Tenant> for TenantView {
    fn from(tenant: &Tenant) -> Self {
        let status = tenant.status.as_ref();
        let ready = status.and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
        TenantView {
            name: tenant.metadata.name.clone().unwrap_or_default(),
            parent: tenant.spec.parent.clone(),
            namespaces: status.map(|s| s.namespaces.clone()).unwrap_or_default(),
            ready: ready.map_or_else(|| "Unknown".to_owned(), |c| c.status.as_str().to_owned()),
            message: ready
                .filter(|c| c.status.as_str() != "True")
                .map(|c| format!("{}: {}", c.reason, c.message))
                .unwrap_or_default(),
        }
    }
}

/// The console's routes, reading the cluster with `client`.
pub fn router(client: kube::Client) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/console.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/console.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route("/api/tenants", get(tenants))
        .route("/api/services", get(services))
        .fallback(|| async { (StatusCode::NOT_FOUND, Json(json!({"message": "not found"}))) })
        .layer(axum::middleware::map_response(secure))
        .with_state(client)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// Adds the security headers to every response.
async fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// What the API server refused, as a `502` naming the resource and the rules to check.
fn refused(what: &str, error: &kube::Error) -> Response {
    tracing::warn!(%error, "reading {what}");
    let body = json!({
        "message": format!(
            "the console cannot list {what}: {error} (its ServiceAccount needs the rules of \
             config/rbac/console_role.yaml)"
        ),
    });
    (StatusCode::BAD_GATEWAY, Json(body)).into_response()
}

async fn tenants(State(client): State<kube::Client>) -> Response {
    match Api::<Tenant>::all(client)
        .list(&ListParams::default())
        .await
    {
        Ok(list) => {
            let mut views: Vec<TenantView> = list.items.iter().map(TenantView::from).collect();
            views.sort_by(|a, b| a.name.cmp(&b.name));
            Json(views).into_response()
        }
        Err(e) => refused("tenants.platform.mni.dev", &e),
    }
}

async fn services(State(client): State<kube::Client>) -> Response {
    match registry::services(client).await {
        Ok(services) => Json(services).into_response(),
        Err(e) => refused("clusterserviceversions.operators.coreos.com", &e),
    }
}
