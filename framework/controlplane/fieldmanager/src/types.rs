//! Type information: how lists and maps merge at each path of an object.
//!
//! structured-merge-diff needs a schema to know that `spec.containers` is a list keyed by `name`
//! while `spec.tolerations` is replaced whole. [`TypeInfo`] is that knowledge as a tree of
//! [`TypeNode`]s, built either from a CRD structural schema ([`TypeInfo::from_structural`],
//! reading `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`)
//! or with [`TypeInfoBuilder`] (the built-in tables in [`crate::builtin`](mod@crate::builtin) use it). Paths the
//! tree does not describe fall back to deduced types: lists atomic, objects granular.

use std::collections::BTreeMap;

use mni_apimachinery::{AdditionalProperties, SchemaError, Structural};
use serde_json::{Map, Value};

use crate::path::{Path, PathElement};
use crate::set::FieldSet;

/// Errors from building type information.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypeError {
    /// The schema JSON does not parse as a structural schema.
    #[error("invalid schema: {0}")]
    Schema(#[from] SchemaError),
}

/// How the items of a list merge (`x-kubernetes-list-type`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ListType {
    /// The list is replaced whole and owned as one field (the default).
    #[default]
    Atomic,
    /// Scalar items, merged as a set and owned one by one (`v:` elements).
    Set,
    /// Object items identified by these key fields, merged by key (`k:` elements).
    Map(Vec<String>),
}

/// How an object merges (`x-kubernetes-map-type` / `x-kubernetes-struct-type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MapType {
    /// Fields are merged and owned one by one (the default).
    #[default]
    Granular,
    /// The object is replaced whole and owned as one field.
    Atomic,
}

/// What the keys of an object that are not declared fields are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unknown {
    /// Struct fields (built-in kinds: an object value is owned through its leaves).
    #[default]
    Fields,
    /// Map entries (deduced types, `additionalProperties`): each entry is owned itself.
    Entries,
}

/// The type of the value at one path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypeNode {
    /// How arrays here merge.
    pub list: ListType,
    /// How objects here merge.
    pub map: MapType,
    /// Declared as a scalar: any value here is one leaf.
    pub scalar: bool,
    /// Declared struct fields.
    pub fields: BTreeMap<String, TypeNode>,
    /// The type of map entries (`additionalProperties`), for keys not in `fields`.
    pub entries: Option<Box<TypeNode>>,
    /// The type of list items.
    pub items: Option<Box<TypeNode>>,
    /// What undeclared keys are when `entries` is unset.
    pub unknown: Unknown,
    /// The schema default, used for list-map key fields an item omits.
    pub default: Option<Value>,
}

static FIELDS_NODE: TypeNode = TypeNode::untyped(Unknown::Fields);
static ENTRIES_NODE: TypeNode = TypeNode::untyped(Unknown::Entries);

impl TypeNode {
    /// A node that knows nothing: lists atomic, objects granular, children like `unknown`.
    pub const fn untyped(unknown: Unknown) -> Self {
        Self {
            list: ListType::Atomic,
            map: MapType::Granular,
            scalar: false,
            fields: BTreeMap::new(),
            entries: None,
            items: None,
            unknown,
            default: None,
        }
    }

    fn fallback(&self) -> &'static TypeNode {
        match self.unknown {
            Unknown::Fields => &FIELDS_NODE,
            Unknown::Entries => &ENTRIES_NODE,
        }
    }

    /// The type of an object key, and whether it is a struct field (not a map entry).
    pub fn child(&self, key: &str) -> (&TypeNode, bool) {
        if let Some(node) = self.fields.get(key) {
            return (node, true);
        }
        if let Some(node) = &self.entries {
            return (node, false);
        }
        (self.fallback(), self.unknown == Unknown::Fields)
    }

    /// The type of list items.
    pub fn item(&self) -> &TypeNode {
        self.items.as_deref().unwrap_or_else(|| self.fallback())
    }

    fn child_mut(&mut self, key: &str) -> &mut TypeNode {
        let unknown = self.unknown;
        self.fields
            .entry(key.to_string())
            .or_insert_with(|| TypeNode::untyped(unknown))
    }

    fn item_mut(&mut self) -> &mut TypeNode {
        let unknown = self.unknown;
        self.items
            .get_or_insert_with(|| Box::new(TypeNode::untyped(unknown)))
    }
}

/// Type information for one kind (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct TypeInfo {
    root: TypeNode,
    empty: Value,
    reset: BTreeMap<String, FieldSet>,
}

impl Default for TypeInfo {
    fn default() -> Self {
        Self::deduced()
    }
}

impl TypeInfo {
    /// Knows nothing: lists atomic, objects granular maps whose entries are owned themselves
    /// (structured-merge-diff's deduced type).
    pub fn deduced() -> Self {
        Self {
            root: TypeNode::untyped(Unknown::Entries),
            empty: Value::Object(Map::new()),
            reset: BTreeMap::new(),
        }
    }

