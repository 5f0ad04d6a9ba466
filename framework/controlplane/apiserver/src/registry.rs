//! The catalogue of served resources: built-in kinds and the ones CRDs add.
//!
//! A [`ResourceInfo`] says everything the HTTP layer needs about one group/version/resource:
//! names, scope, subresources, where its objects live in the store and which version they are
//! stored at, and how to validate them (a built-in hook table or a CRD's structural schema).
//! The [`Registry`] is shared behind a lock and changes when CRDs are created, updated or deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use mni_apimachinery::{FieldError, Structural};
use serde_json::Value;

/// Per-kind behaviour of a built-in resource (the table of each kind is in `builtin`).
pub(crate) struct BuiltinKind {
    /// Kind name, for debugging.
    pub kind: &'static str,
    /// Decodes the object through its typed struct and encodes it again, which drops unknown
    /// fields as kube-apiserver's decoder does; the error text explains what did not fit.
    pub normalize: fn(&Value) -> Result<Value, String>,
    /// Field selector labels beyond `metadata.name`/`metadata.namespace`, with the JSON path
    /// each reads.
    pub field_labels: &'static [(&'static str, &'static str)],
    /// Fills in defaults, as kube-apiserver's defaulting functions do.
    pub default: fn(&mut Value),
    /// Kind-specific validation of a whole object.
    pub validate: fn(&Value) -> Vec<FieldError>,
    /// The OpenAPI description of the kind (none for create-only review kinds).
    pub doc: Option<fn() -> mni_openapi::ResourceDoc>,
}

impl std::fmt::Debug for BuiltinKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinKind")
            .field("kind", &self.kind)
            .finish()
    }
}

/// The verbs every served resource supports.
pub(crate) const STANDARD_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Where the scale subresource reads and writes replicas.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScalePaths {
    /// JSON path (`.spec.replicas`) of the desired replicas.
    pub spec_replicas: String,
    /// JSON path (`.status.replicas`) of the observed replicas.
    pub status_replicas: String,
    /// JSON path of the serialized label selector in status, if any.
    pub label_selector: Option<String>,
}

/// One additional printer column of a CRD version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type: string, integer, number, boolean, date.
    pub type_: String,
    /// Optional format.
    pub format: String,
    /// Description shown by `kubectl get -o wide` docs.
    pub description: String,
    /// Priority: 0 in the default view, more only with `-o wide`.
    pub priority: i64,
    /// JSONPath into the object.
    pub json_path: String,
}

/// What a served CRD version adds on top of the common fields.
#[derive(Debug, Clone)]
pub(crate) struct CustomInfo {
    /// The CRD's name (`crontabs.stable.example.com`).
    pub crd_name: String,
    /// The structural schema of this version, if it has one.
    pub schema: Option<Arc<Structural>>,
    /// The raw openAPIV3Schema (for OpenAPI publishing).
    pub raw_schema: Option<Value>,
    /// Additional printer columns.
    pub columns: Vec<PrinterColumn>,
    /// List and map types for field management (server-side apply).
    pub(crate) types: Arc<mni_fieldmanager::TypeInfo>,
    /// `selectableFields` JSON paths usable in field selectors.
    pub selectable_fields: Vec<String>,
}

/// The flavour of a served resource.
#[derive(Debug, Clone)]
pub(crate) enum Flavor {
    /// A kind compiled into the server.
    Builtin(&'static BuiltinKind),
    /// A kind served because a CRD declares it.
    Custom(Arc<CustomInfo>),
}

/// Everything the server knows about one served group/version/resource.
#[derive(Debug, Clone)]
pub(crate) struct ResourceInfo {
    /// API group, empty for core.
    pub group: String,
    /// API version (`v1`).
    pub version: String,
    /// Kind (`Deployment`).
    pub kind: String,
    /// List kind (`DeploymentList`).
    pub list_kind: String,
    /// Plural resource name (`deployments`).
    pub plural: String,
    /// Singular name (`deployment`).
    pub singular: String,
    /// Short names for kubectl (`deploy`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Whether the `status` subresource is served.
    pub status: bool,
    /// The `scale` subresource, if served.
    pub scale: Option<ScalePaths>,
    /// Whether metadata.generation is maintained (bumped on spec changes).
    pub generation: bool,
    /// Store key prefix of the objects, without trailing slash (`/registry/apps/deployments`).
    pub storage_prefix: String,
    /// Version the objects are stored at.
    pub storage_version: String,
    /// The verbs served (all of them, or only `create` for review kinds).
    pub(crate) verbs: &'static [&'static str],
    /// Built-in or custom.
    pub flavor: Flavor,
}

