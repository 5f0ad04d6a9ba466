//! The REST operations kube-apiserver publishes for a resource, in a format-neutral form
//! that [`crate::v3`] and [`crate::v2`] render.
//!
//! For every resource: `list`, `create` and `deletecollection` on the collection path
//! (`/apis/<g>/<v>/namespaces/{namespace}/<plural>` or `/apis/<g>/<v>/<plural>`); `get`,
//! `put`, `patch` and `delete` on the item path; the all-namespaces `list` for namespaced
//! kinds; the deprecated `watch`/`watchlist` paths; `status` and `scale` subresources when
//! served; and the group-version's `getAPIResources` operation. Like kube, `name`,
//! `namespace` and `pretty` are path-level parameters; `dryRun`, `fieldManager`,
//! `fieldValidation` and `force` are operation-level parameters of the write operations
//! (kubectl's field-validation probe only looks at the PATCH operation's own parameters).

use serde_json::{Value, json};

use crate::model::ResourceDoc;
use crate::params::{self, Param};
use crate::schemas::{KindNames, names};

/// The request body of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// The object itself (create, replace), by schema name.
    Object(String),
    /// A patch document, in the listed media types.
    Patch(&'static [&'static str]),
    /// Optional `DeleteOptions`.
    DeleteOptions,
}

/// One operation of a path.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    pub(crate) method: &'static str,
    pub(crate) id: String,
    pub(crate) description: String,
    pub(crate) tag: String,
    /// `x-kubernetes-action`, absent for `getAPIResources`.
    pub(crate) action: Option<&'static str>,
    /// `x-kubernetes-group-version-kind`, absent for `getAPIResources`.
    pub(crate) gvk: Option<Value>,
    pub(crate) params: Vec<Param>,
    pub(crate) body: Option<Body>,
    /// `(status code, description)` pairs, all returning `response_schema`.
    pub(crate) responses: &'static [(&'static str, &'static str)],
    pub(crate) response_schema: String,
    pub(crate) produces: &'static [&'static str],
}

/// A path with its path-level parameters and operations.
#[derive(Debug, Clone)]
pub(crate) struct PathItem {
    pub(crate) path: String,
    pub(crate) params: Vec<Param>,
    pub(crate) operations: Vec<Operation>,
}

impl PathItem {
    /// The path item object of a document: each operation under its method, as `operation`
    /// writes it, and the path-level `parameters`, as `param` writes them (the OpenAPI v2
    /// and v3 documents differ only in those two).
    pub(crate) fn to_json(
        &self,
        operation: impl Fn(&Operation) -> Value,
        param: impl Fn(&Param) -> Value,
    ) -> Value {
        let mut map = serde_json::Map::new();
        for op in &self.operations {
            map.insert(op.method.into(), operation(op));
        }
        if !self.params.is_empty() {
            map.insert("parameters".into(), self.params.iter().map(param).collect());
        }
        Value::Object(map)
    }
}

const PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
const PRODUCES_STREAM: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];
const CUSTOM_PRODUCES: &[&str] = &["application/json", "application/yaml"];
const CUSTOM_PRODUCES_STREAM: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/json;stream=watch",
];

/// PATCH media types of built-in kinds.
pub(crate) const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];
/// PATCH media types of custom resources (no strategic merge patch).
pub(crate) const CUSTOM_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

const OK: &[(&str, &str)] = &[("200", "OK"), ("401", "Unauthorized")];
const CREATED: &[(&str, &str)] = &[
    ("200", "OK"),
    ("201", "Created"),
    ("202", "Accepted"),
    ("401", "Unauthorized"),
];
const REPLACED: &[(&str, &str)] = &[("200", "OK"), ("201", "Created"), ("401", "Unauthorized")];
const DELETED: &[(&str, &str)] = &[("200", "OK"), ("202", "Accepted"), ("401", "Unauthorized")];

/// `Apps`, `Core`, `RbacAuthorization`, `StableExampleCom`: the group part of operation ids.
fn group_id(group: &str) -> String {
    if group.is_empty() {
        return "Core".into();
    }
    let trimmed = group.strip_suffix(".k8s.io").unwrap_or(group);
    trimmed.split(['.', '-']).map(capitalize).collect()
}

/// `apps_v1`, `core_v1`, `rbacAuthorization_v1`: the operation tag.
fn tag(group: &str, version: &str) -> String {
    if group.is_empty() {
        return format!("core_{version}");
    }
    let id = group_id(group);
    let mut chars = id.chars();
    let first: String = chars
        .next()
        .map(|c| c.to_lowercase().collect())
        .unwrap_or_default();
    format!("{first}{}_{version}", chars.as_str())
}

