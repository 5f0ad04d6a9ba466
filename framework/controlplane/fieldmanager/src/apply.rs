//! Server-side apply and update bookkeeping: kube-apiserver's field manager stack over
//! structured-merge-diff's `Updater`.
//!
//! [`apply`] merges an applied configuration into the live object, prunes what the manager
//! applied before but no longer applies (unless someone else owns it), detects conflicts with
//! other managers and records ownership. [`update`] records ownership for creates, updates and
//! non-apply patches. Both reproduce the layers kube wraps around the updater: stripping of
//! identity metadata from sets, reset fields of the subresource, `before-first-apply`, entry
//! times, the cap of ten update managers and the order entries are written in.

use serde_json::{Map, Value};

use crate::conflict::{ApplyError, Conflict, gvk_string};

use crate::last_applied::{KUBECTL_MANAGER, allowed_conflicts, sync_last_applied};
use crate::managed::{
    ManagedFieldsEntry, ManagerKey, Managers, Operation, Owned, cap_update_managers, decode,
    encode, set_managed_fields, strip_managed_fields,
};
use crate::merge::{Comparison, compare_with_zero, merge};
use crate::set::FieldSet;
use crate::typed::{ValueError, ensure_named_fields, remove_items, to_field_set};
use crate::types::{TypeInfo, field_path};

/// The manager kube records existing fields under when an object without managed fields is
/// first applied to.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// The result of [`apply`].
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The new object, with `metadata.managedFields` set to `managed`.
    pub object: Value,
    /// The new managed fields.
    pub managed: Vec<ManagedFieldsEntry>,
    /// Whether the object (apart from managedFields) differs from the live one.
    pub changed: bool,
}

/// The field set of an object (every leaf, list item and map entry).
pub fn fields_of(obj: &Value, types: &TypeInfo) -> Result<FieldSet, ValueError> {
    to_field_set(obj, types.root(), false)
}

/// The identity fields kube never records (`stripMetaManager`).
fn strip_set() -> &'static FieldSet {
    static SET: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(|| {
        let mut set = FieldSet::new();
        for p in [
            "apiVersion",
            "kind",
            "metadata",
            "metadata.name",
            "metadata.namespace",
            "metadata.creationTimestamp",
            "metadata.selfLink",
            "metadata.uid",
            "metadata.clusterName",
            "metadata.generation",
            "metadata.managedFields",
            "metadata.resourceVersion",
        ] {
            set.insert(&field_path(p));
        }
        set
    });
    &SET
}

/// Identity metadata a prune must never drop (the server would reject the write).
const KEPT_METADATA: [&str; 8] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

fn without_managed_fields(obj: &Value) -> Value {
    let mut o = obj.clone();
    strip_managed_fields(&mut o);
    o
}

/// Server-side apply of `applied` by `manager` (see the module documentation).
///
/// `live` is the stored object (None to create), `managed` its decoded managed fields, `now`
/// the RFC 3339 time to stamp, `api_version` the endpoint's version and `subresource` the
/// subresource written through.
///
/// Fields in `types.reset_fields(subresource)` (e.g. `status` through the main resource) are
/// neither owned nor checked for conflicts; like kube's strategies, the caller restores them
/// from the live object before storing. `metadata.managedFields` of `live` is ignored in
/// favour of `managed`.
///
/// For the manager `kubectl`, conflicts on fields whose live value still matches the
/// client-side `last-applied-configuration` annotation are forced, and the annotation, when
/// present, is rewritten to the applied configuration (see [`crate::last_applied`]).
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    managed: &[ManagedFieldsEntry],
    force: bool,
    types: &TypeInfo,
    now: &str,
    api_version: &str,
    subresource: Option<&str>,
) -> Result<Applied, ApplyError> {
    let run = |force| {
        apply_once(
            live,
            applied,
            manager,
            managed,
            force,
            types,
            now,
            api_version,
            subresource,
        )
    };
    let result = match (run(force), live) {
        (Err(ApplyError::Conflicts(conflicts)), Some(live)) if manager == KUBECTL_MANAGER => {
            match allowed_conflicts(live, types, api_version) {
                Some(allowed) => {
                    let remaining: Vec<Conflict> = conflicts
                        .iter()
                        .filter(|c| !allowed.contains(&c.path))
                        .cloned()
                        .collect();
                    if remaining.is_empty() {
                        run(true)
                    } else {
                        Err(ApplyError::Conflicts(remaining))
                    }
                }
                None => Err(ApplyError::Conflicts(conflicts)),
            }
        }
        (result, _) => result,
    };
    let mut result = result?;
    if manager == KUBECTL_MANAGER {
        sync_last_applied(&mut result.object, applied);
        let live_obj = live.map(without_managed_fields);
        result.changed = live_obj.as_ref() != Some(&without_managed_fields(&result.object));
    }
    Ok(result)
}

