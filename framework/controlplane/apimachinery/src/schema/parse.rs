//! Parsing a `JSONSchemaProps` JSON into a [`Structural`].

use serde_json::{Map, Value};

use super::{
    AdditionalProperties, MAX_SCHEMA_DEPTH, Pattern, SchemaError, Structural, ValidationRule,
};

fn bad(path: &str, keyword: &str, expected: &'static str) -> SchemaError {
    SchemaError::InvalidKeyword {
        path: path.to_string(),
        keyword: keyword.to_string(),
        expected,
    }
}

fn join(path: &str, step: &str) -> String {
    if path.is_empty() {
        step.to_string()
    } else {
        format!("{path}.{step}")
    }
}

struct Node<'a> {
    obj: &'a Map<String, Value>,
    path: &'a str,
}

impl Node<'_> {
    fn get(&self, k: &str) -> Option<&Value> {
        self.obj.get(k).filter(|v| !v.is_null())
    }

    fn string(&self, k: &str) -> Result<Option<String>, SchemaError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(self.path, k, "a string")),
        }
    }

    fn boolean(&self, k: &str) -> Result<Option<bool>, SchemaError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(bad(self.path, k, "a boolean")),
        }
    }

    fn float(&self, k: &str) -> Result<Option<f64>, SchemaError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(_) => Err(bad(self.path, k, "a number")),
        }
    }

    fn int(&self, k: &str) -> Result<Option<i64>, SchemaError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i) => Ok(Some(i)),
                None => match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(Some(f as i64)),
                    _ => Err(bad(self.path, k, "an integer")),
                },
            },
            Some(_) => Err(bad(self.path, k, "an integer")),
        }
    }

    fn strings(&self, k: &str) -> Result<Vec<String>, SchemaError> {
        match self.get(k) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad(self.path, k, "an array of strings")),
            Some(_) => Err(bad(self.path, k, "an array of strings")),
        }
    }

    fn schemas(&self, k: &str, depth: usize) -> Result<Vec<Structural>, SchemaError> {
        match self.get(k) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    parse_boxed(v, &format!("{}[{i}]", join(self.path, k)), depth + 1).map(|b| *b)
                })
                .collect(),
            Some(_) => Err(bad(self.path, k, "an array of schemas")),
        }
    }
}

/// Parses one schema node at `path` (used in error messages) and `depth`.
pub(super) fn parse(v: &Value, path: &str, depth: usize) -> Result<Structural, SchemaError> {
    parse_boxed(v, path, depth).map(|b| *b)
}

/// Parses into a box, so that recursive frames hold pointers rather than whole nodes.
fn parse_boxed(v: &Value, path: &str, depth: usize) -> Result<Box<Structural>, SchemaError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(SchemaError::TooDeep {
            path: path.to_string(),
        });
    }
    let Value::Object(obj) = v else {
        return Err(bad(path, "schema", "an object"));
    };
    let n = Node { obj, path };
    let mut s = scalars(&n)?;
    s.all_of = n.schemas("allOf", depth)?;
    s.any_of = n.schemas("anyOf", depth)?;
    s.one_of = n.schemas("oneOf", depth)?;
    children(&n, &mut s, depth)?;
    if !s.validations.is_empty() {
        let resource = depth == 0 || s.embedded_resource;
        s.check_rule_fields(resource);
    }
    Ok(s)
}

/// The non-recursive keywords; kept out of the recursive frame to bound stack use.
#[inline(never)]
fn scalars(n: &Node<'_>) -> Result<Box<Structural>, SchemaError> {
    let (obj, path) = (n.obj, n.path);
    Ok(Box::new(Structural {
        type_: n.string("type")?.filter(|t| !t.is_empty()),
        format: n.string("format")?.filter(|t| !t.is_empty()),
        title: n.string("title")?,
        description: n.string("description")?,
        nullable: n.boolean("nullable")?.unwrap_or(false),
        default: obj.get("default").cloned(),
        required: n.strings("required")?,
        enumeration: match n.get("enum") {
            None => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(_) => return Err(bad(path, "enum", "an array")),
        },
        pattern: n
            .string("pattern")?
            .filter(|p| !p.is_empty())
            .map(|p| Pattern::new(&p)),
        maximum: n.float("maximum")?,
        exclusive_maximum: n.boolean("exclusiveMaximum")?.unwrap_or(false),
        minimum: n.float("minimum")?,
        exclusive_minimum: n.boolean("exclusiveMinimum")?.unwrap_or(false),
        multiple_of: n.float("multipleOf")?,
        max_length: n.int("maxLength")?,
        min_length: n.int("minLength")?,
        max_items: n.int("maxItems")?,
        min_items: n.int("minItems")?,
        unique_items: n.boolean("uniqueItems")?.unwrap_or(false),
        max_properties: n.int("maxProperties")?,
        min_properties: n.int("minProperties")?,
        preserve_unknown_fields: n.boolean("x-kubernetes-preserve-unknown-fields")?,
        embedded_resource: n
            .boolean("x-kubernetes-embedded-resource")?
            .unwrap_or(false),
        int_or_string: n.boolean("x-kubernetes-int-or-string")?.unwrap_or(false),
        list_type: n.string("x-kubernetes-list-type")?,
        list_map_keys: n.strings("x-kubernetes-list-map-keys")?,
        map_type: n.string("x-kubernetes-map-type")?,
        validations: rules(n)?,
        ..Structural::default()
    }))
}

/// `x-kubernetes-validations`, each rule compiled.
fn rules(n: &Node<'_>) -> Result<Vec<ValidationRule>, SchemaError> {
    match n.get("x-kubernetes-validations") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                ValidationRule::parse(
                    v,
                    &format!("{}[{i}]", join(n.path, "x-kubernetes-validations")),
                )
            })
            .collect(),
        Some(_) => Err(bad(n.path, "x-kubernetes-validations", "an array of rules")),
    }
}

/// The nested schemas: not, properties, additionalProperties, items.
fn children(n: &Node<'_>, s: &mut Structural, depth: usize) -> Result<(), SchemaError> {
    let path = n.path;
    if let Some(not) = n.get("not") {
        s.not = Some(parse_boxed(not, &join(path, "not"), depth + 1)?);
    }
    match n.get("properties") {
        None => {}
        Some(Value::Object(props)) => {
            for (k, v) in props {
                let child =
                    parse_boxed(v, &format!("{}[{k}]", join(path, "properties")), depth + 1)?;
                s.properties.insert(k.clone(), *child);
            }
        }
        Some(_) => return Err(bad(path, "properties", "an object")),
    }
    match n.get("additionalProperties") {
        None => {}
        Some(Value::Bool(b)) => s.additional_properties = Some(AdditionalProperties::Bool(*b)),
        Some(v @ Value::Object(_)) => {
            let child = parse_boxed(v, &join(path, "additionalProperties"), depth + 1)?;
            s.additional_properties = Some(AdditionalProperties::Schema(child));
        }
        Some(_) => return Err(bad(path, "additionalProperties", "a boolean or a schema")),
    }
    match n.get("items") {
        None => {}
        Some(v @ Value::Object(_)) => {
            s.items = Some(parse_boxed(v, &join(path, "items"), depth + 1)?)
        }
        // The JSON Schema tuple form is not structural (validate_schema reports it); a single
        // schema in an array is taken as the item schema, others are ignored.
        Some(Value::Array(list)) => {
            if let [only @ Value::Object(_)] = list.as_slice() {
                s.items = Some(parse_boxed(only, &join(path, "items"), depth + 1)?);
            }
        }
        Some(_) => return Err(bad(path, "items", "a schema")),
    }
    Ok(())
}
