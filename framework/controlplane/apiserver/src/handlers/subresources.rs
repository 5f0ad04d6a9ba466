//! What the `scale` subresource adds to get, put and patch, and the verbs subresources refuse.
//!
//! `status` needs nothing here: the state layer's update rules keep everything but `status`
//! (see `state::objects`). `scale` is a view: a `Scale` object made from the object's replica
//! paths, whose changes are written back to them.

use serde_json::Value;

use super::{Reply, refuse_force};
use crate::error::{ApiError, ApiResult};
use crate::patch::Patch;
use crate::request::Target;
use crate::scale;
use crate::state::{State, WriteOptions};

/// The `Scale` view of `obj`.
pub(crate) fn scale_view(target: &Target, obj: &Value) -> ApiResult<Value> {
    scale::to_scale(&target.info, obj)
}

/// PUT of `scale`: writes the replicas of `body` (a `Scale`) to the object.
pub(crate) async fn put_scale(
    state: &State,
    target: &Target,
    body: &Value,
    opts: WriteOptions,
) -> ApiResult<Reply> {
    refuse_force(&opts)?;
    let info = target.info.clone();
    let written = state
        .update(target, &opts, false, |current| {
            scale::apply_scale(&info, current, body)
        })
        .await?;
    scaled(target, Reply::ok(written))
}

/// PATCH of `scale`: patches the `Scale` view and writes its replicas to the object.
pub(crate) async fn patch_scale(
    state: &State,
    target: &Target,
    doc: &Patch,
    opts: WriteOptions,
) -> ApiResult<Reply> {
    refuse_force(&opts)?;
    let info = target.info.clone();
    let written = state
        .update(target, &opts, false, |current| {
            let scaled = doc.apply(&scale::to_scale(&info, current)?)?;
            scale::apply_scale(&info, current, &scaled)
        })
        .await?;
    scaled(target, Reply::ok(written))
}

/// The reply to a write of `scale`: the `Scale` view of the written object.
fn scaled(target: &Target, mut reply: Reply) -> ApiResult<Reply> {
    reply.body = scale::to_scale(&target.info, &reply.body)?;
    Ok(reply)
}

/// Subresources serve get, update and patch only.
pub(crate) fn refuse(method: &http::Method, target: &Target) -> ApiError {
    ApiError::method_not_allowed(
        method.as_str(),
        &format!(
            "{}/{}",
            target.info.plural,
            target.subresource.as_deref().unwrap_or_default()
        ),
    )
}
