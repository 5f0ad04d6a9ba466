//! OpenAPI v3: the per-group-version documents (`/openapi/v3/apis/<group>/<version>`) and
//! the discovery index (`/openapi/v3`).
//!
//! Like kube-apiserver (kube-openapi `handler3`), every group-version document is published
//! at `/openapi/v3/<path>?hash=<HASH>` where `<HASH>` is the upper-case hex SHA-512 of the
//! document's JSON bytes, so clients (client-go's cached OpenAPI client) can cache it
//! forever. Schema references with siblings are wrapped in `allOf` as kube does in v3
//! (`{"allOf": [{"$ref": …}], "description": …}`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

use crate::model::{Error, ResourceDoc, group_version_path};
use crate::operations::{self, Body, Operation};
use crate::params::{Location, Param};
use crate::schemas::{self, REF_PREFIX, names};

/// The OpenAPI version string kube-apiserver publishes.
pub const OPENAPI_VERSION: &str = "3.0.0";

/// One group-version's OpenAPI v3 document, serialized and hashed, ready to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupVersionDocument {
    /// The discovery path: `api/v1` or `apis/<group>/<version>`.
    pub path: String,
    /// The document.
    pub document: Value,
    /// The document serialized as compact JSON: the bytes to serve (and that `hash` covers).
    pub json: Vec<u8>,
    /// Upper-case hex SHA-512 of `json`, as kube-apiserver computes its OpenAPI ETags.
    pub hash: String,
}

impl GroupVersionDocument {
    /// Builds, serializes and hashes the document of one group-version's resources.
    ///
    /// # Errors
    /// See [`v3_group_version`].
    pub fn build(resources: &[ResourceDoc]) -> Result<Self, Error> {
        let document = v3_group_version(resources)?;
        let json = serde_json::to_vec(&document).unwrap_or_default();
        let hash = content_hash(&json);
        let path = resources
            .first()
            .map(ResourceDoc::group_version_path)
            .unwrap_or_default();
        Ok(Self {
            path,
            document,
            json,
            hash,
        })
    }

    /// `/openapi/v3/<path>?hash=<hash>`: the URL the discovery index points at.
    #[must_use]
    pub fn server_relative_url(&self) -> String {
        format!("/openapi/v3/{}?hash={}", self.path, self.hash)
    }
}

/// Upper-case hex SHA-512 of `bytes` (kube-openapi's `computeETag`).
#[must_use]
pub fn content_hash(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha512::digest(bytes);
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        let _ = write!(hex, "{byte:02X}");
    }
    hex
}

/// Groups `resources` by group-version and builds every group-version's document, sorted by
/// path.
///
/// # Errors
/// See [`v3_group_version`].
pub fn v3_documents(resources: &[ResourceDoc]) -> Result<Vec<GroupVersionDocument>, Error> {
    let mut groups: BTreeMap<String, Vec<ResourceDoc>> = BTreeMap::new();
    for resource in resources {
        groups
            .entry(group_version_path(&resource.group, &resource.version))
            .or_default()
            .push(resource.clone());
    }
    groups
        .values()
        .map(|group| GroupVersionDocument::build(group))
        .collect()
}

/// The `/openapi/v3` discovery index:
/// `{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=…"}}}`.
#[must_use]
pub fn v3_root(documents: &[GroupVersionDocument]) -> Value {
    let mut sorted: Vec<&GroupVersionDocument> = documents.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let paths: Map<String, Value> = sorted
        .into_iter()
        .map(|doc| {
            (
                doc.path.clone(),
                json!({ "serverRelativeURL": doc.server_relative_url() }),
            )
        })
        .collect();
    json!({ "paths": paths })
}

/// Checks that `resources` form one valid group-version and returns them sorted by plural.
pub(crate) fn one_group_version(resources: &[ResourceDoc]) -> Result<Vec<&ResourceDoc>, Error> {
    let first = resources.first().ok_or(Error::Empty)?;
    let mut sorted: Vec<&ResourceDoc> = Vec::with_capacity(resources.len());
    for resource in resources {
        resource.validate()?;
        if (resource.group.as_str(), resource.version.as_str()) != (&first.group, &first.version) {
            return Err(Error::MixedGroupVersions {
                first: first.group_version(),
                second: resource.group_version(),
            });
        }
        sorted.push(resource);
    }
    sorted.sort_by(|a, b| a.plural.cmp(&b.plural));
    if let Some(pair) = sorted
        .windows(2)
        .find(|pair| pair[0].plural == pair[1].plural)
    {
        return Err(Error::DuplicateResource {
            group_version: first.group_version(),
            plural: pair[0].plural.clone(),
        });
    }
    Ok(sorted)
}

