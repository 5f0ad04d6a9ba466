//! Reaching the objects the controllers read and write: the OLM kinds as dynamic
//! resources, server-side apply of arbitrary manifests, status patches and OLM's status
//! vocabulary (timestamps, phase histories).

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// The field manager of everything the controllers write.
pub const FIELD_MANAGER: &str = "mni-olm-lifecycle";

/// The OLM API group.
pub(crate) const GROUP: &str = "operators.coreos.com";

/// Kinds whose objects are cluster-scoped (everything else in a bundle is namespaced).
const CLUSTER_SCOPED: [&str; 9] = [
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Namespace",
    "APIService",
    "PriorityClass",
    "StorageClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
];

/// The dynamic resource of an OLM kind.
pub(crate) fn olm(version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: GROUP.into(),
        version: version.into(),
        api_version: format!("{GROUP}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// `CatalogSource` (v1alpha1).
pub fn catalog_source() -> ApiResource {
    olm("v1alpha1", "CatalogSource", "catalogsources")
}

/// `OperatorGroup` (v1).
pub fn operator_group() -> ApiResource {
    olm("v1", "OperatorGroup", "operatorgroups")
}

/// `Subscription` (v1alpha1).
pub fn subscription() -> ApiResource {
    olm("v1alpha1", "Subscription", "subscriptions")
}

/// `InstallPlan` (v1alpha1).
pub fn install_plan() -> ApiResource {
    olm("v1alpha1", "InstallPlan", "installplans")
}

/// `ClusterServiceVersion` (v1alpha1).
pub fn csv() -> ApiResource {
    olm(
        "v1alpha1",
        "ClusterServiceVersion",
        "clusterserviceversions",
    )
}

/// A namespaced API of a dynamic resource.
pub(crate) fn api(client: &Client, resource: &ApiResource, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, resource)
}

/// The API of any object of an apiVersion and kind, in `namespace` unless cluster-scoped.
pub(crate) fn api_for(
    client: &Client,
    api_version: &str,
    kind: &str,
    namespace: &str,
) -> (Api<DynamicObject>, ApiResource) {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    let api = if CLUSTER_SCOPED.contains(&kind) {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    };
    (api, resource)
}

/// Applies `manifest` server-side (forced, as [`FIELD_MANAGER`]), in `namespace` unless its
/// kind is cluster-scoped. Returns the object as stored.
pub(crate) async fn apply(
    client: &Client,
    manifest: &Value,
    namespace: &str,
) -> Result<DynamicObject, kube::Error> {
    let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
    let kind = manifest["kind"].as_str().unwrap_or_default();
    let (api, _) = api_for(client, api_version, kind, namespace);
    let mut manifest = manifest.clone();
    let name = manifest["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(metadata) = manifest["metadata"].as_object_mut() {
        // What the server owns is not applied.
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            metadata.remove(field);
        }
        if CLUSTER_SCOPED.contains(&kind) {
            metadata.remove("namespace");
        } else {
            metadata.insert("namespace".into(), namespace.into());
        }
    }
    if let Some(object) = manifest.as_object_mut() {
        object.remove("status");
    }
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&manifest),
    )
    .await
}

/// Replaces an object's `status` with a JSON merge patch of the status subresource.
pub(crate) async fn patch_status(
    client: &Client,
    resource: &ApiResource,
    object: &DynamicObject,
    status: &Value,
) -> Result<(), kube::Error> {
    let namespace = object.namespace().unwrap_or_default();
    api(client, resource, &namespace)
        .patch_status(
            &object.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": merge_diff(&self::status(object), status)})),
        )
        .await?;
    Ok(())
}

