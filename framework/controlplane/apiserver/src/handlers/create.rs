//! POST to a collection: creates an object. The body's `apiVersion` and `kind` default to
//! the path's (see `typemeta`).

use http::HeaderMap;
use mni_rbac::UserInfo;

use super::{Reply, decode_object};
use crate::error::ApiResult;
use crate::request::{Query, Target};
use crate::state::{State, WriteOptions};
use crate::typemeta::BodyKind;

/// POST to a collection.
pub(crate) async fn create(
    state: &State,
    target: &Target,
    query: &Query,
    user: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Reply> {
    let obj = decode_object(state, &BodyKind::of(&target.info), headers, body)?;
    let opts = WriteOptions::from_request(query, headers, user)?;
    Ok(Reply::created(
        state.create(target, obj, &opts, false).await?,
    ))
}
