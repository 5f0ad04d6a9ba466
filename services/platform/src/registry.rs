// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The service registry: which mNi services are installed, read from OLM's
//! ClusterServiceVersions.
//!
//! A service is installed when its CSV is `Succeeded`. OLM copies a CSV into every namespace
//! its OperatorGroup targets (the copies carry the label `olm.copiedFrom`); only the original
//! counts. A service's console link is its CSV's annotation [`CONSOLE_URL_ANNOTATION`], or
//! else the `spec.links` entry named `Console`; only `http(s)://` URLs and absolute paths are
//! links (never `javascript:` or relative ones, which the console would render as-is).

use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use serde::Serialize;
use serde_json::Value;

/// The CSV annotation naming a service's web UI.
pub const CONSOLE_URL_ANNOTATION: &str = "mni.dev/console-url";
/// The label OLM puts on the copies of a CSV in the namespaces its OperatorGroup targets.
const COPIED_FROM_LABEL: &str = "olm.copiedFrom";

/// An installed service, as the console shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    /// The CSV's name (`mni-vpc.v0.1.0`).
    pub name: String,
    /// The namespace the service is installed in.
    pub namespace: String,
    /// `spec.displayName`, else the name.
    pub display_name: String,
    /// `spec.version`.
    pub version: String,
    /// The kinds the service owns (`spec.customresourcedefinitions.owned[].kind`).
    pub kinds: Vec<String>,
    /// Where its web UI is, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console_url: Option<String>,
}

/// The ClusterServiceVersion resource (`operators.coreos.com/v1alpha1`).
#[must_use]
pub fn csv_resource() -> ApiResource {
    let gvk = GroupVersionKind::gvk("operators.coreos.com", "v1alpha1", "ClusterServiceVersion");
    ApiResource::from_gvk_with_plural(&gvk, "clusterserviceversions")
}

/// Every installed service in the cluster, sorted by display name.
///
/// # Errors
///
/// The API server's refusal (e.g. 403 without the `list clusterserviceversions` right of
/// `config/rbac/console_role.yaml`, or 404 where OLM is not installed).
pub async fn services(client: kube::Client) -> Result<Vec<Service>, kube::Error> {
    let csvs = Api::<DynamicObject>::all_with(client, &csv_resource())
        .list(&ListParams::default())
        .await?;
    let mut services: Vec<Service> = csvs.items.iter().filter_map(service_of).collect();
    services.sort_by(|a, b| (&a.display_name, &a.namespace).cmp(&(&b.display_name, &b.namespace)));
    Ok(services)
}

/// The service a CSV describes, if it is an installed original.
#[must_use]
pub fn service_of(csv: &DynamicObject) -> Option<Service> {
    let labels = csv.metadata.labels.as_ref();
    if labels.is_some_and(|l| l.contains_key(COPIED_FROM_LABEL)) {
        return None;
    }
    if csv.data["status"]["phase"] != "Succeeded" {
        return None;
    }
    let name = csv.metadata.name.clone()?;
    let spec = &csv.data["spec"];
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let kinds = spec["customresourcedefinitions"]["owned"]
        .as_array()
        .map(|owned| owned.iter().filter_map(|o| text(&o["kind"])).collect())
        .unwrap_or_default();
    let annotated = csv
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CONSOLE_URL_ANNOTATION))
        .cloned();
    let linked = spec["links"].as_array().and_then(|links| {
        links
            .iter()
            .find(|l| l["name"] == "Console")
            .and_then(|l| text(&l["url"]))
    });
    Some(Service {
        display_name: text(&spec["displayName"]).unwrap_or_else(|| name.clone()),
        version: text(&spec["version"]).unwrap_or_default(),
        namespace: csv.metadata.namespace.clone().unwrap_or_default(),
        name,
        kinds,
        console_url: annotated.or(linked).filter(|u| is_link(u)),
    })
}

/// Whether `url` may be rendered as a link: `http://` or `https://` with a host, or an
/// absolute path on the console's own origin.
fn is_link(url: &str) -> bool {
    let url = url.trim();
    let host_after = |scheme: &str| {
        url.strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
    };
    host_after("http://")
        || host_after("https://")
        || (url.starts_with('/') && !url.starts_with("//"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn csv(value: Value) -> DynamicObject {
        serde_json::from_value(value).expect("a DynamicObject")
    }

    fn vpc(phase: &str) -> Value {
        json!({
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": "mni-vpc.v0.1.0", "namespace": "operators",
                "annotations": {CONSOLE_URL_ANNOTATION: "http://127.0.0.1:8091/"}},
            "spec": {"displayName": "mNi VPC", "version": "0.1.0",
                "customresourcedefinitions": {"owned": [{"kind": "Network"}, {"kind": "VirtualPrivateCloud"}]},
                "links": [{"name": "Console", "url": "https://vpc.example.com/"}]},
            "status": {"phase": phase},
        })
    }

    #[test]
    fn a_succeeded_csv_is_a_service_with_its_kinds_and_console() {
        let service = service_of(&csv(vpc("Succeeded"))).expect("a service");
        assert_eq!(
            service,
            Service {
                name: "mni-vpc.v0.1.0".into(),
                namespace: "operators".into(),
                display_name: "mNi VPC".into(),
                version: "0.1.0".into(),
                kinds: vec!["Network".into(), "VirtualPrivateCloud".into()],
                console_url: Some("http://127.0.0.1:8091/".into()),
            }
        );
    }

    #[test]
    fn copies_and_unfinished_installs_are_not_services() {
        assert_eq!(service_of(&csv(vpc("Installing"))), None);
        let mut copy = vpc("Succeeded");
        copy["metadata"]["labels"] = json!({COPIED_FROM_LABEL: "operators"});
        assert_eq!(service_of(&csv(copy)), None);
    }

    #[test]
    fn the_console_link_falls_back_to_spec_links_and_must_be_safe() {
        let mut value = vpc("Succeeded");
        value["metadata"]["annotations"] = json!({});
        let service = service_of(&csv(value.clone())).expect("a service");
        assert_eq!(
            service.console_url.as_deref(),
            Some("https://vpc.example.com/")
        );
        for bad in [
            "javascript:alert(1)",
            "vpc",
            "//evil.example.com",
            "http://",
            "data:x",
        ] {
            value["spec"]["links"] = json!([{"name": "Console", "url": bad}]);
            let service = service_of(&csv(value.clone())).expect("a service");
            assert_eq!(service.console_url, None, "{bad}");
        }
        value["spec"]["links"] = json!([{"name": "Console", "url": "/vpc/"}]);
        let service = service_of(&csv(value)).expect("a service");
        assert_eq!(service.console_url.as_deref(), Some("/vpc/"));
    }
}
