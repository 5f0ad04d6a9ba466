//! [`FieldSet`]: a set of paths, stored as a trie, with the FieldsV1 encoding.
//!
//! A path is a *member* of the set when it is owned itself (a leaf field, a list item, a map
//! entry); a node with *children* only exists to reach deeper members. FieldsV1 writes a member
//! as `{}`, a node with children as an object of its children, and a node that is both as an
//! object whose first key is `"."`. [`FieldSet::to_fields_v1`] writes keys in
//! structured-merge-diff's order, so decoding then encoding kube's managedFields is exact.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use crate::path::{Path, PathElement, PathError};

/// The deepest FieldsV1 nesting accepted by [`FieldSet::from_fields_v1`].
pub const MAX_DEPTH: usize = 256;

/// Errors from decoding FieldsV1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldsV1Error {
    /// A node is not a JSON object.
    #[error("{path}: expected an object")]
    NotAnObject {
        /// Where, in kube's path spelling.
        path: String,
    },
    /// A key is not a valid path element.
    #[error("{path}: {source}")]
    BadKey {
        /// Where, in kube's path spelling.
        path: String,
        /// The parse error.
        source: PathError,
    },
    /// The `.` marker maps to something other than `{}`.
    #[error("{path}: the \".\" marker must map to an empty object")]
    BadMarker {
        /// Where, in kube's path spelling.
        path: String,
    },
    /// The set is nested deeper than [`MAX_DEPTH`].
    #[error("{path}: fields are nested too deeply")]
    TooDeep {
        /// Where the limit was hit.
        path: String,
    },
}

/// A set of paths (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the set has no paths.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// The number of paths.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.values().map(FieldSet::len).sum::<usize>()
    }

    /// Adds a path; the empty path is ignored.
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether a path is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The members directly below this node.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The child sets directly below this node.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    /// The paths below `pe`, relative to it (structured-merge-diff's `WithPrefix`).
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    pub(crate) fn insert_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    pub(crate) fn insert_child(&mut self, pe: PathElement, child: FieldSet) {
        if child.is_empty() {
            return;
        }
        match self.children.get_mut(&pe) {
            Some(existing) => *existing = existing.union(&child),
            None => {
                self.children.insert(pe, child);
            }
        }
    }

    /// Every path in the set: members of a node first, then its children, each sorted.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Paths in either set.
    #[must_use]
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            out.insert_child(pe.clone(), child.clone());
        }
        out
    }

    /// Paths in both sets.
    #[must_use]
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if let Some(o) = other.children.get(pe) {
                out.insert_child(pe.clone(), child.intersection(o));
            }
        }
        out
    }

    /// Paths in `self` that are not in `other` (paths below a removed member stay).
    #[must_use]
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            match other.children.get(pe) {
                Some(o) => out.insert_child(pe.clone(), child.difference(o)),
                None => out.insert_child(pe.clone(), child.clone()),
            }
        }
        out
    }

    /// Removes the paths of `other`: [`FieldSet::difference`] in place, which copies nothing
    /// and leaves the parts of `self` that `other` does not reach untouched.
    pub fn subtract(&mut self, other: &FieldSet) {
        if !other.members.is_empty() {
            self.members.retain(|m| !other.members.contains(m));
        }
        for (pe, o) in &other.children {
            if let Some(child) = self.children.get_mut(pe) {
                child.subtract(o);
                if child.is_empty() {
                    self.children.remove(pe);
                }
            }
        }
    }

    /// Paths in `self` that neither are in `other` nor lie below one of its members.
    #[must_use]
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            match other.children.get(pe) {
                Some(o) => out.insert_child(pe.clone(), child.recursive_difference(o)),
                None => out.insert_child(pe.clone(), child.clone()),
            }
        }
        out
    }

    /// Decodes FieldsV1 JSON, e.g. `{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, FieldsV1Error> {
        let mut path = Vec::new();
        let (set, _) = decode(value, &mut path)?;
        Ok(set)
    }

    /// Encodes as FieldsV1 JSON, keys in structured-merge-diff's order.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.encode(false))
    }

    fn encode(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".to_string(), Value::Object(Map::new()));
        }
        let mut keys: BTreeSet<&PathElement> = self.members.iter().collect();
        keys.extend(self.children.keys());
        for pe in keys {
            let value = match self.children.get(pe) {
                Some(child) => child.encode(self.members.contains(pe)),
                None => Map::new(),
            };
            out.insert(pe.fields_v1_key(), Value::Object(value));
        }
        out
    }
}

