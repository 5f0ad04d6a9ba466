//! JSON values as CEL sees them under a structural schema, as apiextensions' `UnstructuredToVal`
//! does: integers and numbers by schema type, objects with declared properties as maps keyed
//! by their escaped property names, `additionalProperties` maps by their raw keys, and at the
//! resource root and embedded resources only `apiVersion`, `kind`, `metadata.name` and
//! `metadata.generateName` of the metadata.

use mni_cel::Value as Cel;
use serde_json::Value;

use crate::schema::{AdditionalProperties, MAX_VALUE_DEPTH, Structural};

/// CEL's reserved words: a property named like one is accessed as `__name__`.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as CEL accesses it (`foo-bar` → `foo__dash__bar`), or `None` when it
/// cannot be escaped (such a property is not visible to rules).
pub(crate) fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok_first = first.is_ascii_alphabetic() || "_.-/".contains(first);
    if !ok_first || !chars.all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c)) {
        return None;
    }
    let mut out = String::new();
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            other => out.push(other),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// Converts `v` under schema `s`; `resource` marks the root and embedded resources.
pub(crate) fn to_cel(s: Option<&Structural>, v: &Value, resource: bool) -> Cel {
    convert(s, v, resource, 0)
}

fn convert(s: Option<&Structural>, v: &Value, resource: bool, depth: usize) -> Cel {
    if depth > MAX_VALUE_DEPTH {
        return Cel::Null;
    }
    let ty = s.and_then(|s| s.type_.as_deref()).unwrap_or("");
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::String(text) => mni_cel::string(text),
        Value::Number(n) => {
            if ty == "number" {
                Cel::Float(n.as_f64().unwrap_or_default())
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                let f = n.as_f64().unwrap_or_default();
                if ty == "integer" && f.fract() == 0.0 && f.abs() < 9.2e18 {
                    Cel::Int(f as i64)
                } else {
                    Cel::Float(f)
                }
            }
        }
        Value::Array(items) => {
            let is = s.and_then(|s| s.items.as_deref());
            let embedded = is.is_some_and(|i| i.embedded_resource);
            mni_cel::list(
                items
                    .iter()
                    .map(|i| convert(is, i, embedded, depth + 1))
                    .collect(),
            )
        }
        Value::Object(obj) => {
            let mut entries = Vec::new();
            match s {
                Some(s) if !s.properties.is_empty() => {
                    for (k, prop) in &s.properties {
                        if resource && k == "metadata" {
                            continue;
                        }
                        if let (Some(child), Some(name)) = (obj.get(k), escape(k)) {
                            let embedded = prop.embedded_resource;
                            entries.push((name, convert(Some(prop), child, embedded, depth + 1)));
                        }
                    }
                }
                _ => {
                    let extra = match s.and_then(|s| s.additional_properties.as_ref()) {
                        Some(AdditionalProperties::Schema(a)) => Some(&**a),
                        _ => None,
                    };
                    for (k, child) in obj {
                        if resource && k == "metadata" {
                            continue;
                        }
                        let embedded = extra.is_some_and(|a| a.embedded_resource);
                        entries.push((k.clone(), convert(extra, child, embedded, depth + 1)));
                    }
                }
            }
            if resource {
                for k in ["apiVersion", "kind"] {
                    if let Some(Value::String(x)) = obj.get(k)
                        && !entries.iter().any(|(e, _)| e == k)
                    {
                        entries.push((k.to_string(), mni_cel::string(x)));
                    }
                }
                if let Some(Value::Object(meta)) = obj.get("metadata") {
                    let kept =
                        ["name", "generateName"]
                            .into_iter()
                            .filter_map(|k| match meta.get(k) {
                                Some(Value::String(x)) => Some((k.to_string(), mni_cel::string(x))),
                                _ => None,
                            });
                    entries.push(("metadata".to_string(), mni_cel::map(kept)));
                }
            }
            mni_cel::map(entries)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_follows_kubernetes() {
        assert_eq!(escape("foo").as_deref(), Some("foo"));
        assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
    }

    #[test]
    fn numbers_follow_the_schema() {
        let num = Structural {
            type_: Some("number".into()),
            ..Structural::default()
        };
        let int = Structural {
            type_: Some("integer".into()),
            ..Structural::default()
        };
        assert_eq!(to_cel(Some(&num), &json!(2), false), Cel::Float(2.0));
        assert_eq!(to_cel(Some(&int), &json!(2.0), false), Cel::Int(2));
        assert_eq!(to_cel(None, &json!(2), false), Cel::Int(2));
    }

    #[test]
    fn resources_expose_only_name_and_generate_name() {
        let s = Structural::from_value(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"a-b": {"type": "string"}}}
        }}))
        .unwrap_or_default();
        let obj = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}},
                         "spec": {"a-b": "x"}});
        let expected = mni_cel::map([
            (
                "spec".to_string(),
                mni_cel::map([("a__dash__b".to_string(), mni_cel::string("x"))]),
            ),
            ("apiVersion".to_string(), mni_cel::string("v1")),
            ("kind".to_string(), mni_cel::string("K")),
            (
                "metadata".to_string(),
                mni_cel::map([("name".to_string(), mni_cel::string("n"))]),
            ),
        ]);
        assert_eq!(to_cel(Some(&s), &obj, true), expected);
    }
}
