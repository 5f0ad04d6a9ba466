//! Crate-level tests: the documents as kubectl's code paths read them.

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use serde_json::{Value, json};

use crate::protobuf::test_decoder::{Field, fields, string_fields};
use crate::*;

fn crontab(schema: Value) -> ResourceDoc {
    ResourceDoc::custom(
        "stable.example.com",
        "v1",
        "CronTab",
        "crontabs",
        true,
        schema,
    )
    .with_status()
}

fn crontab_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "cronSpec": {"type": "string"},
                "replicas": {"type": "integer", "nullable": true},
            }},
        },
    })
}

/// The check of kubectl's `supportsQueryParamV3` over every PATCH carrying `gvk`.
fn patch_ops_with_gvk<'a>(doc: &'a Value, gvk: &Value) -> Vec<&'a Value> {
    doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, item)| item.get("patch"))
        .filter(|op| op.get("x-kubernetes-group-version-kind") == Some(gvk))
        .collect()
}

#[test]
fn root_lists_every_group_version_and_hash_tracks_content() {
    let resources = [
        ResourceDoc::builtin::<ConfigMap>(),
        ResourceDoc::builtin::<Namespace>().with_status(),
        ResourceDoc::builtin::<Deployment>()
            .with_status()
            .with_scale(),
        crontab(crontab_schema()),
    ];
    let docs = v3_documents(&resources).unwrap_or_default();
    let root = v3_root(&docs);
    let paths = root["paths"].as_object().cloned().unwrap_or_default();
    let keys: Vec<&str> = paths.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["api/v1", "apis/apps/v1", "apis/stable.example.com/v1"]
    );
    let url = paths["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap_or_default();
    assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
    let hash = url.rsplit('=').next().unwrap_or_default();
    assert_eq!(hash.len(), 128);
    assert!(
        hash.chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    );

    // Same input, same hash; a changed CRD schema changes only that group-version's hash.
    let again = v3_documents(&resources).unwrap_or_default();
    assert_eq!(docs, again);
    let mut changed_schema = crontab_schema();
    changed_schema["properties"]["spec"]["properties"]["image"] = json!({"type": "string"});
    let mut changed = resources.to_vec();
    changed[3] = crontab(changed_schema);
    let changed = v3_documents(&changed).unwrap_or_default();
    assert_eq!(docs[0].hash, changed[0].hash);
    assert_eq!(docs[1].hash, changed[1].hash);
    assert_ne!(docs[2].hash, changed[2].hash);
    assert_eq!(docs[2].hash, content_hash(&docs[2].json));
}

