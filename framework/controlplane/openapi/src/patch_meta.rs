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
//! This module restores them for the fields that have a strategic merge strategy in
//! Kubernetes' Go types. The table is hand-maintained from the Kubernetes API types; it
//! deliberately lists only fields whose patch strategy is certain, because advertising a
//! `merge` strategy the server does not apply would make kubectl send partial lists.

use serde_json::{Map, Value};

/// One field's metadata: schema name, property, patch strategy, patch merge key,
/// list type and list map keys (empty strings / slices mean "not set").
struct FieldMeta {
    schema: &'static str,
    property: &'static str,
    strategy: &'static str,
    merge_key: &'static str,
    list_type: &'static str,
    map_keys: &'static [&'static str],
}

const fn merge_by(
    schema: &'static str,
    property: &'static str,
    merge_key: &'static str,
    map_keys: &'static [&'static str],
) -> FieldMeta {
    FieldMeta {
        schema,
        property,
        strategy: "merge",
        merge_key,
        list_type: if map_keys.is_empty() { "" } else { "map" },
        map_keys,
    }
}

const NAME: &[&str] = &["name"];
const TYPE: &[&str] = &["type"];

/// Conditions lists merged by `type` (Go: `patchStrategy:"merge" patchMergeKey:"type"`).
const CONDITIONS_BY_TYPE: &[&str] = &[
    "io.k8s.api.apps.v1.DaemonSetStatus",
    "io.k8s.api.apps.v1.DeploymentStatus",
    "io.k8s.api.apps.v1.ReplicaSetStatus",
    "io.k8s.api.apps.v1.StatefulSetStatus",
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
    "io.k8s.api.core.v1.ComponentStatus",
    "io.k8s.api.core.v1.NamespaceStatus",
    "io.k8s.api.core.v1.NodeStatus",
    "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
    "io.k8s.api.core.v1.PodStatus",
    "io.k8s.api.core.v1.ReplicationControllerStatus",
    "io.k8s.api.core.v1.ServiceStatus",
    "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
];

fn field_table() -> Vec<FieldMeta> {
    let mut table = vec![
        // Containers (and ephemeral containers, which share the fields).
        merge_by("Container", "env", "name", &[]),
        merge_by(
            "Container",
            "ports",
            "containerPort",
            &["containerPort", "protocol"],
        ),
        merge_by("Container", "volumeMounts", "mountPath", &[]),
        merge_by("Container", "volumeDevices", "devicePath", &[]),
        merge_by("EphemeralContainer", "env", "name", &[]),
        merge_by(
            "EphemeralContainer",
            "ports",
            "containerPort",
            &["containerPort", "protocol"],
        ),
        merge_by("EphemeralContainer", "volumeMounts", "mountPath", &[]),
        merge_by("EphemeralContainer", "volumeDevices", "devicePath", &[]),
        // Pods.
        merge_by("PodSpec", "containers", "name", &[]),
        merge_by("PodSpec", "initContainers", "name", &[]),
        merge_by("PodSpec", "ephemeralContainers", "name", &[]),
        merge_by("PodSpec", "imagePullSecrets", "name", &[]),
        merge_by("PodSpec", "hostAliases", "ip", &[]),
        merge_by("PodSpec", "schedulingGates", "name", NAME),
        merge_by(
            "PodSpec",
            "topologySpreadConstraints",
            "topologyKey",
            &["topologyKey", "whenUnsatisfiable"],
        ),
        FieldMeta {
            strategy: "merge,retainKeys",
            ..merge_by("PodSpec", "volumes", "name", &[])
        },
        FieldMeta {
            strategy: "merge,retainKeys",
            ..merge_by("PodSpec", "resourceClaims", "name", NAME)
        },
        merge_by("PodStatus", "podIPs", "ip", &[]),
        merge_by("PodStatus", "hostIPs", "ip", &[]),
        FieldMeta {
            strategy: "merge,retainKeys",
            ..merge_by("PodStatus", "resourceClaimStatuses", "name", NAME)
        },
        // Services, nodes, service accounts.
        merge_by("ServiceSpec", "ports", "port", &["port", "protocol"]),
        merge_by("NodeStatus", "addresses", "type", &[]),
        FieldMeta {
            list_type: "set",
            ..merge_by("NodeSpec", "podCIDRs", "", &[])
        },
        merge_by("ServiceAccount", "secrets", "name", &[]),
    ];
    for entry in &mut table {
        // The short names above are core/v1 types.
        entry.schema = core_name(entry.schema);
    }
    // Object metadata.
    table.push(merge_by(
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "ownerReferences",
        "uid",
        &["uid"],
    ));
    table.push(FieldMeta {
        list_type: "set",
        ..merge_by(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "finalizers",
            "",
            &[],
        )
    });
    for schema in CONDITIONS_BY_TYPE {
        // metav1.Condition lists (ServiceStatus, HPA v2) are also `+listType=map`.
        let keys = if schema.ends_with("ServiceStatus") || schema.contains("autoscaling.v2") {
            TYPE
        } else {
            &[]
        };
        table.push(merge_by(schema, "conditions", "type", keys));
    }
    table
}

fn core_name(short: &'static str) -> &'static str {
    match short {
        "Container" => "io.k8s.api.core.v1.Container",
        "EphemeralContainer" => "io.k8s.api.core.v1.EphemeralContainer",
        "PodSpec" => "io.k8s.api.core.v1.PodSpec",
        "PodStatus" => "io.k8s.api.core.v1.PodStatus",
        "ServiceSpec" => "io.k8s.api.core.v1.ServiceSpec",
        "NodeStatus" => "io.k8s.api.core.v1.NodeStatus",
        "NodeSpec" => "io.k8s.api.core.v1.NodeSpec",
        "ServiceAccount" => "io.k8s.api.core.v1.ServiceAccount",
        other => other,
    }
}

/// Adds the patch and list extensions to every known field of the named schemas.
pub(crate) fn apply(definitions: &mut Map<String, Value>) {
    for meta in field_table() {
        let Some(property) = definitions
            .get_mut(meta.schema)
            .and_then(|schema| schema.get_mut("properties"))
            .and_then(|properties| properties.get_mut(meta.property))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if !meta.list_type.is_empty() {
            property.insert("x-kubernetes-list-type".into(), meta.list_type.into());
        }
        if !meta.map_keys.is_empty() {
            property.insert(
                "x-kubernetes-list-map-keys".into(),
                meta.map_keys.iter().map(|k| Value::from(*k)).collect(),
            );
        }
        if !meta.merge_key.is_empty() {
            property.insert("x-kubernetes-patch-merge-key".into(), meta.merge_key.into());
        }
        if !meta.strategy.is_empty() {
            property.insert("x-kubernetes-patch-strategy".into(), meta.strategy.into());
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
    }
}
