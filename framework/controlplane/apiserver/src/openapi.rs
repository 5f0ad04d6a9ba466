//! Serving `/openapi/v3` and `/openapi/v2` from documents built by `mni-openapi`.
//!
//! Documents are built lazily from the registry and cached until the set of resources changes
//! (a CRD is created, updated or deleted), so kubectl's repeated schema fetches cost nothing.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, header};
use mni_openapi::{GroupVersionDocument, ResourceDoc};
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::registry::{Flavor, Registry, ResourceInfo};

/// The content type kube-apiserver answers with (clients ask with `…spec.v2@v1.0+protobuf`).
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

#[derive(Debug)]
struct Built {
    generation: u64,
    root: Vec<u8>,
    groups: Vec<GroupVersionDocument>,
    v2_json: Vec<u8>,
    v2_protobuf: Vec<u8>,
}

/// The cached documents.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    built: Mutex<Option<Arc<Built>>>,
}

/// The OpenAPI description of one served resource (none for create-only review kinds).
pub(crate) fn resource_doc(info: &ResourceInfo) -> Option<ResourceDoc> {
    let mut doc = match &info.flavor {
        Flavor::Builtin(b) => (b.doc?)(),
        Flavor::Custom(c) => ResourceDoc::custom(
            info.group.clone(),
            info.version.clone(),
            info.kind.clone(),
            info.plural.clone(),
            info.namespaced,
            c.raw_schema.clone().unwrap_or_else(
                || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            ),
        )
        .with_list_kind(info.list_kind.clone()),
    };
    if info.status {
        doc = doc.with_status();
    }
    if info.scale.is_some() {
        doc = doc.with_scale();
    }
    Some(doc)
}

/// What the documents are built from: the registry's generation and its resources' docs.
pub(crate) fn documents(registry: &Registry) -> (u64, Vec<ResourceDoc>) {
    let docs: Vec<ResourceDoc> = registry.all().filter_map(|i| resource_doc(i)).collect();
    (registry.generation(), docs)
}

fn build(cache: &Cache, (generation, docs): (u64, Vec<ResourceDoc>)) -> ApiResult<Arc<Built>> {
    let mut cache = cache.built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = cache.as_ref()
        && b.generation == generation
    {
        return Ok(b.clone());
    }
    let groups = mni_openapi::v3_documents(&docs).map_err(ApiError::internal)?;
    let root = serde_json::to_vec(&mni_openapi::v3_root(&groups)).unwrap_or_default();
    let v2 = mni_openapi::v2_document(&docs).map_err(ApiError::internal)?;
    let built = Arc::new(Built {
        generation,
        root,
        v2_protobuf: mni_openapi::v2_protobuf(&v2),
        v2_json: serde_json::to_vec(&v2).unwrap_or_default(),
        groups,
    });
    *cache = Some(built.clone());
    Ok(built)
}

fn respond(bytes: Vec<u8>, content_type: &'static str, immutable: bool) -> Response {
    let mut resp = Response::new(Body::from(bytes));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if immutable {
        resp.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, immutable"),
        );
    }
    resp
}

/// Serves `/openapi/v2`, `/openapi/v3` and `/openapi/v3/{group-version path}` from `cache`,
/// rebuilt first when `documents` (see [`documents`]) are of a newer registry generation.
pub(crate) fn serve(
    cache: &Cache,
    documents: (u64, Vec<ResourceDoc>),
    path: &str,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let built = build(cache, documents)?;
    if path == "/openapi/v2" {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        return Ok(if accept.contains("protobuf") {
            respond(built.v2_protobuf.clone(), PROTOBUF_V2, false)
        } else {
            respond(built.v2_json.clone(), "application/json", false)
        });
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        return Ok(respond(built.root.clone(), "application/json", false));
    }
    let doc = built
        .groups
        .iter()
        .find(|g| g.path == rest)
        .ok_or_else(ApiError::path_not_found)?;
    Ok(respond(doc.json.clone(), "application/json", true))
}
