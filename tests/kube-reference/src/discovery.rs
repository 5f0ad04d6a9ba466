//! Discovery compared as sets: the version, the legacy group's versions, the API groups and
//! their versions, and for every group version both serve, each resource's kind, scope, verbs,
//! short names and categories. What only one server serves is listed, not diffed field by
//! field.

use std::collections::{BTreeMap, BTreeSet};

use http::Method;
use serde_json::Value;

use crate::exchange::{Answer, Call, send};

/// One compared request and its differences.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The request.
    pub request: String,
    /// The differences, empty when none.
    pub differences: Vec<String>,
}

async fn both(a: &kube::Client, b: &kube::Client, path: &str) -> (Answer, Answer) {
    let call = Call::new(Method::GET, path);
    (send(a, &call).await, send(b, &call).await)
}

fn set(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn only(what: &str, a: &BTreeSet<String>, b: &BTreeSet<String>, out: &mut Vec<String>) {
    let left: Vec<&String> = a.difference(b).collect();
    let right: Vec<&String> = b.difference(a).collect();
    if !left.is_empty() {
        out.push(format!(
            "{what} only kube-apiserver serves: {}",
            join(&left)
        ));
    }
    if !right.is_empty() {
        out.push(format!("{what} only mni-dev serves: {}", join(&right)));
    }
}

fn join(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `group/version → preferred?` of an `/apis` answer.
fn group_versions(apis: &Value) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let mut versions = BTreeSet::new();
    let mut preferred = BTreeMap::new();
    for group in apis["groups"].as_array().into_iter().flatten() {
        let name = group["name"].as_str().unwrap_or_default();
        for v in group["versions"].as_array().into_iter().flatten() {
            if let Some(gv) = v["groupVersion"].as_str() {
                versions.insert(gv.to_owned());
            }
        }
        if let Some(p) = group["preferredVersion"]["groupVersion"].as_str() {
            preferred.insert(name.to_owned(), p.to_owned());
        }
    }
    (versions, preferred)
}

/// A resource of an APIResourceList, as a comparable summary.
fn resources(list: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for r in list["resources"].as_array().into_iter().flatten() {
        let name = r["name"].as_str().unwrap_or_default().to_owned();
        let mut verbs: Vec<String> = set(&r["verbs"]).into_iter().collect();
        verbs.sort();
        let summary = serde_json::json!({
            "kind": r["kind"],
            "namespaced": r["namespaced"],
            "singularName": r["singularName"],
            "verbs": verbs,
            "shortNames": set(&r["shortNames"]).into_iter().collect::<Vec<_>>(),
            "categories": set(&r["categories"]).into_iter().collect::<Vec<_>>(),
            "group": r["group"],
            "version": r["version"],
        });
        out.insert(name, summary);
    }
    out
}

fn compare_resources(a: &Value, b: &Value, out: &mut Vec<String>) {
    let (ra, rb) = (resources(a), resources(b));
    let ka: BTreeSet<String> = ra.keys().cloned().collect();
    let kb: BTreeSet<String> = rb.keys().cloned().collect();
    only("resources", &ka, &kb, out);
    for name in ka.intersection(&kb) {
        for d in crate::compare::diff(&ra[name], &rb[name]) {
            out.push(format!("{name}{d}"));
        }
    }
}

/// Compares discovery; each request is one [`Compared`].
pub async fn compare(reference: &kube::Client, mni: &kube::Client) -> Vec<Compared> {
    let mut results = Vec::new();

    let (a, b) = both(reference, mni, "/version").await;
    let mut d = Vec::new();
    for key in ["major", "minor"] {
        if a.body[key] != b.body[key] {
            d.push(format!(
                "/{key}: kube-apiserver {}, mni-dev {}",
                a.body[key], b.body[key]
            ));
        }
    }
    results.push(Compared {
        request: "GET /version (major, minor)".to_owned(),
        differences: d,
    });

    let (a, b) = both(reference, mni, "/api").await;
    let mut d = Vec::new();
    only(
        "versions",
        &set(&a.body["versions"]),
        &set(&b.body["versions"]),
        &mut d,
    );
    results.push(Compared {
        request: "GET /api".to_owned(),
        differences: d,
    });

    let (a, b) = both(reference, mni, "/apis").await;
    let mut d = Vec::new();
    let (va, pa) = group_versions(&a.body);
    let (vb, pb) = group_versions(&b.body);
    only("group versions", &va, &vb, &mut d);
    for (group, p) in &pa {
        if let Some(q) = pb.get(group)
            && p != q
        {
            d.push(format!(
                "{group}: preferred version kube-apiserver {p}, mni-dev {q}"
            ));
        }
    }
    results.push(Compared {
        request: "GET /apis".to_owned(),
        differences: d,
    });

    let mut paths = vec!["/api/v1".to_owned()];
    paths.extend(va.intersection(&vb).map(|gv| format!("/apis/{gv}")));
    for path in paths {
        let (a, b) = both(reference, mni, &path).await;
        let mut d = Vec::new();
        if a.status != b.status {
            d.push(format!(
                "status: kube-apiserver {}, mni-dev {}",
                a.status, b.status
            ));
        } else {
            compare_resources(&a.body, &b.body, &mut d);
        }
        results.push(Compared {
            request: format!("GET {path}"),
            differences: d,
        });
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_compare_verbs_as_sets() {
        let a = json!({"resources": [
            {"name": "configmaps", "kind": "ConfigMap", "namespaced": true,
             "verbs": ["get", "list", "create"], "shortNames": ["cm"]},
            {"name": "pods", "kind": "Pod", "namespaced": true, "verbs": ["get"]}
        ]});
        let b = json!({"resources": [
            {"name": "configmaps", "kind": "ConfigMap", "namespaced": true,
             "verbs": ["create", "get", "list"], "shortNames": ["cm"]}
        ]});
        let mut d = Vec::new();
        compare_resources(&a, &b, &mut d);
        assert_eq!(d, vec!["resources only kube-apiserver serves: pods"]);
    }
}
