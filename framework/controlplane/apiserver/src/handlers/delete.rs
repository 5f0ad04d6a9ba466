//! DELETE of one object and DELETECOLLECTION, with DeleteOptions from the body and query.

use http::HeaderMap;
use mni_rbac::UserInfo;
use serde_json::{Value, json};

use super::Reply;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::request::{self, Query, Target};
use crate::state::{Filter, State};

/// DELETE of one object.
pub(crate) async fn delete(
    state: &State,
    target: &Target,
    query: &Query,
    user: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Reply> {
    let options = delete_options(headers, body, query)?;
    let dry_run = query.dry_run()?
        || options["dryRun"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "All"));
    Ok(Reply::ok(
        state.delete(target, &options, dry_run, Some(user)).await?,
    ))
}

/// DELETECOLLECTION: deletes every matching object, returning them as a list.
pub(crate) async fn delete_collection(
    state: &State,
    target: &Target,
    q: &Query,
    user: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Reply> {
    let options = delete_options(headers, body, q)?;
    let info = &target.info;
    let filter = Filter::from_query(info, q)?;
    let dry_run = q.dry_run()?;
    let mut all = Query::default();
    all.0.extend(
        q.0.iter()
            .filter(|(k, _)| *k == "resourceVersion")
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    let (items, revision, _, _) = state.collect(target, &all, &filter).await?;
    let mut deleted = Vec::new();
    for (_, obj) in items {
        let one = Target {
            info: info.clone(),
            namespace: object::meta_str(&obj, "namespace").map(str::to_string),
            name: Some(object::name(&obj).to_string()),
            subresource: None,
        };
        match state.delete(&one, &options, dry_run, Some(user)).await {
            Ok(w) => deleted.push(w.object),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Reply {
        code: 200,
        body: json!({
            "kind": info.list_kind,
            "apiVersion": info.api_version(),
            "metadata": {"resourceVersion": revision.to_string()},
            "items": deleted,
        }),
        warnings: Vec::new(),
    })
}

fn delete_options(headers: &HeaderMap, body: &[u8], q: &Query) -> ApiResult<Value> {
    let mut options = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        request::decode_body(headers, body)?
    };
    if !options.is_object() {
        return Err(ApiError::bad_request("DeleteOptions must be a JSON object"));
    }
    crate::typemeta::check_delete_options(&options, body)?;
    if let Some(p) = q.get("propagationPolicy") {
        options["propagationPolicy"] = json!(p);
    }
    Ok(options)
}
