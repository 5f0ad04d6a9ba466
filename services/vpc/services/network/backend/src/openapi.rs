// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The OpenAPI 3 document of the API, served at `/api/openapi.json`.
//!
//! The VirtualPrivateCloud schemas (CEL rules included) are taken from the CRD the operator
//! installs, so the document cannot drift from what the Kubernetes API validates. Every
//! operation's `default` response is the error body; an invalid address plan is a 422.

use kube::CustomResourceExt;
use serde_json::{Value, json};

use network_operator::api::network_v1alpha1::VirtualPrivateCloud;

/// The OpenAPI 3.0 document. See the [module docs](self).
#[must_use]
pub fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Network API",
            "version": "v1alpha1",
            "description": "VirtualPrivateClouds of the network service, kept as Kubernetes objects.",
        },
        "paths": {
            (crate::COLLECTION): {
                "get": operation("list", "List the VirtualPrivateClouds", None, "200", "VirtualPrivateCloudList"),
                "post": operation("create", "Create a VirtualPrivateCloud", Some("CreateRequest"), "201", "VirtualPrivateCloud"),
            },
            (crate::ITEM): {
                "parameters": [{ "name": "name", "in": "path", "required": true, "schema": string() }],
                "get": operation("read", "Read a VirtualPrivateCloud", None, "200", "VirtualPrivateCloud"),
                "put": operation("replace", "Replace a VirtualPrivateCloud's spec", Some("ReplaceRequest"), "200", "VirtualPrivateCloud"),
                "delete": operation("delete", "Delete a VirtualPrivateCloud", None, "204", ""),
            },
            (crate::SUBNETS): {
                "parameters": [{ "name": "name", "in": "path", "required": true, "schema": string() }],
                "post": operation("addSubnet", "Add a subnet to a VirtualPrivateCloud", Some("SubnetSpec"), "201", "VirtualPrivateCloud"),
            },
            (crate::SUBNET): {
                "parameters": [
                    { "name": "name", "in": "path", "required": true, "schema": string() },
                    { "name": "subnet", "in": "path", "required": true, "schema": string() },
                ],
                "delete": operation("removeSubnet", "Remove a subnet from a VirtualPrivateCloud", None, "200", "VirtualPrivateCloud"),
            },
        },
        "components": { "schemas": schemas() },
    })
}

/// One operation: `verb` names it, `request` and `response` are schema names.
fn operation(
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
        "operationId": format!("{verb}VirtualPrivateCloud"),
        "summary": summary,
        "responses": responses,
    });
    if let Some(request) = request {
        operation["requestBody"] = content("", request);
        operation["requestBody"]["required"] = json!(true);
    }
    operation
}

/// A JSON body of schema `name`.
fn content(description: &str, name: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": reference(name) } },
    })
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn object(required: &[&str], properties: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": properties })
}

/// The schemas: spec and status from the CRD, the API's own shapes around them.
fn schemas() -> Value {
    let crd = VirtualPrivateCloud::crd();
    let crd = serde_json::to_value(crd).unwrap_or_default();
    let properties = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    let error = object(
        &["code", "reason", "message"],
        json!({ "code": { "type": "integer" }, "reason": string(), "message": string() }),
    );
    json!({
        "VirtualPrivateCloudSpec": properties["spec"].clone(),
        "SubnetSpec": properties["spec"]["properties"]["subnets"]["items"].clone(),
        "VirtualPrivateCloudStatus": properties["status"].clone(),
        "VirtualPrivateCloud": object(&["name", "spec"], json!({
            "name": string(),
            "spec": reference("VirtualPrivateCloudSpec"),
            "status": reference("VirtualPrivateCloudStatus"),
            "createdAt": { "type": "string", "format": "date-time" },
        })),
        "VirtualPrivateCloudList": object(&["items"], json!({
            "items": { "type": "array", "items": reference("VirtualPrivateCloud") },
        })),
        "CreateRequest": object(&["name", "spec"], json!({
            "name": { "type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" },
            "spec": reference("VirtualPrivateCloudSpec"),
        })),
        "ReplaceRequest": object(&["spec"], json!({ "spec": reference("VirtualPrivateCloudSpec") })),
        "Error": object(&["error"], json!({ "error": error })),
    })
}
