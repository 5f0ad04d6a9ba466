//! Cron schedules as a CronJob's `spec.schedule` is read: the standard five fields
//! (minute, hour, day of month, month, day of week) or a descriptor (`@hourly`, `@daily`,
//! `@midnight`, `@weekly`, `@monthly`, `@yearly`, `@annually`, `@every <duration>`).
//!
//! This is the grammar of `robfig/cron`'s `ParseStandard`, the parser kube-apiserver validates
//! schedules with and kube-controller-manager schedules Jobs by: lists (`1,15`), ranges
//! (`1-5`), steps (`*/10`, `5/15`, `1-30/2`), `?` for `*`, month and weekday names (`JAN`,
//! `mon`), days of week 0–6 with Sunday 0. When both day fields are restricted a time matches
//! either; when one is `*` or `?` it must match both (so `0 0 * * 1` is "Mondays"). Errors
//! carry robfig's messages, which kube-apiserver returns verbatim.
//!
//! [`Schedule::next_after`] works on a wall-clock [`DateTime`]: the caller converts to and from
//! the CronJob's time zone.
//!
//! ```
//! use mni_formats::cron::{DateTime, Schedule};
//!
//! let every_quarter = Schedule::parse("*/15 9-17 * * MON-FRI").unwrap();
//! let friday_evening = DateTime::new(2026, 12, 4, 17, 50, 0);
//! // The next run is Monday at nine.
//! assert_eq!(every_quarter.next_after(friday_evening), Some(DateTime::new(2026, 12, 7, 9, 0, 0)));
//! assert_eq!(
//!     Schedule::parse("0 0 * *").unwrap_err().to_string(),
//!     "expected exactly 5 fields, found 4: [0 0 * *]"
//! );
//! ```

use std::fmt;
use std::time::Duration;

/// Why a string is not a schedule; `Display` gives robfig/cron's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    /// The schedule is empty or blank.
    Empty,
    /// Not five fields.
    FieldCount {
        /// The fields found.
        fields: Vec<String>,
    },
    /// A `@` word that is not a descriptor.
    UnknownDescriptor(String),
    /// `@every` with something that is not a positive Go duration.
    Every {
        /// What followed `@every `.
        value: String,
    },
    /// A number that is not a decimal.
    Int {
        /// The text that should have been a number.
        value: String,
    },
    /// A field (or one entry of a list) is malformed or out of range.
    Field {
        /// What is wrong, without the expression.
        reason: String,
        /// The expression, as written.
        expr: String,
    },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("empty spec string"),
            Self::FieldCount { fields } => write!(
                f,
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ),
            Self::UnknownDescriptor(d) => write!(f, "unrecognized descriptor: {d}"),
            Self::Every { value } => write!(
                f,
                "failed to parse duration @every {value}: time: invalid duration \"{value}\""
            ),
            Self::Int { value } => write!(
                f,
                "failed to parse int from {value}: strconv.Atoi: parsing \"{value}\": invalid syntax"
            ),
            Self::Field { reason, expr } => write!(f, "{reason}: {expr}"),
        }
    }
}

impl std::error::Error for ScheduleError {}

/// A wall-clock time to the second, in whatever zone the caller works in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    /// The year.
    pub year: i32,
    /// The month, 1–12.
    pub month: u8,
    /// The day of the month, 1–31.
    pub day: u8,
    /// The hour, 0–23.
    pub hour: u8,
    /// The minute, 0–59.
    pub minute: u8,
    /// The second, 0–59.
    pub second: u8,
}

