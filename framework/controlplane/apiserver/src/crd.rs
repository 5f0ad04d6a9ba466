//! CustomResourceDefinitions: validation, establishment, and serving their resources.
//!
//! A CRD written through the API is validated (names, versions, one storage version,
//! structural schemas, validation rules that compile), gets its `NamesAccepted` and
//! `Established` conditions in the same write, and its versions are added to the
//! [`Registry`](crate::registry::Registry) before the response is sent, so its resources are
//! served (and discovered) at once; each served version's rules are compiled then, once. Deleting
//! a CRD removes its resources and their objects.

use std::sync::Arc;

use mni_apimachinery::FieldError;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::object::{self, meta_str};
use crate::registry::{CustomInfo, Flavor, PrinterColumn, Registry, ResourceInfo, ScalePaths};

/// Whether `info` is the CRD resource itself.
pub(crate) fn is_crd(info: &ResourceInfo) -> bool {
    info.group == "apiextensions.k8s.io" && info.plural == "customresourcedefinitions"
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Kubernetes' version priority: GA before beta before alpha, higher numbers first, then
/// non-Kubernetes versions alphabetically.
pub(crate) fn version_priority(v: &str) -> (u8, i64, i64, String) {
    let parse = |rest: &str| -> Option<(u8, i64, i64)> {
        let rest = rest.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let major: i64 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((0, -major, 0));
        }
        for (level, prefix) in [(1u8, "beta"), (2u8, "alpha")] {
            if let Some(n) = tail.strip_prefix(prefix) {
                let minor: i64 = n.parse().ok()?;
                return Some((level, -major, -minor));
            }
        }
        None
    };
    match parse(v) {
        Some((l, a, b)) => (l, a, b, String::new()),
        None => (3, 0, 0, v.to_string()),
    }
}

