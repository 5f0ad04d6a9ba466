// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Server-side apply that skips what is already in place, so that a converged Network costs
//! no writes and (almost) no requests, however often it is reconciled.
//!
//! Each child carries an annotation with a hash of what the controller applied. A child is
//! applied again unless the cached copy (the controller watches every kind it owns) has the
//! same hash — nothing was added or removed since the last apply — still has every field the
//! controller sets with the controller's value — nobody changed it — and is controlled by this
//! Network. Anything else (a new Network, a spec change, someone scaling a Deployment by hand)
//! applies it as usual, with `force`, so the controller stays the authority on its fields.

use std::fmt::Debug;

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use mni_operator::{ApiScope, Context, ContextError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::api::network_v1alpha1::Network;

/// The kind that owns what this module applies.
type Owner = Network;

/// The annotation holding the hash of the applied object.
pub const APPLIED: &str = "network.mni.dev/applied";

/// Applies `child` owned by `owner`, unless the cache shows it is in place (see the
/// [module docs](self)); returns the object as the cluster has it.
pub async fn apply<C>(ctx: &Context<Owner>, owner: &Owner, mut child: C) -> Result<C, ContextError>
where
    C: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + Serialize + DeserializeOwned,
    C: Send + Sync + 'static,
{
    let desired = serde_json::to_value(&child).map_err(|source| ContextError::Json {
        kind: C::kind(&()).into_owned(),
        source,
    })?;
    let hash = hash(&desired);
    child
        .meta_mut()
        .annotations
        .get_or_insert_with(Default::default)
        .insert(APPLIED.to_owned(), hash.clone());
    if let Some(cached) = cached(ctx, &child)
        && in_place(&*cached, owner, &desired, &hash)
    {
        return Ok((*cached).clone());
    }
    ctx.apply_owned(owner, child).await
}

/// The cached copy of `child`, if the controller watches its kind and has seen it.
fn cached<C>(ctx: &Context<Owner>, child: &C) -> Option<std::sync::Arc<C>>
where
    C: Resource<DynamicType = ()> + Clone + 'static,
{
    let meta = child.meta();
    let mut key = ObjectRef::new(meta.name.as_deref()?);
    if let Some(namespace) = meta.namespace.as_deref() {
        key = key.within(namespace);
    }
    ctx.store::<C>()?.get(&key)
}

/// Whether `cached` is what applying `desired` (whose hash is `hash`) would leave.
fn in_place<C>(cached: &C, owner: &Owner, desired: &Value, hash: &str) -> bool
where
    C: Resource + Serialize,
{
    let meta = cached.meta();
    let applied = meta.annotations.as_ref().and_then(|a| a.get(APPLIED));
    let uid = owner.meta().uid.as_ref();
    let mut owners = meta.owner_references.iter().flatten();
    let controlled = owners.any(|r| r.controller == Some(true) && Some(&r.uid) == uid);
    let Ok(have) = serde_json::to_value(cached) else {
        return false;
    };
    applied.map(String::as_str) == Some(hash) && controlled && contains(&have, desired)
}

/// Whether `have` has every field of `want` with the same value (arrays element by element).
#[must_use]
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(have), Value::Object(want)) => want
            .iter()
            .all(|(key, w)| have.get(key).is_some_and(|h| contains(h, w))),
        (Value::Array(have), Value::Array(want)) => {
            have.len() == want.len() && have.iter().zip(want).all(|(h, w)| contains(h, w))
        }
        (have, want) => have == want,
    }
}

/// A SHA-256 of `value`'s JSON, stable across operator versions.
fn hash(value: &Value) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contains_compares_only_what_is_wanted() {
        let have = json!({ "a": 1, "b": { "c": [1, { "d": 2, "e": 3 }] }, "x": "server" });
        assert!(contains(&have, &json!({ "b": { "c": [1, { "d": 2 }] } })));
        assert!(!contains(&have, &json!({ "b": { "c": [] } })), "lengths");
        assert!(!contains(&have, &json!({ "a": 2 })), "a value changed");
        assert!(!contains(&have, &json!({ "z": 1 })), "a field is missing");
    }

    #[test]
    fn hashes_are_stable() {
        let value = json!({ "b": 1, "a": [true] });
        assert_eq!(hash(&value), hash(&value.clone()));
        assert_ne!(hash(&value), hash(&json!({ "b": 2, "a": [true] })));
    }
}