    /// Starts a table for a built-in kind: undeclared keys are struct fields, `metadata` is
    /// `ObjectMeta`.
    pub fn builder() -> TypeInfoBuilder {
        let mut root = TypeNode::untyped(Unknown::Fields);
        root.fields
            .insert("metadata".to_string(), crate::builtin::object_meta());
        TypeInfoBuilder {
            info: Self {
                root,
                empty: Value::Object(Map::new()),
                reset: BTreeMap::new(),
            },
        }
    }

    /// Continues building from this type information.
    pub fn into_builder(self) -> TypeInfoBuilder {
        TypeInfoBuilder { info: self }
    }

    /// From a CRD's parsed `openAPIV3Schema`; `metadata` is `ObjectMeta`.
    pub fn from_structural(schema: &Structural) -> Self {
        let mut root = node_from_structural(schema);
        root.fields
            .insert("metadata".to_string(), crate::builtin::object_meta());
        Self {
            root,
            empty: Value::Object(Map::new()),
            reset: BTreeMap::new(),
        }
    }

    /// From a CRD's `openAPIV3Schema` JSON.
    pub fn from_schema(schema: &Value) -> Result<Self, TypeError> {
        Ok(Self::from_structural(&Structural::from_value(schema)?))
    }

    /// The root node.
    pub fn root(&self) -> &TypeNode {
        &self.root
    }

    /// The node at a builder path such as `spec.containers[].ports`.
    pub fn at(&self, path: &str) -> &TypeNode {
        let mut node = &self.root;
        for step in parse_steps(path) {
            node = match step {
                Step::Field(name) => node.child(name).0,
                Step::Item => node.item(),
            };
        }
        node
    }

    /// The object a create compares against (kube's zero value of the kind; `{}` by default).
    pub fn empty_object(&self) -> &Value {
        &self.empty
    }

    /// The fields a write through `subresource` (None: the main resource) does not own,
    /// because the strategy resets them (`GetResetFields`, e.g. `status` on the main resource).
    pub fn reset_fields(&self, subresource: Option<&str>) -> FieldSet {
        self.reset
            .get(subresource.unwrap_or(""))
            .cloned()
            .unwrap_or_default()
    }
}

/// Builds a [`TypeInfo`]; paths are dotted field names, `[]` steps into list items
/// (`spec.template.spec.containers[].ports`).
#[derive(Debug, Clone)]
#[must_use]
pub struct TypeInfoBuilder {
    info: TypeInfo,
}

impl TypeInfoBuilder {
    fn node_mut(&mut self, path: &str) -> &mut TypeNode {
        let mut node = &mut self.info.root;
        for step in parse_steps(path) {
            node = match step {
                Step::Field(name) => node.child_mut(name),
                Step::Item => node.item_mut(),
            };
        }
        node
    }

    /// The list at `path` is keyed by `keys` (`x-kubernetes-list-type: map`).
    pub fn list_map(mut self, path: &str, keys: &[&str]) -> Self {
        self.node_mut(path).list = ListType::Map(keys.iter().map(|k| k.to_string()).collect());
        self
    }

    /// The list at `path` is a set of scalars.
    pub fn list_set(mut self, path: &str) -> Self {
        self.node_mut(path).list = ListType::Set;
        self
    }

    /// The list at `path` is atomic (the default; useful to override a grafted node).
    pub fn list_atomic(mut self, path: &str) -> Self {
        self.node_mut(path).list = ListType::Atomic;
        self
    }

    /// The object at `path` is atomic (e.g. a `LabelSelector`).
    pub fn map_atomic(mut self, path: &str) -> Self {
        self.node_mut(path).map = MapType::Atomic;
        self
    }

    /// The object at `path` is a map whose entries are owned one by one (e.g. labels).
    pub fn map_entries(mut self, path: &str) -> Self {
        let node = self.node_mut(path);
        node.unknown = Unknown::Entries;
        node.entries = Some(Box::new(TypeNode::untyped(Unknown::Entries)));
        self
    }

    /// The value at `path` is a scalar.
    pub fn scalar(mut self, path: &str) -> Self {
        self.node_mut(path).scalar = true;
        self
    }

    /// The field at `path` defaults to `value` (used for list-map keys, e.g. `protocol`).
    pub fn default_value(mut self, path: &str, value: Value) -> Self {
        self.node_mut(path).default = Some(value);
        self
    }

    /// Replaces the node at `path` (e.g. a shared `PodSpec` table).
    pub fn node(mut self, path: &str, node: TypeNode) -> Self {
        *self.node_mut(path) = node;
        self
    }

