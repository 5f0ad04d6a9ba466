//! The merge keys, list types and field types of the built-in Kubernetes kinds mNi serves, as
//! one table generated from Kubernetes' own OpenAPI document (`api/openapi-spec/swagger.json`
//! of Kubernetes v1.37.2) by `cargo xtask codegen`.
//!
//! Start with [`kind`] (or [`kind_in_preferred_version`]) to get a kind's root [`Definition`],
//! then walk down with [`Definition::field`] and [`Field::ty`]. Every field that references
//! another definition, every list and map field and every field with a patch or list
//! extension is in the table; plain scalar fields are left out.
//!
//! Three readers share it, so the facts agree: the strategic merge patch of the API server,
//! the `x-kubernetes-*` extensions `mni-openapi` publishes for kubectl, and the list and map
//! types of server-side apply in `mni-fieldmanager`. **Invariant:** no hand edits; the table
//! changes only by regenerating it.

mod generated;

use std::fmt;

/// A group, version and kind (`x-kubernetes-group-version-kind` of a definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupVersionKind {
    /// API group, `""` for core.
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `Deployment`.
    pub kind: &'static str,
}

/// One definition (a Go type) of the OpenAPI document.
#[derive(Debug)]
pub struct Definition {
    /// The OpenAPI name, e.g. `io.k8s.api.core.v1.PodSpec`.
    pub name: &'static str,
    /// The kinds whose root this definition is.
    pub kinds: &'static [GroupVersionKind],
    /// `x-kubernetes-map-type` of the type itself (`+structType`/`+mapType`).
    pub map_type: Option<MapType>,
    /// The fields that reference definitions, are lists or maps, or carry extensions; sorted
    /// by name.
    pub fields: &'static [Field],
}

/// The JSON shape of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One value: an object of [`Field::ty`], or a scalar.
    Value,
    /// A JSON array; its items are [`Field::ty`] (or scalars).
    List,
    /// A JSON object with free keys (`additionalProperties`); its values are [`Field::ty`].
    Map,
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// Replaced whole.
    Atomic,
    /// Scalars, merged as a set.
    Set,
    /// Objects identified by [`Field::list_map_keys`].
    Map,
}

/// `x-kubernetes-map-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapType {
    /// Replaced whole.
    Atomic,
    /// Merged key by key.
    Granular,
}

/// One field of a [`Definition`] with its patch and list metadata.
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// Value, list or map.
    pub shape: Shape,
    /// The definition of the value (of the items of a list, of the values of a map); None for
    /// scalars.
    pub ty: Option<&'static Definition>,
    /// `x-kubernetes-patch-strategy`, comma-separated (`merge`, `retainKeys`,
    /// `merge,retainKeys`, `replace`).
    pub patch_strategy: Option<&'static str>,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: Option<&'static str>,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: &'static [&'static str],
    /// `x-kubernetes-map-type` of the field.
    pub map_type: Option<MapType>,
}

impl fmt::Debug for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `ty` by name only: definitions are recursive (JSONSchemaProps).
        f.debug_struct("Field")
            .field("name", &self.name)
            .field("shape", &self.shape)
            .field("ty", &self.ty.map(|d| d.name))
            .field("patch_strategy", &self.patch_strategy)
            .field("patch_merge_key", &self.patch_merge_key)
            .field("list_type", &self.list_type)
            .field("list_map_keys", &self.list_map_keys)
            .field("map_type", &self.map_type)
            .finish()
    }
}

impl Definition {
    /// The field named `name`, if the table has it.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        let fields: &'static [Field] = self.fields;
        fields
            .binary_search_by(|f| f.name.cmp(name))
            .ok()
            .map(|i| &fields[i])
    }
}

impl Field {
    /// A field without patch or list metadata (used by the generated table).
    pub(crate) const fn new(
        name: &'static str,
        shape: Shape,
        ty: Option<&'static Definition>,
    ) -> Self {
        Self {
            name,
            shape,
            ty,
            patch_strategy: None,
            patch_merge_key: None,
            list_type: None,
            list_map_keys: &[],
            map_type: None,
        }
    }

    pub(crate) const fn patch_strategy(mut self, strategy: &'static str) -> Self {
        self.patch_strategy = Some(strategy);
        self
    }

    pub(crate) const fn patch_merge_key(mut self, key: &'static str) -> Self {
        self.patch_merge_key = Some(key);
        self
    }

    pub(crate) const fn list_type(
        mut self,
        list_type: ListType,
        keys: &'static [&'static str],
    ) -> Self {
        self.list_type = Some(list_type);
        self.list_map_keys = keys;
        self
    }

    pub(crate) const fn map_type(mut self, map_type: MapType) -> Self {
        self.map_type = Some(map_type);
        self
    }

    fn strategies(&self) -> impl Iterator<Item = &'static str> {
        self.patch_strategy.unwrap_or("").split(',').map(str::trim)
    }

    /// Strategic merge patch merges this list or object instead of replacing it.
    pub fn merges(&self) -> bool {
        self.strategies().any(|s| s == "merge")
    }

    /// Strategic merge patch honours `$retainKeys` here.
    pub fn retains_keys(&self) -> bool {
        self.strategies().any(|s| s == "retainKeys")
    }

    /// The list's identity as server-side apply sees it (structured-merge-diff's
    /// `schemaconv`): an explicit `x-kubernetes-list-type` wins; else a `merge` patch strategy
    /// makes a list keyed by the merge key (a set without one); else the list is atomic.
    pub fn apply_list_type(&self) -> (ListType, Vec<&'static str>) {
        match self.list_type {
            Some(ListType::Map) => (ListType::Map, self.list_map_keys.to_vec()),
            Some(other) => (other, Vec::new()),
            None if self.merges() => match self.patch_merge_key {
                Some(key) => (ListType::Map, vec![key]),
                None => (ListType::Set, Vec::new()),
            },
            None => (ListType::Atomic, Vec::new()),
        }
    }
}

