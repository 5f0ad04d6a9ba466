//! Kubernetes types whose JSON form is not the object of their protobuf fields: times,
//! durations, IntOrString, Quantity, embedded JSON, named string lists and the JSON-schema
//! unions of apiextensions.
//!
//! Decoding first turns such a message into the plain object of its fields (e.g. Time →
//! `{"seconds": 1700000000}`), then [`to_json`] converts it; encoding applies [`from_json`] and
//! then encodes the plain object.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::Error;
use crate::schema::{Message, Special};

/// Seconds of 0000-01-01T00:00:00Z and of 9999-12-31T23:59:59Z, Go's JSON time range.
const MIN_SECONDS: i64 = -62_167_219_200;
const MAX_SECONDS: i64 = 253_402_300_799;

/// Converts the plain object of a special message to its JSON form; `None` means "omit" (JSON
/// `null`, e.g. a zero `metav1.Time`).
pub(crate) fn to_json(
    msg: &'static Message,
    obj: Map<String, Value>,
    depth: usize,
) -> Result<Option<Value>, Error> {
    let int = |k: &str| obj.get(k).and_then(Value::as_i64).unwrap_or(0);
    let bad = |reason: String| Error::invalid(msg.name, "", reason);
    Ok(match msg.special {
        Special::None => Some(Value::Object(obj)),
        Special::Time | Special::MicroTime if obj.is_empty() => None,
        Special::Time => Some(Value::String(
            format_time(int("seconds"), None).map_err(bad)?,
        )),
        Special::MicroTime => {
            let nanos = int("nanos");
            if !(0..1_000_000_000).contains(&nanos) {
                return Err(bad(format!("nanos {nanos} out of range")));
            }
            Some(Value::String(
                format_time(int("seconds"), Some(nanos as u32 / 1000)).map_err(bad)?,
            ))
        }
        Special::Duration => Some(Value::String(format_duration(int("duration")))),
        Special::IntOrString => match int("type") {
            0 => Some(json!(int("intVal"))),
            1 => Some(obj.get("strVal").cloned().unwrap_or_else(|| json!(""))),
            t => return Err(bad(format!("unknown IntOrString type {t}"))),
        },
        Special::Quantity => Some(obj.get("string").cloned().unwrap_or_else(|| json!("0"))),
        Special::RawJson => {
            let Some(Value::String(b64)) = obj.get("raw") else {
                return Ok(None);
            };
            let raw = STANDARD.decode(b64).map_err(|e| bad(e.to_string()))?;
            if raw.is_empty() {
                return Ok(None);
            }
            if raw.starts_with(crate::MAGIC) {
                return crate::envelope::decode(&raw, depth + 1).map(Some);
            }
            Some(serde_json::from_slice(&raw).map_err(|e| bad(format!("embedded JSON: {e}")))?)
        }
        Special::StringList => Some(obj.get("items").cloned().unwrap_or_else(|| json!([]))),
        Special::SchemaOrArray => match obj.get("jSonSchemas") {
            Some(list) => Some(list.clone()),
            None => obj.get("schema").cloned(),
        },
        Special::SchemaOrBool => match obj.get("schema") {
            Some(schema) => Some(schema.clone()),
            None => Some(obj.get("allows").cloned().unwrap_or(Value::Bool(false))),
        },
        Special::SchemaOrStringArray => match obj.get("property") {
            Some(list) => Some(list.clone()),
            None => obj.get("schema").cloned(),
        },
    })
}

/// Converts the JSON form of a special message to the plain object of its fields.
pub(crate) fn from_json(msg: &'static Message, value: &Value) -> Result<Value, Error> {
    let bad = |reason: &str| Error::invalid(msg.name, "", reason.to_string());
    Ok(match (msg.special, value) {
        (Special::None, v) => v.clone(),
        (Special::Time | Special::MicroTime, Value::String(s)) => {
            let (seconds, nanos) = parse_time(s).ok_or_else(|| bad("not an RFC 3339 time"))?;
            match msg.special {
                Special::Time => json!({"seconds": seconds, "nanos": 0}),
                _ => json!({"seconds": seconds, "nanos": nanos / 1000 * 1000}),
            }
        }
        (Special::Duration, Value::String(s)) => {
            json!({"duration": parse_duration(s).ok_or_else(|| bad("not a Go duration"))?})
        }
        (Special::IntOrString, Value::Number(n)) => {
            let v = n
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| bad("not an int32"))?;
            json!({"type": 0, "intVal": v})
        }
        (Special::IntOrString, Value::String(s)) => json!({"type": 1, "strVal": s}),
        (Special::Quantity, Value::String(s)) => json!({"string": s}),
        (Special::Quantity, Value::Number(n)) => json!({"string": n.to_string()}),
        (Special::RawJson, v) => {
            let raw = serde_json::to_vec(v).map_err(|e| bad(&e.to_string()))?;
            json!({"raw": STANDARD.encode(raw)})
        }
        (Special::StringList, Value::Array(items)) => json!({"items": items}),
        (Special::SchemaOrArray, Value::Array(list)) => json!({"jSonSchemas": list}),
        (Special::SchemaOrBool, Value::Bool(b)) => json!({"allows": b}),
        (Special::SchemaOrBool, Value::Object(_)) => json!({"allows": true, "schema": value}),
        (Special::SchemaOrStringArray, Value::Array(list)) => json!({"property": list}),
        (Special::SchemaOrArray | Special::SchemaOrStringArray, Value::Object(_)) => {
            json!({"schema": value})
        }
        _ => return Err(bad("JSON value of the wrong type")),
    })
}