#[allow(clippy::too_many_arguments)]
fn apply_once(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    managed: &[ManagedFieldsEntry],
    force: bool,
    types: &TypeInfo,
    now: &str,
    api_version: &str,
    subresource: Option<&str>,
) -> Result<Applied, ApplyError> {
    let Some(config) = applied.as_object() else {
        return Err(ApplyError::NotAnObject);
    };
    let gvk = gvk_string(applied);
    let str_of = |o: &Map<String, Value>, k: &str| {
        o.get(k).and_then(Value::as_str).unwrap_or("").to_string()
    };
    let (config_version, config_kind) = (str_of(config, "apiVersion"), str_of(config, "kind"));
    let live_kind = live
        .and_then(Value::as_object)
        .map(|l| str_of(l, "kind"))
        .unwrap_or_default();
    if config_version.is_empty()
        || config_kind.is_empty()
        || config_version != api_version
        || (!live_kind.is_empty() && live_kind != config_kind)
    {
        return Err(ApplyError::InvalidObjectType(gvk));
    }
    if config
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .is_some_and(|f| !f.is_null())
    {
        return Err(ApplyError::ManagedFieldsSet);
    }
    let root = types.root();
    let invalid_patch = |source| ApplyError::InvalidPatch {
        gvk: gvk.clone(),
        source,
    };
    let invalid_object = |source| ApplyError::InvalidObject {
        gvk: gvk.clone(),
        source,
    };
    let applied_set = to_field_set(applied, root, true).map_err(invalid_patch)?;
    let live_obj = live
        .map(without_managed_fields)
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut managers = decode(managed);
    if managers.is_empty() && live.is_some() {
        let key = ManagerKey::new(
            BEFORE_FIRST_APPLY,
            Operation::Update,
            api_version,
            subresource,
        );
        record_update(
            &mut managers,
            types.empty_object(),
            &live_obj,
            key,
            types,
            now,
            subresource,
        )
        .map_err(invalid_object)?;
    }

    let ignored = types.reset_fields(subresource);
    let key = ManagerKey::new(manager, Operation::Apply, api_version, subresource);
    let merged = merge(&live_obj, applied, root).map_err(invalid_object)?;
    let previous = managers.get(&key).cloned();
    managers.insert(
        key.clone(),
        Owned {
            set: applied_set.recursive_difference(&ignored),
            api_version: api_version.to_string(),
            time: previous.as_ref().and_then(|p| p.time.clone()),
        },
    );
    let last = previous.map(|p| p.set).unwrap_or_default();
    let new_obj = prune(&merged, &managers, &last, types).map_err(invalid_object)?;
    let cmp = compare_typed(&live_obj, &new_obj, types)
        .map_err(invalid_object)?
        .exclude(&ignored);
    let changed_fields = cmp.changed();
    let mut conflicts = Vec::new();
    for (other, owned) in &managers {
        if *other == key {
            continue;
        }
        for path in owned.set.intersection(&changed_fields).paths() {
            conflicts.push(Conflict {
                manager: other.manager.clone(),
                operation: other.operation,
                api_version: other.api_version.clone(),
                subresource: (!other.subresource.is_empty()).then(|| other.subresource.clone()),
                path: path.to_string(),
            });
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(ApplyError::Conflicts(conflicts));
    }
    for (other, owned) in managers.iter_mut() {
        if *other != key {
            owned.set = owned
                .set
                .difference(&changed_fields)
                .difference(&cmp.removed);
        }
    }
    let changed = new_obj != live_obj;
    if let Some(owned) = managers.get_mut(&key) {
        owned.set.subtract(strip_set());
        if changed {
            owned.time = Some(now.to_string());
        }
    }
    managers.retain(|_, owned| !owned.set.is_empty());
    cap_update_managers(&mut managers);
    let entries = encode(&managers);
    let mut object = new_obj;
    set_managed_fields(&mut object, &entries);
    Ok(Applied {
        object,
        managed: entries,
        changed,
    })
}

/// structured-merge-diff's `prune`: removes what the applier owned last time and no longer
/// applies, unless another manager owns it, keeping anything the applier never owned.
fn prune(
    merged: &Value,
    managers: &Managers,
    last: &FieldSet,
    types: &TypeInfo,
) -> Result<Value, ValueError> {
    if last.is_empty() {
        return Ok(merged.clone());
    }
    let root = types.root();
    let last = ensure_named_fields(last, root);
    let pruned = remove_items(merged, &last, root);
    let managed = managers
        .values()
        .fold(FieldSet::new(), |acc, o| acc.union(&o.set));
    let merged_set = ensure_named_fields(&to_field_set(merged, root, false)?, root);
    let pruned_set = ensure_named_fields(&to_field_set(&pruned, root, false)?, root);
    let unowned = merged_set.difference(&pruned_set.union(&ensure_named_fields(&managed, root)));
    let pruned = remove_items(merged, &unowned, root);
    let pruned_set = ensure_named_fields(&to_field_set(&pruned, root, false)?, root);
    let mut out = remove_items(
        merged,
        &merged_set.difference(&pruned_set).intersection(&last),
        root,
    );
    restore_identity(merged, &mut out);
    Ok(out)
}

fn restore_identity(merged: &Value, out: &mut Value) {
    let Some(meta) = merged.get("metadata").and_then(Value::as_object) else {
        return;
    };
    let Some(root) = out.as_object_mut() else {
        return;
    };
    for field in KEPT_METADATA {
        let Some(v) = meta.get(field) else {
            continue;
        };
        let target = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = target
            && !m.contains_key(field)
        {
            m.insert(field.to_string(), v.clone());
        }
    }
}

/// Compares like kube compares typed objects: a Go object always holds its non-pointer
/// structs (and non-omitempty lists as null), so both sides are seen with the zero object's
/// skeleton and a `status` written for the first time is not "added" as a whole.
fn compare_typed(old: &Value, new: &Value, types: &TypeInfo) -> Result<Comparison, ValueError> {
    compare_with_zero(old, new, Some(types.empty_object()), types.root())
}

/// kube's update path below the cap: `current-operation` takes what changed from everyone,
/// then is folded into the manager's entry, whose time moves only if it took something.
fn record_update(
    managers: &mut Managers,
    old: &Value,
    new: &Value,
    key: ManagerKey,
    types: &TypeInfo,
    now: &str,
    subresource: Option<&str>,
) -> Result<(), ValueError> {
    let ignored = types.reset_fields(subresource);
    let cmp = compare_typed(old, new, types)?.exclude(&ignored);
    let changed = cmp.changed();
    for owned in managers.values_mut() {
        owned.set.subtract(&changed);
        owned.set.subtract(&cmp.removed);
    }
    managers.retain(|_, owned| !owned.set.is_empty());
    let current = changed
        .difference(&cmp.removed)
        .recursive_difference(&ignored)
        .difference(strip_set());
    if current.is_empty() {
        return Ok(());
    }
    let api_version = key.api_version.clone();
    let set = match managers.get(&key) {
        Some(previous) => current.union(&previous.set),
        None => current,
    };
    managers.insert(
        key,
        Owned {
            set,
            api_version,
            time: Some(now.to_string()),
        },
    );
    Ok(())
}

/// Managed fields after a create, update or non-apply patch by `manager` (operation Update).
/// On an object that does not fit its type this returns no entries, as kube's
/// `UpdateNoErrors` drops managedFields; [`try_update`] reports the error instead.
///
/// `old` is the stored object (None for a create, compared against the kind's zero object),
/// `managed` the entries to start from (see [`crate::managed_fields_for_update`]).
#[allow(clippy::too_many_arguments)]
pub fn update(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    managed: &[ManagedFieldsEntry],
    types: &TypeInfo,
    now: &str,
    api_version: &str,
    subresource: Option<&str>,
) -> Vec<ManagedFieldsEntry> {
    try_update(
        old,
        new,
        manager,
        managed,
        types,
        now,
        api_version,
        subresource,
    )
    .unwrap_or_default()
}

/// [`update`], reporting objects that do not fit their type.
#[allow(clippy::too_many_arguments)]
pub fn try_update(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    managed: &[ManagedFieldsEntry],
    types: &TypeInfo,
    now: &str,
    api_version: &str,
    subresource: Option<&str>,
) -> Result<Vec<ManagedFieldsEntry>, ApplyError> {
    // The comparison skips `metadata.managedFields`: no need to copy the objects without it.
    let old_obj = old.unwrap_or_else(|| types.empty_object());
    let mut managers = decode(managed);
    let key = ManagerKey::new(manager, Operation::Update, api_version, subresource);
    record_update(&mut managers, old_obj, new, key, types, now, subresource).map_err(|source| {
        ApplyError::InvalidObject {
            gvk: gvk_string(new),
            source,
        }
    })?;
    cap_update_managers(&mut managers);
    Ok(encode(&managers))
}
