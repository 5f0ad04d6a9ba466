//! The API server's own metrics, served at `/metrics` in the Prometheus text format, with
//! kube-apiserver's names and labels, so the dashboards and queries written for it work:
//!
//! - `apiserver_request_total{verb, dry_run, group, version, resource, subresource, scope,
//!   component, code}` — every request, counted once it is answered (a watch when it starts);
//! - `apiserver_storage_objects{resource}` is not kept: ask the store (`mni-dev`'s log says how
//!   many keys it loaded).
//!
//! `verb` is Kubernetes' (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
//! `deletecollection`), not the HTTP method; requests outside the resource API (discovery,
//! `/openapi`, `/version`) are counted with their HTTP method in lower case and an empty
//! resource, as upstream does. Reading `/metrics` needs `get` on that non-resource URL (the
//! `system:monitoring` ClusterRole in a real cluster; the admin has it).

use http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use crate::request::{Query, Target};

/// The labels of `apiserver_request_total`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    pub verb: String,
    pub dry_run: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub scope: String,
    pub component: String,
    pub code: String,
}

impl RequestLabels {
    /// The labels of a request to the resource API.
    pub(crate) fn resource(method: &Method, target: &Target, query: &Query) -> Self {
        let item = target.name.is_some();
        let verb = match (method, item) {
            (&Method::GET, false) if query.flag("watch") => "watch",
            (&Method::GET, false) => "list",
            (&Method::GET, true) => "get",
            (&Method::POST, _) => "create",
            (&Method::PUT, _) => "update",
            (&Method::PATCH, _) => "patch",
            (&Method::DELETE, false) => "deletecollection",
            (&Method::DELETE, true) => "delete",
            (other, _) => return Self::other(other),
        };
        let scope = match (item, &target.namespace) {
            (true, _) => "resource",
            (false, Some(_)) => "namespace",
            (false, None) => "cluster",
        };
        Self {
            verb: verb.to_string(),
            dry_run: query.get("dryRun").map(str::to_string).unwrap_or_default(),
            group: target.info.group.clone(),
            version: target.info.version.clone(),
            resource: target.info.plural.clone(),
            subresource: target.subresource.clone().unwrap_or_default(),
            scope: scope.to_string(),
            component: "apiserver".to_string(),
            code: String::new(),
        }
    }

    /// The labels of any other request (discovery, `/version`, …).
    pub(crate) fn other(method: &Method) -> Self {
        Self {
            verb: method.as_str().to_ascii_lowercase(),
            component: "apiserver".to_string(),
            ..Self::default()
        }
    }
}

/// The metrics registry and its families.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "apiserver_request",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            requests.clone(),
        );
        Self { registry, requests }
    }
}

impl Metrics {
    /// Counts one answered request.
    pub(crate) fn count(&self, mut labels: RequestLabels, code: u16) {
        labels.code = code.to_string();
        self.requests.get_or_create(&labels).inc();
    }

    /// The Prometheus text exposition of every metric.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_with_upstream_names() {
        let m = Metrics::default();
        let mut labels = RequestLabels::other(&Method::GET);
        labels.verb = "list".into();
        labels.resource = "pods".into();
        labels.version = "v1".into();
        labels.scope = "namespace".into();
        m.count(labels.clone(), 200);
        m.count(labels, 200);
        let text = m.encode();
        assert!(text.contains("# TYPE apiserver_request counter"), "{text}");
        let line = text
            .lines()
            .find(|l| l.starts_with("apiserver_request_total{"))
            .expect("a sample");
        assert!(line.contains(r#"verb="list""#) && line.contains(r#"code="200""#));
        assert!(
            line.contains(r#"resource="pods""#) && line.ends_with(" 2"),
            "{line}"
        );
    }
}