/// Formats Unix seconds as RFC 3339 in UTC (`2024-01-02T03:04:05Z`), with 6 fractional digits
/// when `micros` is given (Go's `RFC3339Micro`).
pub(crate) fn format_time(seconds: i64, micros: Option<u32>) -> Result<String, String> {
    if !(MIN_SECONDS..=MAX_SECONDS).contains(&seconds) {
        return Err(format!("time {seconds}s is outside years 0000-9999"));
    }
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let frac = micros.map(|u| format!(".{u:06}")).unwrap_or_default();
    Ok(format!(
        "{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}{frac}Z"
    ))
}

/// Parses an RFC 3339 time into Unix seconds and nanoseconds.
pub(crate) fn parse_time(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0i64, |a, d| a * 10 + i64::from(d - b'0')))
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d, h, mi, se) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let days_in_month = [
        31,
        if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) {
            29
        } else {
            28
        },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo)
        || d < 1
        || d > days_in_month[(mo - 1) as usize]
        || h > 23
        || mi > 59
        || se > 59
    {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start || i - start > 9 {
            return None;
        }
        let digits = num(start..i)? as u32;
        nanos = digits * 10u32.pow(9 - (i - start) as u32);
    }
    let offset = match b.get(i..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            (oh * 3600 + om * 60) * if *sign == b'+' { 1 } else { -1 }
        }
        _ => return None,
    };
    Some((
        days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset,
        nanos,
    ))
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// Formats nanoseconds like Go's `time.Duration.String` (`1h2m3.5s`, `1.5ms`, `0s`).
pub(crate) fn format_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let frac = |v: u64, unit: u64, digits: usize| -> String {
        let f = format!("{:0digits$}", v % unit);
        let f = f.trim_end_matches('0');
        if f.is_empty() {
            format!("{}", v / unit)
        } else {
            format!("{}.{f}", v / unit)
        }
    };
    if u < 1_000 {
        return format!("{sign}{u}ns");
    }
    if u < 1_000_000 {
        return format!("{sign}{}µs", frac(u, 1_000, 3));
    }
    if u < 1_000_000_000 {
        return format!("{sign}{}ms", frac(u, 1_000_000, 6));
    }
    let (h, rest) = (u / 3_600_000_000_000, u % 3_600_000_000_000);
    let (m, s) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let secs = frac(s, 1_000_000_000, 9);
    match (h, m) {
        (0, 0) => format!("{sign}{secs}s"),
        (0, m) => format!("{sign}{m}m{secs}s"),
        (h, m) => format!("{sign}{h}h{m}m{secs}s"),
    }
}

/// Parses a Go duration string (`1h30m`, `1.5s`, `-2ms`, `0`) into nanoseconds.
pub(crate) fn parse_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int, mut tail) = rest.split_at(int_end);
        let mut frac = "";
        if let Some(t) = tail.strip_prefix('.') {
            let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
            (frac, tail) = t.split_at(end);
        }
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_end);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: i128 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let mut part = whole.checked_mul(scale)?;
        let mut div: i128 = 1;
        for d in frac.bytes().take(18) {
            div *= 10;
            part += i128::from(d - b'0') * scale / div;
        }
        total = total.checked_add(part)?;
        if total > i128::from(i64::MAX) {
            return None;
        }
        rest = next;
    }
    i64::try_from(if neg { -total } else { total }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(format_time(0, None).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_time(1_709_251_200, None).unwrap(),
            "2024-03-01T00:00:00Z"
        );
        assert_eq!(
            format_time(951_868_800 - 1, Some(5)).unwrap(),
            "2000-02-29T23:59:59.000005Z"
        );
        assert_eq!(
            format_time(MIN_SECONDS, None).unwrap(),
            "0000-01-01T00:00:00Z"
        );
        assert_eq!(
            format_time(MAX_SECONDS, None).unwrap(),
            "9999-12-31T23:59:59Z"
        );
        assert!(format_time(MAX_SECONDS + 1, None).is_err());
        assert!(format_time(i64::MIN, None).is_err());
        assert_eq!(parse_time("2024-03-01T00:00:00Z"), Some((1_709_251_200, 0)));
        assert_eq!(
            parse_time("2024-03-01T02:00:00.25+02:00"),
            Some((1_709_251_200, 250_000_000))
        );
        for bad in [
            "",
            "2024-02-30T00:00:00Z",
            "2024-03-01 00:00:00Z",
            "2024-03-01T00:00:00",
            "x024-03-01T00:00:00Z",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
        for s in [-1i64, 0, 86_399, 1_000_000_000, MIN_SECONDS, MAX_SECONDS] {
            assert_eq!(parse_time(&format_time(s, None).unwrap()), Some((s, 0)));
        }
    }

    #[test]
    fn durations() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (1_500_000, "1.5ms"),
            (1_000_000_000, "1s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-2_000_000, "-2ms"),
        ];
        for (n, s) in cases {
            assert_eq!(format_duration(n), s);
            assert_eq!(parse_duration(s), Some(n), "{s}");
        }
        assert_eq!(format_duration(i64::MIN), "-2562047h47m16.854775808s");
        assert_eq!(parse_duration("1.5h"), Some(5_400_000_000_000));
        for bad in ["", "-", "1", "1x", "h", "99999999999999999999h", ".s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
