//! Path elements and paths, as structured-merge-diff's `fieldpath` names them.
//!
//! A [`PathElement`] is one step into an object: a field (`f:name`), a list item picked by its
//! key fields (`k:{"name":"c"}`), a set item picked by its value (`v:"x"`) or an item of an
//! atomic list by position (`i:0`). [`PathElement::fields_v1_key`] and
//! [`PathElement::from_fields_v1_key`] convert to and from the FieldsV1 spelling; `Display` and
//! [`Path`] render the spelling kube-apiserver prints in conflicts, e.g.
//! `.spec.containers[name="c"].image`.

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Value};

/// Errors from parsing a FieldsV1 key into a [`PathElement`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The key does not start with `f:`, `k:`, `v:` or `i:`.
    #[error("unknown path element prefix in {0:?}")]
    UnknownPrefix(String),
    /// A `k:` key whose JSON is not an object, or a `v:` key whose JSON is invalid.
    #[error("invalid JSON in path element {0:?}")]
    InvalidJson(String),
    /// An `i:` key whose index is not a non-negative integer.
    #[error("invalid index in path element {0:?}")]
    InvalidIndex(String),
}

/// One step into an object.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A struct field or map key: `f:<name>`.
    Field(String),
    /// An item of an associative list, by its key fields sorted by name: `k:{"name":"c"}`.
    Key(Vec<(String, Value)>),
    /// An item of a set list, by its value: `v:"x"`.
    Value(Value),
    /// An item of a list by position: `i:0`.
    Index(usize),
}

impl PathElement {
    /// A field element.
    pub fn field(name: impl Into<String>) -> Self {
        Self::Field(name.into())
    }

    /// A key element; the fields are sorted by name.
    pub fn key<I, S>(fields: I) -> Self
    where
        I: IntoIterator<Item = (S, Value)>,
        S: Into<String>,
    {
        let mut fields: Vec<(String, Value)> =
            fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Self::Key(fields)
    }

