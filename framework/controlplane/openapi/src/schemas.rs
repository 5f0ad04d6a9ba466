//! Collection of every schema a document references, under Kubernetes' canonical names.
//!
//! Built-in kinds are generated through `schemars` from `k8s-openapi` (whose schema names are
//! the canonical `io.k8s.…` names); custom resources embed the CRD's `openAPIV3Schema` with
//! `apiVersion`, `kind` and `metadata` (a reference to `ObjectMeta`) added, as
//! kube-apiserver's CRD OpenAPI builder does. Kinds and list kinds are tagged with
//! `x-kubernetes-group-version-kind`. The result is format-neutral: references point at
//! `#/components/schemas/…` and may have siblings; [`crate::v3`] and [`crate::v2`] adapt it.

use std::collections::BTreeSet;

use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIResourceList, DeleteOptions, ListMeta, ObjectMeta, Patch, Status, WatchEvent,
};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::model::{KindSchema, ResourceDoc};
use crate::patch_meta;

/// The prefix of every schema reference in the collected (and v3) form.
pub(crate) const REF_PREFIX: &str = "#/components/schemas/";

pub(crate) const API_VERSION_DESC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
pub(crate) const KIND_DESC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DESC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Canonical names of the shared schemas operations refer to.
pub(crate) mod names {
    pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
    pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
    pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
    pub(crate) const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
    pub(crate) const API_RESOURCE_LIST: &str =
        "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
    pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    pub(crate) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
    pub(crate) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";
}

/// The schema names of one resource's kind and list kind.
#[derive(Debug, Clone)]
pub(crate) struct KindNames {
    pub(crate) kind: String,
    pub(crate) list: String,
}

/// Every schema a set of resources references.
#[derive(Debug, Clone)]
pub(crate) struct Collected {
    /// Schemas by canonical name, sorted by name.
    pub(crate) definitions: Map<String, Value>,
    /// Per resource (same order as the input): its kind and list schema names.
    pub(crate) kinds: Vec<KindNames>,
    /// Names of schemas embedded from CRDs (converted for Swagger 2.0 like kube does).
    pub(crate) custom: BTreeSet<String>,
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft07()
        .with(|settings| {
            settings.definitions_path = "/components/schemas".into();
            settings.meta_schema = None;
            settings.transforms.clear();
        })
        .into_generator()
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("{REF_PREFIX}{name}") })
}

fn described_reference(name: &str, description: &str) -> Value {
    json!({ "$ref": format!("{REF_PREFIX}{name}"), "description": description })
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

fn ensure<T: JsonSchema>(generator: &mut SchemaGenerator) {
    let _ = generator.subschema_for::<T>();
}

/// Collects the schemas of `resources` and of everything their operations reference.
pub(crate) fn collect(resources: &[&ResourceDoc]) -> Collected {
    let mut generator = generator();
    ensure::<ObjectMeta>(&mut generator);
    ensure::<ListMeta>(&mut generator);
    ensure::<DeleteOptions>(&mut generator);
    ensure::<Status>(&mut generator);
    ensure::<Patch>(&mut generator);
    ensure::<WatchEvent<Patch>>(&mut generator);
    ensure::<APIResourceList>(&mut generator);
    if resources.iter().any(|r| r.scale) {
        ensure::<Scale>(&mut generator);
    }

    let mut kinds = Vec::with_capacity(resources.len());
    let mut custom_schemas = Vec::new();
    for resource in resources {
        let kind = match &resource.schema {
            KindSchema::Builtin(register) => {
                let schema = register(&mut generator);
                schema
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix(REF_PREFIX))
                    .map_or_else(
                        || resource.custom_schema_name(&resource.kind),
                        str::to_owned,
                    )
            }
            KindSchema::Custom(schema) => {
                let name = resource.custom_schema_name(&resource.kind);
                custom_schemas.push((name.clone(), custom_kind_schema(schema)));
                name
            }
        };
        let list = match kind.rsplit_once('.') {
            Some((prefix, _)) => format!("{prefix}.{}", resource.list_kind),
            None => resource.custom_schema_name(&resource.list_kind),
        };
        kinds.push(KindNames { kind, list });
    }

    let mut definitions = generator.take_definitions(false);
    patch_meta::normalize_builtin_schemas(&mut definitions);
    patch_meta::apply(&mut definitions);
    let mut custom = BTreeSet::new();
    for (name, schema) in custom_schemas {
        custom.insert(name.clone());
        definitions.insert(name, schema);
    }

    for (resource, names) in resources.iter().zip(&kinds) {
        let list = list_schema(resource, &names.kind);
        definitions.entry(names.list.clone()).or_insert(list);
        add_gvk(&mut definitions, &names.kind, resource, &resource.kind);
        add_gvk(&mut definitions, &names.list, resource, &resource.list_kind);
    }
    tag_shared_schemas(&mut definitions, resources);

    let mut sorted: Vec<(String, Value)> = definitions.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    Collected {
        definitions: sorted.into_iter().collect(),
        kinds,
        custom,
    }
}

