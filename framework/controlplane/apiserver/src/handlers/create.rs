//! POST to a collection: creates an object.

use http::HeaderMap;

use super::Reply;
use crate::error::ApiResult;
use crate::request::{self, Query, Target};
use crate::state::{State, WriteOptions};

/// POST to a collection.
pub(crate) async fn create(
    state: &State,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Reply> {
    let obj = request::decode_body(headers, body)?;
    let opts = WriteOptions::from_request(query, headers)?;
    Ok(Reply::created(
        state.create(target, obj, &opts, false).await?,
    ))
}
