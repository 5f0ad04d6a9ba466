//! Swagger 2.0: the single `/openapi/v2` document covering every served group-version.
//!
//! Same paths, operations and schemas as [`crate::v3`], in Swagger 2.0 form: `definitions`
//! instead of `components.schemas`, `consumes`/`produces` lists, a `body` parameter instead
//! of a request body, and `$ref` siblings kept as they are (kube does not wrap them in v2).
//! CRD schemas are converted like kube-apiserver's `ToStructuralOpenAPIV2`: `allOf`,
//! `anyOf`, `oneOf` and `not` are dropped; `nullable` fields lose their type, properties and
//! items (and leave `required`); `x-kubernetes-preserve-unknown-fields` drops properties and
//! items; arrays without items lose their type — because kubectl's v2 model rejects them.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::model::{Error, ResourceDoc};
use crate::operations::{self, Body, Operation};
use crate::params::{Location, Param};
use crate::schemas::{self, REF_PREFIX, names};

const V2_REF_PREFIX: &str = "#/definitions/";

/// The Swagger 2.0 document kube-apiserver serves at `/openapi/v2`, for all `resources`
/// (any mix of group-versions).
///
/// # Errors
/// [`Error::Empty`] for no resources, [`Error::DuplicateResource`] for a plural repeated
/// within a group-version, and the validation errors of [`ResourceDoc`].
pub fn v2_document(resources: &[ResourceDoc]) -> Result<Value, Error> {
    if resources.is_empty() {
        return Err(Error::Empty);
    }
    let mut sorted: Vec<&ResourceDoc> = Vec::with_capacity(resources.len());
    for resource in resources {
        resource.validate()?;
        sorted.push(resource);
    }
    sorted
        .sort_by(|a, b| (&a.group, &a.version, &a.plural).cmp(&(&b.group, &b.version, &b.plural)));
    if let Some(pair) = sorted.windows(2).find(|pair| {
        (&pair[0].group, &pair[0].version, &pair[0].plural)
            == (&pair[1].group, &pair[1].version, &pair[1].plural)
    }) {
        return Err(Error::DuplicateResource {
            group_version: pair[0].group_version(),
            plural: pair[0].plural.clone(),
        });
    }

    let collected = schemas::collect(&sorted);
    let paths: Map<String, Value> = operations::paths(&sorted, &collected.kinds)
        .iter()
        .map(|item| (item.path.clone(), item.to_json(operation, param)))
        .collect();
    let mut definitions = collected.definitions;
    for (name, schema) in &mut definitions {
        if collected.custom.contains(name) {
            structural_v2(schema);
        }
        rewrite_refs(schema);
    }
    Ok(json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": "unversioned" },
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "type": "apiKey",
                "name": "authorization",
                "in": "header",
            },
        },
        "security": [{ "BearerToken": [] }],
    }))
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some(name) = reference.strip_prefix(REF_PREFIX)
            {
                *reference = format!("{V2_REF_PREFIX}{name}");
            }
            map.values_mut().for_each(rewrite_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// kube-apiserver's `ToStructuralOpenAPIV2` for CRD schemas.
fn structural_v2(value: &mut Value) {
    let Value::Object(schema) = value else { return };
    for key in ["allOf", "anyOf", "oneOf", "not"] {
        schema.remove(key);
    }
    if schema.remove("nullable") == Some(Value::Bool(true)) {
        for key in ["type", "items", "properties"] {
            schema.remove(key);
        }
    }
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        schema.remove("items");
        schema.remove("properties");
    }
    if schema.get("type").and_then(Value::as_str) == Some("array") && !schema.contains_key("items")
    {
        schema.remove("type");
    }
    let nullable: BTreeSet<String> = match schema.get("properties") {
        Some(Value::Object(properties)) => properties
            .iter()
            .filter(|(_, p)| p.get("nullable") == Some(&Value::Bool(true)))
            .map(|(name, _)| name.clone())
            .collect(),
        _ => BTreeSet::new(),
    };
    if !nullable.is_empty()
        && let Some(Value::Array(required)) = schema.get_mut("required")
    {
        required.retain(|r| r.as_str().is_none_or(|r| !nullable.contains(r)));
    }
    if let Some(Value::Object(additional)) = schema.get("additionalProperties")
        && additional.get("nullable") == Some(&Value::Bool(true))
    {
        schema.insert("additionalProperties".into(), Value::Bool(true));
    }
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.values_mut().for_each(structural_v2);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = schema.get_mut(key) {
            structural_v2(child);
        }
    }
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("{V2_REF_PREFIX}{name}") })
}

fn param(param: &Param) -> Value {
    let location = if param.location == Location::Path {
        "path"
    } else {
        "query"
    };
    let mut value = json!({
        "description": param.description,
        "in": location,
        "name": param.name,
    });
    if param.location == Location::Path {
        value["required"] = Value::Bool(true);
    }
    value["type"] = param.ty.into();
    value["uniqueItems"] = Value::Bool(true);
    value
}

fn operation(op: &Operation) -> Value {
    let consumes: &[&str] = match &op.body {
        Some(Body::Patch(types)) => types,
        _ => &["*/*"],
    };
    let mut parameters: Vec<Value> = Vec::new();
    match &op.body {
        Some(Body::Object(schema)) => parameters.push(body(reference(schema), true)),
        Some(Body::Patch(_)) => parameters.push(body(reference(names::PATCH), true)),
        Some(Body::DeleteOptions) => parameters.push(body(reference(names::DELETE_OPTIONS), false)),
        None => {}
    }
    parameters.extend(op.params.iter().map(param));
    let mut responses = Map::new();
    for (code, description) in op.responses {
        let mut response = json!({ "description": description });
        if *code != "401" {
            response["schema"] = reference(&op.response_schema);
        }
        responses.insert((*code).to_owned(), response);
    }
    let mut map = Map::new();
    map.insert("consumes".into(), json!(consumes));
    map.insert("description".into(), op.description.clone().into());
    map.insert("operationId".into(), op.id.clone().into());
    if !parameters.is_empty() {
        map.insert("parameters".into(), Value::Array(parameters));
    }
    map.insert("produces".into(), json!(op.produces));
    map.insert("responses".into(), Value::Object(responses));
    map.insert("schemes".into(), json!(["https"]));
    map.insert("tags".into(), json!([op.tag]));
    if let Some(action) = op.action {
        map.insert("x-kubernetes-action".into(), action.into());
    }
    if let Some(gvk) = &op.gvk {
        map.insert("x-kubernetes-group-version-kind".into(), gvk.clone());
    }
    Value::Object(map)
}

fn body(schema: Value, required: bool) -> Value {
    let mut value = json!({ "in": "body", "name": "body", "schema": schema });
    if required {
        value["required"] = Value::Bool(true);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_conversion_drops_v3_only_constructs() {
        let mut schema = json!({
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "a": {"type": "string", "nullable": true},
                "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                      "properties": {"c": {"type": "string"}}},
                "d": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                      "x-kubernetes-int-or-string": true},
            },
        });
        structural_v2(&mut schema);
        assert_eq!(schema["required"], json!(["b"]));
        assert_eq!(schema["properties"]["a"], json!({}));
        assert!(schema["properties"]["b"].get("properties").is_none());
        assert!(schema["properties"]["d"].get("anyOf").is_none());
    }
}
