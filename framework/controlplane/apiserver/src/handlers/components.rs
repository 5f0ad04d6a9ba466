//! ComponentStatus (`kubectl get componentstatuses`): deprecated upstream since 1.19 but still
//! served, read-only and computed on each request — the scheduler, the controller manager and
//! the store (`etcd-0`), each with a `Healthy` condition. In `mni-dev` the first two are the
//! server's in-process controllers, healthy while it answers; the store is probed by reading
//! its revision. Every answer carries upstream's deprecation warning.

use axum::response::Response;
use http::{HeaderMap, Method};
use serde_json::{Value, json};

use super::json_response;
use crate::error::{ApiError, ApiResult};
use crate::request::{self, Output, Query, Target};
use crate::state::State;

/// The warning kube-apiserver sends with every ComponentStatus answer.
const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

fn component(name: &str, healthy: bool, message: &str) -> Value {
    let mut condition =
        json!({"type": "Healthy", "status": if healthy { "True" } else { "False" }});
    if healthy {
        condition["message"] = json!(message);
    } else {
        condition["error"] = json!(message);
    }
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [condition],
    })
}

/// The components, in name order.
fn statuses(state: &State) -> Vec<Value> {
    let store = state.revision() >= 0;
    vec![
        component("controller-manager", true, "ok"),
        component(
            "etcd-0",
            store,
            if store { "ok" } else { "store unavailable" },
        ),
        component("scheduler", true, "ok"),
    ]
}

/// Answers the request when it is for ComponentStatuses; `None` otherwise.
pub(crate) fn handle(
    state: &State,
    target: &Target,
    method: &Method,
    query: &Query,
    headers: &HeaderMap,
) -> ApiResult<Option<Response>> {
    let info = &target.info;
    if !(info.group.is_empty() && info.plural == "componentstatuses") {
        return Ok(None);
    }
    if method != Method::GET || query.flag("watch") || target.subresource.is_some() {
        let verb = if query.flag("watch") {
            "WATCH"
        } else {
            method.as_str()
        };
        return Err(ApiError::method_not_allowed(verb, &info.plural));
    }
    let warnings = [DEPRECATED.to_string()];
    let all = statuses(state);
    let output = request::output(headers);
    if let Some(name) = target.name.as_deref() {
        let obj = all
            .into_iter()
            .find(|c| c["metadata"]["name"] == name)
            .ok_or_else(|| ApiError::not_found(info.group_resource(), name))?;
        let body = match output {
            Output::Table => {
                crate::table::table(info, std::slice::from_ref(&obj), json!({}), query)
            }
            Output::Metadata => crate::object::partial_metadata(&obj),
            Output::Object => obj,
        };
        return Ok(Some(json_response(200, &body, &warnings)));
    }
    let body = match output {
        Output::Table => crate::table::table(info, &all, json!({}), query),
        Output::Metadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": {},
            "items": all.iter().map(crate::object::partial_metadata).collect::<Vec<_>>(),
        }),
        Output::Object => json!({
            "kind": "ComponentStatusList",
            "apiVersion": "v1",
            "metadata": {},
            "items": all,
        }),
    };
    Ok(Some(json_response(200, &body, &warnings)))
}
