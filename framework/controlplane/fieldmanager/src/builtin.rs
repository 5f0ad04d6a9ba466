//! Merge tables for built-in kinds, built from the generated table of `mni-builtin-schema`
//! (Kubernetes' OpenAPI: `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type` and, for lists without a list type, the patch strategy and merge
//! key, as structured-merge-diff's `schemaconv` reads them).
//!
//! [`builtin`] returns the table of one kind; [`TypeRegistry`] maps (group, kind) to tables
//! and lets the server register its own ("kind X uses table Y"). Lists the schema does not
//! type are atomic, as in kube. What the OpenAPI does not say is kept here by hand: the
//! defaults of list-map keys ([`KEY_DEFAULTS`]), the zero object a create compares against
//! and the fields the status subresource resets. [`object_meta`], [`pod_spec`] and
//! [`pod_template`] are the shared pieces.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use mni_builtin_schema::{Definition, Field, Shape};
use serde_json::{Value, json};

use crate::types::{ListType, MapType, TypeInfo, TypeInfoBuilder, TypeNode, Unknown};

/// Defaults of list-map key fields an item may omit (Go defaulting, not in the OpenAPI):
/// (definition, field, default).
pub const KEY_DEFAULTS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.ContainerPort", "protocol", "TCP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "TCP"),
];

/// The type tree of a definition of the built-in schema table. Nodes that say nothing beyond
/// the defaults (atomic lists, granular objects) are left out; a recursive type
/// (`JSONSchemaProps`) stops at its first repetition.
pub fn from_definition(def: &'static Definition) -> TypeNode {
    node_of_definition(def, &mut Vec::new())
}

fn node_of_definition(def: &'static Definition, stack: &mut Vec<&'static str>) -> TypeNode {
    let mut node = TypeNode::untyped(Unknown::Fields);
    if def.map_type == Some(mni_builtin_schema::MapType::Atomic) {
        node.map = MapType::Atomic;
    }
    if stack.contains(&def.name) {
        return node;
    }
    stack.push(def.name);
    for field in def.fields {
        let child = node_of_field(field, stack);
        if child != TypeNode::untyped(Unknown::Fields) {
            node.fields.insert(field.name.to_string(), child);
        }
    }
    stack.pop();
    for (_, field, default) in KEY_DEFAULTS.iter().filter(|(d, _, _)| *d == def.name) {
        node.fields
            .entry((*field).to_string())
            .or_insert_with(|| TypeNode::untyped(Unknown::Fields))
            .default = Some(Value::from(*default));
    }
    node
}

fn node_of_field(field: &'static Field, stack: &mut Vec<&'static str>) -> TypeNode {
    let typed = |stack: &mut Vec<&'static str>| {
        field
            .ty
            .map(|d| node_of_definition(d, stack))
            .unwrap_or_else(|| TypeNode::untyped(Unknown::Fields))
    };
    let mut node = match field.shape {
        Shape::Value => typed(stack),
        Shape::List => {
            let mut node = TypeNode::untyped(Unknown::Fields);
            let (list, keys) = field.apply_list_type();
            node.list = match list {
                mni_builtin_schema::ListType::Atomic => ListType::Atomic,
                mni_builtin_schema::ListType::Set => ListType::Set,
                mni_builtin_schema::ListType::Map => {
                    ListType::Map(keys.iter().map(|k| k.to_string()).collect())
                }
            };
            let item = typed(stack);
            if item != TypeNode::untyped(Unknown::Fields) {
                node.items = Some(Box::new(item));
            }
            node
        }
        Shape::Map => {
            let mut node = TypeNode::untyped(Unknown::Entries);
            node.entries = Some(Box::new(match field.ty {
                Some(_) => typed(stack),
                None => TypeNode::untyped(Unknown::Entries),
            }));
            node
        }
    };
    if field.map_type == Some(mni_builtin_schema::MapType::Atomic) {
        node.map = MapType::Atomic;
    }
    node
}

/// [`from_definition`], built once per definition (a pod template is a few hundred nodes and
/// every write of a built-in kind asks for its table).
fn cached(def: &'static Definition) -> TypeNode {
    static CACHE: OnceLock<Mutex<BTreeMap<&'static str, TypeNode>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(def.name)
        .or_insert_with(|| from_definition(def))
        .clone()
}

fn definition_node(name: &str) -> TypeNode {
    mni_builtin_schema::definition(name)
        .map(cached)
        .unwrap_or_else(|| TypeNode::untyped(Unknown::Fields))
}

