//! GET of one object or subresource, as a full object, its metadata or a table.

use axum::response::Response;
use serde_json::json;

use super::{json_response, subresources};
use crate::error::ApiResult;
use crate::request::{Output, Query, Target};
use crate::state::State;

/// GET of an object or subresource.
pub(crate) fn get(
    state: &State,
    target: &Target,
    query: &Query,
    output: Output,
) -> ApiResult<Response> {
    let name = target.name.as_deref().unwrap_or_default();
    let (obj, _) = state.read(&target.info, target.namespace.as_deref(), name)?;
    let obj = match target.subresource.as_deref() {
        Some("scale") => subresources::scale_view(target, &obj)?,
        _ => obj,
    };
    let body = match output {
        Output::Object => obj,
        Output::Metadata => crate::object::partial_metadata(&obj),
        Output::Table => {
            let rv = obj["metadata"]["resourceVersion"].clone();
            crate::table::table(
                &target.info,
                std::slice::from_ref(&obj),
                json!({"resourceVersion": rv}),
                query,
            )
        }
    };
    Ok(json_response(200, &body, &[]))
}
