//! The garbage collector: ownerReferences, cascading deletion and the `orphan` and
//! `foregroundDeletion` finalizers, as kube-controller-manager's garbage collector does them.
//!
//! Each pass takes a snapshot of every stored object and then:
//! 1. for an owner being deleted with the `orphan` finalizer, removes the ownerReferences that
//!    point at it from its dependents, then the finalizer;
//! 2. for an owner being deleted with `foregroundDeletion`, deletes its dependents and removes
//!    the finalizer once no dependent with `blockOwnerDeletion` is left;
//! 3. deletes dependents whose owners are all gone (matched by uid), and drops references to
//!    gone owners from dependents that still have a live one.
//!
//! A cluster-scoped dependent that names a namespaced owner kind, or an owner of a kind the
//! server does not serve, is unresolvable and ignored, as upstream ignores it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::ApiResult;
use crate::object::{self, meta_str};
use crate::patch::Patch;
use crate::registry::ResourceInfo;
use crate::request::{PatchType, Target};
use crate::state::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Owner, State, WriteOptions};

struct Item {
    info: Arc<ResourceInfo>,
    obj: Value,
}

impl Item {
    fn uid(&self) -> &str {
        meta_str(&self.obj, "uid").unwrap_or_default()
    }

    fn target(&self) -> Target {
        Target {
            info: self.info.clone(),
            namespace: meta_str(&self.obj, "namespace").map(str::to_string),
            name: Some(object::name(&self.obj).to_string()),
            subresource: None,
        }
    }

    fn owner_refs(&self) -> Vec<Value> {
        self.obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }
}

fn snapshot(state: &State) -> ApiResult<Vec<Item>> {
    let infos: Vec<Arc<ResourceInfo>> = {
        let registry = state.registry();
        let mut by_prefix: BTreeMap<String, Arc<ResourceInfo>> = BTreeMap::new();
        for info in registry.all() {
            let better = by_prefix.get(&info.storage_prefix).is_none_or(|cur| {
                cur.version != cur.storage_version && info.version == info.storage_version
                    || cur.group == "events.k8s.io"
            });
            if better {
                by_prefix.insert(info.storage_prefix.clone(), info.clone());
            }
        }
        by_prefix.into_values().collect()
    };
    let mut items = Vec::new();
    for info in infos {
        let listed = state.list_stored(&format!("{}/", info.storage_prefix))?;
        for kv in listed.items {
            items.push(Item {
                info: info.clone(),
                obj: object::to_served(&info, object::from_stored(&kv)?),
            });
        }
    }
    Ok(items)
}

async fn patch_meta(state: &State, item: &Item, meta: Value) {
    let mut body = json!({"metadata": meta});
    body["metadata"]["resourceVersion"] = item.obj["metadata"]["resourceVersion"].clone();
    let opts = WriteOptions::internal("mni-garbage-collector");
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let patched = match Patch::parse(PatchType::Merge, &bytes, item.info.custom().is_some()) {
        Ok(doc) => state.patch(&item.target(), &doc, &opts).await.map(drop),
        Err(e) => Err(e),
    };
    match patched {
        // Written since the pass's snapshot: the next pass decides on what is there now.
        Err(e) if e.code == 409 => state.kick_controllers(),
        Err(e) if e.code != 404 => {
            tracing::warn!(error = %e, "garbage collector: patching {}", object::name(&item.obj));
        }
        _ => {}
    }
}

/// Removes `finalizer` from the object as it is now (not as the pass's snapshot saw it: a
/// controller may have written its status since, and a stale precondition would leave the
/// finalizer in place until the next sweep, a minute later).
async fn remove_finalizer(state: &State, item: &Item, finalizer: &str) {
    let uid = item.uid().to_string();
    let name = object::name(&item.obj).to_string();
    let opts = WriteOptions::internal("mni-garbage-collector");
    let change = |current: &Value| {
        if meta_str(current, "uid") != Some(uid.as_str()) {
            // Another object of the same name: nothing of ours to remove.
            return Err(crate::error::ApiError::conflict(
                item.info.group_resource(),
                &name,
                "the object was replaced",
            ));
        }
        let mut next = current.clone();
        let rest: Vec<String> = object::finalizers(current)
            .into_iter()
            .filter(|f| f != finalizer)
            .collect();
        next["metadata"]["finalizers"] = json!(rest);
        Ok(next)
    };
    if let Err(e) = state.update(&item.target(), &opts, false, change).await
        && e.code != 404
        && e.code != 409
    {
        tracing::warn!(error = %e, "garbage collector: removing {finalizer} from {}", object::name(&item.obj));
    }
}

