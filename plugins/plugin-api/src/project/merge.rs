//! Writing the typed PROJECT model back over the document it was read from, so that fields this
//! version of mNi does not know survive a rewrite untouched and in their original order.
//!
//! The typed model serialises to a YAML value holding only known fields. [`merge`] walks that
//! value alongside the original document, guided by a [`Shape`] that lists which keys the model
//! owns: owned keys take the new value (or disappear when the model dropped them), other keys are
//! copied from the original, and keys new to the document are inserted before the first owned
//! key the model lists after them (appended when there is none). List elements are paired
//! by identity (e.g. a resource's group/version/kind), never by position.

use serde_yaml::{Mapping, Value};

/// Which parts of a YAML value the typed model owns.
pub(crate) enum Shape {
    /// Owned whole: the new value replaces the old.
    Owned,
    /// A mapping whose listed keys are owned (each with its own shape); other keys are kept.
    Struct(&'static [(&'static str, Shape)]),
    /// A list whose elements have the given shape and are paired by the given identity keys.
    Seq(&'static Shape, &'static [&'static str]),
}

const WEBHOOKS: Shape = Shape::Struct(&[
    ("conversion", Shape::Owned),
    ("defaulting", Shape::Owned),
    ("validation", Shape::Owned),
    ("webhookVersion", Shape::Owned),
]);

const API: Shape = Shape::Struct(&[("crdVersion", Shape::Owned), ("namespaced", Shape::Owned)]);

const RESOURCE: Shape = Shape::Struct(&[
    ("api", API),
    ("controller", Shape::Owned),
    ("domain", Shape::Owned),
    ("group", Shape::Owned),
    ("kind", Shape::Owned),
    ("path", Shape::Owned),
    ("plural", Shape::Owned),
    ("version", Shape::Owned),
    ("webhooks", WEBHOOKS),
]);

const SERVICE: Shape = Shape::Struct(&[
    ("crates", Shape::Owned),
    ("name", Shape::Owned),
    ("plugin", Shape::Owned),
]);

/// The shape of a whole PROJECT document.
pub(crate) const PROJECT: Shape = Shape::Struct(&[
    ("domain", Shape::Owned),
    ("layout", Shape::Owned),
    ("plugins", Shape::Owned),
    ("projectName", Shape::Owned),
    ("repo", Shape::Owned),
    (
        "resources",
        Shape::Seq(&RESOURCE, &["group", "version", "kind"]),
    ),
    ("services", Shape::Seq(&SERVICE, &["name"])),
    ("version", Shape::Owned),
]);

/// Merges `updated` (the typed model, serialised) over `original` (the document as read).
pub(crate) fn merge(shape: &Shape, original: &Value, updated: Value) -> Value {
    match (shape, original, updated) {
        (Shape::Struct(fields), Value::Mapping(orig), Value::Mapping(mut upd)) => {
            let mut out = Mapping::new();
            let position = |key: &Value| {
                key.as_str()
                    .and_then(|k| fields.iter().position(|(name, _)| *name == k))
            };
            for (key, old) in orig {
                match position(key) {
                    Some(at) => {
                        // Owned keys new to the document go before the first owned key the
                        // model lists after them, so a new document reads in the model's order
                        // whichever keys it started with.
                        let earlier: Vec<Value> = upd
                            .keys()
                            .filter(|k| {
                                !orig.contains_key(*k) && position(k).is_some_and(|p| p < at)
                            })
                            .cloned()
                            .collect();
                        for k in earlier {
                            if let Some(v) = upd.shift_remove(&k) {
                                out.insert(k, v);
                            }
                        }
                        let sub = &fields[at].1;
                        if let Some(new) = upd.shift_remove(key) {
                            out.insert(key.clone(), merge(sub, old, new));
                        }
                    }
                    None => {
                        out.insert(key.clone(), old.clone());
                    }
                }
            }
            out.extend(upd);
            Value::Mapping(out)
        }
        (Shape::Seq(elem, identity), Value::Sequence(orig), Value::Sequence(upd)) => {
            Value::Sequence(
                upd.into_iter()
                    .map(
                        |new| match orig.iter().find(|old| same_identity(identity, old, &new)) {
                            Some(old) => merge(elem, old, new),
                            None => new,
                        },
                    )
                    .collect(),
            )
        }
        (_, _, updated) => updated,
    }
}

fn same_identity(keys: &[&str], a: &Value, b: &Value) -> bool {
    keys.iter()
        .all(|k| a.get(k).unwrap_or(&Value::Null) == b.get(k).unwrap_or(&Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(original: &str, updated: &str, expected: &str) {
        let original: Value = serde_yaml::from_str(original).unwrap();
        let updated: Value = serde_yaml::from_str(updated).unwrap();
        let got = serde_yaml::to_string(&merge(&PROJECT, &original, updated)).unwrap();
        assert_eq!(got, expected);
    }

    #[test]
    fn new_owned_keys_take_the_models_order() {
        check(
            "version: '3'\n",
            "domain: a\nlayout:\n- x.io/v1\nversion: '3'\n",
            "domain: a\nlayout:\n- x.io/v1\nversion: '3'\n",
        );
        check(
            "x: 1\ndomain: a\nversion: '3'\n",
            "domain: a\nresources:\n- kind: K\nversion: '3'\n",
            "x: 1\ndomain: a\nresources:\n- kind: K\nversion: '3'\n",
        );
    }

    #[test]
    fn keeps_unknown_keys_in_place() {
        check(
            "x: 1\ndomain: a\ny: 2\n",
            "domain: b\n",
            "x: 1\ndomain: b\ny: 2\n",
        );
        check("domain: a\nrepo: r\n", "domain: a\n", "domain: a\n");
        check(
            "domain: a\n",
            "domain: a\nrepo: r\n",
            "domain: a\nrepo: r\n",
        );
    }

    #[test]
    fn pairs_resources_by_identity() {
        check(
            "resources:\n- kind: A\n  version: v1\n  extra: a\n- kind: B\n  version: v1\n  extra: b\n",
            "resources:\n- kind: B\n  version: v1\n",
            "resources:\n- kind: B\n  version: v1\n  extra: b\n",
        );
        check(
            "resources:\n- api:\n    future: 1\n    crdVersion: v1\n  kind: A\n  version: v1\n",
            "resources:\n- api:\n    crdVersion: v1\n    namespaced: true\n  kind: A\n  version: v1\n",
            "resources:\n- api:\n    future: 1\n    crdVersion: v1\n    namespaced: true\n  kind: A\n  version: v1\n",
        );
    }
}
