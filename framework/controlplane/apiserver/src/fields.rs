//! Field management: `metadata.managedFields` on every write, and server-side apply, through
//! `mni-fieldmanager`.
//!
//! Every create, update and non-apply patch records its field manager (the `fieldManager`
//! parameter, or the client's user-agent name as kube-apiserver derives it) as an `Update`
//! entry; `application/apply-patch+yaml` runs server-side apply with conflicts and `force`.
//! Type information (list types, merge keys) comes from a CRD's structural schema or the
//! built-in tables.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use mni_fieldmanager::TypeInfo;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::registry::{Flavor, ResourceInfo};

/// Built-in type information by (group, kind).
type BuiltinTypes = Mutex<HashMap<(String, String), Arc<TypeInfo>>>;

/// The type information of a served kind (cached).
pub(crate) fn types_for(info: &ResourceInfo) -> Arc<TypeInfo> {
    static BUILTIN: OnceLock<BuiltinTypes> = OnceLock::new();
    match &info.flavor {
        Flavor::Custom(c) => c.types.clone(),
        Flavor::Builtin(_) => {
            let cache = BUILTIN.get_or_init(Default::default);
            let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
            cache
                .entry((info.group.clone(), info.kind.clone()))
                .or_insert_with(|| {
                    Arc::new(
                        mni_fieldmanager::builtin(&info.group, &info.kind)
                            .unwrap_or_else(mni_fieldmanager::generic),
                    )
                })
                .clone()
        }
    }
}

/// The type information of a CRD version's schema.
pub(crate) fn types_from_schema(
    schema: Option<&mni_apimachinery::Structural>,
    status: bool,
) -> Arc<TypeInfo> {
    let base = match schema {
        Some(s) => TypeInfo::from_structural(s),
        None => mni_fieldmanager::generic(),
    };
    Arc::new(if status {
        base.into_builder().status_subresource().build()
    } else {
        base
    })
}

/// The field manager of a request: `fieldManager`, else the user agent's name (the part
/// before the first `/`), as kube-apiserver derives it.
pub(crate) fn manager(query_manager: Option<&str>, user_agent: Option<&str>) -> ApiResult<String> {
    if let Some(m) = query_manager {
        if m.chars().count() > 128 {
            return Err(ApiError::new(
                422,
                "Invalid",
                format!(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes (got {m:?})"
                ),
            ));
        }
        return Ok(m.to_string());
    }
    let ua = user_agent.unwrap_or("unknown");
    let name: String = ua
        .split('/')
        .next()
        .unwrap_or("unknown")
        .chars()
        .take(128)
        .collect();
    Ok(if name.is_empty() {
        "unknown".into()
    } else {
        name
    })
}

/// Records an Update by `manager` from `old` (None on create) to `new`.
pub(crate) fn track_update(
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
) {
    let types = types_for(info);
    let start = mni_fieldmanager::managed_fields_for_update(old, new, subresource);
    let entries = mni_fieldmanager::update(
        old,
        new,
        manager,
        &start,
        &types,
        &object::now(),
        &info.api_version(),
        subresource,
    );
    mni_fieldmanager::set_managed_fields(new, &entries);
}

/// Server-side apply of `applied` onto `live` (None: create).
pub(crate) fn apply(
    info: &ResourceInfo,
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    subresource: Option<&str>,
) -> ApiResult<Value> {
    let types = types_for(info);
    let managed = live
        .map(|l| mni_fieldmanager::decode_managed_fields(l).unwrap_or_default())
        .unwrap_or_default();
    mni_fieldmanager::apply(
        live,
        applied,
        manager,
        &managed,
        force,
        &types,
        &object::now(),
        &info.api_version(),
        subresource,
    )
    .map(|a| a.object)
    .map_err(|e| {
        let status = e.to_status();
        let reason = match e.code() {
            409 => "Conflict",
            400 => "BadRequest",
            422 => "Invalid",
            _ => "InternalError",
        };
        ApiError {
            code: e.code(),
            reason,
            message: status["message"].as_str().unwrap_or_default().to_string(),
            details: status.get("details").cloned(),
        }
    })
}
