//! Server-side apply that skips what is already in place, and pruning of what is no longer
//! wanted, so that a converged installation costs no writes and (almost) no requests, however
//! often it is reconciled.
//!
//! Each child carries an annotation with a hash of what the controller applied. A child is
//! applied again unless the cached copy (the controller watches every kind it owns) has the
//! same hash — nothing was added or removed since the last apply — still has every field the
//! controller sets with the controller's value — nobody changed it — and is controlled by this
//! owner. Anything else (a new owner, a spec change, someone scaling a Deployment by hand)
//! applies it as usual, with `force`, so the controller stays the authority on its fields.

use std::fmt::Debug;

use kube::api::{DeleteParams, Preconditions};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::children::hex;
use crate::{ApiScope, Context, ContextError};

/// Applies `child` owned by `owner`, recording its hash under the annotation `applied`, unless
/// the cache shows it is in place (see the docs atop `src/workload/apply.rs`); returns the object as the
/// cluster has it.
pub async fn apply_if_changed<K, C>(
    ctx: &Context<K>,
    owner: &K,
    applied: &str,
    mut child: C,
) -> Result<C, ContextError>
where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
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
        .insert(applied.to_owned(), hash.clone());
    if let Some(cached) = cached(ctx, &child)
        && in_place(&*cached, owner, applied, &desired, &hash)
    {
        return Ok((*cached).clone());
    }
    ctx.apply_owned(owner, child).await
}

/// Deletes the objects of kind `C` in `owner`'s namespace that `owner` controls and whose names
/// are not in `keep`, as the controller's cache shows them; returns how many it deleted.
///
/// Only kinds the controller owns ([`Relations::owns`](crate::Relations::owns)) are cached, so
/// only those can be pruned; for any other kind this deletes nothing.
pub async fn prune<K, C>(ctx: &Context<K>, owner: &K, keep: &[&str]) -> Result<usize, ContextError>
where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
    C: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
    C: Send + Sync + 'static,
{
    let (Some(store), Some(uid)) = (ctx.store::<C>(), owner.meta().uid.as_deref()) else {
        return Ok(0);
    };
    let namespace = owner.meta().namespace.as_deref();
    let unwanted: Vec<_> = store
        .state()
        .into_iter()
        .filter(|obj| obj.meta().namespace.as_deref() == namespace)
        .filter(|obj| controlled_by(obj.as_ref(), uid))
        .filter(|obj| obj.meta().deletion_timestamp.is_none())
        .filter(|obj| !keep.contains(&obj.name_any().as_str()))
        .collect();
    for obj in &unwanted {
        let name = obj.name_any();
        let api = C::Scope::api::<C>(ctx.client().clone(), namespace);
        // Only the object the cache saw: a newer one of the same name is someone else's.
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: obj.meta().uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        match api.delete(&name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
            Err(source) => {
                return Err(ContextError::Api {
                    action: "delete",
                    kind: C::kind(&()).into_owned(),
                    name,
                    source,
                });
            }
        }
    }
    Ok(unwanted.len())
}

/// Whether `obj` has a controller owner reference to the object with `uid`.
fn controlled_by<C: Resource>(obj: &C, uid: &str) -> bool {
    obj.meta()
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

/// The cached copy of `child`, if the controller watches its kind and has seen it.
fn cached<K, C>(ctx: &Context<K>, child: &C) -> Option<std::sync::Arc<C>>
where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
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
fn in_place<K, C>(cached: &C, owner: &K, applied: &str, desired: &Value, hash: &str) -> bool
where
    K: Resource,
    C: Resource + Serialize,
{
    let meta = cached.meta();
    let recorded = meta.annotations.as_ref().and_then(|a| a.get(applied));
    let controlled = owner
        .meta()
        .uid
        .as_deref()
        .is_some_and(|uid| controlled_by(cached, uid));
    let Ok(have) = serde_json::to_value(cached) else {
        return false;
    };
    recorded.map(String::as_str) == Some(hash) && controlled && contains(&have, desired)
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
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
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
        assert_eq!(hash(&value).len(), 64);
    }

    #[test]
    fn in_place_needs_the_hash_the_owner_and_the_fields() {
        let owner = ConfigMap {
            metadata: kube::api::ObjectMeta {
                uid: Some("u-1".to_owned()),
                ..Default::default()
            },
            ..Default::default()
        };
        let desired = json!({ "data": { "a": "1" } });
        let h = hash(&desired);
        let mut cached = ConfigMap {
            data: Some([("a".to_owned(), "1".to_owned())].into()),
            ..Default::default()
        };
        cached.metadata.annotations = Some([("x/applied".to_owned(), h.clone())].into());
        assert!(
            !in_place(&cached, &owner, "x/applied", &desired, &h),
            "not controlled"
        );
        cached.metadata.owner_references = Some(vec![OwnerReference {
            controller: Some(true),
            uid: "u-1".to_owned(),
            ..Default::default()
        }]);
        assert!(in_place(&cached, &owner, "x/applied", &desired, &h));
        assert!(
            !in_place(&cached, &owner, "x/applied", &desired, "other"),
            "hash"
        );
        let changed = json!({ "data": { "a": "2" } });
        assert!(
            !in_place(&cached, &owner, "x/applied", &changed, &h),
            "a field changed"
        );
    }
}
