//! Strategic-merge-patch and list metadata for built-in schemas.
//!
//! kube-apiserver's published schemas carry `x-kubernetes-patch-strategy` and
//! `x-kubernetes-patch-merge-key` (from the Go struct tags `patchStrategy`/`patchMergeKey`)
//! and `x-kubernetes-list-type`/`x-kubernetes-list-map-keys` (from `+listType` markers).
//! `k8s-openapi`'s `schemars` output carries **none** of these on built-in types (it only
//! emits `x-kubernetes-int-or-string`, and the `x-kubernetes-*` names appear as *properties*
//! of `JSONSchemaProps`). kubectl's client-side `apply` computes its three-way strategic
//! merge patch from these extensions (`strategicpatch.PatchMetaFromOpenAPIV3`), so without
//! them it would replace `containers`, `env`, `ports`, … wholesale instead of merging by key.
//!
//! This module restores them from the generated table of `mni-builtin-schema` (Kubernetes'
//! own `swagger.json`), the same table the server's strategic merge patch and server-side
//! apply read, so what kubectl is told is what the server does.

use mni_builtin_schema::{ListType, MapType};
use serde_json::{Map, Value};

fn list_type(t: ListType) -> &'static str {
    match t {
        ListType::Atomic => "atomic",
        ListType::Set => "set",
        ListType::Map => "map",
    }
}

fn map_type(t: MapType) -> &'static str {
    match t {
        MapType::Atomic => "atomic",
        MapType::Granular => "granular",
    }
}

/// Adds the patch and list extensions of the table to every schema and property it knows.
pub(crate) fn apply(definitions: &mut Map<String, Value>) {
    for def in mni_builtin_schema::definitions() {
        let Some(schema) = definitions.get_mut(def.name).and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(t) = def.map_type {
            schema.insert("x-kubernetes-map-type".into(), map_type(t).into());
        }
        let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        for field in def.fields {
            let Some(property) = properties
                .get_mut(field.name)
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            if let Some(t) = field.list_type {
                property.insert("x-kubernetes-list-type".into(), list_type(t).into());
            }
            if !field.list_map_keys.is_empty() {
                property.insert(
                    "x-kubernetes-list-map-keys".into(),
                    field
                        .list_map_keys
                        .iter()
                        .map(|k| Value::from(*k))
                        .collect(),
                );
            }
            if let Some(t) = field.map_type {
                property.insert("x-kubernetes-map-type".into(), map_type(t).into());
            }
            if let Some(key) = field.patch_merge_key {
                property.insert("x-kubernetes-patch-merge-key".into(), key.into());
            }
            if let Some(strategy) = field.patch_strategy {
                property.insert("x-kubernetes-patch-strategy".into(), strategy.into());
            }
        }
    }
}

/// Replaces schemas whose `k8s-openapi` form differs from kube-apiserver's in a way clients
/// notice: `IntOrString` (kube: `type: string, format: int-or-string`) and `Quantity`
/// (kube: `type: string`). kubectl explain prints the referenced type from these.
pub(crate) fn normalize_builtin_schemas(definitions: &mut Map<String, Value>) {
    let fixes: [(&str, &[(&str, &str)]); 2] = [
        (
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
            &[("type", "string"), ("format", "int-or-string")],
        ),
        (
            "io.k8s.apimachinery.pkg.api.resource.Quantity",
            &[("type", "string")],
        ),
    ];
    for (name, fields) in fixes {
        if let Some(schema) = definitions.get_mut(name).and_then(Value::as_object_mut) {
            schema.remove("x-kubernetes-int-or-string");
            for (key, value) in fields {
                schema.insert((*key).into(), (*value).into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn adds_patch_metadata_to_known_fields() {
        let mut defs = Map::new();
        defs.insert(
            "io.k8s.api.core.v1.PodSpec".into(),
            json!({"properties": {"containers": {"type": "array"}, "volumes": {"type": "array"}}}),
        );
        defs.insert(
            "io.k8s.api.core.v1.Container".into(),
            json!({"properties": {"ports": {"type": "array"}}}),
        );
        apply(&mut defs);
        let containers = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        let volumes = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["volumes"];
        assert_eq!(volumes["x-kubernetes-patch-strategy"], "merge,retainKeys");
        let ports = &defs["io.k8s.api.core.v1.Container"]["properties"]["ports"];
        assert_eq!(
            ports["x-kubernetes-list-map-keys"],
            json!(["containerPort", "protocol"])
        );
        assert_eq!(ports["x-kubernetes-list-type"], "map");
        assert_eq!(ports["x-kubernetes-patch-merge-key"], "containerPort");
    }

    #[test]
    fn published_metadata_is_the_tables() {
        let mut defs = Map::new();
        defs.insert(
            "io.k8s.api.core.v1.ServiceAccount".into(),
            json!({"properties": {"imagePullSecrets": {"type": "array"}, "secrets": {"type": "array"}}}),
        );
        defs.insert(
            "io.k8s.api.core.v1.PodSpec".into(),
            json!({"properties": {"tolerations": {"type": "array"}, "nodeSelector": {"type": "object"}}}),
        );
        defs.insert(
            "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector".into(),
            json!({"properties": {}}),
        );
        apply(&mut defs);
        let sa = &defs["io.k8s.api.core.v1.ServiceAccount"]["properties"];
        assert_eq!(sa["imagePullSecrets"]["x-kubernetes-list-type"], "atomic");
        assert!(
            sa["imagePullSecrets"]
                .get("x-kubernetes-patch-strategy")
                .is_none()
        );
        assert_eq!(sa["secrets"]["x-kubernetes-patch-merge-key"], "name");
        let pod = &defs["io.k8s.api.core.v1.PodSpec"]["properties"];
        assert_eq!(pod["tolerations"]["x-kubernetes-list-type"], "atomic");
        assert_eq!(pod["nodeSelector"]["x-kubernetes-map-type"], "atomic");
        assert_eq!(
            defs["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]["x-kubernetes-map-type"],
            "atomic"
        );
    }
}