/// The OpenAPI v3 document of one group-version, as kube-apiserver serves it at
/// `/openapi/v3/apis/<group>/<version>`.
///
/// # Errors
/// [`Error::Empty`] for no resources, [`Error::MixedGroupVersions`] if they span several
/// group-versions, [`Error::DuplicateResource`] for a repeated plural, and the validation
/// errors of [`ResourceDoc`] (empty names, non-object CRD schema).
pub fn v3_group_version(resources: &[ResourceDoc]) -> Result<Value, Error> {
    let resources = one_group_version(resources)?;
    let collected = schemas::collect(&resources);
    let paths: Map<String, Value> = operations::paths(&resources, &collected.kinds)
        .iter()
        .map(|item| (item.path.clone(), item.to_json(operation, param)))
        .collect();
    let mut definitions = collected.definitions;
    for schema in definitions.values_mut() {
        wrap_ref_siblings(schema);
    }
    Ok(json!({
        "openapi": OPENAPI_VERSION,
        "info": { "title": "Kubernetes", "version": "unversioned" },
        "paths": paths,
        "components": {
            "schemas": definitions,
            "securitySchemes": {
                "BearerToken": {
                    "type": "apiKey",
                    "description": "Bearer Token authentication",
                    "name": "authorization",
                    "in": "header",
                },
            },
        },
        "security": [{ "BearerToken": [] }],
    }))
}

/// kube publishes `$ref`s that have siblings (a description, a default) as
/// `{"allOf": [{"$ref": …}], …}` in OpenAPI v3, since v3.0 ignores `$ref` siblings.
pub(crate) fn wrap_ref_siblings(value: &mut Value) {
    match value {
        Value::Object(map) => {
            // A `properties` map may hold a field literally named `$ref` (JSONSchemaProps
            // does); only a string `$ref` is a reference.
            if map.len() > 1
                && map.get("$ref").is_some_and(Value::is_string)
                && let Some(reference) = map.remove("$ref")
            {
                map.insert("allOf".into(), json!([{ "$ref": reference }]));
            }
            map.values_mut().for_each(wrap_ref_siblings);
        }
        Value::Array(items) => items.iter_mut().for_each(wrap_ref_siblings),
        _ => {}
    }
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("{REF_PREFIX}{name}") })
}

fn param(param: &Param) -> Value {
    let mut value = json!({
        "name": param.name,
        "in": if param.location == Location::Path { "path" } else { "query" },
        "description": param.description,
    });
    if param.location == Location::Path {
        value["required"] = Value::Bool(true);
    }
    value["schema"] = json!({ "type": param.ty, "uniqueItems": true });
    value
}

fn operation(op: &Operation) -> Value {
    let mut map = Map::new();
    map.insert("tags".into(), json!([op.tag]));
    map.insert("description".into(), op.description.clone().into());
    map.insert("operationId".into(), op.id.clone().into());
    if !op.params.is_empty() {
        map.insert("parameters".into(), op.params.iter().map(param).collect());
    }
    if let Some(body) = &op.body {
        map.insert("requestBody".into(), request_body(body));
    }
    let mut responses = Map::new();
    for (code, description) in op.responses {
        let mut response = json!({ "description": description });
        if *code != "401" {
            let content: Map<String, Value> = op
                .produces
                .iter()
                .map(|mime| {
                    (
                        (*mime).to_owned(),
                        json!({ "schema": reference(&op.response_schema) }),
                    )
                })
                .collect();
            response["content"] = Value::Object(content);
        }
        responses.insert((*code).to_owned(), response);
    }
    map.insert("responses".into(), Value::Object(responses));
    if let Some(action) = op.action {
        map.insert("x-kubernetes-action".into(), action.into());
    }
    if let Some(gvk) = &op.gvk {
        map.insert("x-kubernetes-group-version-kind".into(), gvk.clone());
    }
    Value::Object(map)
}

fn request_body(body: &Body) -> Value {
    match body {
        Body::Object(schema) => json!({
            "content": { "*/*": { "schema": reference(schema) } },
            "required": true,
        }),
        Body::Patch(types) => {
            let content: Map<String, Value> = types
                .iter()
                .map(|mime| {
                    (
                        (*mime).to_owned(),
                        json!({ "schema": reference(names::PATCH) }),
                    )
                })
                .collect();
            json!({ "content": content, "required": true })
        }
        Body::DeleteOptions => json!({
            "content": { "*/*": { "schema": reference(names::DELETE_OPTIONS) } },
        }),
    }
}
