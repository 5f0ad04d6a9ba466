//! [`OpenApi`]: the OpenAPI 3 document of a domain kind's API, served at
//! [`OPENAPI_PATH`](crate::OPENAPI_PATH).
//!
//! The spec and status schemas are taken from the CRD of the kind (`CustomResourceExt::crd`),
//! the one the operator installs, so the document cannot drift from what the Kubernetes API
//! validates. The CRUD paths of [`CrudRouter`](crate::CrudRouter) are there from the start; a
//! service adds its own with [`OpenApi::with_path`] and [`OpenApi::with_schema`].

use std::marker::PhantomData;

use serde_json::{Map, Value, json};

use crate::domain::Kind;

/// Builds the OpenAPI 3.0 document of kind `K`'s API. See the docs atop `src/openapi.rs`.
#[must_use = "an OpenApi does nothing until it is given to a CrudRouter or `document` is called"]
pub struct OpenApi<K: Kind> {
    info: Value,
    paths: Map<String, Value>,
    schemas: Map<String, Value>,
    crd_properties: Value,
    kind: PhantomData<fn() -> K>,
}

impl<K: Kind> Clone for OpenApi<K> {
    fn clone(&self) -> Self {
        Self {
            info: self.info.clone(),
            paths: self.paths.clone(),
            schemas: self.schemas.clone(),
            crd_properties: self.crd_properties.clone(),
            kind: PhantomData,
        }
    }
}

impl<K: Kind> std::fmt::Debug for OpenApi<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApi")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl<K: Kind> OpenApi<K> {
    /// The document of service `service`'s API (a DNS label such as `cloud-dns`, titled
    /// "Cloud Dns API"), at API version `version`.
    pub fn new(service: &str, version: &str) -> Self {
        let title: Vec<String> = service
            .split('-')
            .filter(|w| !w.is_empty())
            .map(capitalise)
            .collect();
        let description = format!(
            "{}s of the {service} service, kept as Kubernetes objects.",
            K::kind(&())
        );
        let crd = serde_json::to_value(K::crd()).unwrap_or_default();
        let properties = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        Self {
            info: json!({
                "title": format!("{} API", title.join(" ")),
                "version": version,
                "description": description,
            }),
            paths: Map::new(),
            schemas: Map::new(),
            crd_properties: properties.clone(),
            kind: PhantomData,
        }
    }

    /// Describes the API in `info.description` instead.
    pub fn with_description(mut self, description: &str) -> Self {
        self.info["description"] = json!(description);
        self
    }

    /// Adds (or replaces) the path item at `path`, e.g. built with [`OpenApi::operation`].
    pub fn with_path(mut self, path: &str, item: Value) -> Self {
        self.paths.insert(path.to_owned(), item);
        self
    }

    /// Adds (or replaces) the schema `name` under `components.schemas`.
    pub fn with_schema(mut self, name: &str, schema: Value) -> Self {
        self.schemas.insert(name.to_owned(), schema);
        self
    }

    /// The CRD's schema at `pointer` under the kind's top-level properties (a JSON pointer,
    /// e.g. `/spec/properties/subnets/items`), `null` when there is none.
    #[must_use]
    pub fn crd_schema(&self, pointer: &str) -> Value {
        self.crd_properties
            .pointer(pointer)
            .cloned()
            .unwrap_or_default()
    }

    /// One operation: `verb` names it (`operationId` is `{verb}{Kind}`), `request` and
    /// `response` are schema names (`""`: no body); every other status is an `Error`.
    #[must_use]
    pub fn operation(
        &self,
        verb: &str,
        summary: &str,
        request: Option<&str>,
        status: &str,
        response: &str,
    ) -> Value {
        let failed = content("The request failed; the body says why.", "Error");
        let mut responses = json!({ "default": failed });
        responses[status] = if response.is_empty() {
            json!({ "description": summary })
        } else {
            content(summary, response)
        };
        let mut operation = json!({
            "operationId": format!("{verb}{}", K::kind(&())),
            "summary": summary,
            "responses": responses,
        });
        if let Some(request) = request {
            operation["requestBody"] = content("", request);
            operation["requestBody"]["required"] = json!(true);
        }
        operation
    }

    /// The document, with the CRUD routes of the collection at `collection` (as
    /// [`CrudRouter`](crate::CrudRouter) serves them) and the paths and schemas added.
    #[must_use]
    pub fn document(&self, collection: &str) -> Value {
        let k = K::kind(&());
        let collection = collection.trim_end_matches('/');
        let mut paths = Map::new();
        paths.insert(
            collection.to_owned(),
            json!({
                "get": self.operation("list", &format!("List the {k}s"), None, "200", &format!("{k}List")),
                "post": self.operation("create", &format!("Create a {k}"), Some("CreateRequest"), "201", &k),
            }),
        );
        paths.insert(
            format!("{collection}/{{name}}"),
            json!({
                "parameters": [path_parameter("name")],
                "get": self.operation("read", &format!("Read a {k}"), None, "200", &k),
                "put": self.operation("replace", &format!("Replace a {k}'s spec"), Some("ReplaceRequest"), "200", &k),
                "delete": self.operation("delete", &format!("Delete a {k}"), None, "204", ""),
            }),
        );
        paths.extend(self.paths.clone());
        let mut schemas = standard_schemas(&k, &self.crd_properties);
        schemas.extend(self.schemas.clone());
        json!({
            "openapi": "3.0.3",
            "info": self.info,
            "paths": paths,
            "components": { "schemas": schemas },
        })
    }
}

