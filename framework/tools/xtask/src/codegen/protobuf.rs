//! `framework/controlplane/protobuf/src/schema/generated.rs`: the protobuf field tables of
//! the supported kinds (every protobuf package in one file).
//!
//! The tags, wire types, cardinality and nested message types come from the prost structs of
//! k8s-pb (parsed with `syn`); the exact JSON field names from k8s-openapi's deserializers
//! (`"podIP" => Field::Key_pod_ip`), since prost's snake_case names are lossy (`pod_ip` could
//! be `podIp` or `podIP`). Start at [`generate`]; the roots are [`ROOTS`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::visit::Visit;
use syn::{GenericArgument, Item, Meta, PathArguments, Token, Type};

use super::{GeneratedFile, inputs};

/// Errors of this generator.
#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    /// A source file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A source file does not parse as Rust.
    #[error("cannot parse {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: syn::Error,
    },
    /// A message the tables need is not in k8s-pb.
    #[error("message {module}::{name} is not in k8s-pb (a root or a field type)")]
    MissingMessage {
        /// The k8s-pb module path (`api/core/v1`).
        module: String,
        /// The prost struct name.
        name: String,
    },
    /// The generated code does not render.
    #[error(transparent)]
    Render(#[from] super::RenderError),
    /// A prost field the generator does not understand.
    #[error("{module}::{message}.{field}: {what}")]
    Field {
        /// The module.
        module: String,
        /// The message.
        message: String,
        /// The field.
        field: String,
        /// What is unexpected.
        what: String,
    },
}

/// The generated directory, relative to the repository root.
pub const OUT_DIR: &str = "framework/controlplane/protobuf/src/schema";

/// The generated file, in [`OUT_DIR`].
pub const OUT_FILE: &str = "generated.rs";

/// Root messages: (k8s-pb module path, prost struct name). Kept in sync with
/// `framework/controlplane/protobuf/src/schema/kinds.rs`.
pub const ROOTS: &[(&str, &str)] = &[
    ("api/core/v1", "Namespace"),
    ("api/core/v1", "ConfigMap"),
    ("api/core/v1", "Secret"),
    ("api/core/v1", "Service"),
    ("api/core/v1", "ServiceAccount"),
    ("api/core/v1", "Pod"),
    ("api/core/v1", "Event"),
    ("api/core/v1", "Endpoints"),
    ("api/core/v1", "PersistentVolumeClaim"),
    ("api/core/v1", "Binding"),
    ("api/core/v1", "PersistentVolume"),
    ("api/core/v1", "ResourceQuota"),
    ("api/core/v1", "LimitRange"),
    ("api/core/v1", "Node"),
    ("api/core/v1", "PodTemplate"),
    ("api/core/v1", "ReplicationController"),
    ("api/apps/v1", "Deployment"),
    ("api/apps/v1", "ReplicaSet"),
    ("api/apps/v1", "StatefulSet"),
    ("api/apps/v1", "DaemonSet"),
    ("api/apps/v1", "ControllerRevision"),
    ("api/batch/v1", "Job"),
    ("api/batch/v1", "CronJob"),
    ("api/coordination/v1", "Lease"),
    ("api/events/v1", "Event"),
    ("api/rbac/v1", "Role"),
    ("api/rbac/v1", "ClusterRole"),
    ("api/rbac/v1", "RoleBinding"),
    ("api/rbac/v1", "ClusterRoleBinding"),
    ("api/networking/v1", "NetworkPolicy"),
    ("api/networking/v1", "Ingress"),
    ("api/networking/v1", "IngressClass"),
    ("api/networking/v1", "IPAddress"),
    ("api/networking/v1", "ServiceCIDR"),
    ("api/autoscaling/v2", "HorizontalPodAutoscaler"),
    ("api/autoscaling/v1", "HorizontalPodAutoscaler"),
    ("api/flowcontrol/v1", "FlowSchema"),
    ("api/flowcontrol/v1", "PriorityLevelConfiguration"),
    ("api/policy/v1", "PodDisruptionBudget"),
    ("api/discovery/v1", "EndpointSlice"),
    ("api/storage/v1", "StorageClass"),
    ("api/storage/v1", "CSIDriver"),
    ("api/storage/v1", "CSINode"),
    ("api/storage/v1", "VolumeAttachment"),
    ("api/storage/v1", "CSIStorageCapacity"),
    ("api/scheduling/v1", "PriorityClass"),
    ("api/node/v1", "RuntimeClass"),
    ("api/certificates/v1", "CertificateSigningRequest"),
    (
        "api/admissionregistration/v1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "api/admissionregistration/v1",
        "MutatingWebhookConfiguration",
    ),
    ("api/admissionregistration/v1", "ValidatingAdmissionPolicy"),
    (
        "api/admissionregistration/v1",
        "ValidatingAdmissionPolicyBinding",
    ),
    (
        "apiextensions_apiserver/pkg/apis/apiextensions/v1",
        "CustomResourceDefinition",
    ),
    ("api/authentication/v1", "TokenRequest"),
    ("api/authentication/v1", "TokenReview"),
    ("api/authentication/v1", "SelfSubjectReview"),
    ("api/authorization/v1", "SelfSubjectAccessReview"),
    ("api/authorization/v1", "SubjectAccessReview"),
    ("api/authorization/v1", "LocalSubjectAccessReview"),
    ("api/authorization/v1", "SelfSubjectRulesReview"),
    ("apimachinery/pkg/apis/meta/v1", "DeleteOptions"),
    ("api/autoscaling/v1", "Scale"),
    ("api/policy/v1", "Eviction"),
];

