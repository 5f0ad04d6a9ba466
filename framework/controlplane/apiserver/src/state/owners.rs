//! Owner lookups: what an ownerReference resolves to, for the garbage collector and for the
//! writes that wake it.

use std::sync::Arc;

use serde_json::Value;

use super::State;
use crate::object::{self, meta_str};
use crate::registry::ResourceInfo;

/// What an ownerReference resolves to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The owner is stored, with the uid the reference names.
    Present,
    /// No stored object has the name and uid the reference names.
    Absent,
    /// The reference names a kind the server does not serve, or a namespaced owner of a
    /// cluster-scoped dependent: it is ignored, as upstream ignores it.
    Unresolvable,
}

impl State {
    /// What `owner_ref`, a reference of `dependent` (an object of `dependent_info`), resolves
    /// to.
    pub(crate) fn resolve_owner(
        &self,
        dependent_info: &ResourceInfo,
        dependent: &Value,
        owner_ref: &Value,
    ) -> Owner {
        let api_version = owner_ref["apiVersion"].as_str().unwrap_or_default();
        let kind = owner_ref["kind"].as_str().unwrap_or_default();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let Some(info) = self.registry().find_kind(group, version, kind) else {
            return Owner::Unresolvable;
        };
        if info.namespaced && !dependent_info.namespaced {
            return Owner::Unresolvable;
        }
        let ns = meta_str(dependent, "namespace").filter(|_| info.namespaced);
        let name = owner_ref["name"].as_str().unwrap_or_default();
        let uid = owner_ref["uid"].as_str().unwrap_or_default();
        match self.store.get(&info.key(ns, name)) {
            Some(kv) => match object::from_stored(&kv) {
                Ok(o) if meta_str(&o, "uid") == Some(uid) => Owner::Present,
                _ => Owner::Absent,
            },
            None => Owner::Absent,
        }
    }

    /// Whether `obj`, just written as a `info`, names an owner that does not exist (so the
    /// collector has work to do at once rather than at its next sweep).
    pub(crate) fn has_absent_owner(&self, info: &Arc<ResourceInfo>, obj: &Value) -> bool {
        let refs = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array);
        refs.into_iter()
            .flatten()
            .any(|r| self.resolve_owner(info, obj, r) == Owner::Absent)
    }
}