impl ResourceInfo {
    /// `apps/v1`, or `v1` for the core group.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group/resource pair for messages.
    pub(crate) fn group_resource(&self) -> crate::error::GroupResource<'_> {
        crate::error::GroupResource {
            group: &self.group,
            resource: &self.plural,
        }
    }

    /// The store key of one object.
    pub(crate) fn key(&self, namespace: Option<&str>, name: &str) -> String {
        match namespace {
            Some(ns) if self.namespaced => format!("{}/{ns}/{name}", self.storage_prefix),
            _ => format!("{}/{name}", self.storage_prefix),
        }
    }

    /// The store prefix of a collection (one namespace or all).
    pub(crate) fn collection_prefix(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => format!("{}/{ns}/", self.storage_prefix),
            _ => format!("{}/", self.storage_prefix),
        }
    }

    /// The CRD information, if this is a custom resource.
    pub(crate) fn custom(&self) -> Option<&CustomInfo> {
        match &self.flavor {
            Flavor::Custom(c) => Some(c),
            Flavor::Builtin(_) => None,
        }
    }

    /// The built-in hooks, if this is a built-in resource.
    pub(crate) fn builtin(&self) -> Option<&'static BuiltinKind> {
        match &self.flavor {
            Flavor::Builtin(b) => Some(b),
            Flavor::Custom(_) => None,
        }
    }
}

/// The set of served resources, indexed for request routing and discovery.
#[derive(Debug, Default, Clone)]
pub(crate) struct Registry {
    by_path: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
    /// Group → preferred-first versions, in discovery order.
    groups: Vec<(String, Vec<String>)>,
    /// Monotonic counter bumped on every change, used to cache derived documents.
    generation: u64,
}

impl Registry {
    /// Adds or replaces a resource. `prefer` puts the version first in its group.
    pub(crate) fn insert(&mut self, info: ResourceInfo, prefer: bool) {
        let group = info.group.clone();
        let version = info.version.clone();
        self.by_path.insert(
            (group.clone(), version.clone(), info.plural.clone()),
            Arc::new(info),
        );
        match self.groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, versions)) => {
                if !versions.contains(&version) {
                    if prefer {
                        versions.insert(0, version);
                    } else {
                        versions.push(version);
                    }
                }
            }
            None => self.groups.push((group, vec![version])),
        }
        self.generation += 1;
    }

    /// Removes every resource a CRD serves.
    pub(crate) fn remove_crd(&mut self, crd_name: &str) {
        self.by_path
            .retain(|_, info| info.custom().is_none_or(|c| c.crd_name != crd_name));
        let live: Vec<(String, String)> = self
            .by_path
            .keys()
            .map(|(g, v, _)| (g.clone(), v.clone()))
            .collect();
        for (group, versions) in &mut self.groups {
            versions.retain(|v| live.contains(&(group.clone(), v.clone())));
        }
        self.groups.retain(|(_, versions)| !versions.is_empty());
        self.generation += 1;
    }

    /// Sets the version order of a group (preferred first).
    pub(crate) fn set_version_order(&mut self, group: &str, order: Vec<String>) {
        if let Some((_, versions)) = self.groups.iter_mut().find(|(g, _)| g == group) {
            versions.sort_by_key(|v| order.iter().position(|o| o == v).unwrap_or(usize::MAX));
        }
        self.generation += 1;
    }

    /// Looks up a resource by group, version and plural name.
    pub(crate) fn get(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceInfo>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Looks up a resource by group, version and kind (as ownerReferences name it).
    pub(crate) fn find_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<Arc<ResourceInfo>> {
        self.by_path
            .iter()
            .find(|((g, v, _), info)| g == group && v == version && info.kind == kind)
            .map(|(_, info)| info.clone())
    }

    /// Whether a group/version is served at all.
    pub(crate) fn serves(&self, group: &str, version: &str) -> bool {
        self.groups
            .iter()
            .any(|(g, vs)| g == group && vs.iter().any(|v| v == version))
    }

    /// Groups with their versions, preferred first.
    pub(crate) fn groups(&self) -> &[(String, Vec<String>)] {
        &self.groups
    }

    /// Every resource of one group/version, sorted by plural.
    pub(crate) fn resources(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.by_path
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, info)| info.clone())
            .collect()
    }

    /// Every served resource.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<ResourceInfo>> {
        self.by_path.values()
    }

    /// A counter that changes whenever the set of resources changes.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_routable_and_keys_are_scoped() {
        let r = Registry::with_builtins();
        let deploy = r.get("apps", "v1", "deployments").expect("deployments");
        assert!(deploy.namespaced);
        assert_eq!(
            deploy.key(Some("ns"), "web"),
            "/registry/apps/deployments/ns/web"
        );
        assert_eq!(
            deploy.collection_prefix(Some("ns")),
            "/registry/apps/deployments/ns/"
        );
        let ns = r.get("", "v1", "namespaces").expect("namespaces");
        assert!(!ns.namespaced);
        assert_eq!(ns.key(Some("ignored"), "a"), "/registry/core/namespaces/a");
        assert!(r.serves("events.k8s.io", "v1"));
        let ev = r.get("events.k8s.io", "v1", "events").expect("events");
        assert_eq!(ev.storage_prefix, "/registry/core/events");
    }
}
