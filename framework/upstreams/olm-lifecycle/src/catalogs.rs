//! CatalogSources (catalog-operator) and OperatorGroups (olm-operator).
//!
//! A CatalogSource is served from a file-based catalog, never over gRPC:
//!
//! - `spec.sourceType: configmap` with `spec.configMap` naming a ConfigMap in the
//!   CatalogSource's namespace whose `data` values are FBC documents (YAML or JSON);
//! - the mNi extension: the annotation [`CATALOG_DIR_ANNOTATION`]
//!   (`olm.mni.dev/catalog-dir: /path`) on a CatalogSource of any `sourceType` (usually
//!   `grpc`, whose image and address are then ignored) reads the FBC files under that
//!   directory on the mni-dev host, again on every poll.
//!
//! A loaded catalog reports `status.connectionState.lastObservedState: READY`; one that
//! cannot be read `TRANSIENT_FAILURE` with the reason in `status.message`.

use std::path::Path;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::Api;
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::controller::{Catalogs, Context};
use crate::objects;

/// The annotation naming a catalog directory on the mni-dev host.
pub const CATALOG_DIR_ANNOTATION: &str = "olm.mni.dev/catalog-dir";

/// A CatalogSource's catalog, as last read.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// The parsed catalog, if it could be read.
    pub(crate) catalog: Option<Catalog>,
}

/// Loads every CatalogSource's catalog and writes its status.
pub(crate) async fn reconcile_sources(
    ctx: &Context<'_>,
    catalogs: &mut Catalogs,
) -> Result<(), kube::Error> {
    catalogs.clear();
    for source in &ctx.snapshot.catalog_sources {
        let namespace = source.namespace().unwrap_or_default();
        let spec = source.data.get("spec").cloned().unwrap_or(Value::Null);
        let mut reference = None;
        let result: Result<Catalog, String> =
            if let Some(dir) = source.annotations().get(CATALOG_DIR_ANNOTATION) {
                Catalog::from_dir(Path::new(dir)).map_err(|e| e.to_string())
            } else if spec["sourceType"] == "configmap" || spec["sourceType"] == "internal" {
                let name = spec["configMap"].as_str().unwrap_or_default().to_string();
                match Api::<ConfigMap>::namespaced(ctx.client.clone(), &namespace)
                    .get_opt(&name)
                    .await?
                {
                    Some(map) => {
                        reference = Some(json!({
                            "name": name,
                            "namespace": namespace,
                            "resourceVersion": map.resource_version(),
                            "uid": map.uid(),
                        }));
                        Catalog::from_config_map_data(&map.data.clone().unwrap_or_default())
                            .map_err(|e| format!("ConfigMap {namespace}/{name}: {e}"))
                    }
                    None => Err(format!(
                        "ConfigMap {namespace}/{name} (spec.configMap) not found"
                    )),
                }
            } else {
                Err(format!(
                    "sourceType {} is not served by mni-dev: use sourceType configmap, or the \
                     annotation {CATALOG_DIR_ANNOTATION} naming a file-based catalog directory",
                    spec["sourceType"]
                ))
            };
        let old = objects::status(source);
        let (state, message) = match &result {
            Ok(_) => ("READY", None),
            Err(message) => ("TRANSIENT_FAILURE", Some(message.clone())),
        };
        let mut status = old.clone();
        status["connectionState"]["lastObservedState"] = state.into();
        status["connectionState"]["address"] = spec["address"]
            .as_str()
            .or_else(|| {
                source
                    .annotations()
                    .get(CATALOG_DIR_ANNOTATION)
                    .map(String::as_str)
            })
            .unwrap_or_default()
            .into();
        match message {
            Some(message) => status["message"] = message.into(),
            None => {
                if let Some(object) = status.as_object_mut() {
                    object.remove("message");
                }
            }
        }
        if let Some(mut reference) = reference {
            reference["lastUpdateTime"] = old["configMapReference"]["lastUpdateTime"].clone();
            if old["configMapReference"]["resourceVersion"] != reference["resourceVersion"] {
                reference["lastUpdateTime"] = objects::now().into();
            }
            status["configMapReference"] = reference;
        }
        if status != old || old["connectionState"]["lastConnect"].is_null() {
            status["connectionState"]["lastConnect"] = objects::now().into();
            objects::patch_status(ctx.client, &objects::catalog_source(), source, &status).await?;
        }
        catalogs.insert(
            (namespace, source.name_any()),
            Loaded {
                catalog: result.ok(),
            },
        );
    }
    Ok(())
}

/// The namespaces an OperatorGroup targets: `spec.targetNamespaces`, or `[""]` (all
/// namespaces) when empty or absent.
pub(crate) fn target_namespaces(group: &Value) -> Vec<String> {
    let targets: Vec<String> = group["spec"]["targetNamespaces"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if targets.is_empty() {
        vec![String::new()]
    } else {
        targets
    }
}

/// Writes each OperatorGroup's `status.namespaces`.
pub(crate) async fn reconcile_groups(ctx: &Context<'_>) -> Result<(), kube::Error> {
    for group in &ctx.snapshot.operator_groups {
        let old = objects::status(group);
        let value = serde_json::to_value(&group.data).unwrap_or_default();
        let mut status = old.clone();
        status["namespaces"] = json!(target_namespaces(&value));
        if objects::differs(&old, &status, &["lastUpdated"]) || old["lastUpdated"].is_null() {
            status["lastUpdated"] = objects::now().into();
            objects::patch_status(ctx.client, &objects::operator_group(), group, &status).await?;
        }
    }
    Ok(())
}

/// The catalogs that loaded, as the resolver wants them.
pub(crate) fn sources(catalogs: &Catalogs) -> Vec<crate::resolver::Source<'_>> {
    let mut sources: Vec<_> = catalogs
        .iter()
        .filter_map(|((namespace, name), loaded)| {
            loaded
                .catalog
                .as_ref()
                .map(|catalog| crate::resolver::Source {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    catalog,
                })
        })
        .collect();
    sources.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_or_absent_targets_mean_all_namespaces() {
        assert_eq!(target_namespaces(&json!({"spec": {}})), [""]);
        assert_eq!(
            target_namespaces(&json!({"spec": {"targetNamespaces": []}})),
            [""]
        );
        assert_eq!(
            target_namespaces(&json!({"spec": {"targetNamespaces": ["a", "b"]}})),
            ["a", "b"]
        );
    }
}