    /// The zero object a create compares against (kube compares with the Go zero value, in
    /// which non-pointer structs such as `spec` are `{}`).
    pub fn empty_object(mut self, empty: Value) -> Self {
        self.info.empty = empty;
        self
    }

    /// Fields a write through `subresource` (None: main resource) resets, so never owns.
    pub fn reset_fields(mut self, subresource: Option<&str>, paths: &[&str]) -> Self {
        let set = self
            .info
            .reset
            .entry(subresource.unwrap_or("").to_string())
            .or_default();
        for p in paths {
            set.insert(&Path::fields(p).0);
        }
        self
    }

    /// The usual status-subresource resets: the main resource resets `status`, the `status`
    /// subresource resets `spec` (what kube does for custom resources).
    pub fn status_subresource(self) -> Self {
        self.reset_fields(None, &["status"])
            .reset_fields(Some("status"), &["spec"])
    }

    /// The root node, to graft a whole tree.
    pub fn root(mut self, root: TypeNode) -> Self {
        self.info.root = root;
        self
    }

    /// Finishes.
    pub fn build(self) -> TypeInfo {
        self.info
    }
}

enum Step<'a> {
    Field(&'a str),
    Item,
}

fn parse_steps(path: &str) -> Vec<Step<'_>> {
    let mut steps = Vec::new();
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let mut name = segment;
        let mut items = 0;
        while let Some(rest) = name.strip_suffix("[]") {
            name = rest;
            items += 1;
        }
        if !name.is_empty() {
            steps.push(Step::Field(name));
        }
        steps.extend((0..items).map(|_| Step::Item));
    }
    steps
}

fn node_from_structural(s: &Structural) -> TypeNode {
    let mut node = TypeNode::untyped(Unknown::Entries);
    node.default = s.default.clone();
    let ty = s.type_.as_deref();
    match ty {
        Some("string" | "integer" | "number" | "boolean") => node.scalar = true,
        _ if s.int_or_string => node.scalar = true,
        _ => {}
    }
    node.list = match (s.list_type.as_deref(), s.list_map_keys.is_empty()) {
        (Some("set"), _) => ListType::Set,
        (Some("map"), false) => ListType::Map(s.list_map_keys.clone()),
        _ => ListType::Atomic,
    };
    if s.map_type.as_deref() == Some("atomic") {
        node.map = MapType::Atomic;
    }
    if let Some(items) = &s.items {
        node.items = Some(Box::new(node_from_structural(items)));
    }
    for (name, prop) in &s.properties {
        node.fields.insert(name.clone(), node_from_structural(prop));
    }
    if let Some(AdditionalProperties::Schema(schema)) = &s.additional_properties {
        node.entries = Some(Box::new(node_from_structural(schema)));
    }
    node
}

/// The path elements of a field path, for tests and callers building sets by hand.
pub fn field_path(dotted: &str) -> Vec<PathElement> {
    Path::fields(dotted).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn from_crd_schema() {
        let info = TypeInfo::from_schema(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port", "protocol"],
                        "items": {"type": "object", "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                        "additionalProperties": {"type": "string"}},
                    "extra": {"type": "object", "additionalProperties": {"type": "object"}},
                    "replicas": {"type": "integer"}
                }}
            }
        }))
        .unwrap_or_default();
        assert_eq!(
            info.at("spec.ports").list,
            ListType::Map(vec!["port".into(), "protocol".into()])
        );
        assert_eq!(info.at("spec.ports[].protocol").default, Some(json!("TCP")));
        assert_eq!(info.at("spec.tags").list, ListType::Set);
        assert_eq!(info.at("spec.args").list, ListType::Atomic);
        assert_eq!(info.at("spec.selector").map, MapType::Atomic);
        assert!(info.at("spec.replicas").scalar);
        assert!(!info.at("spec").child("extra").0.child("x").1);
        assert!(info.at("spec").child("replicas").1);
        assert_eq!(
            info.at("metadata.ownerReferences").list,
            ListType::Map(vec!["uid".into()])
        );
    }

    #[test]
    fn builder_paths() {
        let info = TypeInfo::builder()
            .list_map("spec.groups[].items", &["id"])
            .map_atomic("spec.selector")
            .reset_fields(None, &["status"])
            .build();
        assert_eq!(
            info.at("spec.groups[].items").list,
            ListType::Map(vec!["id".into()])
        );
        assert_eq!(info.at("spec.groups").list, ListType::Atomic);
        assert_eq!(info.at("spec.selector").map, MapType::Atomic);
        assert_eq!(info.at("spec.unknown[].x").list, ListType::Atomic);
        assert!(info.reset_fields(None).has(&field_path("status")));
        assert!(info.reset_fields(Some("status")).is_empty());
        assert!(TypeInfo::from_schema(&json!({"maxLength": "x"})).is_err());
    }
}
