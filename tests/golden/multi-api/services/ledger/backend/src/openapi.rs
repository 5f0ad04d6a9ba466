// SPDX-License-Identifier: MIT

//! The OpenAPI 3 document of the API, served at `/api/openapi.json`.
//!
//! The LedgerAccount schemas are taken from the CRD the operator installs, so the document
//! cannot drift from what the Kubernetes API validates.

use kube::CustomResourceExt;
use serde_json::{Value, json};

use ledger_operator::api::ledger_v1alpha1::LedgerAccount;

/// The OpenAPI 3.0 document. See the [module docs](self).
#[must_use]
pub fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Ledger API",
            "version": "v1alpha1",
            "description": "LedgerAccounts of the ledger service, kept as Kubernetes objects.",
        },
        "paths": {
            (crate::COLLECTION): {
                "get": operation("list", "List the LedgerAccounts", None, "200", "LedgerAccountList"),
                "post": operation("create", "Create a LedgerAccount", Some("CreateRequest"), "201", "LedgerAccount"),
            },
            (crate::ITEM): {
                "parameters": [{ "name": "name", "in": "path", "required": true, "schema": string() }],
                "get": operation("read", "Read a LedgerAccount", None, "200", "LedgerAccount"),
                "put": operation("replace", "Replace a LedgerAccount's spec", Some("ReplaceRequest"), "200", "LedgerAccount"),
                "delete": operation("delete", "Delete a LedgerAccount", None, "204", ""),
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
        "operationId": format!("{verb}LedgerAccount"),
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
    let crd = LedgerAccount::crd();
    let crd = serde_json::to_value(crd).unwrap_or_default();
    let properties = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    let error = object(
        &["code", "reason", "message"],
        json!({ "code": { "type": "integer" }, "reason": string(), "message": string() }),
    );
    json!({
        "LedgerAccountSpec": properties["spec"].clone(),
        "LedgerAccountStatus": properties["status"].clone(),
        "LedgerAccount": object(&["name", "spec"], json!({
            "name": string(),
            "spec": reference("LedgerAccountSpec"),
            "status": reference("LedgerAccountStatus"),
            "createdAt": { "type": "string", "format": "date-time" },
        })),
        "LedgerAccountList": object(&["items"], json!({
            "items": { "type": "array", "items": reference("LedgerAccount") },
        })),
        "CreateRequest": object(&["name", "spec"], json!({
            "name": { "type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" },
            "spec": reference("LedgerAccountSpec"),
        })),
        "ReplaceRequest": object(&["spec"], json!({ "spec": reference("LedgerAccountSpec") })),
        "Error": object(&["error"], json!({ "error": error })),
    })
}
