//! PUT and PATCH of an object or subresource, server-side apply included.
//!
//! PUT replaces the object (a resourceVersion in the body must be the current one; its
//! `apiVersion` and `kind` default to the path's, `autoscaling/v1` `Scale` for `scale`); PATCH
//! applies a JSON patch, a merge patch or a strategic merge patch (see `patch`) to the current
//! object; an apply patch (`application/apply-patch+yaml`), which must name the path's
//! `apiVersion` and `kind`, merges the manager's fields (see `fields`) and creates the object
//! when it is missing. The `scale` subresource is served by
//! `subresources`.

use http::HeaderMap;
use mni_rbac::UserInfo;
use serde_json::Value;

use super::{Reply, decode_object, refuse_force, subresources};
use crate::error::{ApiError, ApiResult};
use crate::object::{self, meta_mut, meta_str};
use crate::patch::Patch;
use crate::request::{self, PatchType, Query, Target};
use crate::state::{State, WriteOptions, bind_namespace};
use crate::typemeta::{self, BodyKind};

/// PUT of an object or subresource.
pub(crate) async fn put(
    state: &State,
    target: &Target,
    query: &Query,
    user: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Reply> {
    let scale = target.subresource.as_deref() == Some("scale");
    let want = if scale {
        BodyKind::scale()
    } else {
        BodyKind::of(&target.info)
    };
    let body = decode_object(state, &want, headers, body)?;
    let opts = WriteOptions::from_request(query, headers, user)?;
    if scale {
        return subresources::put_scale(state, target, &body, opts).await;
    }
    refuse_force(&opts)?;
    // kube-apiserver's checkName: the body names the object of the URL.
    let name = target.name.as_deref().unwrap_or_default();
    let given = meta_str(&body, "name").unwrap_or_default();
    if given != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    let explicit_rv = meta_str(&body, "resourceVersion").map(str::to_string);
    let written = state
        .update(target, &opts, false, |current| {
            if let Some(rv) = &explicit_rv
                && meta_str(current, "resourceVersion") != Some(rv.as_str())
            {
                return Err(ApiError::stale(
                    target.info.group_resource(),
                    object::name(current),
                ));
            }
            Ok(body.clone())
        })
        .await?;
    Ok(Reply::ok(written))
}

/// PATCH of an object or subresource.
pub(crate) async fn patch(
    state: &State,
    target: &Target,
    query: &Query,
    user: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Reply> {
    let kind = request::patch_type(headers)?;
    let opts = WriteOptions::from_request(query, headers, user)?;
    if kind == PatchType::Apply {
        return apply(state, target, body, opts).await;
    }
    let doc = Patch::parse(kind, body, target.info.custom().is_some())?;
    if target.subresource.as_deref() == Some("scale") {
        return subresources::patch_scale(state, target, &doc, opts).await;
    }
    refuse_force(&opts)?;
    Ok(Reply::ok(state.patch(target, &doc, &opts).await?))
}

/// Server-side apply (`application/apply-patch+yaml`): creates the object when missing.
async fn apply(
    state: &State,
    target: &Target,
    body: &[u8],
    opts: WriteOptions,
) -> ApiResult<Reply> {
    let info = &target.info;
    if !opts.manager_given {
        // kube-apiserver's ValidatePatchOptions.
        return Err(ApiError::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            &[mni_apimachinery::FieldError::required(
                "fieldManager",
                "is required for apply patch",
            )],
        ));
    }
    let mut applied = crate::request::decode_yaml(body)?;
    typemeta::check_applied(&BodyKind::of(info), &applied)?;
    let name = target.name.as_deref().unwrap_or_default();
    match meta_str(&applied, "name") {
        None | Some("") => {
            meta_mut(&mut applied).insert("name".into(), Value::String(name.into()));
        }
        Some(n) if n != name => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        Some(_) => {}
    }
    let sub = target.subresource.as_deref();
    if matches!(sub, Some("scale")) {
        return Err(ApiError::unsupported_media_type(
            "application/apply-patch+yaml",
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
            ],
        ));
    }
    // The applied configuration merged into what is stored (an update or a lost create race).
    let apply_to_current = |current: &Value| {
        crate::fields::apply(
            info,
            Some(current),
            &applied,
            &opts.manager,
            opts.force,
            sub,
        )
    };
    if state
        .stored(&info.key(target.namespace.as_deref(), name))
        .is_none()
    {
        if sub.is_some() {
            return Err(ApiError::not_found(info.group_resource(), name));
        }
        let mut created =
            crate::fields::apply(info, None, &applied, &opts.manager, opts.force, None)?;
        bind_namespace(target, &mut created)?;
        let collection = Target {
            name: None,
            ..target.clone()
        };
        return match state.create(&collection, created, &opts, true).await {
            // Lost a race with another creator: apply to what is there now.
            Err(e) if e.code == 409 && e.reason == "AlreadyExists" => state
                .update(target, &opts, true, apply_to_current)
                .await
                .map(Reply::ok),
            other => other.map(Reply::created),
        };
    }
    state
        .update(target, &opts, true, apply_to_current)
        .await
        .map(Reply::ok)
}