    /// The FieldsV1 spelling: `f:name`, `k:{"name":"c"}`, `v:"x"` or `i:0`.
    pub fn fields_v1_key(&self) -> String {
        match self {
            Self::Field(name) => format!("f:{name}"),
            Self::Key(fields) => {
                let map: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(map))
            }
            Self::Value(v) => format!("v:{v}"),
            Self::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses the FieldsV1 spelling of an element.
    pub fn from_fields_v1_key(key: &str) -> Result<Self, PathError> {
        if let Some(name) = key.strip_prefix("f:") {
            return Ok(Self::Field(name.to_string()));
        }
        if let Some(json) = key.strip_prefix("k:") {
            return match serde_json::from_str::<Value>(json) {
                Ok(Value::Object(map)) => Ok(Self::key(map)),
                _ => Err(PathError::InvalidJson(key.to_string())),
            };
        }
        if let Some(json) = key.strip_prefix("v:") {
            return serde_json::from_str::<Value>(json)
                .map(Self::Value)
                .map_err(|_| PathError::InvalidJson(key.to_string()));
        }
        if let Some(index) = key.strip_prefix("i:") {
            return index
                .parse::<usize>()
                .map(Self::Index)
                .map_err(|_| PathError::InvalidIndex(key.to_string()));
        }
        Err(PathError::UnknownPrefix(key.to_string()))
    }

    fn rank(&self) -> u8 {
        match self {
            Self::Field(_) => 0,
            Self::Key(_) => 1,
            Self::Value(_) => 2,
            Self::Index(_) => 3,
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Field(a), Self::Field(b)) => a.cmp(b),
            (Self::Key(a), Self::Key(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    let c = x.0.cmp(&y.0).then_with(|| compare_values(&x.1, &y.1));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Self::Value(a), Self::Value(b)) => compare_values(a, b),
            (Self::Index(a), Self::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// Renders like structured-merge-diff's `PathElement.String()`: `.name`, `[name="c"]`,
/// `[="x"]`, `[0]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            Self::Value(v) => write!(f, "[={}]", value_to_string(v)),
            Self::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path from the root of an object, e.g. `.spec.containers[name="c"].image`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// Parses a dotted field path such as `spec.replicas` (fields only).
    pub fn fields(dotted: &str) -> Self {
        Self(
            dotted
                .split('.')
                .filter(|s| !s.is_empty())
                .map(PathElement::field)
                .collect(),
        )
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in &self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

/// structured-merge-diff's `value.ToString`: strings quoted, numbers and booleans bare.
pub(crate) fn value_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(value_to_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{k}={}",
                        map.get(*k).map_or_else(String::new, value_to_string)
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// A total order over JSON values like structured-merge-diff's `value.Compare`: numbers (by
/// value), then strings, booleans, lists, maps and null.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => {
                let (fx, fy) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                fx.partial_cmp(&fy).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<(&String, &Value)> = x.iter().collect();
            let mut ys: Vec<(&String, &Value)> = y.iter().collect();
            xs.sort_by(|p, q| p.0.cmp(q.0));
            ys.sort_by(|p, q| p.0.cmp(q.0));
            for (p, q) in xs.iter().zip(ys.iter()) {
                let c = p.0.cmp(q.0).then_with(|| compare_values(p.1, q.1));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(key: &str, display: &str) {
        let pe = PathElement::from_fields_v1_key(key);
        assert!(pe.is_ok(), "{key}: {pe:?}");
        if let Ok(pe) = pe {
            assert_eq!(pe.fields_v1_key(), key);
            assert_eq!(pe.to_string(), display);
        }
    }

    #[test]
    fn fields_v1_keys() {
        check("f:image", ".image");
        check(r#"k:{"name":"c"}"#, r#"[name="c"]"#);
        check(
            r#"k:{"containerPort":80,"protocol":"TCP"}"#,
            r#"[containerPort=80,protocol="TCP"]"#,
        );
        check(r#"v:"example.com/foo""#, r#"[="example.com/foo"]"#);
        check("i:3", "[3]");
        check("f:", ".");
    }

    #[test]
    fn key_fields_are_sorted() {
        let pe = PathElement::from_fields_v1_key(r#"k:{"protocol":"TCP","port":80}"#);
        assert_eq!(
            pe.map(|p| p.fields_v1_key()),
            Ok(r#"k:{"port":80,"protocol":"TCP"}"#.to_string())
        );
    }

    #[test]
    fn bad_keys() {
        assert!(matches!(
            PathElement::from_fields_v1_key("x:y"),
            Err(PathError::UnknownPrefix(_))
        ));
        assert!(matches!(
            PathElement::from_fields_v1_key("k:[1]"),
            Err(PathError::InvalidJson(_))
        ));
        assert!(matches!(
            PathElement::from_fields_v1_key("v:{"),
            Err(PathError::InvalidJson(_))
        ));
        assert!(matches!(
            PathElement::from_fields_v1_key("i:-1"),
            Err(PathError::InvalidIndex(_))
        ));
    }

    #[test]
    fn ordering_matches_smd() {
        let mut v = [
            PathElement::Index(0),
            PathElement::Value(json!("b")),
            PathElement::Value(json!(2)),
            PathElement::key([("name", json!("a"))]),
            PathElement::field("z"),
            PathElement::field("a"),
        ];
        v.sort();
        let keys: Vec<String> = v.iter().map(PathElement::fields_v1_key).collect();
        assert_eq!(
            keys,
            ["f:a", "f:z", r#"k:{"name":"a"}"#, "v:2", r#"v:"b""#, "i:0"]
        );
        assert_eq!(PathElement::Value(json!(1)), PathElement::Value(json!(1.0)));
    }

    #[test]
    fn path_display() {
        let p = Path(vec![
            PathElement::field("spec"),
            PathElement::field("containers"),
            PathElement::key([("name", json!("c"))]),
            PathElement::field("image"),
        ]);
        assert_eq!(p.to_string(), r#".spec.containers[name="c"].image"#);
        assert_eq!(Path::fields("spec.replicas").to_string(), ".spec.replicas");
    }
}
