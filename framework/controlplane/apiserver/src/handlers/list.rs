//! LIST of a collection, as a list of objects, of their metadata, or a table.

use axum::response::Response;
use serde_json::{Value, json};

use super::json_response;
use crate::error::ApiResult;
use crate::object;
use crate::request::{Output, Query, Target};
use crate::state::{Filter, State};

/// LIST of a collection, in the shape `Accept` asked for.
pub(crate) async fn list(
    state: &State,
    target: &Target,
    q: &Query,
    output: Output,
) -> ApiResult<Response> {
    let info = &target.info;
    let filter = Filter::from_query(info, q)?;
    let (items, revision, next, remaining) = state.collect(target, q, &filter).await?;
    let items: Vec<Value> = items
        .into_iter()
        .map(|(_, o)| object::to_served(info, o))
        .collect();
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if let Some(c) = next {
        metadata["continue"] = json!(c);
    }
    if let Some(r) = remaining {
        metadata["remainingItemCount"] = json!(r);
    }
    let body = match output {
        Output::Table => crate::table::table(info, &items, metadata, q),
        Output::Metadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": items.iter().map(object::partial_metadata).collect::<Vec<_>>(),
        }),
        Output::Object => json!({
            "kind": info.list_kind,
            "apiVersion": info.api_version(),
            "metadata": metadata,
            "items": items,
        }),
    };
    Ok(json_response(200, &body, &[]))
}
