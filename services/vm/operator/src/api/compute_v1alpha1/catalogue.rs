// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The instance types: a small built-in catalogue of sizes, and the limits of explicit
//! `resources`.
//!
//! | Type | Cores | Memory |
//! |---|---|---|
//! | `s1.small` | 1 | 2Gi |
//! | `s1.medium` | 2 | 4Gi |
//! | `s1.large` | 4 | 8Gi |
//! | `m1.large` | 4 | 16Gi |
//! | `m1.xlarge` | 8 | 32Gi |
//!
//! The CEL rules of the Instance schema list the same names and limits (a test compares
//! them).

/// One instance type: a name, cores and memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceType {
    /// The name, e.g. `s1.small`.
    pub name: &'static str,
    /// Virtual CPU cores.
    pub cores: i64,
    /// Guest memory in MiB.
    pub memory_mib: i64,
}

impl InstanceType {
    /// The memory as a quantity (`2Gi`, `512Mi`).
    #[must_use]
    pub fn memory(&self) -> String {
        format_mib(self.memory_mib)
    }
}

/// The catalogue, smallest first.
pub const INSTANCE_TYPES: &[InstanceType] = &[
    InstanceType {
        name: "s1.small",
        cores: 1,
        memory_mib: 2 * 1024,
    },
    InstanceType {
        name: "s1.medium",
        cores: 2,
        memory_mib: 4 * 1024,
    },
    InstanceType {
        name: "s1.large",
        cores: 4,
        memory_mib: 8 * 1024,
    },
    InstanceType {
        name: "m1.large",
        cores: 4,
        memory_mib: 16 * 1024,
    },
    InstanceType {
        name: "m1.xlarge",
        cores: 8,
        memory_mib: 32 * 1024,
    },
];

/// The most cores explicit `resources` may ask for.
pub const MAX_CORES: i64 = 32;

/// The most memory explicit `resources` may ask for, in MiB (`128Gi`).
pub const MAX_MEMORY_MIB: i64 = 128 * 1024;

/// The instance type called `name`.
#[must_use]
pub fn find(name: &str) -> Option<&'static InstanceType> {
    INSTANCE_TYPES.iter().find(|t| t.name == name)
}

/// The names of the catalogue, comma-separated, as messages list them.
#[must_use]
pub fn names() -> String {
    INSTANCE_TYPES
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `N` MiB as a quantity: `NGi` when whole gibibytes, else `NMi`.
#[must_use]
pub fn format_mib(mib: i64) -> String {
    if mib % 1024 == 0 {
        format!("{}Gi", mib / 1024)
    } else {
        format!("{mib}Mi")
    }
}

/// A quantity of the form the schema allows (`N` followed by one of `units`, N without
/// leading zeros and at most 7 digits) in MiB, or `None` when it is not of that form.
/// `units` are among `Mi`, `Gi` and `Ti`.
#[must_use]
pub fn parse_mib(quantity: &str, units: &[&str]) -> Option<i64> {
    let unit = units.iter().find(|u| quantity.ends_with(*u))?;
    let digits = &quantity[..quantity.len() - unit.len()];
    let well_formed = !digits.is_empty()
        && digits.len() <= 7
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit());
    if !well_formed {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    Some(match *unit {
        "Gi" => n * 1024,
        "Ti" => n * 1024 * 1024,
        _ => n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_in_mib() {
        assert_eq!(parse_mib("4Gi", &["Mi", "Gi"]), Some(4096));
        assert_eq!(parse_mib("512Mi", &["Mi", "Gi"]), Some(512));
        assert_eq!(parse_mib("1Ti", &["Mi", "Gi", "Ti"]), Some(1024 * 1024));
        for bad in [
            "",
            "Gi",
            "04Gi",
            "4G",
            "4gi",
            "-4Gi",
            "1.5Gi",
            "12345678Gi",
            "1Ti",
        ] {
            assert_eq!(parse_mib(bad, &["Mi", "Gi"]), None, "{bad}");
        }
        assert_eq!(format_mib(2048), "2Gi");
        assert_eq!(format_mib(1536), "1536Mi");
    }

    #[test]
    fn the_catalogue_fits_the_limits() {
        for t in INSTANCE_TYPES {
            assert!(
                t.cores <= MAX_CORES && t.memory_mib <= MAX_MEMORY_MIB,
                "{t:?}"
            );
        }
        assert_eq!(
            find("s1.small").map(InstanceType::memory).as_deref(),
            Some("2Gi")
        );
        assert_eq!(find("t2.micro"), None);
        assert_eq!(
            names(),
            "s1.small, s1.medium, s1.large, m1.large, m1.xlarge"
        );
    }
}