fn add_gvk(definitions: &mut Map<String, Value>, name: &str, resource: &ResourceDoc, kind: &str) {
    let Some(schema) = definitions.get_mut(name).and_then(Value::as_object_mut) else {
        return;
    };
    push_gvk(schema, gvk(&resource.group, &resource.version, kind));
}

fn push_gvk(schema: &mut Map<String, Value>, entry: Value) {
    let list = schema
        .entry("x-kubernetes-group-version-kind")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(items) = list
        && !items.contains(&entry)
    {
        items.push(entry);
    }
}

/// kube tags the meta types with every group-version they are served in.
fn tag_shared_schemas(definitions: &mut Map<String, Value>, resources: &[&ResourceDoc]) {
    let mut group_versions: Vec<(&str, &str)> = vec![("", "v1")];
    for resource in resources {
        let gv = (resource.group.as_str(), resource.version.as_str());
        if !group_versions.contains(&gv) {
            group_versions.push(gv);
        }
    }
    group_versions.sort_unstable();
    for name in [names::DELETE_OPTIONS, names::WATCH_EVENT] {
        let kind = name.rsplit('.').next().unwrap_or(name);
        if let Some(schema) = definitions.get_mut(name).and_then(Value::as_object_mut) {
            for (group, version) in &group_versions {
                push_gvk(schema, gvk(group, version, kind));
            }
        }
    }
    if let Some(schema) = definitions
        .get_mut(names::STATUS)
        .and_then(Value::as_object_mut)
    {
        push_gvk(schema, gvk("", "v1", "Status"));
    }
    if let Some(schema) = definitions
        .get_mut(names::SCALE)
        .and_then(Value::as_object_mut)
    {
        push_gvk(schema, gvk("autoscaling", "v1", "Scale"));
    }
}

/// The list kind schema, shaped like kube-apiserver's (and its CRD builder's).
fn list_schema(resource: &ResourceDoc, kind_name: &str) -> Value {
    json!({
        "description": format!("{} is a list of {}", resource.list_kind, resource.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION_DESC, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", resource.plural),
                "type": "array",
                "items": reference(kind_name),
            },
            "kind": {"description": KIND_DESC, "type": "string"},
            "metadata": described_reference(names::LIST_META, LIST_METADATA_DESC),
        },
    })
}

/// A CRD version's schema with the object-level fields kube-apiserver adds.
fn custom_kind_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(root) = &mut schema {
        root.entry("type").or_insert_with(|| "object".into());
        add_object_fields(root);
        embed_resources(root);
    }
    schema
}

fn add_object_fields(schema: &mut Map<String, Value>) {
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        properties.insert(
            "apiVersion".into(),
            json!({"description": API_VERSION_DESC, "type": "string"}),
        );
        properties.insert(
            "kind".into(),
            json!({"description": KIND_DESC, "type": "string"}),
        );
        properties.insert(
            "metadata".into(),
            described_reference(names::OBJECT_META, METADATA_DESC),
        );
    }
}

/// Adds `apiVersion`, `kind` and `metadata` to nested `x-kubernetes-embedded-resource`
/// schemas, as kube-apiserver does when publishing CRD schemas.
fn embed_resources(schema: &mut Map<String, Value>) {
    for key in ["properties", "patternProperties"] {
        if let Some(Value::Object(children)) = schema.get_mut(key) {
            for child in children.values_mut() {
                embed_child(child);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = schema.get_mut(key) {
            embed_child(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(children)) = schema.get_mut(key) {
            children.iter_mut().for_each(embed_child);
        }
    }
}

fn embed_child(child: &mut Value) {
    let Value::Object(child) = child else { return };
    if child.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
        add_object_fields(child);
    }
    embed_resources(child);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;

    #[test]
    fn collects_builtin_and_custom() {
        let crd = ResourceDoc::custom(
            "stable.example.com",
            "v1",
            "CronTab",
            "crontabs",
            true,
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"template": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "x-kubernetes-preserve-unknown-fields": true}}}}}),
        );
        let deployment = ResourceDoc::builtin::<Deployment>().with_scale();
        let collected = collect(&[&deployment, &crd]);
        let defs = &collected.definitions;
        assert_eq!(collected.kinds[0].kind, "io.k8s.api.apps.v1.Deployment");
        assert_eq!(collected.kinds[0].list, "io.k8s.api.apps.v1.DeploymentList");
        assert_eq!(collected.kinds[1].kind, "com.example.stable.v1.CronTab");
        assert_eq!(collected.kinds[1].list, "com.example.stable.v1.CronTabList");
        for name in [
            names::OBJECT_META,
            names::SCALE,
            names::PATCH,
            "io.k8s.api.core.v1.PodSpec",
        ] {
            assert!(defs.contains_key(name), "{name} missing");
        }
        let crontab = &defs["com.example.stable.v1.CronTab"];
        assert_eq!(
            crontab["properties"]["metadata"]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        let template = &crontab["properties"]["spec"]["properties"]["template"];
        assert_eq!(template["properties"]["kind"]["type"], "string");
        assert_eq!(
            defs["io.k8s.api.apps.v1.DeploymentList"]["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "DeploymentList", "version": "v1"}])
        );
        let names: Vec<&String> = defs.keys().collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }
}
