//! OpenAPI v2 and v3 documents for mNi's embedded API server, built from descriptions of the
//! served kinds ([`ResourceDoc`]): built-in kinds from `k8s-openapi` (via `schemars`) and
//! custom resources from their CRD's `openAPIV3Schema`.
//!
//! * [`v3_group_version`] / [`GroupVersionDocument`]: the document served at
//!   `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`.
//! * [`v3_root`]: the `/openapi/v3` index, each entry pointing at
//!   `/openapi/v3/<path>?hash=<upper-case hex SHA-512 of the document's JSON>`.
//! * [`v2_document`] / [`v2_protobuf`]: the Swagger 2.0 document at `/openapi/v2`, as JSON
//!   and as gnostic's `openapi.v2.Document` protobuf.
//!
//! Generation is pure and deterministic (resources and schemas are sorted), so the hash of
//! a document only changes when its content does. Caching is the server's job.
//!
//! # What clients read from these documents
//!
//! From kubectl/client-go sources (v1.27–v1.33):
//!
//! * **Index** (`client-go/openapi` `client.Paths()`): `GET /openapi/v3`, JSON
//!   `{"paths": {"<gv path>": {"serverRelativeURL": "…"}}}`. Keys are `api/v1` and
//!   `apis/<group>/<version>` (no leading slash). A URL starting with `/openapi/v3` keeps
//!   the client's path prefix; its query (`hash`) is re-added as parameters. The group
//!   version documents are then fetched with `Accept: application/json`
//!   (`openapi3.Root.GVSpec` and explain both ask for JSON; v3 protobuf is not needed).
//!   `openapi3.Root` returns `GroupVersionNotFoundError` when the path key is absent.
//! * **`kubectl apply --validate=strict|warn`** (`cli-runtime/pkg/resource/
//!   query_param_verifier_v3.go`): in the kind's GV document, iterate `paths` (Go map order,
//!   i.e. random), take the **first** path whose `patch` operation has an
//!   `x-kubernetes-group-version-kind` *object* equal to the kind's `{group, version,
//!   kind}`, and report support iff that operation's **own** `parameters` contain one named
//!   `fieldValidation` (path-level parameters are not consulted; the search stops at the
//!   first match). Every PATCH carrying the kind's GVK (item and `/status`) therefore lists
//!   `fieldValidation` here. A missing `paths` is "Invalid OpenAPI V3 document"; a missing GV
//!   for a CRD falls back to checking `Namespace` in `api/v1`; `v1 List` is never supported.
//!   If v3 errors (other than "unsupported"), the v2 verifier runs the same check on the
//!   `/openapi/v2` protobuf (operation `vendor_extension` yaml, query parameter sub-schema
//!   names).
//! * **client-side `kubectl apply`** (`kubectl/pkg/cmd/apply/patcher.go`): with the v3 root
//!   available, first find a `patch` operation with the kind's GVK (object form); if its
//!   `requestBody.content` has `application/strategic-merge-patch+json` the kind gets a
//!   strategic merge patch computed from v3: the first `components.schemas` entry whose
//!   `x-kubernetes-group-version-kind` *array* contains the GVK becomes
//!   `strategicpatch.PatchMetaFromOpenAPIV3{Schema, SchemaList: components.schemas}`, which
//!   walks `properties`, follows `allOf[0]`/`$ref` (`#/components/schemas/<name>`) and `items`,
//!   and reads `x-kubernetes-patch-strategy` (comma-separated) and
//!   `x-kubernetes-patch-merge-key` on the property. A field missing from `properties` is an
//!   error ("unable to find api field") which makes kubectl warn and fall back to v2, then to
//!   its compiled-in Go types. Without the SMP media type (CRDs) it falls back to v2
//!   `consumes`, then to a JSON merge patch. `k8s-openapi`'s schemars output carries no patch
//!   metadata, so this crate restores it for built-in fields (see `patch_meta`).
//! * **`kubectl explain`** (`kubectl/pkg/explain/v2`): find the GV document by path key,
//!   then look for `/api[s/<group>]/<version>/<plural>`, `…/<plural>/{name}`,
//!   `…/namespaces/{namespace}/<plural>` and `…/namespaces/{namespace}/<plural>/{name}` in
//!   `paths`, take `x-kubernetes-group-version-kind` from their `get`/`post`/`put`/`patch`/
//!   `delete` operation, then the `components.schemas` entry whose GVK array contains exactly
//!   that `{group, kind, version}` map, and render `description`, `properties`, `required`,
//!   `type`, `items`, `additionalProperties`, `allOf`, `enum`, `externalDocs` following
//!   `$ref`s into `components.schemas`.
//! * **kube-rs** does not read OpenAPI documents.
//!
//! Not reproduced from kube-apiserver: `default` values on built-in properties,
//! `x-kubernetes-unions`, most `x-kubernetes-list-type`/`map-type` markers of built-in types
//! (only those listed in `patch_meta`), kube's exact list-kind descriptions, parameter
//! deduplication into `#/parameters` in v2 (everything is inlined), and index entries for
//! non-resource paths (`api`, `apis`, `version`, …).

mod model;
mod operations;
mod params;
mod patch_meta;
mod protobuf;
mod schemas;
mod v2;
mod v3;

pub use model::{Error, KindSchema, ResourceDoc, group_version_path};
pub use protobuf::v2_protobuf;
pub use v2::v2_document;
pub use v3::{
    GroupVersionDocument, OPENAPI_VERSION, content_hash, v3_documents, v3_group_version, v3_root,
};

#[cfg(test)]
mod tests;