/// Validates a CRD and sets its defaults and status. `old` is the stored CRD on update.
pub(crate) fn prepare(registry: &Registry, crd: &mut Value, old: Option<&Value>) -> ApiResult<()> {
    let name = object::name(crd).to_string();
    let mut errs = Vec::new();
    let group = str_of(crd, "/spec/group").to_string();
    let plural = str_of(crd, "/spec/names/plural").to_string();
    let kind = str_of(crd, "/spec/names/kind").to_string();
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid(
            "spec.group",
            json!(group),
            "should be a domain with at least one dot",
        ));
    }
    if plural.is_empty() {
        errs.push(FieldError::required("spec.names.plural", ""));
    } else {
        for msg in mni_apimachinery::is_dns1035_label(&plural) {
            errs.push(FieldError::invalid("spec.names.plural", json!(plural), msg));
        }
    }
    if kind.is_empty() {
        errs.push(FieldError::required("spec.names.kind", ""));
    }
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    let scope = str_of(crd, "/spec/scope");
    if !["Namespaced", "Cluster"].contains(&scope) {
        errs.push(FieldError::not_supported(
            "spec.scope",
            json!(scope),
            &["Cluster", "Namespaced"],
        ));
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        errs.push(FieldError::required(
            "spec.versions",
            "must have exactly one version marked as storage version",
        ));
    }
    let storage: Vec<&Value> = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .collect();
    if !versions.is_empty() && storage.len() != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            json!(
                versions
                    .iter()
                    .map(|v| v.get("name").cloned().unwrap_or(Value::Null))
                    .collect::<Vec<_>>()
            ),
            "must have exactly one version marked as storage version",
        ));
    }
    // kube-apiserver's internal CRD keeps a schema shared by every version at
    // spec.validation, and reports its errors there.
    let shared_schema = versions
        .first()
        .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
        .filter(|first| {
            versions
                .iter()
                .all(|v| v.pointer("/schema/openAPIV3Schema") == Some(*first))
        });
    let mut seen = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let vname = v.get("name").and_then(Value::as_str).unwrap_or_default();
        if vname.is_empty() {
            errs.push(FieldError::required(format!("spec.versions[{i}].name"), ""));
        } else if seen.contains(&vname) {
            errs.push(FieldError::duplicate(
                format!("spec.versions[{i}].name"),
                json!(vname),
            ));
        }
        seen.push(vname);
        if let Some(schema) = v.pointer("/schema/openAPIV3Schema") {
            let prefix = format!("spec.versions[{i}].schema.openAPIV3Schema");
            let schema_errs = mni_apimachinery::validate_schema(schema, &prefix);
            // Validation rules are checked on structural schemas only; identical schemas of
            // all versions are checked once, at the path kube-apiserver hoists them to.
            if schema_errs.is_empty() {
                if shared_schema.is_none() {
                    errs.extend(mni_apimachinery::rule_errors(schema, &prefix));
                } else if i == 0 {
                    errs.extend(mni_apimachinery::rule_errors(
                        schema,
                        "spec.validation.openAPIV3Schema",
                    ));
                }
            }
            errs.extend(schema_errs);
        }
        if let Some(scale) = v.pointer("/subresources/scale") {
            for f in ["specReplicasPath", "statusReplicasPath"] {
                if scale
                    .get(f)
                    .and_then(Value::as_str)
                    .is_none_or(|p| !p.starts_with('.'))
                {
                    errs.push(FieldError::invalid(
                        format!("spec.versions[{i}].subresources.scale.{f}"),
                        scale.get(f).cloned().unwrap_or(Value::Null),
                        "should be a json path under either .spec or .status",
                    ));
                }
            }
        }
    }
    if let Some(old) = old {
        for (field, ptr) in [("spec.scope", "/spec/scope"), ("spec.group", "/spec/group")] {
            if old.pointer(ptr) != crd.pointer(ptr) {
                errs.push(FieldError::invalid(
                    field,
                    crd.pointer(ptr).cloned().unwrap_or(Value::Null),
                    "field is immutable",
                ));
            }
        }
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            &name,
            &errs,
        ));
    }
    // Defaults, as the apiextensions defaulting functions set them.
    let names = &mut crd["spec"]["names"];
    if names
        .get("singular")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        names["singular"] = json!(kind.to_lowercase());
    }
    if names
        .get("listKind")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        names["listKind"] = json!(format!("{kind}List"));
    }
    if crd.pointer("/spec/conversion").is_none() {
        crd["spec"]["conversion"] = json!({"strategy": "None"});
    }
    // Status: names accepted unless another CRD serves the same group and plural.
    let conflict = registry.all().any(|info| {
        info.group == group
            && info.plural == plural
            && info.custom().is_none_or(|c| c.crd_name != name)
    });
    let now = object::now();
    let keep_time = |type_: &str, status: &str| -> String {
        old.and_then(|o| o.pointer("/status/conditions"))
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter().find(|c| {
                    c.get("type").and_then(Value::as_str) == Some(type_)
                        && c.get("status").and_then(Value::as_str) == Some(status)
                })
            })
            .and_then(|c| c.get("lastTransitionTime").and_then(Value::as_str))
            .map_or_else(|| now.clone(), str::to_string)
    };
    let (status, names_reason, names_msg, est_reason, est_msg) = if conflict {
        (
            "False",
            "PluralConflict",
            format!("\"{plural}\" is already in use"),
            "NotAccepted",
            "not all names are accepted".to_string(),
        )
    } else {
        (
            "True",
            "NoConflicts",
            "no conflicts found".to_string(),
            "InitialNamesAccepted",
            "the initial names have been accepted".to_string(),
        )
    };
    let mut stored_versions: Vec<Value> = old
        .and_then(|o| o.pointer("/status/storedVersions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(s) = storage.first().and_then(|v| v.get("name")).cloned()
        && !stored_versions.contains(&s)
    {
        stored_versions.push(s);
    }
    let accepted = crd["spec"]["names"].clone();
    crd["status"] = json!({
        "conditions": [
            {"type": "NamesAccepted", "status": status, "reason": names_reason, "message": names_msg,
             "lastTransitionTime": keep_time("NamesAccepted", status)},
            {"type": "Established", "status": status, "reason": est_reason, "message": est_msg,
             "lastTransitionTime": keep_time("Established", status)},
        ],
        "acceptedNames": if conflict { json!({"plural": "", "kind": ""}) } else { accepted },
        "storedVersions": stored_versions,
    });
    Ok(())
}

/// Builds the served resources of an established CRD.
pub(crate) fn resources_of(crd: &Value) -> Vec<ResourceInfo> {
    let established = crd
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        });
    if !established || meta_str(crd, "deletionTimestamp").is_some() {
        return Vec::new();
    }
    let name = object::name(crd).to_string();
    let group = str_of(crd, "/spec/group").to_string();
    let names = &crd["spec"]["names"];
    let plural = names["plural"].as_str().unwrap_or_default().to_string();
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    versions
        .iter()
        .filter(|v| v["served"] == true)
        .map(|v| {
            let raw_schema = v.pointer("/schema/openAPIV3Schema").cloned();
            let schema = raw_schema
                .as_ref()
                .and_then(|s| mni_apimachinery::Structural::from_value(s).ok())
                .map(Arc::new);
            let columns = v
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| PrinterColumn {
                    name: c["name"].as_str().unwrap_or_default().into(),
                    type_: c["type"].as_str().unwrap_or("string").into(),
                    format: c["format"].as_str().unwrap_or_default().into(),
                    description: c["description"].as_str().unwrap_or_default().into(),
                    priority: c["priority"].as_i64().unwrap_or(0),
                    json_path: c["jsonPath"].as_str().unwrap_or_default().into(),
                })
                .collect();
            let selectable_fields = v
                .get("selectableFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| {
                    f["jsonPath"]
                        .as_str()
                        .map(|p| p.trim_start_matches('.').to_string())
                })
                .collect();
            let scale = v.pointer("/subresources/scale").map(|s| ScalePaths {
                spec_replicas: s["specReplicasPath"]
                    .as_str()
                    .unwrap_or(".spec.replicas")
                    .into(),
                status_replicas: s["statusReplicasPath"]
                    .as_str()
                    .unwrap_or(".status.replicas")
                    .into(),
                label_selector: s["labelSelectorPath"].as_str().map(str::to_string),
            });
            ResourceInfo {
                group: group.clone(),
                version: v["name"].as_str().unwrap_or_default().into(),
                kind: names["kind"].as_str().unwrap_or_default().into(),
                list_kind: names["listKind"].as_str().unwrap_or_default().into(),
                plural: plural.clone(),
                singular: names["singular"].as_str().unwrap_or_default().into(),
                short_names: strings(&names["shortNames"]),
                categories: strings(&names["categories"]),
                namespaced: crd["spec"]["scope"] == "Namespaced",
                status: v.pointer("/subresources/status").is_some(),
                scale,
                generation: true,
                storage_prefix: format!("/registry/{group}/{plural}"),
                storage_version: storage_version.clone(),
                verbs: crate::registry::STANDARD_VERBS,
                flavor: Flavor::Custom(Arc::new(CustomInfo {
                    types: crate::fields::types_from_schema(
                        schema.as_deref(),
                        v.pointer("/subresources/status").is_some(),
                    ),
                    crd_name: name.clone(),
                    schema,
                    raw_schema,
                    columns,
                    selectable_fields,
                })),
            }
        })
        .collect()
}

