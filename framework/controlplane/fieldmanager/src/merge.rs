//! Merging an applied configuration into an object, and comparing two objects.
//!
//! [`merge`] is structured-merge-diff's `Merge`: the applied value wins for scalars and atomic
//! values, granular maps merge key by key and associative lists item by item, with the order
//! rules of `mergingWalker.visitListItems` (items shared with the applied list follow its order,
//! live-only items keep their place). [`compare`] is `Compare`: the paths added, modified and
//! removed between two versions of an object, including list items and map entries that
//! appeared or disappeared as a whole.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::path::PathElement;
use crate::set::FieldSet;
use crate::typed::{ValueError, check_depth, granular_list, granular_map, item_element};
use crate::types::TypeNode;

/// Merges `rhs` (an applied configuration) into `lhs` (the live object).
pub fn merge(lhs: &Value, rhs: &Value, node: &TypeNode) -> Result<Value, ValueError> {
    let mut path = Vec::new();
    merge_at(lhs, rhs, node, &mut path)
}

fn merge_at(
    lhs: &Value,
    rhs: &Value,
    node: &TypeNode,
    path: &mut Vec<PathElement>,
) -> Result<Value, ValueError> {
    check_depth(path)?;
    match (lhs, rhs) {
        (Value::Object(l), Value::Object(r)) if granular_map(node) => {
            let mut out = Map::new();
            for (key, lv) in l {
                let merged = match r.get(key) {
                    Some(rv) => {
                        path.push(PathElement::field(key.as_str()));
                        let m = merge_at(lv, rv, node.child(key).0, path);
                        path.pop();
                        m?
                    }
                    None => lv.clone(),
                };
                out.insert(key.clone(), merged);
            }
            for (key, rv) in r {
                if !l.contains_key(key) {
                    out.insert(key.clone(), rv.clone());
                }
            }
            Ok(Value::Object(out))
        }
        (Value::Object(l), Value::Null) if granular_map(node) && !l.is_empty() => Ok(lhs.clone()),
        (Value::Array(l), Value::Array(r)) if granular_list(node) => {
            merge_lists(l, r, node, path).map(Value::Array)
        }
        (Value::Array(l), Value::Null) if granular_list(node) && !l.is_empty() => Ok(lhs.clone()),
        _ => Ok(rhs.clone()),
    }
}

/// Path elements of a list in order, and the item of each element (None when duplicated).
type Indexed<'a> = (Vec<PathElement>, BTreeMap<PathElement, Option<&'a Value>>);

fn index_items<'a>(
    items: &'a [Value],
    node: &TypeNode,
    path: &[PathElement],
) -> Result<Indexed<'a>, ValueError> {
    let mut order = Vec::with_capacity(items.len());
    let mut observed: BTreeMap<PathElement, Option<&Value>> = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        let pe = item_element(node, item, index, path)?;
        match observed.get_mut(&pe) {
            Some(slot) => *slot = None,
            None => {
                observed.insert(pe.clone(), Some(item));
            }
        }
        order.push(pe);
    }
    Ok((order, observed))
}

