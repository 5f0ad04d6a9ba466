//! Resource quantities (`500m`, `1.5Gi`, `2e3`), parsed exactly, added, compared and printed
//! as apimachinery's `resource.Quantity` prints them.
//!
//! A [`Quantity`] holds its value in nano-units as an `i128`, which is exact for every suffix
//! from `n` to `E`/`Ei`, and remembers whether it was written in binary (`Ki`…`Ei`) or decimal
//! form, so that sums print in the form of their first operand as upstream's do.
//!
//! ```
//! use mni_formats::quantity::Quantity;
//!
//! let a: Quantity = "1.5Gi".parse().unwrap();
//! let b: Quantity = "512Mi".parse().unwrap();
//! assert_eq!((a + b).to_string(), "2Gi");
//! assert_eq!("0.1".parse::<Quantity>().unwrap().to_string(), "100m");
//! assert!("250m".parse::<Quantity>().unwrap() < "1".parse().unwrap());
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Nano-units per unit.
const NANO: i128 = 1_000_000_000;

/// Why a string is not a quantity; the message is apimachinery's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    /// Not of the form `<signedNumber><suffix>`.
    Format(String),
    /// Finer than a nano-unit or too large to hold.
    OutOfRange(String),
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantityError::Format(_) => {
                f.write_str("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
            }
            QuantityError::OutOfRange(s) => write!(f, "quantity {s:?} is out of range"),
        }
    }
}

impl std::error::Error for QuantityError {}

/// How a quantity is written: binary suffixes or decimal ones (and exponents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, `Gi`, …
    BinarySi,
    /// `m`, `k`, `M`, `G`, … and plain numbers.
    DecimalSi,
    /// `1e3`.
    DecimalExponent,
}

/// A resource quantity, exact to the nano-unit.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

impl Quantity {
    /// Zero, in decimal form.
    pub const ZERO: Quantity = Quantity {
        nanos: 0,
        format: Format::DecimalSi,
    };

    /// A whole number of units (`pods=3`).
    pub fn from_units(n: i64) -> Self {
        Quantity {
            nanos: i128::from(n) * NANO,
            format: Format::DecimalSi,
        }
    }

    /// The value in nano-units.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// The value in milli-units, rounded up as `MilliValue` does.
    pub fn millis(&self) -> i128 {
        div_ceil(self.nanos, 1_000_000)
    }