/// Serves (or re-serves) the resources of a CRD.
pub(crate) fn register(registry: &mut Registry, crd: &Value) -> ApiResult<()> {
    let resources = resources_of(crd);
    let name = object::name(crd);
    registry.remove_crd(name);
    let group = str_of(crd, "/spec/group").to_string();
    for info in resources {
        registry.insert(info, false);
    }
    let mut order: Vec<String> = registry
        .groups()
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, vs)| vs.clone())
        .unwrap_or_default();
    order.sort_by_key(|v| version_priority(v));
    registry.set_version_order(&group, order);
    Ok(())
}

/// Stops serving a deleted CRD's resources (its objects go with [`delete_objects`]).
pub(crate) fn unregister(registry: &mut Registry, crd: &Value) {
    registry.remove_crd(object::name(crd));
}

/// Removes the objects of a deleted CRD's resources.
pub(crate) async fn delete_objects(store: &mni_store::Store, crd: &Value) -> ApiResult<()> {
    let prefix = format!(
        "/registry/{}/{}/",
        str_of(crd, "/spec/group"),
        str_of(crd, "/spec/names/plural")
    );
    let listed = store.list(&prefix, &mni_store::ListOptions::default())?;
    for kv in listed.items {
        match store.delete(&kv.key, None).await {
            Ok(_) | Err(mni_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_like_kubernetes() {
        let mut v = vec![
            "v1alpha1",
            "v11alpha2",
            "foo1",
            "v10beta3",
            "v2",
            "v1",
            "v12alpha1",
            "v1beta2",
        ];
        v.sort_by_key(|s| version_priority(s));
        assert_eq!(
            v,
            vec![
                "v2",
                "v1",
                "v10beta3",
                "v1beta2",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1"
            ]
        );
    }
}
