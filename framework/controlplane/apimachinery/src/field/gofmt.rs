//! Go-compatible rendering of JSON values, as kube-apiserver prints them in messages.
//!
//! Kubernetes renders values with Go's `fmt` (`%v`, `%q`) and `encoding/json`; the helpers
//! here reproduce those renderings for `serde_json::Value` so messages match byte for byte.

use serde_json::Value;

/// Renders a float like Go's `%v` (strconv `'g'` with the shortest precision).
pub(crate) fn float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = shortest_digits(f);
    if !(-4..6).contains(&exp) {
        exp_form(f < 0.0, &digits, exp)
    } else {
        format!("{f}")
    }
}

/// Renders a float like Go's `encoding/json`.
pub(crate) fn float_json(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (digits, exp) = shortest_digits(f);
        let s = exp_form(f < 0.0, &digits, exp);
        // Go cleans up e-09 to e-9.
        s.replacen("e-0", "e-", 1)
    } else if f == 0.0 {
        "0".to_string()
    } else {
        format!("{f}")
    }
}

/// Shortest round-trip decimal digits of `f` (no sign, no dot) and its decimal exponent.
fn shortest_digits(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    (digits, exp.parse().unwrap_or(0))
}

fn exp_form(negative: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let mut chars = digits.chars();
    if let Some(first) = chars.next() {
        out.push(first);
    }
    let rest: String = chars.collect();
    if !rest.is_empty() {
        out.push('.');
        out.push_str(&rest);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.unsigned_abs()));
    out
}

/// Renders a number like Go would after decoding JSON into `interface{}` (int64 or float64).
pub(crate) fn number_v(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else {
        float_v(n.as_f64().unwrap_or(0.0))
    }
}

/// Quotes a string like Go's `%q` / `strconv.Quote`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint`: letters, marks, numbers, punctuation,
/// symbols and the ASCII space are printable; other spaces and format characters are not.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_whitespace() || c.is_control() {
        return false;
    }
    !matches!(
        c,
        '\u{ad}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e000}'..='\u{f8ff}'
    )
}

/// Marshals a value like Go's `encoding/json` would marshal the decoded `interface{}`:
/// object keys sorted, HTML characters escaped, numbers as int64 or float64.
pub(crate) fn json(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out, 0);
    out
}

const MAX_JSON_DEPTH: usize = 1000;

fn write_json(v: &Value, out: &mut String, depth: usize) {
    if depth > MAX_JSON_DEPTH {
        out.push_str("null");
        return;
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else {
                out.push_str(&float_json(n.as_f64().unwrap_or(0.0)));
            }
        }
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out, depth + 1);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, out);
                out.push(':');
                if let Some(value) = map.get(k.as_str()) {
                    write_json(value, out, depth + 1);
                }
            }
            out.push('}');
        }
    }
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Renders a value as Go's `fmt.Sprint` would render the decoded `interface{}`: strings raw,
/// numbers and booleans plainly, `<nil>` for null, maps and slices in Go syntax.
pub(crate) fn sprint(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_v(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(sprint).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        k,
                        map.get(k.as_str()).map(sprint).unwrap_or_default()
                    )
                })
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_render_like_go() {
        let cases: &[(f64, &str, &str)] = &[
            (1.5, "1.5", "1.5"),
            (10.0, "10", "10"),
            (1e6, "1e+06", "1000000"),
            (123456.0, "123456", "123456"),
            (1234567.5, "1.2345675e+06", "1234567.5"),
            (0.0001, "0.0001", "0.0001"),
            (0.00001, "1e-05", "0.00001"),
            (1e-7, "1e-07", "1e-7"),
            (1e21, "1e+21", "1e+21"),
            (-2.5, "-2.5", "-2.5"),
        ];
        for (f, v, j) in cases {
            assert_eq!(float_v(*f), *v, "%v of {f}");
            assert_eq!(float_json(*f), *j, "json of {f}");
        }
    }

    #[test]
    fn json_sorts_keys_and_escapes_html() {
        let v = json!({"b": 1, "a": "<x>", "c": [1.5, null, true]});
        assert_eq!(
            json(&v),
            r#"{"a":"\u003cx\u003e","b":1,"c":[1.5,null,true]}"#
        );
    }

    #[test]
    fn quote_like_go() {
        assert_eq!(quote("a\"b\n\u{1}é"), "\"a\\\"b\\n\\x01é\"");
        assert_eq!(
            sprint(&json!({"b": [1, "x"], "a": null})),
            "map[a:<nil> b:[1 x]]"
        );
    }
}
