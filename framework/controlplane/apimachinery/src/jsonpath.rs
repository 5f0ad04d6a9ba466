//! The JSONPath subset used by kubectl and CRD `additionalPrinterColumns`, and the rendering
//! of printer-column cells as kube-apiserver's table convertor does it.
//!
//! Start with [`JsonPath::parse`] (`.status.replicas`, `.spec.items[0].name`,
//! `.metadata.labels['app.kubernetes.io/name']`, `.spec.list[*].name`,
//! `.status.conditions[?(@.type=="Ready")].status`), evaluate it with
//! [`JsonPath::find`], and render a column with [`format_cell`]; [`human_duration`] is
//! kubectl's `duration.HumanDuration`.

use serde_json::{Value, json};

use crate::field::gofmt;
use crate::schema::formats::parse_date_time;

/// Errors from parsing a JSONPath expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPathError {
    /// The expression is empty.
    #[error("empty JSONPath expression")]
    Empty,
    /// A bracket is not closed.
    #[error("unterminated bracket in JSONPath {0:?}")]
    UnterminatedBracket(String),
    /// A bracket holds something other than an index, `*` or a quoted key.
    #[error("invalid array index or key {0:?}")]
    InvalidSubscript(String),
    /// A character that cannot start a step.
    #[error("unrecognized character in JSONPath {0:?} at {1}")]
    Unexpected(String, usize),
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(i64),
    Wildcard,
    /// `[?(@.path OP literal)]` or `[?(@.path)]`: the array elements that match.
    Filter(Box<Filter>),
}

/// A filter expression, as client-go's jsonpath evaluates it for printer columns such as
/// `.status.conditions[?(@.type=="Ready")].status`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Filter {
    /// The path below `@`.
    path: JsonPath,
    /// The comparison; `None` tests that the path exists.
    compare: Option<(Op, Value)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Filter {
    fn parse(body: &str) -> Result<Self, JsonPathError> {
        let bad = || JsonPathError::InvalidSubscript(format!("?({body})"));
        let mut quote = None;
        let mut split = None;
        let bytes = body.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            match (quote, b) {
                (None, b'\'' | b'"') => quote = Some(b),
                (Some(q), c) if c == q => quote = None,
                (None, b'=' | b'!' | b'<' | b'>') => {
                    let two = bytes.get(i + 1) == Some(&b'=');
                    let op = match (b, two) {
                        (b'=', true) => Op::Eq,
                        (b'!', true) => Op::Ne,
                        (b'<', true) => Op::Le,
                        (b'>', true) => Op::Ge,
                        (b'<', false) => Op::Lt,
                        (b'>', false) => Op::Gt,
                        _ => return Err(bad()),
                    };
                    split = Some((i, if two { 2 } else { 1 }, op));
                    break;
                }
                _ => {}
            }
        }
        let (left, compare) = match split {
            None => (body.trim(), None),
            Some((at, len, op)) => {
                let right = body[at + len..].trim();
                let literal = match right.chars().next() {
                    Some(q @ ('\'' | '"')) => right
                        .strip_prefix(q)
                        .and_then(|r| r.strip_suffix(q))
                        .map(|r| Value::String(r.to_string()))
                        .ok_or_else(bad)?,
                    _ => serde_json::from_str::<Value>(right).map_err(|_| bad())?,
                };
                (body[..at].trim(), Some((op, literal)))
            }
        };
        let rest = left.strip_prefix('@').ok_or_else(bad)?;
        let path = if rest.is_empty() {
            JsonPath { steps: Vec::new() }
        } else {
            JsonPath::parse(rest)?
        };
        Ok(Self { path, compare })
    }

    fn matches(&self, element: &Value) -> bool {
        let Some(found) = self.path.first(element) else {
            return false;
        };
        let Some((op, literal)) = &self.compare else {
            return true;
        };
        let numbers = found.as_f64().zip(literal.as_f64());
        match op {
            Op::Eq => found == literal || numbers.is_some_and(|(a, b)| a == b),
            Op::Ne => !(found == literal || numbers.is_some_and(|(a, b)| a == b)),
            Op::Lt => numbers.is_some_and(|(a, b)| a < b),
            Op::Le => numbers.is_some_and(|(a, b)| a <= b),
            Op::Gt => numbers.is_some_and(|(a, b)| a > b),
            Op::Ge => numbers.is_some_and(|(a, b)| a >= b),
        }
    }
}

