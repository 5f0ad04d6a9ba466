//! Request decoding: resource paths, query parameters, body media types and `Accept`.
//!
//! Turns `/apis/apps/v1/namespaces/ns/deployments/web/status?dryRun=All` into a [`Target`]
//! (the resource, namespace, name and subresource) and [`Query`], and the `Accept` header into
//! the [`Output`] shape the client asked for (full objects, `Table`, or
//! `PartialObjectMetadata`).

use std::collections::HashMap;
use std::sync::Arc;

use http::HeaderMap;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::registry::{Registry, ResourceInfo};

/// Largest accepted request body, as kube-apiserver (3 MiB).
pub(crate) const MAX_BODY: usize = 3 * 1024 * 1024;

/// What a resource path names.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The resource.
    pub info: Arc<ResourceInfo>,
    /// Namespace from the path (`None` for cluster scope or all namespaces).
    pub namespace: Option<String>,
    /// Object name, for item paths.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`), for subresource paths.
    pub subresource: Option<String>,
}

/// A path under `/api` or `/apis` after routing.
#[derive(Debug)]
pub(crate) enum Route {
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1`, `/apis/{group}/{version}`
    Resources(String, String),
    /// A resource collection, item or subresource.
    Resource(Target),
}

/// Parses a request path. `registry` decides which segments are resources.
pub(crate) fn route(registry: &Registry, path: &str) -> ApiResult<Route> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] => return Ok(Route::CoreVersions),
        ["apis"] => return Ok(Route::Groups),
        ["apis", g] => {
            return if registry.groups().iter().any(|(name, _)| name == g) {
                Ok(Route::Group((*g).to_string()))
            } else {
                Err(ApiError::path_not_found())
            };
        }
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::path_not_found()),
    };
    if !registry.serves(group, version) {
        return Err(ApiError::path_not_found());
    }
    let lookup = |plural: &str| {
        registry
            .get(group, version, plural)
            .ok_or_else(ApiError::path_not_found)
    };
    let target =
        |info: Arc<ResourceInfo>, ns: Option<&str>, name: Option<&str>, sub: Option<&str>| {
            if name.is_some_and(str::is_empty) {
                return Err(ApiError::path_not_found());
            }
            if let Some(sub) = sub
                && !subresource_served(&info, sub)
            {
                return Err(ApiError::path_not_found());
            }
            Ok(Route::Resource(Target {
                info,
                namespace: ns.map(str::to_string),
                name: name.map(str::to_string),
                subresource: sub.map(str::to_string),
            }))
        };
    match rest {
        [] => Ok(Route::Resources(group.into(), version.into())),
        ["namespaces", name, sub @ ("status" | "finalize")] if group.is_empty() => {
            target(lookup("namespaces")?, None, Some(name), Some(sub))
        }
        ["namespaces", ns, plural, tail @ ..] => {
            let info = lookup(plural)?;
            if !info.namespaced {
                return Err(ApiError::path_not_found());
            }
            match tail {
                [] => target(info, Some(ns), None, None),
                [name] => target(info, Some(ns), Some(name), None),
                [name, sub] => target(info, Some(ns), Some(name), Some(sub)),
                _ => Err(ApiError::path_not_found()),
            }
        }
        [plural] => target(lookup(plural)?, None, None, None),
        [plural, name] => {
            let info = lookup(plural)?;
            if info.namespaced {
                return Err(ApiError::path_not_found());
            }
            target(info, None, Some(name), None)
        }
        [plural, name, sub] => {
            let info = lookup(plural)?;
            if info.namespaced {
                return Err(ApiError::path_not_found());
            }
            target(info, None, Some(name), Some(sub))
        }
        _ => Err(ApiError::path_not_found()),
    }
}

fn subresource_served(info: &ResourceInfo, sub: &str) -> bool {
    match sub {
        "status" => info.status,
        "scale" => info.scale.is_some(),
        "finalize" => info.plural == "namespaces" && info.group.is_empty(),
        "token" => info.plural == "serviceaccounts" && info.group.is_empty(),
        "log" => info.plural == "pods" && info.group.is_empty(),
        _ => false,
    }
}

/// Query parameters, decoded.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query(pub HashMap<String, String>);

impl Query {
    /// Parses a raw query string.
    pub(crate) fn parse(raw: Option<&str>) -> Self {
        Query(
            form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// A parameter's value, if given and not empty.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    /// A boolean parameter (`true`/`1`).
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    /// `dryRun=All`; any other value is a 400, as in kube-apiserver.
    pub(crate) fn dry_run(&self) -> ApiResult<bool> {
        match self.get("dryRun") {
            None => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!(
                "Invalid dryRun value: {other:?}: supported values: \"All\""
            ))),
        }
    }

    /// An integer parameter, with a 400 naming it when malformed.
    pub(crate) fn int(&self, key: &str) -> ApiResult<Option<i64>> {
        self.get(key)
            .map(|v| {
                v.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid value {v:?} for query parameter {key}"))
                })
            })
            .transpose()
    }

    /// `fieldValidation`: Ignore, Warn (the default) or Strict.
    pub(crate) fn field_validation(&self) -> ApiResult<FieldValidation> {
        match self.get("fieldValidation") {
            None | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other}"
            ))),
        }
    }
}

/// How unknown fields in a write are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn.
    Warn,
    /// Reject the request.
    Strict,
}

/// The response shape the client asked for in `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// Full objects.
    Object,
    /// `meta.k8s.io/v1` `Table`.
    Table,
    /// `PartialObjectMetadata` (lists become `PartialObjectMetadataList`).
    Metadata,
}

