//! String formats checked by kube-openapi's default format registry (`strfmt.Default`).

use std::net::IpAddr;
use std::sync::LazyLock;

use regex::Regex;

/// Whether kube-openapi knows the format (names are compared without dashes).
pub(super) fn is_known(format: &str) -> bool {
    matches!(
        format.replace('-', "").as_str(),
        "datetime"
            | "date"
            | "duration"
            | "uri"
            | "email"
            | "hostname"
            | "ipv4"
            | "ipv6"
            | "cidr"
            | "mac"
            | "uuid"
            | "uuid3"
            | "uuid4"
            | "uuid5"
            | "isbn"
            | "isbn10"
            | "isbn13"
            | "creditcard"
            | "ssn"
            | "hexcolor"
            | "rgbcolor"
            | "byte"
            | "password"
    )
}

fn re(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

fn matches(re: &LazyLock<Option<Regex>>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

static HOSTNAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static EMAIL: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^[^@\s<>()\[\]\\,;:]+@[^@\s<>()\[\]\\,;:]+$"));
static UUID: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static SSN: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"));
static HEXCOLOR: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let c = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*";
    re(&format!(r"^rgb\({c},{c},{c}\)$"))
});
static URI_SCHEME: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:"));
static DURATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(\s*\d+\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|sec|min|hr|hrs|mins|secs))+\s*$",
    )
});
static GO_DURATION: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^[-+]?(0|(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$"));

/// Validates `value` against a known format.
pub(super) fn validate(format: &str, value: &str) -> bool {
    match format.replace('-', "").as_str() {
        "datetime" => is_date_time(value),
        "date" => is_date(value),
        "duration" => {
            matches(&DURATION, value) || (!value.is_empty() && matches(&GO_DURATION, value))
        }
        "uri" => is_request_uri(value),
        "email" => matches(&EMAIL, value),
        "hostname" => value.len() <= 255 && matches(&HOSTNAME, value),
        "ipv4" => value.parse::<IpAddr>().is_ok() && value.contains('.'),
        "ipv6" => value.parse::<IpAddr>().is_ok() && value.contains(':'),
        "cidr" => is_cidr(value),
        "mac" => is_mac(value),
        "uuid" => matches(&UUID, value),
        "uuid3" => matches(&UUID3, value),
        "uuid4" => matches(&UUID4, value),
        "uuid5" => matches(&UUID5, value),
        "isbn" => is_isbn10(value) || is_isbn13(value),
        "isbn10" => is_isbn10(value),
        "isbn13" => is_isbn13(value),
        "creditcard" => is_credit_card(value),
        "ssn" => matches(&SSN, value),
        "hexcolor" => matches(&HEXCOLOR, value),
        "rgbcolor" => matches(&RGBCOLOR, value),
        "byte" => is_base64(value),
        _ => true,
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `YYYY-MM-DD` strictly, checking the day exists.
pub(crate) fn parse_date(s: &str) -> Option<(i64, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = digits(&s[0..4])? as i64;
    let month = digits(&s[5..7])?;
    let day = digits(&s[8..10])?;
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&day).then_some((year, month, day))
}

fn is_date(s: &str) -> bool {
    parse_date(s).is_some()
}

/// Parses an RFC 3339 / ISO 8601 date-time as strfmt accepts it; returns Unix seconds.
pub(crate) fn parse_date_time(s: &str) -> Option<i64> {
    let (date, rest) = (s.get(..10)?, s.get(10..)?);
    let (year, month, day) = parse_date(date)?;
    let rest = rest.strip_prefix('T')?;
    // Time zone suffix: Z, ±HH:MM, or none (local time, taken as UTC).
    let (time, offset) = if let Some(t) = rest.strip_suffix('Z') {
        (t, 0)
    } else if rest.len() > 6 && matches!(rest.as_bytes()[rest.len() - 6], b'+' | b'-') {
        let (t, z) = rest.split_at(rest.len() - 6);
        let zb = z.as_bytes();
        if zb[3] != b':' {
            return None;
        }
        let (h, m) = (digits(&z[1..3])?, digits(&z[4..6])?);
        if h > 23 || m > 59 {
            return None;
        }
        let off = (h * 3600 + m * 60) as i64;
        (t, if zb[0] == b'-' { -off } else { off })
    } else {
        (rest, 0)
    };
    let (hms, frac) = match time.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (time, None),
    };
    if let Some(frac) = frac
        && digits(frac).is_none()
        && !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    if frac.is_some_and(str::is_empty) {
        return None;
    }
    let parts: Vec<&str> = hms.split(':').collect();
    let (h, m, sec) = match parts.as_slice() {
        [h, m] if frac.is_none() => (*h, *m, "00"),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    if h.len() != 2 || m.len() != 2 || sec.len() != 2 {
        return None;
    }
    let (h, m, sec) = (digits(h)?, digits(m)?, digits(sec)?);
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(days * 86400 + (h * 3600 + m * 60 + sec) as i64 - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn is_date_time(s: &str) -> bool {
    parse_date_time(s).is_some()
}

fn is_request_uri(s: &str) -> bool {
    !s.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        && (s.starts_with('/') || matches(&URI_SCHEME, s))
}

/// Go's `net.ParseCIDR`, as the OpenAPI `cidr` format checks it.
fn is_cidr(s: &str) -> bool {
    mni_formats::net::Cidr::parse_lenient(s).is_ok()
}

fn is_mac(s: &str) -> bool {
    let hex2 = |p: &str| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit());
    let hex4 = |p: &str| p.len() == 4 && p.bytes().all(|b| b.is_ascii_hexdigit());
    let ok_len = |n: usize| matches!(n, 6 | 8 | 20);
    for sep in [':', '-'] {
        let parts: Vec<&str> = s.split(sep).collect();
        if parts.len() > 1 && ok_len(parts.len()) && parts.iter().all(|p| hex2(p)) {
            return true;
        }
    }
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() > 1 && ok_len(parts.len() * 2) && parts.iter().all(|p| hex4(p))
}

fn is_base64(s: &str) -> bool {
    let cleaned: Vec<u8> = s.bytes().filter(|b| *b != b'\r' && *b != b'\n').collect();
    if !cleaned.len().is_multiple_of(4) {
        return false;
    }
    let pad = cleaned.iter().rev().take_while(|b| **b == b'=').count();
    if pad > 2 {
        return false;
    }
    cleaned[..cleaned.len() - pad]
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
}

fn isbn_digits(s: &str) -> Vec<char> {
    s.chars().filter(|c| *c != '-' && *c != ' ').collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 10 {
        return false;
    }
    let mut sum = 0;
    for (i, c) in d.iter().enumerate() {
        let v = match (i, c) {
            (9, 'X') => 10,
            (_, c) => match c.to_digit(10) {
                Some(v) => v,
                None => return false,
            },
        };
        sum += (i as u32 + 1) * v;
    }
    sum % 11 == 0
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 13 {
        return false;
    }
    let mut sum = 0;
    for (i, c) in d.iter().enumerate() {
        let Some(v) = c.to_digit(10) else {
            return false;
        };
        sum += if i % 2 == 0 { v } else { 3 * v };
    }
    sum.is_multiple_of(10)
}

fn is_credit_card(s: &str) -> bool {
    let d: Vec<u32> = s
        .chars()
        .filter(|c| *c != '-' && *c != ' ')
        .filter_map(|c| c.to_digit(10))
        .collect();
    if d.len() < 12 || d.len() != s.chars().filter(|c| *c != '-' && *c != ' ').count() {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, v)| {
            if i % 2 == 1 {
                if v * 2 > 9 { v * 2 - 9 } else { v * 2 }
            } else {
                *v
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let cases: &[(&str, &str, bool)] = &[
            ("date-time", "2024-01-02T03:04:05Z", true),
            ("date-time", "2024-01-02T03:04:05.123+02:00", true),
            ("date-time", "2024-02-30T03:04:05Z", false),
            ("date-time", "yesterday", false),
            ("datetime", "2024-01-02T03:04", true),
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "123e4567", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "::1", false),
            ("ipv6", "fe80::1", true),
            ("ipv6", "10.0.0.1", false),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("mac", "01:23:45:67:89:ab", true),
            ("mac", "0123.4567.89ab", true),
            ("mac", "01:23", false),
            ("hostname", "example.com", true),
            ("hostname", "-bad-", false),
            ("email", "a@b.c", true),
            ("email", "nope", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "aGVsbG8", false),
            ("duration", "1h30m", true),
            ("duration", "3 days", true),
            ("duration", "soon", false),
            ("uri", "https://example.com/x", true),
            ("uri", "not a uri", false),
            ("hexcolor", "#fff", true),
            ("rgbcolor", "rgb(1, 2, 300)", false),
            ("isbn", "978-3-16-148410-0", true),
            ("creditcard", "4111 1111 1111 1111", true),
            ("ssn", "123-45-6789", true),
            ("password", "anything", true),
        ];
        for (format, value, want) in cases {
            assert!(is_known(format), "{format}");
            assert_eq!(validate(format, value), *want, "{format} {value}");
        }
        assert!(!is_known("int32"));
        assert_eq!(parse_date_time("1970-01-01T00:01:00Z"), Some(60));
        assert_eq!(parse_date_time("1970-01-01T01:00:00+01:00"), Some(0));
    }
}
