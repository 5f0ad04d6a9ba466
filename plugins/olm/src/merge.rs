//! Three-way merges that keep what a user edited in a generated bundle.
//!
//! `mni-scaffold upgrade` merges whole files line by line (`diffy`); a CSV is better merged as a
//! tree, so that a description the user rewrote and a CRD the generator added both land even
//! when they sit on neighbouring lines. [`merge_values`] merges base → ours (the user's file)
//! and base → theirs (the new generation) per map key; lists of maps with a `name` (owned CRDs,
//! descriptors, deployments) per name, and lists of scalars (keywords) as sets. Where both
//! changed one value differently, the user's value wins and the path is reported.
//! [`merge_text`] is the line merge for the other files.

use serde_json::{Map, Value};

/// Merges `ours` and `theirs`, both derived from `base`; returns the result and the paths where
/// both sides changed a value differently (the user's value was kept).
pub fn merge_values(base: &Value, ours: &Value, theirs: &Value) -> (Value, Vec<String>) {
    let mut conflicts = Vec::new();
    let merged = merge_at("", base, ours, theirs, &mut conflicts);
    (merged, conflicts)
}

fn merge_at(
    path: &str,
    base: &Value,
    ours: &Value,
    theirs: &Value,
    conflicts: &mut Vec<String>,
) -> Value {
    if ours == base {
        return theirs.clone();
    }
    if theirs == base || ours == theirs {
        return ours.clone();
    }
    match (base, ours, theirs) {
        (Value::Object(b), Value::Object(o), Value::Object(t)) => {
            Value::Object(merge_maps(path, b, o, t, conflicts))
        }
        (Value::Array(b), Value::Array(o), Value::Array(t)) => {
            Value::Array(merge_lists(path, b, o, t, conflicts))
        }
        // Added by both, differently, where there was nothing (or something else): maps and
        // lists still merge against an empty base.
        (_, Value::Object(o), Value::Object(t)) => {
            Value::Object(merge_maps(path, &Map::new(), o, t, conflicts))
        }
        _ => {
            conflicts.push(if path.is_empty() {
                ".".into()
            } else {
                path.to_owned()
            });
            ours.clone()
        }
    }
}

fn merge_maps(
    path: &str,
    base: &Map<String, Value>,
    ours: &Map<String, Value>,
    theirs: &Map<String, Value>,
    conflicts: &mut Vec<String>,
) -> Map<String, Value> {
    let mut out = Map::new();
    // Ours' order first (the user may have reordered), then keys only theirs has.
    let keys: Vec<&String> = ours
        .keys()
        .chain(theirs.keys().filter(|k| !ours.contains_key(*k)))
        .chain(
            base.keys()
                .filter(|k| !ours.contains_key(*k) && !theirs.contains_key(*k)),
        )
        .collect();
    for key in keys {
        let sub = format!("{path}.{key}");
        let (b, o, t) = (base.get(key), ours.get(key), theirs.get(key));
        let merged = match (b, o, t) {
            (_, Some(o), Some(t)) => {
                Some(merge_at(&sub, b.unwrap_or(&Value::Null), o, t, conflicts))
            }
            // Removed by the user: stays removed unless the generator changed it.
            (Some(b), None, Some(t)) => (b != t).then(|| t.clone()),
            (None, None, Some(t)) => Some(t.clone()),
            // Removed by the generator: goes, unless the user changed it.
            (Some(b), Some(o), None) => (b != o).then(|| o.clone()),
            (None, Some(o), None) => Some(o.clone()),
            (_, None, None) => None,
        };
        if let Some(v) = merged {
            out.insert(key.clone(), v);
        }
    }
    out
}

/// The identity of a list item: its `name` (or `type`, or `path`) for maps, itself for scalars.
fn identity(v: &Value) -> Option<Value> {
    match v {
        Value::Object(m) => ["name", "path", "type"]
            .iter()
            .find_map(|k| m.get(*k).filter(|v| v.is_string()))
            .map(|id| Value::String(format!("{id}"))),
        Value::Array(_) | Value::Null => None,
        scalar => Some(scalar.clone()),
    }
}

fn merge_lists(
    path: &str,
    base: &[Value],
    ours: &[Value],
    theirs: &[Value],
    conflicts: &mut Vec<String>,
) -> Vec<Value> {
    let ids = |l: &[Value]| l.iter().map(identity).collect::<Option<Vec<_>>>();
    let (Some(bi), Some(oi), Some(ti)) = (ids(base), ids(ours), ids(theirs)) else {
        conflicts.push(path.to_owned());
        return ours.to_vec();
    };
    let find = |ids: &[Value], id: &Value| ids.iter().position(|i| i == id);
    let mut out = Vec::new();
    // The user's items, in the user's order, merged with the generator's version of each.
    for (o, id) in ours.iter().zip(&oi) {
        let b = find(&bi, id).map(|i| &base[i]);
        match find(&ti, id).map(|i| &theirs[i]) {
            Some(t) => out.push(merge_at(
                &format!("{path}[{id}]"),
                b.unwrap_or(&Value::Null),
                o,
                t,
                conflicts,
            )),
            // Dropped by the generator: goes unless the user added or changed it.
            None if b.is_some_and(|b| b == o) => {}
            None => out.push(o.clone()),
        }
    }
    // New items of the generator that the user did not remove.
    for (t, id) in theirs.iter().zip(&ti) {
        if find(&oi, id).is_none() && find(&bi, id).is_none() {
            out.push(t.clone());
        }
    }
    out
}

/// Line-merges text files; `Err` carries the text with conflict markers.
pub fn merge_text(base: &str, ours: &str, theirs: &str) -> Result<String, String> {
    if ours == base {
        return Ok(theirs.to_owned());
    }
    diffy::merge(base, ours, theirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_user_edit_and_a_new_generated_item_both_land() {
        let base = json!({"spec": {"description": "gen", "keywords": ["a"], "owned": [{"name": "x", "kind": "X"}], "version": "0.1.0"}});
        let ours = json!({"spec": {"description": "mine", "keywords": ["a", "mine"], "owned": [{"name": "x", "kind": "X", "displayName": "Ex"}], "version": "0.1.0"}});
        let theirs = json!({"spec": {"description": "gen", "keywords": ["a"], "owned": [{"name": "x", "kind": "X"}, {"name": "y", "kind": "Y"}], "version": "0.2.0"}});
        let (merged, conflicts) = merge_values(&base, &ours, &theirs);
        assert!(conflicts.is_empty(), "{conflicts:?}");
        assert_eq!(
            merged,
            json!({"spec": {"description": "mine", "keywords": ["a", "mine"], "owned": [{"name": "x", "kind": "X", "displayName": "Ex"}, {"name": "y", "kind": "Y"}], "version": "0.2.0"}})
        );
    }

    #[test]
    fn both_changing_one_value_keeps_the_users_and_names_the_path() {
        let (merged, conflicts) =
            merge_values(&json!({"a": 1}), &json!({"a": 2}), &json!({"a": 3}));
        assert_eq!(merged, json!({"a": 2}));
        assert_eq!(conflicts, [".a"]);
    }

    #[test]
    fn removals_by_either_side_hold() {
        let base = json!({"k": ["a", "b"], "x": 1, "y": 1});
        let (merged, _) = merge_values(
            &base,
            &json!({"k": ["a"], "x": 1, "y": 1}),
            &json!({"k": ["a", "b"], "y": 1}),
        );
        assert_eq!(merged, json!({"k": ["a"], "y": 1}));
    }
}