impl DateTime {
    /// A date and time; the caller keeps the fields in range.
    #[must_use]
    pub const fn new(year: i32, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> Self {
        Self {
            year,
            month,
            day,
            hour,
            minute,
            second,
        }
    }

    /// Days since 1970-01-01 of this date (Howard Hinnant's `days_from_civil`).
    fn days(&self) -> i64 {
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Seconds since 1970-01-01T00:00:00 of this wall-clock time.
    #[must_use]
    pub fn seconds(&self) -> i64 {
        self.days() * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }

    /// The wall-clock time `seconds` after 1970-01-01T00:00:00 (`civil_from_days`).
    #[must_use]
    pub fn from_seconds(seconds: i64) -> Self {
        let days = seconds.div_euclid(86_400);
        let secs = seconds.rem_euclid(86_400);
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        // Every value is in range by construction.
        let small = |v: i64| u8::try_from(v).unwrap_or(0);
        Self {
            year: i32::try_from(year).unwrap_or(i32::MAX),
            month: small(month),
            day: small(day),
            hour: small(secs / 3600),
            minute: small(secs / 60 % 60),
            second: small(secs % 60),
        }
    }

    /// The day of the week, Sunday 0.
    fn weekday(&self) -> u8 {
        // 1970-01-01 was a Thursday.
        u8::try_from((self.days() + 4).rem_euclid(7)).unwrap_or(0)
    }
}

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// The five fields, as bit sets.
    Fields(Fields),
    /// `@every <duration>`: a fixed delay, rounded to whole seconds.
    Every(Duration),
}

/// The five fields of a cron expression as bit sets (bit `n` set: value `n` matches).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
    /// The day-of-month field was `*` or `?`.
    dom_star: bool,
    /// The day-of-week field was `*` or `?`.
    dow_star: bool,
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// One field's bounds and names (names map to `first + index`).
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
    first: u32,
}

const MINUTE: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
    first: 0,
};
const HOUR: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
    first: 0,
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
    first: 0,
};
const MONTH: Bounds = Bounds {
    min: 1,
    max: 12,
    names: MONTHS,
    first: 1,
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: DAYS,
    first: 0,
};

fn field_error(reason: String, expr: &str) -> ScheduleError {
    ScheduleError::Field {
        reason,
        expr: expr.to_string(),
    }
}

/// A number or a name, as robfig's `parseIntOrName`.
fn int_or_name(s: &str, b: &Bounds) -> Result<u32, ScheduleError> {
    let lower = s.to_ascii_lowercase();
    if let Some(i) = b.names.iter().position(|n| *n == lower) {
        return Ok(b.first + u32::try_from(i).unwrap_or(0));
    }
    parse_int(s)
}

/// A non-negative decimal, as robfig's `mustParseInt` (its messages name the number only).
fn parse_int(s: &str) -> Result<u32, ScheduleError> {
    let n: i64 = s.parse().map_err(|_| ScheduleError::Int {
        value: s.to_string(),
    })?;
    if n < 0 {
        return Err(field_error(format!("negative number ({n}) not allowed"), s));
    }
    u32::try_from(n).map_err(|_| ScheduleError::Int {
        value: s.to_string(),
    })
}

/// One entry of a list (`*`, `n`, `a-b`, with an optional `/step`), as robfig's `getRange`.
fn range(expr: &str, b: &Bounds) -> Result<(u64, bool), ScheduleError> {
    let (range_part, step_part) = match expr.split_once('/') {
        Some((r, s)) if !s.contains('/') => (r, Some(s)),
        Some(_) => return Err(field_error("too many slashes".into(), expr)),
        None => (expr, None),
    };
    let star = range_part == "*" || range_part == "?";
    let (start, mut end) = if star {
        (b.min, b.max)
    } else {
        let mut parts = range_part.split('-');
        let low = parts.next().unwrap_or_default();
        let start = int_or_name(low, b)?;
        let end = match (parts.next(), parts.next()) {
            (None, _) => start,
            (Some(high), None) => int_or_name(high, b)?,
            (Some(_), Some(_)) => return Err(field_error("too many hyphens".into(), expr)),
        };
        (start, end)
    };
    let step = match step_part {
        None => 1,
        Some(s) => {
            let step = parse_int(s)?;
            // `N/step` means from N to the field's maximum.
            if !star && !range_part.contains('-') {
                end = b.max;
            }
            step
        }
    };
    if start < b.min {
        return Err(field_error(
            format!("beginning of range ({start}) below minimum ({})", b.min),
            expr,
        ));
    }
    if end > b.max {
        return Err(field_error(
            format!("end of range ({end}) above maximum ({})", b.max),
            expr,
        ));
    }
    if start > end {
        return Err(field_error(
            format!("beginning of range ({start}) beyond end of range ({end})"),
            expr,
        ));
    }
    if step == 0 {
        return Err(field_error(
            "step of range should be a positive number".into(),
            expr,
        ));
    }
    let mut bits = 0u64;
    let mut v = start;
    while v <= end {
        bits |= 1 << v;
        v += step;
    }
    // robfig's star bit: `*` or `?` without a step greater than one.
    Ok((bits, star && step == 1))
}