fn capitalize(part: &str) -> String {
    let mut chars = part.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

/// Builds every path of one group-version (or of several, for Swagger 2.0), sorted by path.
pub(crate) fn paths(resources: &[&ResourceDoc], kinds: &[KindNames]) -> Vec<PathItem> {
    let mut items = Vec::new();
    let mut group_versions: Vec<(&str, &str)> = Vec::new();
    for (resource, names) in resources.iter().zip(kinds) {
        let gv = (resource.group.as_str(), resource.version.as_str());
        if !group_versions.contains(&gv) {
            group_versions.push(gv);
            items.push(api_resources(resource));
        }
        items.extend(ResourcePaths::new(resource, names).build());
    }
    items.sort_by(|a, b| a.path.cmp(&b.path));
    items
}

fn api_resources(resource: &ResourceDoc) -> PathItem {
    let gv_id = format!(
        "{}{}",
        group_id(&resource.group),
        capitalize(&resource.version)
    );
    PathItem {
        path: format!("{}/", resource.url_prefix()),
        params: Vec::new(),
        operations: vec![Operation {
            method: "get",
            id: format!("get{gv_id}APIResources"),
            description: "get available resources".into(),
            tag: tag(&resource.group, &resource.version),
            action: None,
            gvk: None,
            params: Vec::new(),
            body: None,
            responses: OK,
            response_schema: names::API_RESOURCE_LIST.into(),
            produces: PRODUCES,
        }],
    }
}

struct ResourcePaths<'a> {
    resource: &'a ResourceDoc,
    names: &'a KindNames,
    gv_id: String,
    scope: &'static str,
    tag: String,
    produces: &'static [&'static str],
    produces_stream: &'static [&'static str],
    patch_types: &'static [&'static str],
}