/// Messages whose JSON form is not an object (see `src/special.rs`): the `Special` variant.
const SPECIAL: &[(&str, &str, &str)] = &[
    ("apimachinery/pkg/apis/meta/v1", "Time", "Time"),
    ("apimachinery/pkg/apis/meta/v1", "MicroTime", "MicroTime"),
    ("apimachinery/pkg/apis/meta/v1", "Duration", "Duration"),
    ("apimachinery/pkg/apis/meta/v1", "FieldsV1", "RawJson"),
    ("apimachinery/pkg/apis/meta/v1", "Verbs", "StringList"),
    ("apimachinery/pkg/util/intstr", "IntOrString", "IntOrString"),
    ("apimachinery/pkg/api/resource", "Quantity", "Quantity"),
    ("apimachinery/pkg/runtime", "RawExtension", "RawJson"),
    (APIEXT, "Json", "RawJson"),
    (APIEXT, "JsonSchemaPropsOrArray", "SchemaOrArray"),
    (APIEXT, "JsonSchemaPropsOrBool", "SchemaOrBool"),
    (
        APIEXT,
        "JsonSchemaPropsOrStringArray",
        "SchemaOrStringArray",
    ),
];
const APIEXT: &str = "apiextensions_apiserver/pkg/apis/apiextensions/v1";

/// Messages without a k8s-openapi struct of their own (inlined Go structs): whose names to use.
const NAME_SOURCE: &[(&str, &str)] = &[
    ("EphemeralContainerCommon", "Container"),
    ("VolumeSource", "Volume"),
    ("ProbeHandler", "Probe"),
    ("IngressRuleValue", "IngressRule"),
    ("PersistentVolumeSource", "PersistentVolumeSpec"),
];
/// Go embedded structs whose field name differs from their type name.
const INLINE: &[(&str, &str)] = &[("Probe", "handler")];
/// JSON names that neither prost's nor k8s-openapi's Rust names spell out.
const OVERRIDES: &[(&str, &str, &str)] = &[
    ("JsonSchemaProps", "ref", "$ref"),
    ("JsonSchemaProps", "schema", "$schema"),
];

/// A message: k8s-pb module path and prost struct name.
type Key = (String, String);

/// A generated table: the Go name of the message and its fields.
type Table = (String, Vec<TableField>);