/// Every definition of the table, sorted by name.
pub fn definitions() -> impl Iterator<Item = &'static Definition> {
    generated::DEFINITIONS.iter().copied()
}

/// The definition with this OpenAPI name (`io.k8s.api.core.v1.PodSpec`).
pub fn definition(name: &str) -> Option<&'static Definition> {
    let defs = generated::DEFINITIONS;
    defs.binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| defs[i])
}

/// The root definition of a kind in one version (`""` is the core group).
pub fn kind(group: &str, version: &str, kind: &str) -> Option<&'static Definition> {
    generated::KINDS
        .iter()
        .find(|(gvk, _)| gvk.group == group && gvk.version == version && gvk.kind == kind)
        .map(|(_, def)| *def)
}

/// The root definition of a kind in its most preferred version (GA over beta over alpha,
/// then the higher number: `autoscaling/v2` over `autoscaling/v1`).
pub fn kind_in_preferred_version(group: &str, kind: &str) -> Option<&'static Definition> {
    generated::KINDS
        .iter()
        .filter(|(gvk, _)| gvk.group == group && gvk.kind == kind)
        .max_by_key(|(gvk, _)| version_priority(gvk.version))
        .map(|(_, def)| *def)
}

/// The root definition named by an object's `apiVersion` (`apps/v1`, `v1`) and `kind`.
pub fn kind_of_api_version(api_version: &str, kind_name: &str) -> Option<&'static Definition> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    kind(group, version, kind_name)
}

/// Kubernetes' version order as a sortable key: (stability, major, minor).
fn version_priority(version: &str) -> (u8, u32, u32) {
    let rest = version.strip_prefix('v').unwrap_or(version);
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let major = rest[..digits].parse().unwrap_or(0);
    let tail = &rest[digits..];
    let (stability, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        (0, 0)
    };
    (stability, major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(def: &str, name: &str) -> &'static Field {
        definition(def)
            .and_then(|d| d.field(name))
            .unwrap_or_else(|| panic!("{def}.{name} is in the table"))
    }

    #[test]
    fn walks_from_a_kind_down_to_container_ports() {
        let deployment = kind("apps", "v1", "Deployment").expect("Deployment");
        assert_eq!(deployment.name, "io.k8s.api.apps.v1.Deployment");
        let spec = deployment.field("spec").and_then(|f| f.ty).expect("spec");
        let template = spec.field("template").and_then(|f| f.ty).expect("template");
        let pod = template.field("spec").and_then(|f| f.ty).expect("pod spec");
        let containers = pod.field("containers").expect("containers");
        assert_eq!(containers.shape, Shape::List);
        assert_eq!(containers.patch_merge_key, Some("name"));
        assert!(containers.merges());
        let ports = containers.ty.and_then(|c| c.field("ports")).expect("ports");
        assert_eq!(ports.patch_merge_key, Some("containerPort"));
        assert_eq!(ports.list_type, Some(ListType::Map));
        assert_eq!(ports.list_map_keys, ["containerPort", "protocol"]);
    }

    #[test]
    fn merge_keys_depend_on_the_parent_type() {
        assert_eq!(
            field("io.k8s.api.core.v1.ServiceSpec", "ports").patch_merge_key,
            Some("port")
        );
        assert_eq!(
            field("io.k8s.api.core.v1.Container", "volumeMounts").patch_merge_key,
            Some("mountPath")
        );
        let tolerations = field("io.k8s.api.core.v1.PodSpec", "tolerations");
        assert!(!tolerations.merges());
        assert_eq!(tolerations.apply_list_type().0, ListType::Atomic);
        let volumes = field("io.k8s.api.core.v1.PodSpec", "volumes");
        assert!(volumes.merges() && volumes.retains_keys());
    }

    #[test]
    fn list_and_map_types() {
        let finalizers = field(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "finalizers",
        );
        assert_eq!(finalizers.apply_list_type().0, ListType::Set);
        let labels = field("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "labels");
        assert_eq!(labels.shape, Shape::Map);
        let selector = definition("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector");
        assert_eq!(selector.and_then(|d| d.map_type), Some(MapType::Atomic));
        let owners = field(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "ownerReferences",
        );
        assert_eq!(owners.apply_list_type(), (ListType::Map, vec!["uid"]));
    }

    #[test]
    fn kinds_and_versions() {
        assert!(kind("", "v1", "Pod").is_some());
        assert!(kind_of_api_version("apps/v1", "StatefulSet").is_some());
        assert!(kind_of_api_version("v1", "ConfigMap").is_some());
        assert!(kind("example.com", "v1", "Widget").is_none());
        let hpa = kind_in_preferred_version("autoscaling", "HorizontalPodAutoscaler");
        assert_eq!(
            hpa.map(|d| d.name),
            Some("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler")
        );
        assert!(version_priority("v2") > version_priority("v1"));
        assert!(version_priority("v1") > version_priority("v2beta1"));
        assert!(version_priority("v1beta2") > version_priority("v1beta1"));
    }

    #[test]
    fn the_table_is_sorted_and_closed() {
        let defs: Vec<_> = definitions().collect();
        assert!(defs.windows(2).all(|w| w[0].name < w[1].name));
        for def in defs {
            assert!(def.fields.windows(2).all(|w| w[0].name < w[1].name));
            for f in def.fields {
                if let Some(ty) = f.ty {
                    assert!(definition(ty.name).is_some(), "{}", ty.name);
                }
            }
        }
    }
}