impl<'a> ResourcePaths<'a> {
    fn new(resource: &'a ResourceDoc, names: &'a KindNames) -> Self {
        let custom = resource.is_custom();
        Self {
            resource,
            names,
            gv_id: format!(
                "{}{}",
                group_id(&resource.group),
                capitalize(&resource.version)
            ),
            scope: if resource.namespaced {
                "Namespaced"
            } else {
                ""
            },
            tag: tag(&resource.group, &resource.version),
            produces: if custom { CUSTOM_PRODUCES } else { PRODUCES },
            produces_stream: if custom {
                CUSTOM_PRODUCES_STREAM
            } else {
                PRODUCES_STREAM
            },
            patch_types: if custom {
                CUSTOM_PATCH_TYPES
            } else {
                PATCH_TYPES
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        method: &'static str,
        action: &'static str,
        id: String,
        description: String,
        params: Vec<Param>,
        body: Option<Body>,
        responses: &'static [(&'static str, &'static str)],
        response_schema: &str,
    ) -> Operation {
        let r = self.resource;
        let kind_gvk = if response_schema == names::SCALE {
            gvk("autoscaling", "v1", "Scale")
        } else {
            gvk(&r.group, &r.version, &r.kind)
        };
        let produces = if matches!(action, "list" | "watch" | "watchlist") {
            self.produces_stream
        } else {
            self.produces
        };
        Operation {
            method,
            id,
            description,
            tag: self.tag.clone(),
            action: Some(action),
            gvk: Some(kind_gvk),
            params,
            body,
            responses,
            response_schema: response_schema.to_owned(),
            produces,
        }
    }

    fn build(&self) -> Vec<PathItem> {
        let r = self.resource;
        let (gv, scope, kind) = (&self.gv_id, self.scope, &r.kind);
        let prefix = r.url_prefix();
        let (ns_segment, ns_params) = if r.namespaced {
            ("/namespaces/{namespace}", vec![params::namespace()])
        } else {
            ("", Vec::new())
        };
        let collection = format!("{prefix}{ns_segment}/{}", r.plural);
        let item = format!("{collection}/{{name}}");
        let mut item_params = vec![params::name(kind)];
        item_params.extend(ns_params.iter().cloned());
        item_params.push(params::pretty());
        let mut collection_params = ns_params.clone();
        collection_params.push(params::pretty());
        let (kind_schema, list_schema) = (&self.names.kind, &self.names.list);

        let mut paths = vec![
            PathItem {
                path: collection.clone(),
                params: collection_params,
                operations: vec![
                    self.op(
                        "get",
                        "list",
                        format!("list{gv}{scope}{kind}"),
                        format!("list or watch objects of kind {kind}"),
                        params::list(),
                        None,
                        OK,
                        list_schema,
                    ),
                    self.op(
                        "post",
                        "post",
                        format!("create{gv}{scope}{kind}"),
                        format!("create a {kind}"),
                        params::write(false),
                        Some(Body::Object(kind_schema.clone())),
                        CREATED,
                        kind_schema,
                    ),
                    self.op(
                        "delete",
                        "deletecollection",
                        format!("delete{gv}Collection{scope}{kind}"),
                        format!("delete collection of {kind}"),
                        params::delete_collection(),
                        Some(Body::DeleteOptions),
                        OK,
                        names::STATUS,
                    ),
                ],
            },
            PathItem {
                path: item.clone(),
                params: item_params.clone(),
                operations: vec![
                    self.op(
                        "get",
                        "get",
                        format!("read{gv}{scope}{kind}"),
                        format!("read the specified {kind}"),
                        Vec::new(),
                        None,
                        OK,
                        kind_schema,
                    ),
                    self.op(
                        "put",
                        "put",
                        format!("replace{gv}{scope}{kind}"),
                        format!("replace the specified {kind}"),
                        params::write(false),
                        Some(Body::Object(kind_schema.clone())),
                        REPLACED,
                        kind_schema,
                    ),
                    self.op(
                        "patch",
                        "patch",
                        format!("patch{gv}{scope}{kind}"),
                        format!("partially update the specified {kind}"),
                        params::write(true),
                        Some(Body::Patch(self.patch_types)),
                        REPLACED,
                        kind_schema,
                    ),
                    self.op(
                        "delete",
                        "delete",
                        format!("delete{gv}{scope}{kind}"),
                        format!("delete a {kind}"),
                        params::delete(),
                        Some(Body::DeleteOptions),
                        DELETED,
                        names::STATUS,
                    ),
                ],
            },
        ];
        if r.namespaced {
            paths.push(self.list_only(
                format!("{prefix}/{}", r.plural),
                "list",
                format!("list{gv}{kind}ForAllNamespaces"),
                format!("list or watch objects of kind {kind}"),
                list_schema,
                Vec::new(),
            ));
            paths.push(self.list_only(
                format!("{prefix}/watch/{}", r.plural), "watchlist",
                format!("watch{gv}{kind}ListForAllNamespaces"),
                format!("watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list operation instead."),
                names::WATCH_EVENT, Vec::new()));
        }
        paths.push(self.list_only(
            format!("{prefix}/watch{ns_segment}/{}", r.plural), "watchlist",
            format!("watch{gv}{scope}{kind}List"),
            format!("watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list operation instead."),
            names::WATCH_EVENT, ns_params.clone()));
        let mut watch_item_params = vec![params::name(kind)];
        watch_item_params.extend(ns_params.iter().cloned());
        paths.push(self.list_only(
            format!("{prefix}/watch{ns_segment}/{}/{{name}}", r.plural), "watch",
            format!("watch{gv}{scope}{kind}"),
            format!("watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."),
            names::WATCH_EVENT, watch_item_params));
        for (served, sub, schema) in [
            (r.status, "Status", kind_schema.as_str()),
            (r.scale, "Scale", names::SCALE),
        ] {
            if served {
                paths.push(self.subresource(&item, &item_params, sub, schema));
            }
        }
        paths
    }

    /// A GET-only path whose list parameters are path-level (all-namespaces and watch paths).
    fn list_only(
        &self,
        path: String,
        action: &'static str,
        id: String,
        description: String,
        schema: &str,
        mut params: Vec<Param>,
    ) -> PathItem {
        params.extend(params::list_path_level());
        PathItem {
            path,
            params,
            operations: vec![self.op("get", action, id, description, Vec::new(), None, OK, schema)],
        }
    }

    fn subresource(&self, item: &str, item_params: &[Param], sub: &str, schema: &str) -> PathItem {
        let (gv, scope, kind) = (&self.gv_id, self.scope, &self.resource.kind);
        let lower = sub.to_lowercase();
        PathItem {
            path: format!("{item}/{lower}"),
            params: item_params.to_vec(),
            operations: vec![
                self.op(
                    "get",
                    "get",
                    format!("read{gv}{scope}{kind}{sub}"),
                    format!("read {lower} of the specified {kind}"),
                    Vec::new(),
                    None,
                    OK,
                    schema,
                ),
                self.op(
                    "put",
                    "put",
                    format!("replace{gv}{scope}{kind}{sub}"),
                    format!("replace {lower} of the specified {kind}"),
                    params::write(false),
                    Some(Body::Object(schema.to_owned())),
                    REPLACED,
                    schema,
                ),
                self.op(
                    "patch",
                    "patch",
                    format!("patch{gv}{scope}{kind}{sub}"),
                    format!("partially update {lower} of the specified {kind}"),
                    params::write(true),
                    Some(Body::Patch(self.patch_types)),
                    REPLACED,
                    schema,
                ),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_tags() {
        assert_eq!(group_id(""), "Core");
        assert_eq!(group_id("apps"), "Apps");
        assert_eq!(group_id("rbac.authorization.k8s.io"), "RbacAuthorization");
        assert_eq!(group_id("stable.example.com"), "StableExampleCom");
        assert_eq!(tag("", "v1"), "core_v1");
        assert_eq!(
            tag("rbac.authorization.k8s.io", "v1"),
            "rbacAuthorization_v1"
        );
    }
}