/// A parsed JSONPath expression (the subset printer columns use: fields, keys, indexes, `[*]`
/// and filters such as `[?(@.type=="Ready")]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses an expression; a surrounding `{…}` and a leading `$` are accepted.
    pub fn parse(expr: &str) -> Result<Self, JsonPathError> {
        let mut e = expr.trim();
        if let Some(inner) = e.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
            e = inner.trim();
        }
        e = e.strip_prefix('$').unwrap_or(e);
        if e.is_empty() {
            return Err(JsonPathError::Empty);
        }
        let chars: Vec<char> = e.chars().collect();
        let mut steps = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    i += 1;
                    let start = i;
                    while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        i += 1;
                    }
                    let name: String = chars[start..i].iter().collect();
                    match name.as_str() {
                        "" => {}
                        "*" => steps.push(Step::Wildcard),
                        _ => steps.push(Step::Field(name)),
                    }
                }
                '[' => {
                    let start = i + 1;
                    let mut j = start;
                    let mut quote: Option<char> = None;
                    while j < chars.len() {
                        match (quote, chars[j]) {
                            (None, '\'' | '"') => quote = Some(chars[j]),
                            (Some(q), c) if c == q => quote = None,
                            (None, ']') => break,
                            _ => {}
                        }
                        j += 1;
                    }
                    if j >= chars.len() {
                        return Err(JsonPathError::UnterminatedBracket(expr.to_string()));
                    }
                    let inner: String = chars[start..j].iter().collect();
                    steps.push(subscript(inner.trim())?);
                    i = j + 1;
                }
                c if i == 0 && c != ' ' => {
                    // kubectl accepts `status.replicas` without the leading dot.
                    let start = i;
                    while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        i += 1;
                    }
                    steps.push(Step::Field(chars[start..i].iter().collect()));
                }
                _ => return Err(JsonPathError::Unexpected(expr.to_string(), i)),
            }
        }
        Ok(Self { steps })
    }

    /// All values the path selects (several only with `[*]`/`.*`), in document order.
    pub fn find<'a>(&self, value: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![value];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in current {
                match (step, v) {
                    (Step::Field(name), Value::Object(m)) => next.extend(m.get(name)),
                    (Step::Index(i), Value::Array(a)) => {
                        let idx = if *i < 0 { a.len() as i64 + i } else { *i };
                        if let Ok(idx) = usize::try_from(idx) {
                            next.extend(a.get(idx));
                        }
                    }
                    (Step::Wildcard, Value::Array(a)) => next.extend(a.iter()),
                    (Step::Wildcard, Value::Object(m)) => next.extend(m.values()),
                    (Step::Filter(filter), Value::Array(a)) => {
                        next.extend(a.iter().filter(|e| filter.matches(e)));
                    }
                    _ => {}
                }
            }
            current = next;
        }
        current
    }

    /// The first selected value, as printer columns use it.
    pub fn first<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        self.find(value).into_iter().next()
    }
}

fn subscript(inner: &str) -> Result<Step, JsonPathError> {
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if let Some(body) = inner.strip_prefix("?(").and_then(|b| b.strip_suffix(')')) {
        return Filter::parse(body).map(|f| Step::Filter(Box::new(f)));
    }
    for q in ['\'', '"'] {
        if let Some(key) = inner.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return Ok(Step::Field(key.to_string()));
        }
    }
    inner
        .parse::<i64>()
        .map(Step::Index)
        .map_err(|_| JsonPathError::InvalidSubscript(inner.to_string()))
}

/// kubectl's `duration.HumanDuration` for a duration in seconds: `45s`, `5m2s`, `3h`, `2d5h`,
/// `3y100d`…; `<invalid>` below -1s, `0s` for -1s (clock skew).
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Parses an RFC 3339 timestamp (with seconds and a zone) into Unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let time = s.get(11..)?;
    let has_zone = time.ends_with('Z')
        || time.len() > 6 && matches!(time.as_bytes()[time.len() - 6], b'+' | b'-');
    let has_seconds = time
        .split(['Z', '+', '-'])
        .next()
        .is_some_and(|t| t.matches(':').count() == 2);
    if !has_zone || !has_seconds {
        return None;
    }
    parse_date_time(s)
}

