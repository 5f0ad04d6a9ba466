//! API discovery: `/api`, `/apis`, `/apis/{group}`, the per-version resource lists, and the
//! aggregated (`apidiscovery.k8s.io/v2`) documents kubectl asks for first.
//!
//! Everything is derived from the [`Registry`], so a CRD's resources appear as soon as it is
//! established and disappear when it is deleted.

use http::HeaderMap;
use serde_json::{Value, json};

use crate::registry::{Registry, ResourceInfo};

/// Which aggregated-discovery version the client accepts, if any.
pub(crate) fn aggregated(headers: &HeaderMap) -> Option<&'static str> {
    let accept = headers.get(http::header::ACCEPT)?.to_str().ok()?;
    for alt in accept.split(',') {
        let params: Vec<&str> = alt.split(';').map(str::trim).collect();
        if params.contains(&"as=APIGroupDiscoveryList") && params.contains(&"g=apidiscovery.k8s.io")
        {
            if params.contains(&"v=v2") {
                return Some("v2");
            }
            if params.contains(&"v=v2beta1") {
                return Some("v2beta1");
            }
        }
    }
    None
}

/// The content type of an aggregated discovery response.
pub(crate) fn aggregated_content_type(version: &str) -> String {
    format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
}

/// `/api`.
pub(crate) fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_entry(group: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub(crate) fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_entry(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`.
pub(crate) fn group(registry: &Registry, name: &str) -> Option<Value> {
    let (g, vs) = registry.groups().iter().find(|(g, _)| g == name)?;
    let mut entry = group_entry(g, vs);
    entry["kind"] = json!("APIGroup");
    entry["apiVersion"] = json!("v1");
    Some(entry)
}

fn subresource_entries(info: &ResourceInfo) -> Vec<(String, Value)> {
    let mut subs = Vec::new();
    let verbs = json!(["get", "patch", "update"]);
    if info.status {
        subs.push((
            "status".to_string(),
            json!({"kind": info.kind, "verbs": verbs}),
        ));
    }
    if info.group.is_empty() && info.plural == "serviceaccounts" {
        subs.push((
            "token".to_string(),
            json!({"kind": "TokenRequest", "group": "authentication.k8s.io", "version": "v1", "verbs": ["create"]}),
        ));
    }
    if info.scale.is_some() {
        subs.push((
            "scale".to_string(),
            json!({"kind": "Scale", "group": "autoscaling", "version": "v1", "verbs": verbs}),
        ));
    }
    subs
}

/// `/api/v1` and `/apis/{group}/{version}`.
pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Value {
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut resources = Vec::new();
    for info in registry.resources(group, version) {
        let mut r = json!({
            "name": info.plural,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": info.verbs,
        });
        if !info.short_names.is_empty() {
            r["shortNames"] = json!(info.short_names);
        }
        if !info.categories.is_empty() {
            r["categories"] = json!(info.categories);
        }
        resources.push(r);
        for (sub, mut entry) in subresource_entries(&info) {
            entry["name"] = json!(format!("{}/{sub}", info.plural));
            entry["singularName"] = json!("");
            entry["namespaced"] = json!(info.namespaced);
            resources.push(entry);
        }
    }
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}

/// The aggregated document for `/api` (core) or `/apis` (every named group).
pub(crate) fn aggregated_list(registry: &Registry, core: bool, version: &str) -> Value {
    let items: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = registry
                        .resources(g, v)
                        .iter()
                        .map(|info| {
                            let subs: Vec<Value> = subresource_entries(info)
                                .into_iter()
                                .map(|(sub, e)| {
                                    json!({
                                        "subresource": sub,
                                        "responseKind": {
                                            "group": e.get("group").cloned().unwrap_or(json!(g)),
                                            "version": e.get("version").cloned().unwrap_or(json!(v)),
                                            "kind": e["kind"],
                                        },
                                        "verbs": e["verbs"],
                                    })
                                })
                                .collect();
                            let mut r = json!({
                                "resource": info.plural,
                                "responseKind": {"group": g, "version": v, "kind": info.kind},
                                "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": info.singular,
                                "verbs": info.verbs,
                            });
                            if !info.short_names.is_empty() {
                                r["shortNames"] = json!(info.short_names);
                            }
                            if !info.categories.is_empty() {
                                r["categories"] = json!(info.categories);
                            }
                            if !subs.is_empty() {
                                r["subresources"] = json!(subs);
                            }
                            r
                        })
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_list_has_subresources() {
        let r = Registry::with_builtins();
        let list = resource_list(&r, "apps", "v1");
        let names: Vec<&str> = list["resources"]
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"deployments/status"));
        assert!(names.contains(&"deployments/scale"));
        assert!(!names.contains(&"daemonsets/scale"));
    }

    #[test]
    fn aggregated_splits_core_from_groups() {
        let r = Registry::with_builtins();
        let core = aggregated_list(&r, true, "v2");
        assert_eq!(core["items"].as_array().map(Vec::len), Some(1));
        let apis = aggregated_list(&r, false, "v2");
        assert!(
            apis["items"]
                .as_array()
                .expect("items")
                .iter()
                .any(|g| g["metadata"]["name"] == "apps")
        );
    }
}