/// `metav1.ObjectMeta`: labels and annotations are maps, `ownerReferences` keyed by `uid`,
/// `finalizers` a set, `managedFields` atomic.
pub fn object_meta() -> TypeNode {
    definition_node("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
}

/// `core/v1.PodSpec`.
pub fn pod_spec() -> TypeNode {
    definition_node("io.k8s.api.core.v1.PodSpec")
}

/// `core/v1.PodTemplateSpec`.
pub fn pod_template() -> TypeNode {
    definition_node("io.k8s.api.core.v1.PodTemplateSpec")
}

fn pod_template_zero() -> Value {
    json!({"metadata": {"creationTimestamp": null}, "spec": {"containers": null}})
}

/// The table of a built-in kind, by API group (`""` for core) and kind, in the kind's
/// preferred version; None if the schema table does not have the kind.
pub fn builtin(group: &str, kind: &str) -> Option<TypeInfo> {
    let def = mni_builtin_schema::kind_in_preferred_version(group, kind)?;
    let b = TypeInfo::builder().root(cached(def));
    let workload = |b: TypeInfoBuilder| b.status_subresource();
    let info = match (group, kind) {
        ("", "Pod") => b
            .empty_object(json!({"spec": {"containers": null}, "status": {}}))
            .status_subresource(),
        ("", "PodTemplate") => b.empty_object(json!({"template": pod_template_zero()})),
        ("", "ReplicationController") => {
            workload(b).empty_object(json!({"spec": {}, "status": {"replicas": 0}}))
        }
        ("", "Service") => b
            .empty_object(json!({"spec": {}, "status": {"loadBalancer": {}}}))
            .status_subresource(),
        ("", "Namespace" | "Node") => b
            .empty_object(json!({"spec": {}, "status": {}}))
            .status_subresource(),
        ("", "PersistentVolume") => b
            .empty_object(json!({"spec": {}, "status": {}}))
            .status_subresource(),
        ("", "PersistentVolumeClaim") => b
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
            .empty_object(json!({"spec": {"template": pod_template_zero()}, "status": {}}))
            .status_subresource(),
        ("batch", "CronJob") => b
            .empty_object(json!({
                "spec": {"jobTemplate": {"metadata": {"creationTimestamp": null},
                    "spec": {"template": pod_template_zero()}}},
                "status": {}
            }))
            .status_subresource(),
        ("networking.k8s.io", "NetworkPolicy") => {
            b.empty_object(json!({"spec": {"podSelector": {}}}))
        }
        ("networking.k8s.io", "Ingress") => b
            .empty_object(json!({"spec": {}, "status": {"loadBalancer": {}}}))
            .status_subresource(),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            b.empty_object(json!({"roleRef": {"apiGroup": "", "kind": "", "name": ""}}))
        }
        ("autoscaling", "HorizontalPodAutoscaler") => b
            .empty_object(json!({"spec": {"scaleTargetRef": {"kind": "", "name": ""}},
                "status": {"desiredReplicas": 0}}))
            .status_subresource(),
        ("policy", "PodDisruptionBudget") => b
            .empty_object(json!({"spec": {}, "status": {"disruptionsAllowed": 0,
                "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}}))
            .status_subresource(),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => b
            .empty_object(
                json!({"spec": {"group": "", "names": {"plural": "", "kind": ""},
                "scope": "", "versions": null}, "status": {}}),
            )
            .status_subresource(),
        _ => b,
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

    #[test]
    fn tables_follow_the_types() {
        // Same field name, different types: ServiceAccount.imagePullSecrets is atomic, a
        // PodSpec's is keyed by name; a Service's ports by (port, protocol).
        let sa = builtin("", "ServiceAccount").unwrap_or_default();
        assert_eq!(sa.at("imagePullSecrets").list, ListType::Atomic);
        assert_eq!(sa.at("secrets").list, keys(&["name"]));
        let pod = builtin("", "Pod").unwrap_or_default();
        assert_eq!(pod.at("spec.imagePullSecrets").list, keys(&["name"]));
        assert_eq!(
            pod.at("spec.ephemeralContainers[].ports[].protocol")
                .default,
            Some(json!("TCP"))
        );
        let svc = builtin("", "Service").unwrap_or_default();
        assert_eq!(svc.at("spec.ports[].protocol").default, Some(json!("TCP")));
        // Job conditions: a merge strategy for patches, but `+listType=atomic` for apply.
        let job = builtin("batch", "Job").unwrap_or_default();
        assert_eq!(job.at("status.conditions").list, ListType::Atomic);
        let cronjob = builtin("batch", "CronJob").unwrap_or_default();
        assert_eq!(
            cronjob
                .at("spec.jobTemplate.spec.template.spec.containers[].env")
                .list,
            keys(&["name"])
        );
        let cm = builtin("", "ConfigMap").unwrap_or_default();
        assert!(
            !cm.at("data").child("key").1,
            "data entries are map entries"
        );
        assert!(builtin("example.com", "Widget").is_none());
        // A recursive type ends.
        let crd = builtin("apiextensions.k8s.io", "CustomResourceDefinition").unwrap_or_default();
        assert_eq!(crd.at("status.conditions").list, keys(&["type"]));
    }
}