#[test]
fn apps_v1_document_serves_kubectl() {
    let resources = [
        ResourceDoc::builtin::<StatefulSet>()
            .with_status()
            .with_scale(),
        ResourceDoc::builtin::<Deployment>()
            .with_status()
            .with_scale(),
    ];
    let doc = v3_group_version(&resources).unwrap_or_default();
    assert_eq!(doc["openapi"], "3.0.0");
    let schemas = &doc["components"]["schemas"];
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    let gvk = json!({"group": "apps", "kind": "Deployment", "version": "v1"});
    assert_eq!(deployment["x-kubernetes-group-version-kind"], json!([gvk]));
    assert_eq!(
        deployment["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    for name in [
        "io.k8s.api.apps.v1.DeploymentList",
        "io.k8s.api.autoscaling.v1.Scale",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.api.core.v1.Container",
    ] {
        assert!(schemas.get(name).is_some(), "{name} missing");
    }
    // Every $ref resolves inside the document.
    let text = doc.to_string();
    for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = piece.split('"').next().unwrap_or_default();
        assert!(schemas.get(name).is_some(), "dangling $ref {name}");
    }

    // --validate=strict: every PATCH with the Deployment GVK has fieldValidation.
    let patches = patch_ops_with_gvk(&doc, &gvk);
    assert_eq!(patches.len(), 2, "item and status");
    for op in patches {
        let names: Vec<&str> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(names.contains(&"fieldValidation"), "{names:?}");
        let content = op["requestBody"]["content"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(content.contains_key("application/strategic-merge-patch+json"));
        assert!(content.contains_key("application/apply-patch+yaml"));
    }
    let item = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    assert_eq!(item["patch"]["x-kubernetes-action"], "patch");
    assert_eq!(item["get"]["operationId"], "readAppsV1NamespacedDeployment");
    let scale = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
    assert_eq!(
        scale["patch"]["x-kubernetes-group-version-kind"],
        json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
    );
    let all = &doc["paths"]["/apis/apps/v1/deployments"]["get"];
    assert_eq!(all["operationId"], "listAppsV1DeploymentForAllNamespaces");

    // Client-side apply: strategic merge metadata is reachable from the kind.
    let pod_spec = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(pod_spec["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(pod_spec["x-kubernetes-patch-strategy"], "merge");
    assert_eq!(
        schemas["io.k8s.api.apps.v1.DeploymentStatus"]["properties"]["conditions"]["x-kubernetes-patch-merge-key"],
        "type"
    );
}

#[test]
fn core_v1_has_all_namespaces_list_and_cluster_scoped_paths() {
    let resources = [
        ResourceDoc::builtin::<ConfigMap>(),
        ResourceDoc::builtin::<Namespace>(),
    ];
    let doc = v3_group_version(&resources).unwrap_or_default();
    let paths = &doc["paths"];
    assert!(
        paths
            .get("/api/v1/namespaces/{namespace}/configmaps")
            .is_some()
    );
    assert!(paths.get("/api/v1/configmaps").is_some());
    assert_eq!(
        paths["/api/v1/namespaces/{name}"]["patch"]["operationId"],
        "patchCoreV1Namespace"
    );
    let list = &paths["/api/v1/namespaces/{namespace}/configmaps"]["get"];
    let names: Vec<&str> = list["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for expected in [
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "timeoutSeconds",
        "watch",
    ] {
        assert!(names.contains(&expected), "{expected}");
    }
    assert_eq!(
        doc["components"]["schemas"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"],
        Value::Null,
        "ConfigMap does not reference IntOrString"
    );
}

#[test]
fn crd_document_embeds_the_user_schema() {
    let doc = v3_group_version(&[crontab(crontab_schema()).with_scale()]).unwrap_or_default();
    let schemas = &doc["components"]["schemas"];
    let kind = &schemas["com.example.stable.v1.CronTab"];
    assert_eq!(
        kind["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
    );
    assert_eq!(
        kind["properties"]["spec"]["properties"]["cronSpec"]["type"],
        "string"
    );
    assert_eq!(kind["properties"]["apiVersion"]["type"], "string");
    assert_eq!(
        kind["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    let list = &schemas["com.example.stable.v1.CronTabList"];
    assert_eq!(
        list["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/com.example.stable.v1.CronTab"
    );
    let gvk = json!({"group": "stable.example.com", "kind": "CronTab", "version": "v1"});
    for op in patch_ops_with_gvk(&doc, &gvk) {
        let content = op["requestBody"]["content"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(!content.contains_key("application/strategic-merge-patch+json"));
        assert!(content.contains_key("application/merge-patch+json"));
    }
    let item = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"];
    assert_eq!(
        item["put"]["operationId"],
        "replaceStableExampleComV1NamespacedCronTab"
    );
}

#[test]
fn invalid_inputs_are_errors() {
    assert_eq!(v3_group_version(&[]), Err(Error::Empty));
    let mixed = [
        ResourceDoc::builtin::<ConfigMap>(),
        ResourceDoc::builtin::<Deployment>(),
    ];
    assert!(matches!(
        v3_group_version(&mixed),
        Err(Error::MixedGroupVersions { .. })
    ));
    let twice = [ResourceDoc::builtin::<Pod>(), ResourceDoc::builtin::<Pod>()];
    assert!(matches!(
        v3_group_version(&twice),
        Err(Error::DuplicateResource { .. })
    ));
    assert!(matches!(
        v2_document(&twice),
        Err(Error::DuplicateResource { .. })
    ));
}

#[test]
fn v2_document_shape() {
    let resources = [
        ResourceDoc::builtin::<Deployment>().with_status(),
        crontab(crontab_schema()),
    ];
    let doc = v2_document(&resources).unwrap_or_default();
    assert_eq!(doc["swagger"], "2.0");
    let defs = &doc["definitions"];
    assert_eq!(
        defs["io.k8s.api.apps.v1.Deployment"]["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(
        defs["com.example.stable.v1.CronTab"]["properties"]["spec"]["properties"]["replicas"],
        json!({}),
        "nullable loses its type in v2"
    );
    assert!(!doc.to_string().contains("#/components/"));
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        patch["consumes"][2],
        "application/strategic-merge-patch+json"
    );
    assert_eq!(patch["parameters"][0]["in"], "body");
    let names: Vec<&str> = patch["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"fieldValidation"));
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "Deployment"
    );
}

#[test]
fn v2_protobuf_decodes_to_the_document() {
    let resources = [ResourceDoc::builtin::<Deployment>()];
    let doc = v2_document(&resources).unwrap_or_default();
    let bytes = v2_protobuf(&doc);
    let top = fields(&bytes).unwrap_or_default();
    assert_eq!(string_fields(&top, 1), ["2.0"]);
    // Document.paths (8) → Paths.path (2) → NamedPathItem{name 1, value 2}.
    let paths = top
        .iter()
        .find(|f| f.number == 8)
        .map(Field::bytes)
        .unwrap_or_default();
    let named: Vec<Vec<Field>> = fields(paths)
        .unwrap_or_default()
        .iter()
        .filter(|f| f.number == 2)
        .filter_map(|f| fields(f.bytes()))
        .collect();
    let expected = doc["paths"]
        .as_object()
        .map(|p| p.len())
        .unwrap_or_default();
    assert_eq!(named.len(), expected);
    let item_path = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}";
    let item = named
        .iter()
        .find(|n| string_fields(n, 1) == [item_path])
        .cloned()
        .unwrap_or_default();
    let path_item = item
        .iter()
        .find(|f| f.number == 2)
        .and_then(|f| fields(f.bytes()))
        .unwrap_or_default();
    // PathItem.patch (8) → Operation: parameters (8), vendor_extension (13).
    let patch = path_item
        .iter()
        .find(|f| f.number == 8)
        .and_then(|f| fields(f.bytes()))
        .unwrap_or_default();
    assert_eq!(
        string_fields(&patch, 5),
        ["patchAppsV1NamespacedDeployment"]
    );
    let mut query_names = Vec::new();
    for param in patch.iter().filter(|f| f.number == 8) {
        // ParametersItem.parameter (1) → Parameter.non_body (2) → NonBody.query (3) → name (4).
        let chain = [1, 2, 3];
        let mut current = fields(param.bytes()).unwrap_or_default();
        for number in chain {
            current = current
                .iter()
                .find(|f| f.number == number)
                .and_then(|f| fields(f.bytes()))
                .unwrap_or_default();
        }
        query_names.extend(string_fields(&current, 4));
    }
    assert!(
        query_names.contains(&"fieldValidation".to_owned()),
        "{query_names:?}"
    );
    let extensions: Vec<Vec<Field>> = patch
        .iter()
        .filter(|f| f.number == 13)
        .filter_map(|f| fields(f.bytes()))
        .collect();
    let gvk = extensions
        .iter()
        .find(|e| string_fields(e, 1) == ["x-kubernetes-group-version-kind"])
        .and_then(|e| e.iter().find(|f| f.number == 2))
        .and_then(|any| fields(any.bytes()))
        .map(|any| string_fields(&any, 2))
        .unwrap_or_default();
    let parsed: Value = gvk
        .first()
        .and_then(|y| serde_json::from_str(y).ok())
        .unwrap_or_default();
    assert_eq!(
        parsed,
        json!({"group": "apps", "kind": "Deployment", "version": "v1"})
    );
    // Document.definitions (9) holds one NamedSchema per definition.
    let definitions = top
        .iter()
        .find(|f| f.number == 9)
        .map(Field::bytes)
        .unwrap_or_default();
    let count = fields(definitions).unwrap_or_default().len();
    assert_eq!(
        count,
        doc["definitions"]
            .as_object()
            .map(|d| d.len())
            .unwrap_or_default()
    );
}

/// Every schema position holds an object or a boolean, never an array: kubectl's decoder
/// (kube-openapi `spec.Schema`) rejects the whole document otherwise. JSONSchemaProps has
/// properties literally named `$ref` and `allOf`, which must stay plain properties.
#[test]
fn jsonschemaprops_properties_named_like_keywords_stay_properties() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let doc = v3_group_version(&[ResourceDoc::builtin::<CustomResourceDefinition>()]).expect("doc");
    let props = &doc["components"]["schemas"]["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]
        ["properties"];
    assert!(props["$ref"].is_object(), "{}", props["$ref"]);
    assert!(props["allOf"]["type"] == "array", "{}", props["allOf"]);
}