/// A whole field: a comma-separated list of ranges. Returns the bits and whether it was `*`.
fn field(expr: &str, b: &Bounds) -> Result<(u64, bool), ScheduleError> {
    let mut bits = 0;
    let mut star = false;
    for part in expr.split(',') {
        let (b, s) = range(part, b)?;
        bits |= b;
        star |= s;
    }
    Ok((bits, star))
}

/// A Go duration (`1h30m`, `90s`, `1.5h`), as `time.ParseDuration` reads the positive ones.
fn go_duration(s: &str) -> Option<Duration> {
    let mut rest = s;
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_len);
        let n: f64 = num.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * scale;
        rest = tail;
    }
    Some(Duration::from_secs_f64(total))
}

impl Schedule {
    /// Parses a schedule as kube-apiserver validates `spec.schedule`.
    pub fn parse(spec: &str) -> Result<Self, ScheduleError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(ScheduleError::Empty);
        }
        if let Some(word) = spec.strip_prefix('@') {
            let fields = match word {
                "yearly" | "annually" => "0 0 1 1 *",
                "monthly" => "0 0 1 * *",
                "weekly" => "0 0 * * 0",
                "daily" | "midnight" => "0 0 * * *",
                "hourly" => "0 * * * *",
                _ => {
                    if let Some(value) = word.strip_prefix("every ") {
                        // robfig rounds the delay to whole seconds, and at least one second.
                        let d = go_duration(value).ok_or_else(|| ScheduleError::Every {
                            value: value.to_string(),
                        })?;
                        let secs = d.as_secs().max(1);
                        return Ok(Self::Every(Duration::from_secs(secs)));
                    }
                    return Err(ScheduleError::UnknownDescriptor(spec.to_string()));
                }
            };
            return Self::parse(fields);
        }
        let parts: Vec<&str> = spec.split_whitespace().collect();
        if parts.len() != 5 {
            return Err(ScheduleError::FieldCount {
                fields: parts.iter().map(|s| (*s).to_string()).collect(),
            });
        }
        let (minute, _) = field(parts[0], &MINUTE)?;
        let (hour, _) = field(parts[1], &HOUR)?;
        let (dom, dom_star) = field(parts[2], &DOM)?;
        let (month, _) = field(parts[3], &MONTH)?;
        let (dow, dow_star) = field(parts[4], &DOW)?;
        Ok(Self::Fields(Fields {
            minute,
            hour,
            dom,
            month,
            dow,
            dom_star,
            dow_star,
        }))
    }

    /// The first time strictly after `after` that the schedule fires, within five years
    /// (`None` for a schedule that never fires, such as `0 0 30 2 *`).
    #[must_use]
    pub fn next_after(&self, after: DateTime) -> Option<DateTime> {
        let f = match self {
            Self::Every(d) => {
                let secs = i64::try_from(d.as_secs()).ok()?;
                return Some(DateTime::from_seconds(after.seconds() + secs));
            }
            Self::Fields(f) => f,
        };
        // The next whole minute after `after`.
        let mut t = DateTime::from_seconds(after.seconds() - i64::from(after.second) + 60);
        let limit = after.year + 5;
        while t.year <= limit {
            if f.month & (1 << t.month) == 0 {
                // The first day of the next month.
                let (y, m) = if t.month == 12 {
                    (t.year + 1, 1)
                } else {
                    (t.year, t.month + 1)
                };
                t = DateTime::new(y, m, 1, 0, 0, 0);
                continue;
            }
            if !f.day_matches(&t) {
                t = DateTime::from_seconds(
                    DateTime::new(t.year, t.month, t.day, 0, 0, 0).seconds() + 86_400,
                );
                continue;
            }
            if f.hour & (1 << t.hour) == 0 {
                t = DateTime::from_seconds(
                    DateTime::new(t.year, t.month, t.day, t.hour, 0, 0).seconds() + 3600,
                );
                continue;
            }
            if f.minute & (1 << t.minute) == 0 {
                t = DateTime::from_seconds(t.seconds() + 60);
                continue;
            }
            return Some(t);
        }
        None
    }
}