async fn delete(state: &State, item: &Item) {
    let options = json!({"propagationPolicy": "Background", "preconditions": {
        "uid": item.obj["metadata"]["uid"],
        "resourceVersion": item.obj["metadata"]["resourceVersion"],
    }});
    if let Err(e) = state.delete(&item.target(), &options, false, None).await
        && e.code != 404
        && e.code != 409
    {
        tracing::warn!(error = %e, "garbage collector: deleting {}", object::name(&item.obj));
    }
}

/// One garbage-collection pass.
pub(crate) async fn collect(state: &State) -> ApiResult<()> {
    let items = snapshot(state)?;
    let by_uid: BTreeMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.uid(), i))
        .collect();
    let mut dependents: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        for r in item.owner_refs() {
            if let Some(uid) = r["uid"].as_str()
                && let Some((owner_uid, _)) = by_uid.get_key_value(uid)
            {
                dependents.entry(owner_uid).or_default().push(i);
            }
        }
    }
    for owner in &items {
        if meta_str(&owner.obj, "deletionTimestamp").is_none() {
            continue;
        }
        let finalizers = object::finalizers(&owner.obj);
        let deps = dependents.get(owner.uid()).cloned().unwrap_or_default();
        if finalizers.iter().any(|f| f == ORPHAN_FINALIZER) {
            for &d in &deps {
                let dep = &items[d];
                let kept: Vec<Value> = dep
                    .owner_refs()
                    .into_iter()
                    .filter(|r| r["uid"] != owner.uid())
                    .collect();
                patch_meta(state, dep, json!({"ownerReferences": if kept.is_empty() { Value::Null } else { json!(kept) }})).await;
            }
            remove_finalizer(state, owner, ORPHAN_FINALIZER).await;
        } else if finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
            let mut blocking = 0;
            for &d in &deps {
                let dep = &items[d];
                let blocks = dep
                    .owner_refs()
                    .iter()
                    .any(|r| r["uid"] == owner.uid() && r["blockOwnerDeletion"] == true);
                if blocks {
                    blocking += 1;
                }
                if meta_str(&dep.obj, "deletionTimestamp").is_none() {
                    // Dependents go first, in foreground too, so grandchildren block as well.
                    let options = json!({"propagationPolicy": "Foreground"});
                    if let Err(e) = state.delete(&dep.target(), &options, false, None).await
                        && e.code != 404
                    {
                        tracing::warn!(error = %e, "garbage collector: foreground delete");
                    }
                }
            }
            if blocking == 0 {
                remove_finalizer(state, owner, FOREGROUND_FINALIZER).await;
            }
        }
    }
    for stale in &items {
        if stale.owner_refs().is_empty() {
            continue;
        }
        // Earlier steps of this pass may have changed the object (orphaning strips its
        // references): decide on its current state, and delete only that state.
        let key = stale
            .info
            .key(meta_str(&stale.obj, "namespace"), object::name(&stale.obj));
        let Some(kv) = state.stored(&key) else {
            continue;
        };
        let item = &Item {
            info: stale.info.clone(),
            obj: object::to_served(&stale.info, object::from_stored(&kv)?),
        };
        let refs = item.owner_refs();
        if refs.is_empty() || meta_str(&item.obj, "deletionTimestamp").is_some() {
            continue;
        }
        let states: Vec<Owner> = refs
            .iter()
            .map(|r| state.resolve_owner(&item.info, &item.obj, r))
            .collect();
        let absent: BTreeSet<usize> = states
            .iter()
            .enumerate()
            .filter(|(_, s)| **s == Owner::Absent)
            .map(|(i, _)| i)
            .collect();
        if absent.is_empty() {
            continue;
        }
        if states.iter().all(|s| *s != Owner::Present) && !states.contains(&Owner::Unresolvable) {
            delete(state, item).await;
        } else if states.contains(&Owner::Present) {
            let kept: Vec<&Value> = refs
                .iter()
                .enumerate()
                .filter(|(i, _)| !absent.contains(i))
                .map(|(_, r)| r)
                .collect();
            patch_meta(state, item, json!({"ownerReferences": kept})).await;
        }
    }
    Ok(())
}