fn merge_lists(
    l: &[Value],
    r: &[Value],
    node: &TypeNode,
    path: &mut Vec<PathElement>,
) -> Result<Vec<Value>, ValueError> {
    let (lhs_order, lhs_seen) = index_items(l, node, path)?;
    let (rhs_order, rhs_seen) = index_items(r, node, path)?;
    let mut shared = rhs_order
        .iter()
        .filter(|pe| lhs_seen.contains_key(*pe))
        .cloned()
        .collect::<Vec<_>>()
        .into_iter();
    let mut next_shared = shared.next();
    let mut merged_rhs: BTreeSet<PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(l.len().max(r.len()));
    let (ll, rl) = (lhs_order.len(), rhs_order.len());
    let (mut li, mut ri) = (0, 0);
    let mut budget = 2 * (ll + rl) + 2;
    let merge_item = |pe: &PathElement, path: &mut Vec<PathElement>| {
        let lchild = lhs_seen.get(pe).copied().flatten();
        let rchild = rhs_seen.get(pe).copied().flatten();
        match (lchild, rchild) {
            (Some(lv), Some(rv)) => {
                path.push(pe.clone());
                let m = merge_at(lv, rv, node.item(), path);
                path.pop();
                m
            }
            (_, Some(rv)) => Ok(rv.clone()),
            (Some(lv), None) => Ok(lv.clone()),
            (None, None) => Ok(Value::Null),
        }
    };
    while (li < ll || ri < rl) && budget > 0 {
        budget -= 1;
        if li < ll && ri < rl {
            let pe = &lhs_order[li];
            if *pe == rhs_order[ri] {
                merged_rhs.insert(pe.clone());
                out.push(merge_item(pe, path)?);
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if rhs_seen.contains_key(pe) && next_shared.as_ref().is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < ll {
            let pe = &lhs_order[li];
            if !rhs_seen.contains_key(pe) {
                if let Some(item) = l.get(li) {
                    out.push(item.clone());
                }
                li += 1;
                continue;
            }
            if merged_rhs.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < rl {
            let pe = &rhs_order[ri];
            merged_rhs.insert(pe.clone());
            out.push(merge_item(pe, path)?);
            ri += 1;
            if next_shared.as_ref() == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    Ok(out)
}

/// The difference between two versions of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Paths only in the new object (leaves, and list items or map entries new as a whole).
    pub added: FieldSet,
    /// Leaves present in both with different values.
    pub modified: FieldSet,
    /// Paths only in the old object.
    pub removed: FieldSet,
}

impl Comparison {
    /// Whether nothing changed.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// Drops paths at or below `fields` (structured-merge-diff's `ExcludeFields`).
    #[must_use]
    pub fn exclude(&self, fields: &FieldSet) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(fields),
            modified: self.modified.recursive_difference(fields),
            removed: self.removed.recursive_difference(fields),
        }
    }

    /// `added` and `modified` together: what a writer changed.
    pub fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

/// Compares an old and a new version of an object (`metadata.managedFields` is not looked at).
pub fn compare(old: &Value, new: &Value, node: &TypeNode) -> Result<Comparison, ValueError> {
    compare_with_zero(old, new, None, node)
}

/// [`compare`] with both objects seen through `zero` (the kind's zero object): where an object
/// lacks a field that `zero` holds as `null` or as an object, it compares as if it held that
/// skeleton (see [`overlay`]). Nothing is copied to get there.
pub(crate) fn compare_with_zero(
    old: &Value,
    new: &Value,
    zero: Option<&Value>,
    node: &TypeNode,
) -> Result<Comparison, ValueError> {
    let mut c = Comparison::default();
    let mut path = Vec::new();
    compare_at(
        Side::new(old, zero),
        Side::new(new, zero),
        node,
        &mut path,
        &mut c,
    )?;
    Ok(c)
}

/// `value` with the parts of the kind's zero object it lacks (null fields, empty structs)
/// filled in: a Go object always holds its non-pointer structs. Borrowed when nothing is
/// missing; otherwise only the maps on the way to a missing part are copied, each once.
pub(crate) fn overlay<'a>(value: &'a Value, zero: &Value) -> Cow<'a, Value> {
    let (Value::Object(v), Value::Object(z)) = (value, zero) else {
        return Cow::Borrowed(value);
    };
    let mut out: Option<Map<String, Value>> = None;
    for (key, zv) in z {
        let filled = match v.get(key) {
            Some(existing) if existing.is_object() && zv.is_object() => {
                match overlay(existing, zv) {
                    Cow::Owned(o) => Some(o),
                    Cow::Borrowed(_) => None,
                }
            }
            Some(_) => None,
            None => skeleton(zv),
        };
        if let Some(filled) = filled {
            out.get_or_insert_with(|| v.clone())
                .insert(key.clone(), filled);
        }
    }
    match out {
        Some(map) => Cow::Owned(Value::Object(map)),
        None => Cow::Borrowed(value),
    }
}

/// The null fields and empty structs of a zero value.
fn skeleton(zero: &Value) -> Option<Value> {
    match zero {
        Value::Null => Some(Value::Null),
        Value::Object(z) => Some(Value::Object(
            z.iter()
                .filter_map(|(k, v)| skeleton(v).map(|s| (k.clone(), s)))
                .collect(),
        )),
        _ => None,
    }
}

static NULL: Value = Value::Null;
static EMPTY: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| Value::Object(Map::new()));

