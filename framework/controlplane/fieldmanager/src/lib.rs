//! Server-side apply without IO: the equivalent of k8s.io/apiserver's `fieldmanager` over
//! sigs.k8s.io/structured-merge-diff, for objects held as `serde_json::Value`.
//!
//! An API server calls [`apply()`] for `PATCH` with `application/apply-patch+yaml` and [`update`]
//! for every other write that names a field manager (create, update, JSON/merge/strategic
//! patches), then stores the object with the returned `metadata.managedFields`. Both need the
//! [`TypeInfo`] of the kind: a [`TypeRegistry`] lookup (built-in merge keys such as containers
//! by `name`), or [`TypeInfo::from_structural`] for a custom resource's schema.
//!
//! Start with [`apply()`]; its errors ([`ApplyError`]) render kube-apiserver's messages and
//! `Status` bodies, including the 409 conflict list. Underneath:
//!
//! - [`conflict`] — errors, kube's conflict messages and `Status` bodies.
//! - [`FieldSet`] — sets of paths with the exact FieldsV1 encoding ([`set`], [`path`]).
//! - [`ManagedFieldsEntry`] — managedFields JSON, decoding and the reset rules ([`managed`]).
//! - [`TypeInfo`] / [`TypeNode`] — list and map merge semantics per path ([`types`],
//!   [`mod@builtin`]).
//! - [`last_applied`] — `kubectl apply --server-side` over client-side apply's annotation.
//! - [`merge()`], [`compare`], [`to_field_set`], [`remove_items`] — the typed walks
//!   ([`mod@merge`], [`typed`]).
//!
//! Everything is pure: times come in as strings, nothing panics on untrusted input and
//! recursion is bounded by [`MAX_DEPTH`].

pub mod apply;
pub mod builtin;
pub mod conflict;
pub mod last_applied;
pub mod managed;
pub mod merge;
pub mod path;
pub mod set;
pub mod typed;
pub mod types;

pub use apply::{Applied, BEFORE_FIRST_APPLY, apply, fields_of, try_update, update};
pub use builtin::{
    TypeRegistry, builtin, from_definition, generic, object_meta, pod_spec, pod_template,
};
pub use conflict::{ApplyError, Conflict, gvk_string};
pub use last_applied::{LAST_APPLIED_ANNOTATION, build_last_applied};
pub use managed::{
    ANCIENT_CHANGES, MAX_UPDATE_MANAGERS, ManagedFieldsEntry, ManagedFieldsError, Operation,
    decode_managed_fields, is_reset_managed_fields, managed_fields_for_update, set_managed_fields,
    strip_managed_fields,
};
pub use merge::{Comparison, compare, merge};
pub use path::{Path, PathElement, PathError};
pub use set::{FieldSet, FieldsV1Error, MAX_DEPTH};
pub use typed::{ValueError, ensure_named_fields, remove_items, to_field_set};
pub use types::{
    ListType, MapType, TypeError, TypeInfo, TypeInfoBuilder, TypeNode, Unknown, field_path,
};