/// Reads `Accept`, preferring the first alternative the server can produce.
pub(crate) fn output(headers: &HeaderMap) -> Output {
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    for alt in accept.split(',') {
        let params: Vec<&str> = alt.split(';').map(str::trim).collect();
        let has = |p: &str| params.contains(&p);
        if has("as=Table") && has("g=meta.k8s.io") {
            return Output::Table;
        }
        if (has("as=PartialObjectMetadata") || has("as=PartialObjectMetadataList"))
            && has("g=meta.k8s.io")
        {
            return Output::Metadata;
        }
        if matches!(
            params.first(),
            Some(&("application/json" | "*/*" | "application/*"))
        ) {
            return Output::Object;
        }
    }
    Output::Object
}

/// Media types a PATCH may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    /// RFC 6902.
    Json,
    /// RFC 7386.
    Merge,
    /// Kubernetes strategic merge patch.
    Strategic,
    /// Server-side apply.
    Apply,
}

/// Parses the `Content-Type` of a PATCH.
pub(crate) fn patch_type(headers: &HeaderMap) -> ApiResult<PatchType> {
    let ct = content_type(headers);
    match ct.as_str() {
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
        other => Err(ApiError::unsupported_media_type(
            other,
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml",
            ],
        )),
    }
}

/// The media type of the body, without parameters.
pub(crate) fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Decodes a YAML body. Clients mostly send JSON (which is YAML): that is read by the JSON
/// parser, several times faster than the YAML one.
pub(crate) fn decode_yaml(body: &[u8]) -> ApiResult<Value> {
    if body.trim_ascii_start().starts_with(b"{")
        && let Ok(value) = serde_json::from_slice(body)
    {
        return Ok(value);
    }
    serde_yaml::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
}

/// Decodes a JSON, YAML or Kubernetes-protobuf request body into an object.
pub(crate) fn decode_body(headers: &HeaderMap, body: &[u8]) -> ApiResult<Value> {
    decode_body_as(headers, body, None)
}

/// [`decode_body`] for a path of `(apiVersion, kind)`: a protobuf envelope whose `typeMeta` is
/// empty takes them (JSON and YAML bodies are defaulted by `typemeta`).
pub(crate) fn decode_body_as(
    headers: &HeaderMap,
    body: &[u8],
    defaults: Option<(&str, &str)>,
) -> ApiResult<Value> {
    let ct = content_type(headers);
    let value: Value = match ct.as_str() {
        "application/yaml" | "application/apply-patch+yaml" => decode_yaml(body)?,
        "application/vnd.kubernetes.protobuf" => match defaults {
            Some((api_version, kind)) => mni_protobuf::decode_as(body, api_version, kind),
            None => mni_protobuf::decode(body),
        }
        .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}")))?,
        "application/json"
        | ""
        | "*/*"
        | "application/json-patch+json"
        | "application/merge-patch+json"
        | "application/strategic-merge-patch+json" => {
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("the body of the request was not valid JSON: {e}"))
            })?
        }
        other => {
            return Err(ApiError::unsupported_media_type(
                other,
                &[
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf",
                ],
            ));
        }
    };
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str) -> ApiResult<Target> {
        match route(&Registry::with_builtins(), path)? {
            Route::Resource(t) => Ok(t),
            other => panic!("{path} routed to {other:?}"),
        }
    }

    #[test]
    fn yaml_bodies_written_as_json_read_the_same() {
        let json = br#" {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "n": 2.5}}"#;
        let yaml = b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"1\"\n  n: 2.5\n";
        let expected: Value = serde_yaml::from_slice(json).expect("YAML parser");
        assert_eq!(decode_yaml(json).expect("json"), expected);
        assert_eq!(decode_yaml(yaml).expect("yaml"), expected);
        // Flow-style YAML that is not JSON still goes to the YAML parser.
        assert_eq!(
            decode_yaml(b"{apiVersion: v1, kind: ConfigMap, data: {a: '1', n: 2.5}}")
                .expect("flow"),
            expected
        );
        let err = decode_yaml(b"a: [").expect_err("bad");
        assert!(
            err.message.contains("error decoding YAML"),
            "{}",
            err.message
        );
    }

    #[test]
    fn routes_namespaced_and_cluster_paths() {
        let t = target("/apis/apps/v1/namespaces/ns/deployments/web/status").expect("route");
        assert_eq!(t.info.plural, "deployments");
        assert_eq!(t.namespace.as_deref(), Some("ns"));
        assert_eq!(t.name.as_deref(), Some("web"));
        assert_eq!(t.subresource.as_deref(), Some("status"));
        let t = target("/api/v1/namespaces/kube-system").expect("namespace item");
        assert_eq!(t.info.plural, "namespaces");
        assert_eq!(t.name.as_deref(), Some("kube-system"));
        let t = target("/api/v1/namespaces/ns/status").expect("namespace status");
        assert_eq!(t.subresource.as_deref(), Some("status"));
        let t = target("/api/v1/pods").expect("all namespaces");
        assert!(t.namespace.is_none() && t.name.is_none());
    }

    #[test]
    fn unknown_paths_are_404() {
        for p in [
            "/api/v2/pods",
            "/apis/nope/v1/things",
            "/api/v1/configmaps/x",
            "/api/v1/namespaces/a/configmaps/b/scale",
            "/api/v1/namespaces/a/namespaces",
        ] {
            assert_eq!(target(p).expect_err(p).code, 404, "{p}");
        }
    }

    #[test]
    fn accept_negotiation() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
                .parse()
                .expect("header"),
        );
        assert_eq!(output(&h), Output::Table);
        h.insert(
            http::header::ACCEPT,
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
                .parse()
                .expect("header"),
        );
        assert_eq!(output(&h), Output::Metadata);
    }
}