/// One side of a comparison: a value (`None`: absent) and, when both are objects, the zero
/// object at the same place, whose skeleton fills in what the value lacks.
#[derive(Clone, Copy)]
struct Side<'a> {
    value: Option<&'a Value>,
    zero: Option<&'a Value>,
}

impl<'a> Side<'a> {
    fn new(value: &'a Value, zero: Option<&'a Value>) -> Self {
        let zero = match (value, zero) {
            (Value::Object(_), Some(z @ Value::Object(_))) => Some(z),
            _ => None,
        };
        Self {
            value: Some(value),
            zero,
        }
    }

    fn plain(value: Option<&'a Value>) -> Self {
        Self { value, zero: None }
    }

    /// The field `key` of this side (an object), filled from the zero object.
    fn child(self, key: &str) -> Self {
        let Some(Value::Object(map)) = self.value else {
            return Self::plain(None);
        };
        let zero = self.zero.and_then(|z| z.get(key));
        match (map.get(key), zero) {
            (Some(v), zero) => Self::new(v, zero),
            (None, Some(Value::Null)) => Self::plain(Some(&NULL)),
            (None, Some(z @ Value::Object(_))) => Self::new(&EMPTY, Some(z)),
            (None, _) => Self::plain(None),
        }
    }

    /// The fields the zero object adds to this side.
    fn filled_keys(self) -> impl Iterator<Item = &'a String> {
        let map = self.value.and_then(Value::as_object);
        let zero = self.zero.and_then(Value::as_object);
        zero.into_iter().flatten().filter_map(move |(k, z)| {
            (matches!(z, Value::Null | Value::Object(_)) && map.is_some_and(|m| !m.contains_key(k)))
                .then_some(k)
        })
    }

    fn is(self, object: bool) -> bool {
        matches!(
            (self.value, object),
            (Some(Value::Object(_)), true) | (Some(Value::Array(_)), false)
        )
    }

    /// Whether this side is absent, null or an empty object (`want_object`) or list; `None`
    /// when it is something else.
    fn empty_or(self, want_object: bool) -> Option<bool> {
        match self.value {
            None | Some(Value::Null) => Some(true),
            Some(Value::Object(m)) if want_object => {
                Some(m.is_empty() && self.filled_keys().next().is_none())
            }
            Some(Value::Array(a)) if !want_object => Some(a.is_empty()),
            _ => None,
        }
    }

    /// The value as compared, the zero object's skeleton filled in.
    fn filled(self) -> Option<Cow<'a, Value>> {
        let value = self.value?;
        Some(match self.zero {
            Some(zero) => overlay(value, zero),
            None => Cow::Borrowed(value),
        })
    }
}

/// Whether `path` is `metadata` (of the object compared).
fn is_metadata(path: &[PathElement]) -> bool {
    matches!(path, [PathElement::Field(name)] if name == "metadata")
}

