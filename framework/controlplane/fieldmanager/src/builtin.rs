//! Merge tables for built-in kinds, from the `+listType`, `+listMapKey`, `+patchMergeKey`,
//! `+mapType` and `+structType` markers of the Kubernetes API types.
//!
//! [`builtin`] returns the table of one kind; [`TypeRegistry`] maps (group, kind) to tables
//! and lets the server register its own ("kind X uses table Y"). Lists the tables do not name
//! are atomic, as in kube for lists without markers. [`object_meta`], [`pod_spec`] and
//! [`pod_template`] are the shared pieces.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::types::{TypeInfo, TypeInfoBuilder, TypeNode, Unknown};

fn tree(build: impl FnOnce(TypeInfoBuilder) -> TypeInfoBuilder) -> TypeNode {
    let start = TypeInfo::deduced()
        .into_builder()
        .root(TypeNode::untyped(Unknown::Fields));
    build(start).build().root().clone()
}

/// `metav1.ObjectMeta`: labels and annotations are maps, `ownerReferences` keyed by `uid`,
/// `finalizers` a set, `managedFields` atomic.
pub fn object_meta() -> TypeNode {
    tree(|b| {
        b.map_entries("labels")
            .map_entries("annotations")
            .list_map("ownerReferences", &["uid"])
            .list_set("finalizers")
            .list_atomic("managedFields")
    })
}

/// `core/v1.Container` (also used for init and ephemeral containers).
pub fn container() -> TypeNode {
    tree(|b| {
        b.list_map("ports", &["containerPort", "protocol"])
            .default_value("ports[].protocol", json!("TCP"))
            .list_map("env", &["name"])
            .list_map("volumeMounts", &["mountPath"])
            .list_map("volumeDevices", &["devicePath"])
            .map_entries("resources.limits")
            .map_entries("resources.requests")
            .list_map("resources.claims", &["name"])
    })
}

/// `core/v1.PodSpec`.
pub fn pod_spec() -> TypeNode {
    tree(|b| {
        b.list_map("containers", &["name"])
            .node("containers[]", container())
            .list_map("initContainers", &["name"])
            .node("initContainers[]", container())
            .list_map("ephemeralContainers", &["name"])
            .node("ephemeralContainers[]", container())
            .list_map("volumes", &["name"])
            .list_map("imagePullSecrets", &["name"])
            .list_map("hostAliases", &["ip"])
            .list_map(
                "topologySpreadConstraints",
                &["topologyKey", "whenUnsatisfiable"],
            )
            .map_atomic("topologySpreadConstraints[].labelSelector")
            .list_map("resourceClaims", &["name"])
            .list_map("schedulingGates", &["name"])
            .map_entries("nodeSelector")
            .map_entries("overhead")
    })
}

/// `core/v1.PodTemplateSpec`.
pub fn pod_template() -> TypeNode {
    tree(|b| b.node("metadata", object_meta()).node("spec", pod_spec()))
}

fn pod_template_zero() -> Value {
    json!({"metadata": {"creationTimestamp": null}, "spec": {"containers": null}})
}