/// A prost field as the tables need it.
#[derive(Clone)]
struct PbField {
    /// The prost attribute's items in order: `message`, `optional`, `tag = "1"`, …
    attr: Vec<(String, Option<String>)>,
    /// The Rust field name, without `r#`.
    name: String,
    /// The field's Rust type.
    ty: Type,
}

impl PbField {
    fn attr_value(&self, key: &str) -> Option<&str> {
        self.attr
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_deref())
    }

    fn has(&self, key: &str) -> bool {
        self.attr.iter().any(|(k, _)| k == key)
    }

    /// The first item's name: the protobuf type (`message`, `string`, `bytes`, `btree_map`).
    fn kind(&self) -> &str {
        self.attr.first().map_or("", |(k, _)| k)
    }
}

/// One field of a generated table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct TableField {
    tag: u32,
    json: String,
    card: &'static str,
    ty: Ty,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ty {
    Scalar(&'static str),
    Msg(Key),
}

struct Generator {
    pb_src: PathBuf,
    openapi_src: PathBuf,
    pb_cache: BTreeMap<String, BTreeMap<String, Vec<PbField>>>,
}

/// Generates `generated.rs`.
pub fn generate(inputs: &inputs::Inputs) -> Result<Vec<GeneratedFile>, ProtobufError> {
    let mut generator = Generator {
        pb_src: inputs.k8s_pb_src.clone(),
        openapi_src: inputs.k8s_openapi_src.clone(),
        pb_cache: BTreeMap::new(),
    };
    let mut todo: Vec<Key> = ROOTS
        .iter()
        .map(|(m, n)| (m.to_string(), n.to_string()))
        .collect();
    let mut seen: BTreeMap<Key, Table> = BTreeMap::new();
    while let Some(key) = todo.pop() {
        if seen.contains_key(&key) {
            continue;
        }
        let (goname, fields) = generator.message(&key, &mut todo)?;
        seen.insert(key, (goname, fields));
    }
    // One file for every package: the tables are data, read through `schema::*`.
    let items = seen
        .iter()
        .map(|(key, (goname, fields))| message_item(key, goname, fields));
    Ok(vec![GeneratedFile::new(
        Path::new(OUT_DIR).join(OUT_FILE),
        &header(),
        items,
    )?])
}

fn header() -> String {
    format!(
        "//! Generated field tables for the protobuf messages of the Kubernetes API, every\n\
         //! package in one file.\n//!\n\
         //! @generated by `cargo xtask codegen` from k8s-pb {} and k8s-openapi {} ({});\n\
         //! do not edit by hand.\n\n#[allow(unused_imports)]\nuse super::*;\n",
        inputs::K8S_PB.1,
        inputs::K8S_OPENAPI.1,
        inputs::K8S_OPENAPI_VERSION_MODULE
    )
}

fn message_item(key: &Key, goname: &str, fields: &[TableField]) -> TokenStream {
    let (module, name) = key;
    let special = SPECIAL
        .iter()
        .find(|(m, n, _)| m == module && n == name)
        .map(|(_, _, s)| *s)
        .unwrap_or(if name == "ExtraValue" {
            "StringList"
        } else {
            "None"
        });
    let special = format_ident!("{special}");
    let cname = format_ident!("{}", const_name(module, name));
    let full = format!("{}.{goname}", proto_pkg(module));
    let doc = format!(" `{full}`.");
    let mut sorted = fields.to_vec();
    sorted.sort();
    let rows = sorted.iter().map(|f| {
        let tag = proc_macro2::Literal::u32_unsuffixed(f.tag);
        let json = &f.json;
        let card = format_ident!("{}", f.card);
        let ty = match &f.ty {
            Ty::Scalar(s) => {
                let s = format_ident!("{s}");
                quote!(Ty::#s)
            }
            Ty::Msg((m, n)) => {
                let c = format_ident!("{}", const_name(m, n));
                quote!(Ty::Msg(&#c))
            }
        };
        quote!(f(#tag, #json, Card::#card, #ty))
    });
    quote! {
        #[doc = #doc]
        pub(crate) static #cname: Message = Message {
            name: #full,
            special: Special::#special,
            fields: &[#(#rows),*],
        };
    }
}

impl Generator {
    fn pb(&mut self, module: &str) -> Result<&BTreeMap<String, Vec<PbField>>, ProtobufError> {
        if !self.pb_cache.contains_key(module) {
            let parsed = parse_pb(&self.pb_src.join(module).join("mod.rs"))?;
            self.pb_cache.insert(module.to_string(), parsed);
        }
        Ok(&self.pb_cache[module])
    }

    /// The table of one message; pushes the messages its fields reference onto `todo`.
    fn message(&mut self, key: &Key, todo: &mut Vec<Key>) -> Result<Table, ProtobufError> {
        let (module, name) = key;
        let fields =
            self.pb(module)?
                .get(name)
                .cloned()
                .ok_or_else(|| ProtobufError::MissingMessage {
                    module: module.clone(),
                    name: name.clone(),
                })?;
        let (goname, mut jnames) = openapi_names(&self.openapi_src.join(module), name)?;
        if goname.is_none()
            && let Some((_, source)) = NAME_SOURCE.iter().find(|(n, _)| n == name)
        {
            jnames = openapi_names(&self.openapi_src.join(module), source)?.1;
        }
        let norm: BTreeMap<String, String> = jnames
            .iter()
            .map(|(r, j)| (normalize(r), j.clone()))
            .collect();
        let error = |field: &PbField, what: String| ProtobufError::Field {
            module: module.clone(),
            message: name.clone(),
            field: field.name.clone(),
            what,
        };
        let mut out = Vec::new();
        for field in &fields {
            let rname = field.name.as_str();
            let tag: u32 = field
                .attr_value("tag")
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| error(field, "no tag".into()))?;
            let is_message_optional = field.attr.len() >= 2
                && field.attr[0].0 == "message"
                && field.attr[1].0 == "optional";
            let json = if let Some((_, _, j)) =
                OVERRIDES.iter().find(|(m, f, _)| m == name && *f == rname)
            {
                (*j).to_string()
            } else if let Some(j) = jnames
                .get(rname)
                .or_else(|| jnames.get(&format!("{rname}_")))
            {
                j.clone()
            } else if let Some(j) = norm.get(&rname.replace('_', "").to_lowercase()) {
                j.clone()
            } else if goname.is_some()
                && is_message_optional
                && (last_segment(&inner_type(&field.ty)).to_lowercase() == rname.replace('_', "")
                    || INLINE.iter().any(|(m, f)| m == name && f == &rname))
            {
                // A Go embedded struct (`json:",inline"`): its fields are merged into the parent.
                String::new()
            } else {
                lower_camel(rname)
            };
            let (card, ty) = if field.kind() == "btree_map" {
                let kv = field.attr_value("btree_map").unwrap_or_default();
                let value = kv.split(',').nth(1).unwrap_or_default().trim();
                let ty = if value == "message" {
                    let value_ty = map_value_type(&field.ty)
                        .ok_or_else(|| error(field, "a map without a value type".into()))?;
                    Ty::Msg(resolve(module, &value_ty))
                } else {
                    Ty::Scalar(scalar(value).ok_or_else(|| error(field, kv.to_string()))?)
                };
                ("Map", ty)
            } else {
                let card = if field.has("repeated") {
                    "Repeated"
                } else if json.is_empty() {
                    "Inline"
                } else {
                    "Single"
                };
                let kind = field.kind();
                let ty = if kind == "message" {
                    Ty::Msg(resolve(module, &inner_type(&field.ty)))
                } else {
                    Ty::Scalar(scalar(kind).ok_or_else(|| error(field, kind.to_string()))?)
                };
                (card, ty)
            };
            if let Ty::Msg(k) = &ty {
                todo.push(k.clone());
            }
            out.push(TableField {
                tag,
                json,
                card,
                ty,
            });
        }
        Ok((goname.unwrap_or_else(|| name.clone()), out))
    }
}

fn scalar(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "string" => "Str",
        "bytes" => "Bytes",
        "bool" => "Bool",
        "int32" => "Int32",
        "int64" => "Int64",
        "double" => "Double",
        _ => return None,
    })
}

fn read(path: &Path) -> Result<syn::File, ProtobufError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProtobufError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    syn::parse_file(&text).map_err(|source| ProtobufError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// The top-level prost structs of a k8s-pb `mod.rs`: name → fields in declaration order.
fn parse_pb(path: &Path) -> Result<BTreeMap<String, Vec<PbField>>, ProtobufError> {
    let file = read(path)?;
    let parse_error = |source| ProtobufError::Parse {
        path: path.to_path_buf(),
        source,
    };
    let mut messages = BTreeMap::new();
    for item in file.items {
        let Item::Struct(s) = item else { continue };
        let mut fields = Vec::new();
        for field in s.fields {
            let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("prost")) else {
                continue;
            };
            let metas = attr
                .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .map_err(parse_error)?;
            let attr = metas
                .iter()
                .map(|meta| match meta {
                    Meta::Path(p) => (path_name(p), None),
                    Meta::NameValue(nv) => {
                        let value = match &nv.value {
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => Some(s.value()),
                            _ => None,
                        };
                        (path_name(&nv.path), value)
                    }
                    Meta::List(l) => (path_name(&l.path), None),
                })
                .collect();
            let Some(ident) = field.ident else { continue };
            fields.push(PbField {
                attr,
                name: ident.unraw().to_string(),
                ty: field.ty,
            });
        }
        messages.insert(s.ident.to_string(), fields);
    }
    Ok(messages)
}

fn path_name(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.unraw().to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The type inside `Option<…>`, `Vec<…>` and `Box<…>` wrappers.
fn inner_type(ty: &Type) -> Type {
    let mut ty = ty.clone();
    loop {
        let Type::Path(p) = &ty else { return ty };
        let Some(last) = p.path.segments.last() else {
            return ty;
        };
        if !matches!(last.ident.to_string().as_str(), "Option" | "Vec" | "Box") {
            return ty;
        }
        let PathArguments::AngleBracketed(args) = &last.arguments else {
            return ty;
        };
        let Some(GenericArgument::Type(inner)) = args.args.first() else {
            return ty;
        };
        ty = inner.clone();
    }
}

/// `V` of `BTreeMap<K, V>`.
fn map_value_type(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let PathArguments::AngleBracketed(args) = &p.path.segments.last()?.arguments else {
        return None;
    };
    match args.args.iter().nth(1)? {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    }
}

fn type_segments(ty: &Type) -> Vec<String> {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn last_segment(ty: &Type) -> String {
    type_segments(ty).pop().unwrap_or_default()
}

/// A prost type path (`super::super::apimachinery::pkg::apis::meta::v1::ObjectMeta`) relative
/// to `module`, as a message key.
fn resolve(module: &str, ty: &Type) -> Key {
    let mut parts = type_segments(ty);
    let mut cur: Vec<&str> = module.split('/').collect();
    while parts.first().is_some_and(|p| p == "super") {
        parts.remove(0);
        cur.pop();
    }
    let name = parts.pop().unwrap_or_default();
    let mut path: Vec<String> = cur.into_iter().map(str::to_string).collect();
    path.extend(parts);
    (path.join("/"), name)
}

/// Finds the k8s-openapi struct of `module` named like `message` (case-insensitively): its
/// name and its JSON names by Rust field name (`pod_ip` → `podIP`).
fn openapi_names(
    dir: &Path,
    message: &str,
) -> Result<(Option<String>, BTreeMap<String, String>), ProtobufError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let file = read(&path)?;
        let Some(struct_name) = file.items.iter().find_map(|item| match item {
            Item::Struct(s) if matches!(s.vis, syn::Visibility::Public(_)) => {
                Some(s.ident.to_string())
            }
            _ => None,
        }) else {
            continue;
        };
        if struct_name.to_lowercase() != message.to_lowercase() {
            continue;
        }
        let mut names = FieldKeys::default();
        names.visit_file(&file);
        return Ok((Some(struct_name), names.0));
    }
    Ok((None, BTreeMap::new()))
}

/// Collects `"json" => Field::Key_rust` match arms.
#[derive(Default)]
struct FieldKeys(BTreeMap<String, String>);

impl<'ast> Visit<'ast> for FieldKeys {
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if let syn::Pat::Lit(syn::ExprLit {
            lit: syn::Lit::Str(json),
            ..
        }) = &arm.pat
            && let syn::Expr::Path(p) = &*arm.body
            && p.path.segments.len() == 2
            && p.path.segments[0].ident == "Field"
            && let Some(rust) = p.path.segments[1].ident.to_string().strip_prefix("Key_")
        {
            self.0.insert(rust.to_string(), json.value());
        }
        syn::visit::visit_arm(self, arm);
    }
}

fn normalize(rust: &str) -> String {
    rust.replace(['_', '-'], "").to_lowercase()
}

fn pkg_key(module: &str) -> String {
    let p: Vec<&str> = module.split('/').collect();
    if p[0] == "api" {
        return p[1..].join("_");
    }
    if p[0] == "apiextensions_apiserver" {
        return format!("apiextensions_{}", p[p.len() - 1]);
    }
    if p.len() > 2 && p[0] == "apimachinery" && p[1] == "pkg" && p[2] == "apis" {
        return p[3..].join("_");
    }
    p[p.len() - 1].to_string()
}

fn proto_pkg(module: &str) -> String {
    format!("k8s.io.{}", module.replace('/', "."))
}

fn const_name(module: &str, name: &str) -> String {
    format!("{}_{}", pkg_key(module), screaming_snake(name)).to_uppercase()
}

/// `PodIP` → `POD_IP`: an underscore before every capital that follows a lowercase letter or
/// a digit.
pub(super) fn screaming_snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_uppercase()
            && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
        {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
        prev = Some(c);
    }
    out
}

fn lower_camel(snake: &str) -> String {
    let mut parts = snake.split('_');
    let mut out = parts.next().unwrap_or_default().to_string();
    for p in parts {
        let mut chars = p.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(screaming_snake("PodIP"), "POD_IP");
        assert_eq!(screaming_snake("V1Beta1Thing"), "V1_BETA1_THING");
        assert_eq!(const_name("api/apps/v1", "DaemonSet"), "APPS_V1_DAEMON_SET");
        assert_eq!(
            const_name("apimachinery/pkg/apis/meta/v1", "ObjectMeta"),
            "META_V1_OBJECT_META"
        );
        assert_eq!(pkg_key("apimachinery/pkg/util/intstr"), "intstr");
        assert_eq!(
            pkg_key("apiextensions_apiserver/pkg/apis/apiextensions/v1"),
            "apiextensions_v1"
        );
        assert_eq!(lower_camel("pod_ip"), "podIp");
    }

    #[test]
    fn resolves_super_paths() {
        let ty: Type =
            syn::parse_str("super::super::super::apimachinery::pkg::apis::meta::v1::ObjectMeta")
                .expect("type");
        assert_eq!(
            resolve("api/core/v1", &ty),
            (
                "apimachinery/pkg/apis/meta/v1".to_string(),
                "ObjectMeta".to_string()
            )
        );
        let wrapped: Type =
            syn::parse_str("::core::option::Option<::prost::alloc::boxed::Box<JsonSchemaProps>>")
                .expect("type");
        assert_eq!(last_segment(&inner_type(&wrapped)), "JsonSchemaProps");
    }
}