fn compare_at(
    lhs: Side<'_>,
    rhs: Side<'_>,
    node: &TypeNode,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) -> Result<(), ValueError> {
    check_depth(path)?;
    let object = lhs.is(true) || rhs.is(true);
    let array = lhs.is(false) || rhs.is(false);
    let container = if object && granular_map(node) {
        lhs.empty_or(true)
            .zip(rhs.empty_or(true))
            .map(|(a, b)| (true, a && b))
    } else if array && granular_list(node) {
        lhs.empty_or(false)
            .zip(rhs.empty_or(false))
            .map(|(a, b)| (false, a && b))
    } else {
        None
    };
    let Some((is_object, false)) = container else {
        let (l, r) = (lhs.filled(), rhs.filled());
        leaf(l.as_deref(), r.as_deref(), path, c);
        return Ok(());
    };
    if is_object {
        let empty = Map::new();
        let l = lhs.value.and_then(Value::as_object).unwrap_or(&empty);
        let r = rhs.value.and_then(Value::as_object).unwrap_or(&empty);
        // `metadata.managedFields` is bookkeeping about fields, never a field itself.
        let at_metadata = is_metadata(path);
        let skip = |key: &str| at_metadata && key == "managedFields";
        let lhs_keys = l.keys().chain(lhs.filled_keys());
        for key in lhs_keys {
            if skip(key) {
                continue;
            }
            path.push(PathElement::field(key.as_str()));
            let res = compare_at(lhs.child(key), rhs.child(key), node.child(key).0, path, c);
            path.pop();
            res?;
        }
        // Keys only the right side has (or fills in): compared against an absent left side.
        for key in r.keys().chain(rhs.filled_keys()) {
            let left = lhs.child(key);
            if left.value.is_none() && !skip(key) {
                path.push(PathElement::field(key.as_str()));
                let res = compare_at(left, rhs.child(key), node.child(key).0, path, c);
                path.pop();
                res?;
            }
        }
    } else {
        let empty = Vec::new();
        let l = lhs.value.and_then(Value::as_array).unwrap_or(&empty);
        let r = rhs.value.and_then(Value::as_array).unwrap_or(&empty);
        compare_lists(l, r, node, path, c)?;
    }
    if !path.is_empty() {
        if lhs.value.is_none() {
            c.added.insert(path);
        } else if rhs.value.is_none() {
            c.removed.insert(path);
        }
    }
    Ok(())
}

fn leaf(lhs: Option<&Value>, rhs: Option<&Value>, path: &[PathElement], c: &mut Comparison) {
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(l), Some(r)) if l != r => c.modified.insert(path),
        _ => {}
    }
}