/// Decodes one node; returns its child set and whether it carried the `.` marker.
fn decode(value: &Value, path: &mut Vec<PathElement>) -> Result<(FieldSet, bool), FieldsV1Error> {
    if path.len() > MAX_DEPTH {
        return Err(FieldsV1Error::TooDeep {
            path: Path(path.clone()).to_string(),
        });
    }
    let Value::Object(map) = value else {
        return Err(FieldsV1Error::NotAnObject {
            path: Path(path.clone()).to_string(),
        });
    };
    let mut set = FieldSet::new();
    let mut marked = false;
    for (key, child) in map {
        if key == "." {
            if child.as_object().is_none_or(|m| !m.is_empty()) {
                return Err(FieldsV1Error::BadMarker {
                    path: Path(path.clone()).to_string(),
                });
            }
            marked = true;
            continue;
        }
        let pe = PathElement::from_fields_v1_key(key).map_err(|source| FieldsV1Error::BadKey {
            path: Path(path.clone()).to_string(),
            source,
        })?;
        path.push(pe.clone());
        let decoded = decode(child, path);
        path.pop();
        let (child_set, child_marked) = decoded?;
        if child_set.is_empty() || child_marked {
            set.members.insert(pe.clone());
        }
        set.insert_child(pe, child_set);
    }
    Ok((set, marked))
}

impl fmt::Display for FieldSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in self.paths() {
            writeln!(f, "{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(v: Value) -> FieldSet {
        FieldSet::from_fields_v1(&v).unwrap_or_default()
    }

    fn check_round_trip(v: Value) {
        let decoded = FieldSet::from_fields_v1(&v);
        assert!(decoded.is_ok(), "{decoded:?}");
        let encoded = decoded.map(|s| s.to_fields_v1()).unwrap_or(Value::Null);
        assert_eq!(
            serde_json::to_string(&encoded).ok(),
            serde_json::to_string(&v).ok()
        );
    }

    #[test]
    fn round_trips() {
        check_round_trip(json!({}));
        check_round_trip(json!({"f:data": {".": {}, "f:a": {}}}));
        check_round_trip(json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}}
        }));
        check_round_trip(json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}}}));
    }

    #[test]
    fn sorts_on_encode() {
        let s = set(json!({"f:b": {}, "f:a": {"f:y": {}, "f:x": {}}}));
        assert_eq!(
            serde_json::to_string(&s.to_fields_v1()).ok(),
            Some(r#"{"f:a":{"f:x":{},"f:y":{}},"f:b":{}}"#.to_string())
        );
    }

    #[test]
    fn algebra() {
        let a = set(json!({"f:a": {}, "f:b": {".": {}, "f:c": {}}}));
        let b = set(json!({"f:b": {}, "f:d": {}}));
        assert_eq!(
            a.union(&b).to_fields_v1(),
            json!({"f:a": {}, "f:b": {".": {}, "f:c": {}}, "f:d": {}})
        );
        assert_eq!(a.intersection(&b).to_fields_v1(), json!({"f:b": {}}));
        assert_eq!(
            a.difference(&b).to_fields_v1(),
            json!({"f:a": {}, "f:b": {"f:c": {}}})
        );
        assert_eq!(
            a.recursive_difference(&b).to_fields_v1(),
            json!({"f:a": {}})
        );
        for other in [&b, &a, &FieldSet::new(), &set(json!({"f:b": {"f:c": {}}}))] {
            let mut in_place = a.clone();
            in_place.subtract(other);
            assert_eq!(in_place, a.difference(other));
        }
        assert_eq!(a.len(), 3);
        let paths: Vec<String> = a.paths().iter().map(ToString::to_string).collect();
        assert_eq!(paths, [".a", ".b", ".b.c"]);
    }

    #[test]
    fn decode_errors() {
        assert!(matches!(
            FieldSet::from_fields_v1(&json!([])),
            Err(FieldsV1Error::NotAnObject { .. })
        ));
        assert!(matches!(
            FieldSet::from_fields_v1(&json!({"f:a": {"x:1": {}}})),
            Err(FieldsV1Error::BadKey { .. })
        ));
        assert!(matches!(
            FieldSet::from_fields_v1(&json!({"f:a": {".": 1}})),
            Err(FieldsV1Error::BadMarker { .. })
        ));
        let mut deep = json!({});
        for _ in 0..300 {
            deep = json!({ "f:a": deep });
        }
        assert!(matches!(
            FieldSet::from_fields_v1(&deep),
            Err(FieldsV1Error::TooDeep { .. })
        ));
    }
}
