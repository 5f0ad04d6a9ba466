//! `framework/controlplane/schema/src/generated.rs`: the merge keys, list types and field
//! types of the built-in kinds (crate `mni-builtin-schema`), from Kubernetes' OpenAPI v2
//! document (`api/openapi-spec/swagger.json`).
//!
//! Every definition reachable from [`ROOTS`] is emitted, with each field that references a
//! definition, is a list or a map, or carries `x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`, `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` or
//! `x-kubernetes-map-type`. Plain scalar fields are left out: no reader needs them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Map, Value};

use super::{GeneratedFile, inputs};

/// Errors of this generator.
#[derive(Debug, thiserror::Error)]
pub enum BuiltinSchemaError {
    /// The OpenAPI document could not be read or parsed.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A root kind is not in the document.
    #[error("no definition of {group}/{version} {kind} in the OpenAPI document")]
    MissingKind {
        /// API group.
        group: String,
        /// API version.
        version: String,
        /// Kind.
        kind: String,
    },
    /// A `$ref` names a definition the document does not have.
    #[error("{from} references {to}, which is not in the OpenAPI document")]
    DanglingRef {
        /// The referencing definition and field.
        from: String,
        /// The missing definition.
        to: String,
    },
    /// Two definitions would get the same constant name.
    #[error("{a} and {b} both map to the constant {name}")]
    NameClash {
        /// The constant.
        name: String,
        /// One definition.
        a: String,
        /// The other.
        b: String,
    },
    /// An extension has a value the table cannot hold.
    #[error("{definition}.{field}: unexpected {extension} {value}")]
    Extension {
        /// The definition.
        definition: String,
        /// The field (empty for the definition itself).
        field: String,
        /// The extension.
        extension: &'static str,
        /// Its value.
        value: String,
    },
    /// The generated code does not render.
    #[error(transparent)]
    Render(#[from] super::RenderError),
}

/// The generated file, relative to the repository root.
pub const OUT_FILE: &str = "framework/controlplane/schema/src/generated.rs";

/// The kinds whose definitions (and everything they reach) the table holds: the built-in
/// kinds mNi serves, decodes (`mni-protobuf`) or has server-side-apply tables for.
pub const ROOTS: &[(&str, &str, &[&str])] = &[
    (
        "",
        "v1",
        &[
            "Binding",
            "ComponentStatus",
            "ConfigMap",
            "Endpoints",
            "Event",
            "LimitRange",
            "Namespace",
            "Node",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "Pod",
            "PodTemplate",
            "ReplicationController",
            "ResourceQuota",
            "Secret",
            "Service",
            "ServiceAccount",
        ],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        &[
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingWebhookConfiguration",
        ],
    ),
    ("apiextensions.k8s.io", "v1", &["CustomResourceDefinition"]),
    (
        "apps",
        "v1",
        &[
            "ControllerRevision",
            "DaemonSet",
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
        ],
    ),
    (
        "authentication.k8s.io",
        "v1",
        &["SelfSubjectReview", "TokenRequest", "TokenReview"],
    ),
    (
        "authorization.k8s.io",
        "v1",
        &[
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
        ],
    ),
    ("apiregistration.k8s.io", "v1", &["APIService"]),
    ("autoscaling", "v1", &["HorizontalPodAutoscaler", "Scale"]),
    ("autoscaling", "v2", &["HorizontalPodAutoscaler"]),
    ("batch", "v1", &["CronJob", "Job"]),
    ("certificates.k8s.io", "v1", &["CertificateSigningRequest"]),
    ("coordination.k8s.io", "v1", &["Lease"]),
    ("discovery.k8s.io", "v1", &["EndpointSlice"]),
    ("events.k8s.io", "v1", &["Event"]),
    (
        "networking.k8s.io",
        "v1",
        &[
            "IPAddress",
            "Ingress",
            "IngressClass",
            "NetworkPolicy",
            "ServiceCIDR",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1",
        &["FlowSchema", "PriorityLevelConfiguration"],
    ),
    ("node.k8s.io", "v1", &["RuntimeClass"]),
    ("policy", "v1", &["Eviction", "PodDisruptionBudget"]),
    (
        "rbac.authorization.k8s.io",
        "v1",
        &["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
    ),
    ("scheduling.k8s.io", "v1", &["PriorityClass"]),
    (
        "storage.k8s.io",
        "v1",
        &[
            "CSIDriver",
            "CSINode",
            "CSIStorageCapacity",
            "StorageClass",
            "VolumeAttachment",
        ],
    ),
];

const REF_PREFIX: &str = "#/definitions/";

/// A field as the table holds it.
#[derive(Debug)]
struct FieldRow {
    name: String,
    shape: &'static str,
    ty: Option<String>,
    strategy: Option<String>,
    merge_key: Option<String>,
    list_type: Option<&'static str>,
    keys: Vec<String>,
    map_type: Option<&'static str>,
}

/// Generates the table.
pub fn generate(inputs: &inputs::Inputs) -> Result<Vec<GeneratedFile>, BuiltinSchemaError> {
    let read_error = |message: String| BuiltinSchemaError::Read {
        path: inputs.swagger.clone(),
        message,
    };
    let text = std::fs::read_to_string(&inputs.swagger).map_err(|e| read_error(e.to_string()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| read_error(e.to_string()))?;
    let defs = doc["definitions"]
        .as_object()
        .ok_or_else(|| read_error("no `definitions`".into()))?;
    Ok(vec![generate_from(defs)?])
}

/// Generates the table from the `definitions` of an OpenAPI v2 document.
fn generate_from(defs: &Map<String, Value>) -> Result<GeneratedFile, BuiltinSchemaError> {
    let mut todo = Vec::new();
    for (group, version, kinds) in ROOTS {
        for kind in *kinds {
            let root = defs
                .iter()
                .find(|(_, d)| {
                    gvks(d).contains(&(group.to_string(), version.to_string(), kind.to_string()))
                })
                .ok_or_else(|| BuiltinSchemaError::MissingKind {
                    group: group.to_string(),
                    version: version.to_string(),
                    kind: kind.to_string(),
                })?;
            todo.push(root.0.clone());
        }
    }
    let mut tables: BTreeMap<String, Vec<FieldRow>> = BTreeMap::new();
    while let Some(name) = todo.pop() {
        if tables.contains_key(&name) {
            continue;
        }
        let rows = fields(&name, &defs[&name])?;
        for to in rows.iter().filter_map(|r| r.ty.as_ref()) {
            if !defs.contains_key(to) {
                return Err(BuiltinSchemaError::DanglingRef {
                    from: name.clone(),
                    to: to.clone(),
                });
            }
            todo.push(to.clone());
        }
        tables.insert(name, rows);
    }
    let mut consts: BTreeMap<String, String> = BTreeMap::new();
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for name in tables.keys() {
        let c = const_name(name);
        if let Some(other) = by_name.insert(c.clone(), name.clone()) {
            return Err(BuiltinSchemaError::NameClash {
                name: c,
                a: other,
                b: name.clone(),
            });
        }
        consts.insert(name.clone(), c);
    }
    let ident = |name: &str| format_ident!("{}", consts[name]);
    let mut items = Vec::new();
    let mut kinds: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    for (name, rows) in &tables {
        let def = &defs[name];
        let map_type = extension_enum(def, "x-kubernetes-map-type", name, "")?;
        let map_type = option(map_type.map(|m| {
            let m = format_ident!("{m}");
            quote!(MapType::#m)
        }));
        let def_kinds: Vec<_> = gvks(def);
        for (g, v, k) in &def_kinds {
            kinds.insert((g.clone(), v.clone(), k.clone(), name.clone()));
        }
        let kind_tokens = def_kinds.iter().map(|(g, v, k)| gvk_tokens(g, v, k));
        let field_tokens = rows.iter().map(|row| field_tokens(row, &ident));
        let c = ident(name);
        let doc = format!(" `{name}`.");
        items.push(quote! {
            #[doc = #doc]
            pub(crate) static #c: Definition = Definition {
                name: #name,
                kinds: &[#(#kind_tokens),*],
                map_type: #map_type,
                fields: &[#(#field_tokens),*],
            };
        });
    }
    let all = tables.keys().map(|n| ident(n));
    items.push(quote! {
        /// Every definition, sorted by name.
        pub(crate) static DEFINITIONS: &[&Definition] = &[#(&#all),*];
    });
    let kind_rows = kinds.iter().map(|(g, v, k, name)| {
        let gvk = gvk_tokens(g, v, k);
        let c = ident(name);
        quote!((#gvk, &#c))
    });
    items.push(quote! {
        /// The root definition of every kind, sorted by group, version and kind.
        pub(crate) static KINDS: &[(GroupVersionKind, &Definition)] = &[#(#kind_rows),*];
    });
    let header = format!(
        "//! The built-in schema table: the definitions reachable from the kinds mNi serves, with\n\
         //! their fields' types and patch and list metadata.\n//!\n\
         //! @generated by `cargo xtask codegen` from `api/openapi-spec/swagger.json` of\n\
         //! {}; do not edit by hand.\n\n\
         use crate::{{Definition, Field, GroupVersionKind, ListType, MapType, Shape}};\n",
        inputs::KUBERNETES_MODULE
    );
    Ok(GeneratedFile::new(
        Path::new(OUT_FILE).to_path_buf(),
        &header,
        items,
    )?)
}

fn option(t: Option<TokenStream>) -> TokenStream {
    match t {
        Some(t) => quote!(Some(#t)),
        None => quote!(None),
    }
}

fn gvk_tokens(group: &str, version: &str, kind: &str) -> TokenStream {
    quote!(GroupVersionKind { group: #group, version: #version, kind: #kind })
}

fn field_tokens(row: &FieldRow, ident: &impl Fn(&str) -> proc_macro2::Ident) -> TokenStream {
    let name = &row.name;
    let shape = format_ident!("{}", row.shape);
    let ty = option(row.ty.as_deref().map(|t| {
        let c = ident(t);
        quote!(&#c)
    }));
    let mut t = quote!(Field::new(#name, Shape::#shape, #ty));
    if let Some(s) = &row.strategy {
        t = quote!(#t.patch_strategy(#s));
    }
    if let Some(k) = &row.merge_key {
        t = quote!(#t.patch_merge_key(#k));
    }
    if let Some(l) = row.list_type {
        let l = format_ident!("{l}");
        let keys = &row.keys;
        t = quote!(#t.list_type(ListType::#l, &[#(#keys),*]));
    }
    if let Some(m) = row.map_type {
        let m = format_ident!("{m}");
        t = quote!(#t.map_type(MapType::#m));
    }
    t
}

/// The `x-kubernetes-group-version-kind` entries of a definition.
fn gvks(def: &Value) -> Vec<(String, String, String)> {
    def["x-kubernetes-group-version-kind"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|g| {
                    let s = |k: &str| g[k].as_str().unwrap_or_default().to_string();
                    (s("group"), s("version"), s("kind"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn ref_of(schema: &Value) -> Option<String> {
    schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix(REF_PREFIX))
        .map(str::to_string)
}

/// An enum-valued extension (`atomic` → `Atomic`).
fn extension_enum(
    schema: &Value,
    extension: &'static str,
    definition: &str,
    field: &str,
) -> Result<Option<&'static str>, BuiltinSchemaError> {
    let Some(value) = schema.get(extension) else {
        return Ok(None);
    };
    let variant = match (extension, value.as_str()) {
        (_, Some("atomic")) => "Atomic",
        ("x-kubernetes-map-type", Some("granular")) => "Granular",
        ("x-kubernetes-list-type", Some("set")) => "Set",
        ("x-kubernetes-list-type", Some("map")) => "Map",
        _ => {
            return Err(BuiltinSchemaError::Extension {
                definition: definition.to_string(),
                field: field.to_string(),
                extension,
                value: value.to_string(),
            });
        }
    };
    Ok(Some(variant))
}

/// The rows of one definition, sorted by field name.
fn fields(name: &str, def: &Value) -> Result<Vec<FieldRow>, BuiltinSchemaError> {
    let mut rows = Vec::new();
    let Some(properties) = def["properties"].as_object() else {
        return Ok(rows);
    };
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort();
    for field in names {
        let p = &properties[field];
        let (shape, ty) = if let Some(r) = ref_of(p) {
            ("Value", Some(r))
        } else if p["type"] == "array" {
            ("List", ref_of(&p["items"]))
        } else if p.get("additionalProperties").is_some_and(Value::is_object) {
            ("Map", ref_of(&p["additionalProperties"]))
        } else {
            ("Value", None)
        };
        let text = |k: &str| p[k].as_str().map(str::to_string);
        let row = FieldRow {
            name: field.clone(),
            shape,
            ty,
            strategy: text("x-kubernetes-patch-strategy"),
            merge_key: text("x-kubernetes-patch-merge-key"),
            list_type: extension_enum(p, "x-kubernetes-list-type", name, field)?,
            keys: p["x-kubernetes-list-map-keys"]
                .as_array()
                .map(|keys| {
                    keys.iter()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            map_type: extension_enum(p, "x-kubernetes-map-type", name, field)?,
        };
        let plain = row.shape == "Value"
            && row.ty.is_none()
            && row.strategy.is_none()
            && row.merge_key.is_none()
            && row.list_type.is_none()
            && row.map_type.is_none();
        if !plain {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// `io.k8s.api.core.v1.PodSpec` → `CORE_V1_POD_SPEC`: the last two package segments and the
/// type name.
fn const_name(definition: &str) -> String {
    let parts: Vec<&str> = definition.split('.').collect();
    let (ty, package) = parts.split_last().unwrap_or((&"", &[]));
    let package: Vec<String> = package
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(|p| p.replace('-', "_").to_uppercase())
        .collect();
    format!(
        "{}_{}",
        package.join("_"),
        super::protobuf::screaming_snake(ty)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constant_names() {
        assert_eq!(const_name("io.k8s.api.core.v1.PodSpec"), "CORE_V1_POD_SPEC");
        assert_eq!(
            const_name("io.k8s.apimachinery.pkg.api.resource.Quantity"),
            "API_RESOURCE_QUANTITY"
        );
    }

    #[test]
    fn rows_keep_references_lists_maps_and_extensions() {
        let def = json!({"properties": {
            "replicas": {"type": "integer"},
            "ports": {"type": "array", "items": {"$ref": "#/definitions/x.Port"},
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                "x-kubernetes-patch-merge-key": "port", "x-kubernetes-patch-strategy": "merge"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "selector": {"$ref": "#/definitions/x.Selector"}
        }});
        let rows = fields("x.Spec", &def).expect("rows");
        let names: Vec<_> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["labels", "ports", "selector"]);
        assert_eq!(rows[1].ty.as_deref(), Some("x.Port"));
        assert_eq!(rows[1].list_type, Some("Map"));
        assert_eq!(rows[0].shape, "Map");
        let bad = json!({"properties": {"a": {"type": "array", "x-kubernetes-list-type": "bag"}}});
        assert!(fields("x.Bad", &bad).is_err());
    }
}