fn compare_lists(
    l: &[Value],
    r: &[Value],
    node: &TypeNode,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) -> Result<(), ValueError> {
    let mut order: Vec<PathElement> = Vec::new();
    let mut items: BTreeMap<PathElement, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
    for (side, list) in [(0, l), (1, r)] {
        for (index, item) in list.iter().enumerate() {
            let pe = item_element(node, item, index, path)?;
            let entry = items.entry(pe.clone()).or_insert_with(|| {
                order.push(pe);
                (Vec::new(), Vec::new())
            });
            if side == 0 {
                entry.0.push(item);
            } else {
                entry.1.push(item);
            }
        }
    }
    for pe in order {
        let Some((ls, rs)) = items.get(&pe) else {
            continue;
        };
        path.push(pe);
        let res = if ls.len() <= 1 && rs.len() <= 1 {
            compare_at(
                Side::plain(ls.first().copied()),
                Side::plain(rs.first().copied()),
                node.item(),
                path,
                c,
            )
        } else {
            if ls.is_empty() {
                c.added.insert(path);
            } else if rs.is_empty() {
                c.removed.insert(path);
            } else if ls != rs {
                c.modified.insert(path);
            }
            Ok(())
        };
        path.pop();
        res?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeInfo;
    use serde_json::json;

    fn pod() -> TypeInfo {
        crate::builtin::builtin("", "Pod").unwrap_or_default()
    }

    /// Comparing through the zero object gives what comparing filled-in copies gives.
    #[test]
    fn comparing_with_the_zero_object_equals_comparing_filled_copies() {
        let deployment = crate::builtin::builtin("apps", "Deployment").unwrap_or_default();
        let zero = deployment.empty_object();
        let spec = json!({"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}});
        let objects = [
            json!({}),
            json!({"metadata": {"name": "d"}}),
            json!({"metadata": {"name": "d", "labels": null}, "spec": spec}),
            json!({"metadata": {"name": "d", "managedFields": [{"manager": "m"}]}, "spec": spec,
                   "status": {"replicas": 1}}),
            json!({"metadata": {"name": "d"}, "spec": spec, "status": {"replicas": 1,
                   "readyReplicas": 1, "conditions": [{"type": "Available", "status": "True"}]}}),
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 2, "template": null},
                   "status": null}),
            json!({"metadata": {"name": "d"}, "spec": {"strategy": {"type": "Recreate"}},
                   "status": {}}),
            json!({"metadata": "odd", "spec": [], "status": 3}),
        ];
        for old in &objects {
            for new in &objects {
                let through_zero = compare_with_zero(old, new, Some(zero), deployment.root());
                let filled = compare(&overlay(old, zero), &overlay(new, zero), deployment.root());
                assert_eq!(through_zero, filled, "{old} -> {new}");
            }
        }
    }

    fn check_merge(live: Value, applied: Value, expected: Value) {
        assert_eq!(merge(&live, &applied, pod().root()), Ok(expected));
    }

    #[test]
    fn merges() {
        check_merge(
            json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}}),
            json!({"spec": {"containers": [{"name": "b", "image": "3"}, {"name": "c"}]}}),
            json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "3"}, {"name": "c"}]}}),
        );
        check_merge(
            json!({"spec": {"tolerations": [{"key": "a"}], "x": 1}}),
            json!({"spec": {"tolerations": [{"key": "b"}]}}),
            json!({"spec": {"tolerations": [{"key": "b"}], "x": 1}}),
        );
        check_merge(
            json!({"metadata": {"finalizers": ["a", "b"]}}),
            json!({"metadata": {"finalizers": ["c", "a"]}}),
            json!({"metadata": {"finalizers": ["c", "a", "b"]}}),
        );
        check_merge(
            json!({"metadata": {"labels": {"a": "1"}}}),
            json!({"metadata": {"labels": null}}),
            json!({"metadata": {"labels": {"a": "1"}}}),
        );
        check_merge(
            json!({"spec": {"x": 1}}),
            json!({"spec": {"x": null}}),
            json!({"spec": {"x": null}}),
        );
        // Reordering shared items follows the applied order.
        check_merge(
            json!({"spec": {"volumes": [{"name": "a"}, {"name": "x"}, {"name": "b"}]}}),
            json!({"spec": {"volumes": [{"name": "b"}, {"name": "a"}]}}),
            json!({"spec": {"volumes": [{"name": "x"}, {"name": "b"}, {"name": "a"}]}}),
        );
    }

    #[test]
    fn compares() {
        let p = pod();
        let old = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "a", "image": "1"}]}});
        let new = json!({"metadata": {"labels": {"a": "2", "b": "1"}},
            "spec": {"containers": [{"name": "b", "image": "1"}]}});
        let c = compare(&old, &new, p.root()).unwrap_or_default();
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:metadata": {"f:labels": {"f:b": {}}}, "f:spec": {"f:containers": {
                "k:{\"name\":\"b\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
        );
        assert_eq!(
            c.modified.to_fields_v1(),
            json!({"f:metadata": {"f:labels": {"f:a": {}}}})
        );
        assert_eq!(
            c.removed.to_fields_v1(),
            json!({"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
        );
        assert!(compare(&old, &old, p.root()).is_ok_and(|c| c.is_same()));
        // A map new as a whole is itself added; one that was null is not.
        let c = compare(
            &json!({"a": null}),
            &json!({"a": {"x": 1}, "b": {"y": 1}}),
            p.root(),
        )
        .unwrap_or_default();
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:a": {"f:x": {}}, "f:b": {".": {}, "f:y": {}}})
        );
    }
}