/// The JSON merge patch (RFC 7386) that turns `old` into `new`: members added or changed as
/// they are in `new`, members `new` lacks as `null`. Sending `new` itself would leave behind
/// what it dropped (a cleared condition list, a removed message), as a merge patch never
/// removes what it does not name.
pub(crate) fn merge_diff(old: &Value, new: &Value) -> Value {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return new.clone();
    };
    let mut patch = serde_json::Map::new();
    for (key, value) in new {
        match old.get(key) {
            Some(before) if before == value => {}
            Some(before) => {
                patch.insert(key.clone(), merge_diff(before, value));
            }
            None => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    for key in old.keys().filter(|key| !new.contains_key(*key)) {
        patch.insert(key.clone(), Value::Null);
    }
    Value::Object(patch)
}

/// An object's `status`, or `{}`.
pub(crate) fn status(object: &DynamicObject) -> Value {
    match object.data.get("status") {
        Some(status) if status.is_object() => status.clone(),
        _ => json!({}),
    }
}

/// Now, as Kubernetes writes times (RFC 3339, seconds).
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map_or_else(|_| jiff::Timestamp::now().to_string(), |t| t.to_string())
}

/// How long ago an RFC 3339 time was (zero when unparsable or in the future).
pub(crate) fn age(time: &str) -> std::time::Duration {
    time.parse::<jiff::Timestamp>()
        .ok()
        .and_then(|t| {
            let seconds = jiff::Timestamp::now().as_millisecond() - t.as_millisecond();
            u64::try_from(seconds).ok()
        })
        .map_or(std::time::Duration::ZERO, std::time::Duration::from_millis)
}

/// Whether two statuses differ in more than the listed timestamp fields.
pub(crate) fn differs(old: &Value, new: &Value, timestamps: &[&str]) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(object) = v.as_object_mut() {
            for field in timestamps {
                object.remove(*field);
            }
        }
        v
    };
    strip(old) != strip(new)
}

/// The ownerReference of a namespaced owner.
pub(crate) fn owner_reference(owner: &DynamicObject, resource: &ApiResource) -> Value {
    json!({
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "name": owner.name_any(),
        "uid": owner.uid().unwrap_or_default(),
        "controller": false,
        "blockOwnerDeletion": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_diff_removes_what_the_new_status_drops() {
        let old = json!({
            "state": "AtLatestKnown",
            "conditions": [{"type": "ResolutionFailed", "status": "True"}],
            "connectionState": {"lastObservedState": "TRANSIENT_FAILURE", "address": "/c"},
            "message": "not found",
        });
        let new = json!({
            "state": "UpgradePending",
            "connectionState": {"lastObservedState": "READY", "address": "/c"},
        });
        let patch = merge_diff(&old, &new);
        assert_eq!(
            patch,
            json!({
                "state": "UpgradePending",
                "conditions": null,
                "connectionState": {"lastObservedState": "READY"},
                "message": null,
            })
        );
        let mut applied = old.clone();
        json_patch::merge(&mut applied, &patch);
        assert_eq!(applied, new);
        assert_eq!(merge_diff(&new, &new), json!({}));
        assert_eq!(merge_diff(&json!("x"), &new), new);
    }

    #[test]
    fn timestamps_alone_do_not_make_a_difference() {
        let old = json!({"phase": "Succeeded", "lastUpdated": "a"});
        assert!(!differs(
            &old,
            &json!({"phase": "Succeeded", "lastUpdated": "b"}),
            &["lastUpdated"]
        ));
        assert!(differs(
            &old,
            &json!({"phase": "Failed", "lastUpdated": "a"}),
            &["lastUpdated"]
        ));
    }

    #[test]
    fn now_parses_back_and_is_recent() {
        assert!(age(&now()) < std::time::Duration::from_secs(5));
        assert_eq!(age("not a time"), std::time::Duration::ZERO);
    }

    #[test]
    fn cluster_scoped_kinds_are_not_namespaced() {
        assert_eq!(
            olm("v1", "OperatorGroup", "operatorgroups").api_version,
            "operators.coreos.com/v1"
        );
        assert!(CLUSTER_SCOPED.contains(&"CustomResourceDefinition"));
        assert!(!CLUSTER_SCOPED.contains(&"Deployment"));
    }
}