/// `word` with its first letter in upper case.
fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The schemas every domain API has: spec and status from the CRD, the API's own shapes
/// around them.
fn standard_schemas(k: &str, crd_properties: &Value) -> Map<String, Value> {
    let spec = format!("{k}Spec");
    let error = object(
        &["code", "reason", "message"],
        json!({ "code": { "type": "integer" }, "reason": string(), "message": string() }),
    );
    let mut schemas = Map::new();
    for (name, schema) in [
        (spec.clone(), crd_properties["spec"].clone()),
        (format!("{k}Status"), crd_properties["status"].clone()),
        (
            k.to_owned(),
            object(
                &["name", "spec"],
                json!({
                    "name": string(),
                    "spec": reference(&spec),
                    "status": reference(&format!("{k}Status")),
                    "createdAt": { "type": "string", "format": "date-time" },
                }),
            ),
        ),
        (
            format!("{k}List"),
            object(
                &["items"],
                json!({ "items": { "type": "array", "items": reference(k) } }),
            ),
        ),
        (
            "CreateRequest".to_owned(),
            object(
                &["name", "spec"],
                json!({
                    "name": { "type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" },
                    "spec": reference(&spec),
                }),
            ),
        ),
        (
            "ReplaceRequest".to_owned(),
            object(&["spec"], json!({ "spec": reference(&spec) })),
        ),
        (
            "Error".to_owned(),
            object(&["error"], json!({ "error": error })),
        ),
    ] {
        schemas.insert(name, schema);
    }
    schemas
}

/// A required string parameter of the path, e.g. `name` in `/things/{name}`.
#[must_use]
pub fn path_parameter(name: &str) -> Value {
    json!({ "name": name, "in": "path", "required": true, "schema": string() })
}

/// A JSON body of schema `name`.
fn content(description: &str, name: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": reference(name) } },
    })
}

/// A reference to the schema `name` under `components.schemas`.
#[must_use]
pub fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn object(required: &[&str], properties: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": properties })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::Widget;

    #[test]
    fn the_document_has_the_crud_paths_and_the_crd_s_schemas() {
        let doc = OpenApi::<Widget>::new("shop-widgets", "v1").document("/api/v1/widgets/");
        assert_eq!(doc["openapi"], "3.0.3");
        assert_eq!(doc["info"]["title"], "Shop Widgets API");
        let description = "Widgets of the shop-widgets service, kept as Kubernetes objects.";
        assert_eq!(doc["info"]["description"], description);
        let post = &doc["paths"]["/api/v1/widgets"]["post"];
        assert_eq!(post["operationId"], "createWidget");
        assert!(doc["paths"]["/api/v1/widgets/{name}"]["delete"].is_object());
        let spec = &doc["components"]["schemas"]["WidgetSpec"];
        assert!(spec["properties"]["size"].is_object(), "{doc}");
    }

    #[test]
    fn a_service_adds_its_own_paths_and_schemas() {
        let api = OpenApi::<Widget>::new("widgets", "v1").with_description("Widgets.");
        let size = api.crd_schema("/spec/properties/size");
        assert_eq!(size["type"], "integer");
        let grow = api.operation("grow", "Grow a Widget", None, "200", "Widget");
        let doc = api
            .with_path("/api/v1/widgets/{name}/grow", json!({ "post": grow }))
            .with_schema("Size", size)
            .document("/api/v1/widgets");
        assert_eq!(doc["info"]["description"], "Widgets.");
        let grow = &doc["paths"]["/api/v1/widgets/{name}/grow"]["post"];
        assert_eq!(grow["operationId"], "growWidget");
        assert_eq!(doc["components"]["schemas"]["Size"]["type"], "integer");
    }
}