impl Fields {
    fn day_matches(&self, t: &DateTime) -> bool {
        let dom = self.dom & (1 << t.day) != 0;
        let dow = self.dow & (1 << t.weekday()) != 0;
        if self.dom_star || self.dow_star {
            dom && dow
        } else {
            dom || dow
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(spec: &str, after: DateTime) -> Option<DateTime> {
        Schedule::parse(spec).expect(spec).next_after(after)
    }

    fn err(spec: &str) -> String {
        Schedule::parse(spec).expect_err(spec).to_string()
    }

    #[test]
    fn civil_round_trip_and_weekdays() {
        for s in [0i64, 951_782_400, 1_796_169_600, -86_400, 4_102_444_799] {
            assert_eq!(DateTime::from_seconds(s).seconds(), s);
        }
        assert_eq!(
            DateTime::from_seconds(951_782_400),
            DateTime::new(2000, 2, 29, 0, 0, 0)
        );
        // 2026-12-02 is a Wednesday.
        assert_eq!(DateTime::new(2026, 12, 2, 0, 0, 0).weekday(), 3);
    }

    #[test]
    fn fields_and_steps() {
        let t = DateTime::new(2026, 12, 2, 10, 7, 30);
        assert_eq!(
            next("* * * * *", t),
            Some(DateTime::new(2026, 12, 2, 10, 8, 0))
        );
        assert_eq!(
            next("*/5 * * * *", t),
            Some(DateTime::new(2026, 12, 2, 10, 10, 0))
        );
        assert_eq!(
            next("5/20 * * * *", t),
            Some(DateTime::new(2026, 12, 2, 10, 25, 0))
        );
        assert_eq!(
            next("0 9 * * *", t),
            Some(DateTime::new(2026, 12, 3, 9, 0, 0))
        );
        assert_eq!(
            next("@hourly", t),
            Some(DateTime::new(2026, 12, 2, 11, 0, 0))
        );
        assert_eq!(next("@yearly", t), Some(DateTime::new(2027, 1, 1, 0, 0, 0)));
        assert_eq!(
            next("0 0 29 2 *", t),
            Some(DateTime::new(2028, 2, 29, 0, 0, 0))
        );
        assert_eq!(next("0 0 30 2 *", t), None);
        assert_eq!(
            next("@every 90s", t),
            Some(DateTime::new(2026, 12, 2, 10, 9, 0))
        );
    }

    #[test]
    fn day_of_month_and_week_combine_like_cron() {
        let t = DateTime::new(2026, 12, 2, 0, 0, 0); // Wednesday
        // Both restricted: either matches (the 5th is a Saturday, Friday the 4th comes first).
        assert_eq!(
            next("0 0 5 * FRI", t),
            Some(DateTime::new(2026, 12, 4, 0, 0, 0))
        );
        // Day of month `*`: Fridays only.
        assert_eq!(
            next("0 0 * * 5", t),
            Some(DateTime::new(2026, 12, 4, 0, 0, 0))
        );
        // A stepped `*` restricts the field: either matches again.
        assert_eq!(
            next("0 0 */2 * 4", t),
            Some(DateTime::new(2026, 12, 3, 0, 0, 0))
        );
        assert_eq!(
            next("0 0 * dec sun", t),
            Some(DateTime::new(2026, 12, 6, 0, 0, 0))
        );
    }

    #[test]
    fn errors_carry_robfig_messages() {
        assert_eq!(err(""), "empty spec string");
        assert_eq!(err("bad"), "expected exactly 5 fields, found 1: [bad]");
        assert_eq!(
            err("60 * * * *"),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(
            err("* * 0 * *"),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            err("* 5-2 * * *"),
            "beginning of range (5) beyond end of range (2): 5-2"
        );
        assert_eq!(
            err("*/0 * * * *"),
            "step of range should be a positive number: */0"
        );
        assert_eq!(err("1-2-3 * * * *"), "too many hyphens: 1-2-3");
        assert_eq!(err("*/2/3 * * * *"), "too many slashes: */2/3");
        assert_eq!(
            err("x * * * *"),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(err("* * * * 7"), "end of range (7) above maximum (6): 7");
        assert_eq!(err("@fortnightly"), "unrecognized descriptor: @fortnightly");
        assert!(err("@every soon").starts_with("failed to parse duration @every soon"));
    }
}