/// Renders a printer-column cell like apiextensions' table convertor: `string` columns print
/// the value (JSON for objects and arrays), `integer`/`number`/`boolean` keep typed values when
/// the type fits (else null), `date` becomes an age such as `5m` relative to `now` (Unix
/// seconds), `<unknown>` for an empty time and `<invalid>` for an unparsable one.
pub fn format_cell(column_type: &str, value: Option<&Value>, now: i64) -> Value {
    let Some(value) = value else {
        return Value::Null;
    };
    if value.is_null() {
        return Value::Null;
    }
    match column_type {
        "string" => Value::String(match value {
            Value::Object(_) | Value::Array(_) => gofmt::json(value),
            other => gofmt::sprint(other),
        }),
        "integer" => match value {
            Value::Number(n) => match n.as_i64() {
                Some(i) => json!(i),
                None => json!(n.as_f64().map(|f| f as i64).unwrap_or_default()),
            },
            _ => Value::Null,
        },
        "number" => match value {
            Value::Number(n) => json!(n.as_f64().unwrap_or_default()),
            _ => Value::Null,
        },
        "boolean" => match value {
            Value::Bool(b) => json!(b),
            _ => Value::Null,
        },
        "date" => match value {
            Value::String(s) if s.is_empty() || s == "null" => json!("<unknown>"),
            Value::String(s) => match parse_rfc3339(s) {
                Some(t) => json!(human_duration(now.saturating_sub(t))),
                None => json!("<invalid>"),
            },
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj() -> Value {
        json!({
            "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web", "app": "a"}},
            "spec": {"items": [{"name": "i0"}, {"name": "i1"}], "n": 3},
            "status": {"replicas": 2}
        })
    }

    /// Evaluates `expr` on [`obj`]; `expected` lists the selected values.
    fn check(expr: &str, expected: &[Value]) {
        let o = obj();
        let p = JsonPath::parse(expr);
        let got: Vec<Value> = p
            .map(|p| p.find(&o).into_iter().cloned().collect())
            .unwrap_or_default();
        assert_eq!(got, expected, "{expr}");
    }

    #[test]
    fn paths() {
        check(".status.replicas", &[json!(2)]);
        check("{.status.replicas}", &[json!(2)]);
        check("$.status.replicas", &[json!(2)]);
        check(".spec.items[0].name", &[json!("i0")]);
        check(".spec.items[-1].name", &[json!("i1")]);
        check(".spec.items[*].name", &[json!("i0"), json!("i1")]);
        check(
            ".metadata.labels['app.kubernetes.io/name']",
            &[json!("web")],
        );
        check(".metadata.labels[\"app\"]", &[json!("a")]);
        check(".metadata.labels.app", &[json!("a")]);
        check(".status.missing", &[]);
        check(".spec.items[5]", &[]);
        check("status.replicas", &[json!(2)]);
        assert_eq!(JsonPath::parse(""), Err(JsonPathError::Empty));
        assert!(matches!(
            JsonPath::parse(".a[0"),
            Err(JsonPathError::UnterminatedBracket(_))
        ));
        assert!(matches!(
            JsonPath::parse(".a[x]"),
            Err(JsonPathError::InvalidSubscript(_))
        ));
    }

    #[test]
    fn filters_select_array_elements() {
        let obj = json!({"status": {"conditions": [
            {"type": "Progressing", "status": "False", "n": 1},
            {"type": "Ready", "status": "True", "n": 2},
            {"type": "Degraded", "status": "False", "n": 3, "extra": true}
        ]}});
        let eval = |path: &str| -> Vec<Value> {
            JsonPath::parse(path)
                .unwrap()
                .find(&obj)
                .into_iter()
                .cloned()
                .collect()
        };
        assert_eq!(
            eval(r#".status.conditions[?(@.type=="Ready")].status"#),
            [json!("True")]
        );
        assert_eq!(
            eval(".status.conditions[?(@.type == 'Degraded')].n"),
            [json!(3)]
        );
        assert_eq!(eval(".status.conditions[?(@.n>=2)].type").len(), 2);
        assert_eq!(
            eval(".status.conditions[?(@.n<2)].type"),
            [json!("Progressing")]
        );
        assert_eq!(
            eval(r#".status.conditions[?(@.type!="Ready")].n"#),
            [json!(1), json!(3)]
        );
        assert_eq!(
            eval(".status.conditions[?(@.extra)].type"),
            [json!("Degraded")]
        );
        assert!(eval(r#".status.conditions[?(@.type=="Gone")].status"#).is_empty());
        assert!(matches!(
            JsonPath::parse(".a[?(@.b=)]"),
            Err(JsonPathError::InvalidSubscript(_))
        ));
        assert!(JsonPath::parse(".a[?(b==1)]").is_err());
    }

    #[test]
    fn human_durations() {
        let cases: &[(i64, &str)] = &[
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (302, "5m2s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 120, "3h2m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (53 * 3600, "2d5h"),
            (8 * 86400, "8d"),
            (2 * 365 * 86400, "2y"),
            (3 * 365 * 86400 + 100 * 86400, "3y100d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(*secs), *want, "{secs}");
        }
    }

    #[test]
    fn cells() {
        let now = parse_rfc3339("2024-01-01T01:00:00Z").unwrap_or_default();
        let cases: &[(&str, Option<Value>, Value)] = &[
            ("string", Some(json!("x")), json!("x")),
            ("string", Some(json!(1.5)), json!("1.5")),
            (
                "string",
                Some(json!({"b": 1, "a": 2})),
                json!("{\"a\":2,\"b\":1}"),
            ),
            ("string", None, Value::Null),
            ("integer", Some(json!(3)), json!(3)),
            ("integer", Some(json!(3.7)), json!(3)),
            ("integer", Some(json!("3")), Value::Null),
            ("number", Some(json!(3)), json!(3.0)),
            ("boolean", Some(json!(true)), json!(true)),
            ("boolean", Some(json!("true")), Value::Null),
            ("date", Some(json!("2024-01-01T00:55:00Z")), json!("5m")),
            (
                "date",
                Some(json!("2023-12-30T01:00:00+00:00")),
                json!("2d"),
            ),
            ("date", Some(json!("")), json!("<unknown>")),
            ("date", Some(json!("yesterday")), json!("<invalid>")),
            ("date", Some(json!("2024-01-01T00:55")), json!("<invalid>")),
        ];
        for (ty, v, want) in cases {
            assert_eq!(format_cell(ty, v.as_ref(), now), *want, "{ty} {v:?}");
        }
    }
}