    /// The value in whole units, rounded up as `Value` does.
    pub fn units(&self) -> i128 {
        div_ceil(self.nanos, NANO)
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The form the quantity is printed in.
    pub fn format(&self) -> Format {
        self.format
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && (a > 0) == (b > 0) {
        q + 1
    } else {
        q
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl std::ops::Add for Quantity {
    type Output = Quantity;
    fn add(self, rhs: Quantity) -> Quantity {
        let format = if self.nanos == 0 {
            rhs.format
        } else {
            self.format
        };
        Quantity {
            nanos: self.nanos.saturating_add(rhs.nanos),
            format,
        }
    }
}

impl std::ops::Sub for Quantity {
    type Output = Quantity;
    fn sub(self, rhs: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_sub(rhs.nanos),
            format: self.format,
        }
    }
}

impl std::ops::AddAssign for Quantity {
    fn add_assign(&mut self, rhs: Quantity) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for Quantity {
    fn sum<I: Iterator<Item = Quantity>>(iter: I) -> Quantity {
        iter.fold(Quantity::ZERO, |a, b| a + b)
    }
}

/// `(numerator, denominator)` of a suffix's multiplier, and its form.
fn suffix_scale(suffix: &str) -> Option<(i128, i128, Format)> {
    let binary = |p: u32| Some((1i128 << (10 * p), 1, Format::BinarySi));
    let decimal = |e: i32| {
        if e >= 0 {
            Some((10i128.pow(e.unsigned_abs()), 1, Format::DecimalSi))
        } else {
            Some((1, 10i128.pow(e.unsigned_abs()), Format::DecimalSi))
        }
    };
    match suffix {
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        _ => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let e: i32 = exp.parse().ok()?;
            if !(-30..=30).contains(&e) {
                return None;
            }
            decimal(e).map(|(n, d, _)| (n, d, Format::DecimalExponent))
        }
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || QuantityError::Format(s.to_string());
        let (negative, rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(split);
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && frac.is_empty()) || frac.contains('.') {
            return Err(bad());
        }
        let (num, den, format) = suffix_scale(suffix).ok_or_else(bad)?;
        let range = || QuantityError::OutOfRange(s.to_string());
        // value = digits / 10^frac_len * num / den, in nanos.
        let digits: String = format!("{whole}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 36 {
            return Err(range());
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| range())?
        };
        let frac_scale = 10i128
            .checked_pow(u32::try_from(frac.len()).map_err(|_| range())?)
            .ok_or_else(range)?;
        let scaled = mantissa
            .checked_mul(NANO)
            .and_then(|v| v.checked_mul(num))
            .ok_or_else(range)?;
        let divisor = frac_scale.checked_mul(den).ok_or_else(range)?;
        // Finer than a nano-unit rounds up, as apimachinery rounds to its smallest scale.
        let nanos = div_ceil(scaled, divisor);
        Ok(Quantity {
            nanos: if negative { -nanos } else { nanos },
            format,
        })
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanos < 0 { "-" } else { "" };
        let n = self.nanos.abs();
        if n == 0 {
            return f.write_str("0");
        }
        if self.format == Format::BinarySi && n % NANO == 0 && n / NANO >= 1024 {
            let mut units = n / NANO;
            let mut power = 0;
            while power < 6 && units % 1024 == 0 {
                units /= 1024;
                power += 1;
            }
            if power > 0 {
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
                return write!(f, "{sign}{units}{suffix}");
            }
        }
        if self.format == Format::DecimalExponent && n % NANO == 0 {
            let (mut units, mut exp) = (n / NANO, 0);
            while units % 1000 == 0 {
                units /= 1000;
                exp += 3;
            }
            return if exp == 0 {
                write!(f, "{sign}{units}")
            } else {
                write!(f, "{sign}{units}e{exp}")
            };
        }
        // Decimal: the largest suffix that keeps the number whole.
        let scales: [(i128, &str); 9] = [
            (NANO * 10i128.pow(9) * 10i128.pow(9), "E"),
            (NANO * 10i128.pow(15), "P"),
            (NANO * 10i128.pow(12), "T"),
            (NANO * 10i128.pow(9), "G"),
            (NANO * 10i128.pow(6), "M"),
            (NANO * 1000, "k"),
            (NANO, ""),
            (1_000_000, "m"),
            (1_000, "u"),
        ];
        for (scale, suffix) in scales {
            if n % scale == 0 {
                return write!(f, "{sign}{}{suffix}", n / scale);
            }
        }
        write!(f, "{sign}{n}n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_every_suffix_exactly() {
        assert_eq!(q("1").nanos(), NANO);
        assert_eq!(q("100m").millis(), 100);
        assert_eq!(q("0.1").millis(), 100);
        assert_eq!(q(".5").millis(), 500);
        assert_eq!(q("1Ki").units(), 1024);
        assert_eq!(q("1.5Gi").units(), 1_610_612_736);
        assert_eq!(q("2k").units(), 2000);
        assert_eq!(q("1e3").units(), 1000);
        assert_eq!(q("1E3").units(), 1000);
        assert_eq!(q("5e-3").millis(), 5);
        assert_eq!(q("-2").units(), -2);
        assert_eq!(q("+7").units(), 7);
        assert_eq!(q("250u").nanos(), 250_000);
        assert_eq!(q("3n").nanos(), 3);
        assert_eq!(q("1Ei").units(), 1 << 60);
    }

    #[test]
    fn refuses_what_apimachinery_refuses() {
        for bad in [
            "", "abc", "1.2.3", "1Gb", "Mi", "1 Gi", "1e", "1ee3", "--1", ".",
        ] {
            assert!(bad.parse::<Quantity>().is_err(), "{bad:?} accepted");
        }
        assert!(matches!(
            "1".repeat(40).parse::<Quantity>(),
            Err(QuantityError::OutOfRange(_))
        ));
    }

    #[test]
    fn prints_canonically() {
        for (input, want) in [
            ("1000", "1k"),
            ("0.5", "500m"),
            ("1.5Gi", "1536Mi"),
            ("2048Ki", "2Mi"),
            ("1000Mi", "1000Mi"),
            ("100", "100"),
            ("1500m", "1500m"),
            ("0", "0"),
            ("-1k", "-1k"),
            ("1e3", "1e3"),
            ("15e2", "1500"),
            ("512", "512"),
        ] {
            assert_eq!(q(input).to_string(), want, "{input}");
        }
    }

    #[test]
    fn adds_and_compares_across_forms() {
        assert_eq!(q("1Gi") + q("1Gi"), q("2Gi"));
        assert_eq!((q("1Gi") + q("1Gi")).to_string(), "2Gi");
        assert_eq!((q("500m") + q("500m")).to_string(), "1");
        assert!(q("1Gi") > q("1G"));
        assert!(q("999m") < q("1"));
        assert_eq!(q("1") - q("250m"), q("750m"));
        let total: Quantity = ["100m", "200m", "0.7"].iter().map(|s| q(s)).sum();
        assert_eq!(total, q("1"));
        assert_eq!((Quantity::ZERO + q("1Gi")).to_string(), "1Gi");
    }
}