/// The table of a built-in kind, by API group (`""` for core) and kind; None if unknown.
pub fn builtin(group: &str, kind: &str) -> Option<TypeInfo> {
    let b = TypeInfo::builder();
    let workload = |b: TypeInfoBuilder| {
        b.map_atomic("spec.selector")
            .node("spec.template", pod_template())
            .list_map("status.conditions", &["type"])
            .status_subresource()
    };
    let info = match (group, kind) {
        ("", "Pod") => b
            .node("spec", pod_spec())
            .list_map("status.conditions", &["type"])
            .list_map("status.podIPs", &["ip"])
            .list_map("status.resourceClaimStatuses", &["name"])
            .empty_object(json!({"spec": {"containers": null}, "status": {}}))
            .status_subresource(),
        ("", "PodTemplate") => b
            .node("template", pod_template())
            .empty_object(json!({"template": pod_template_zero()})),
        ("", "ReplicationController") => {
            workload(b).empty_object(json!({"spec": {}, "status": {"replicas": 0}}))
        }
        ("", "Service") => b
            .list_map("spec.ports", &["port", "protocol"])
            .default_value("spec.ports[].protocol", json!("TCP"))
            .map_atomic("spec.selector")
            .list_map("status.conditions", &["type"])
            .empty_object(json!({"spec": {}, "status": {"loadBalancer": {}}}))
            .status_subresource(),
        ("", "ConfigMap") => b.map_entries("data").map_entries("binaryData"),
        ("", "Secret") => b.map_entries("data").map_entries("stringData"),
        ("", "ServiceAccount") => b.list_map("secrets", &["name"]),
        ("", "Namespace") => b
            .list_map("status.conditions", &["type"])
            .empty_object(json!({"spec": {}, "status": {}}))
            .status_subresource(),
        ("", "Node") => b
            .list_set("spec.podCIDRs")
            .list_map("status.conditions", &["type"])
            .list_map("status.addresses", &["type"])
            .map_entries("status.capacity")
            .map_entries("status.allocatable")
            .empty_object(json!({"spec": {}, "status": {}}))
            .status_subresource(),
        ("", "PersistentVolume") => b
            .map_entries("spec.capacity")
            .empty_object(json!({"spec": {}, "status": {}}))
            .status_subresource(),
        ("", "PersistentVolumeClaim") => b
            .map_atomic("spec.selector")
            .map_entries("spec.resources.requests")
            .map_entries("spec.resources.limits")
            .list_map("status.conditions", &["type"])
            .map_entries("status.capacity")
            .empty_object(json!({"spec": {"resources": {}}, "status": {}}))
            .status_subresource(),
        ("apps", "Deployment") => workload(b).empty_object(json!({
            "spec": {"template": pod_template_zero(), "strategy": {}},
            "status": {}
        })),
        ("apps", "StatefulSet") => workload(b).empty_object(json!({
            "spec": {"template": pod_template_zero(), "updateStrategy": {}},
            "status": {"replicas": 0}
        })),
        ("apps", "DaemonSet") => workload(b).empty_object(json!({
            "spec": {"template": pod_template_zero(), "updateStrategy": {}},
            "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                "desiredNumberScheduled": 0, "numberReady": 0}
        })),
        ("apps", "ReplicaSet") => workload(b).empty_object(json!({
            "spec": {"template": pod_template_zero()},
            "status": {"replicas": 0}
        })),
        ("batch", "Job") => b
            .map_atomic("spec.selector")
            .node("spec.template", pod_template())
            .empty_object(json!({"spec": {"template": pod_template_zero()}, "status": {}}))
            .status_subresource(),
        ("batch", "CronJob") => b
            .node("spec.jobTemplate.metadata", object_meta())
            .map_atomic("spec.jobTemplate.spec.selector")
            .node("spec.jobTemplate.spec.template", pod_template())
            .empty_object(json!({
                "spec": {"jobTemplate": {"metadata": {"creationTimestamp": null},
                    "spec": {"template": pod_template_zero()}}},
                "status": {}
            }))
            .status_subresource(),
        ("networking.k8s.io", "NetworkPolicy") => b
            .map_atomic("spec.podSelector")
            .empty_object(json!({"spec": {"podSelector": {}}})),
        ("networking.k8s.io", "Ingress") => b
            .empty_object(json!({"spec": {}, "status": {"loadBalancer": {}}}))
            .status_subresource(),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            b.empty_object(json!({"roleRef": {"apiGroup": "", "kind": "", "name": ""}}))
        }
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => b,
        ("autoscaling", "HorizontalPodAutoscaler") => b
            .list_map("status.conditions", &["type"])
            .empty_object(json!({"spec": {"scaleTargetRef": {"kind": "", "name": ""}},
                "status": {"desiredReplicas": 0}}))
            .status_subresource(),
        ("policy", "PodDisruptionBudget") => b
            .map_atomic("spec.selector")
            .list_map("status.conditions", &["type"])
            .map_entries("status.disruptedPods")
            .empty_object(json!({"spec": {}, "status": {"disruptionsAllowed": 0,
                "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}}))
            .status_subresource(),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => b
            .list_map("status.conditions", &["type"])
            .empty_object(
                json!({"spec": {"group": "", "names": {"plural": "", "kind": ""},
                "scope": "", "versions": null}, "status": {}}),
            )
            .status_subresource(),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration",
        ) => b.list_map("webhooks", &["name"]),
        ("coordination.k8s.io", "Lease")
        | ("", "Event" | "Endpoints" | "LimitRange" | "ResourceQuota")
        | ("events.k8s.io", "Event")
        | ("discovery.k8s.io", "EndpointSlice")
        | ("storage.k8s.io", "StorageClass" | "CSIDriver")
        | ("scheduling.k8s.io", "PriorityClass") => b,
        _ => return None,
    };
    Some(info.build())
}

/// A table for built-in kinds without one: `ObjectMeta`, conditions keyed by `type`.
pub fn generic() -> TypeInfo {
    TypeInfo::builder()
        .list_map("status.conditions", &["type"])
        .build()
}

/// Maps (group, kind) to type information; unknown kinds get the [`generic`] table.
#[derive(Debug, Clone)]
pub struct TypeRegistry {
    kinds: BTreeMap<(String, String), TypeInfo>,
    fallback: TypeInfo,
}

impl Default for TypeRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl TypeRegistry {
    /// An empty registry: every kind gets [`generic`] unless registered or built in.
    pub fn new() -> Self {
        Self {
            kinds: BTreeMap::new(),
            fallback: generic(),
        }
    }

    /// Registers a kind's type information (e.g. from a CRD schema), replacing any table.
    #[must_use]
    pub fn with(mut self, group: &str, kind: &str, info: TypeInfo) -> Self {
        self.insert(group, kind, info);
        self
    }

    /// Registers a kind's type information in place.
    pub fn insert(&mut self, group: &str, kind: &str, info: TypeInfo) {
        self.kinds
            .insert((group.to_string(), kind.to_string()), info);
    }

    /// Removes a registered kind (e.g. a deleted CRD).
    pub fn remove(&mut self, group: &str, kind: &str) -> Option<TypeInfo> {
        self.kinds.remove(&(group.to_string(), kind.to_string()))
    }

    /// The type information of a kind: registered, else built in, else generic.
    pub fn get(&self, group: &str, kind: &str) -> TypeInfo {
        if let Some(info) = self.kinds.get(&(group.to_string(), kind.to_string())) {
            return info.clone();
        }
        builtin(group, kind).unwrap_or_else(|| self.fallback.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ListType, MapType};

    fn keys(k: &[&str]) -> ListType {
        ListType::Map(k.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn deployment_table() {
        let d = builtin("apps", "Deployment").unwrap_or_default();
        let c = "spec.template.spec.containers";
        assert_eq!(d.at(c).list, keys(&["name"]));
        assert_eq!(
            d.at(&format!("{c}[].ports")).list,
            keys(&["containerPort", "protocol"])
        );
        assert_eq!(d.at(&format!("{c}[].env")).list, keys(&["name"]));
        assert_eq!(d.at(&format!("{c}[].envFrom")).list, ListType::Atomic);
        assert_eq!(
            d.at(&format!("{c}[].volumeMounts")).list,
            keys(&["mountPath"])
        );
        assert_eq!(
            d.at("spec.template.spec.tolerations").list,
            ListType::Atomic
        );
        assert_eq!(d.at("spec.selector").map, MapType::Atomic);
        assert_eq!(d.at("metadata.finalizers").list, ListType::Set);
        assert_eq!(d.at("metadata.managedFields").list, ListType::Atomic);
        assert_eq!(d.at("status.conditions").list, keys(&["type"]));
        assert!(
            d.reset_fields(None)
                .has(&crate::types::field_path("status"))
        );
    }

    #[test]
    fn registry() {
        let custom = TypeInfo::builder().list_set("spec.tags").build();
        let r = TypeRegistry::new().with("example.com", "Widget", custom);
        assert_eq!(
            r.get("example.com", "Widget").at("spec.tags").list,
            ListType::Set
        );
        assert_eq!(
            r.get("", "Service").at("spec.ports").list,
            keys(&["port", "protocol"])
        );
        assert_eq!(
            r.get("x.io", "Other").at("status.conditions").list,
            keys(&["type"])
        );
        assert_eq!(
            r.get("rbac.authorization.k8s.io", "Role").at("rules").list,
            ListType::Atomic
        );
        assert_eq!(
            r.get("", "Pod").at("spec.topologySpreadConstraints").list,
            keys(&["topologyKey", "whenUnsatisfiable"])
        );
    }
}
