//! The documents about the API: `/version`, discovery (`/api`, `/apis`, their groups and
//! resource lists, plain or aggregated) and OpenAPI (`/openapi/v2`, `/openapi/v3`).

use axum::response::Response;
use http::{HeaderMap, HeaderValue, header};
use serde_json::{Value, json};

use super::json_response;
use crate::error::{ApiError, ApiResult};
use crate::request::Route;
use crate::state::State;
use crate::{discovery, openapi};

/// `/version`.
pub(crate) fn version() -> Response {
    json_response(200, &version_info(), &[])
}

fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "37",
        "gitVersion": format!("v1.37.0-mni.{}", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if cfg!(target_arch = "x86_64") { "amd64" } else if cfg!(target_arch = "aarch64") { "arm64" } else { std::env::consts::ARCH }),
    })
}

/// `/openapi/v2`, `/openapi/v3` and `/openapi/v3/{group-version path}`.
pub(crate) fn openapi(state: &State, path: &str, headers: &HeaderMap) -> ApiResult<Response> {
    let documents = openapi::documents(&state.registry());
    openapi::serve(state.openapi(), documents, path, headers)
}

/// The discovery document of `route` (a path that names no resource).
pub(crate) fn serve(state: &State, route: &Route, headers: &HeaderMap) -> ApiResult<Response> {
    match route {
        Route::CoreVersions | Route::Groups => {
            let core = matches!(route, Route::CoreVersions);
            if let Some(v) = discovery::aggregated(headers) {
                let doc = discovery::aggregated_list(&state.registry(), core, v);
                let mut resp = json_response(200, &doc, &[]);
                if let Ok(ct) = HeaderValue::from_str(&discovery::aggregated_content_type(v)) {
                    resp.headers_mut().insert(header::CONTENT_TYPE, ct);
                }
                return Ok(resp);
            }
            let addr = state.address();
            let doc = if core {
                discovery::core_versions(&addr)
            } else {
                discovery::groups(&state.registry())
            };
            Ok(json_response(200, &doc, &[]))
        }
        Route::Group(g) => discovery::group(&state.registry(), g)
            .ok_or_else(ApiError::path_not_found)
            .map(|doc| json_response(200, &doc, &[])),
        Route::Resources(g, v) => Ok(json_response(
            200,
            &discovery::resource_list(&state.registry(), g, v),
            &[],
        )),
        Route::Resource(_) => Err(ApiError::path_not_found()),
    }
}
