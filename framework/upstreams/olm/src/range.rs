//! Version ranges as OLM writes them (`skipRange`, `olm.package` dependencies): the syntax of
//! blang/semver's `ParseRange`, which opm uses — comparators separated by spaces are ANDed,
//! alternatives separated by `||` are ORed: `>=0.1.0 <0.2.0 || 1.0.0`.

use semver::Version;

/// Why a version range does not parse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RangeError {
    /// The range, or one alternative of it, has no comparator.
    #[error("version range {0:?} is empty; write e.g. \">=0.1.0 <0.2.0\"")]
    Empty(String),
    /// A comparator's version is not a full semantic version.
    #[error(
        "version range {range:?}: {version:?} is not a semantic version (MAJOR.MINOR.PATCH): {source}"
    )]
    Version {
        /// The whole range.
        range: String,
        /// The offending version text.
        version: String,
        /// What the semver parser said.
        #[source]
        source: semver::Error,
    },
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A parsed version range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    alternatives: Vec<Vec<(Op, Version)>>,
}

impl VersionRange {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Self, RangeError> {
        let mut alternatives = Vec::new();
        for alternative in text.split("||") {
            let mut all = Vec::new();
            for part in alternative.split_whitespace() {
                let (op, rest) = [
                    (">=", Op::Ge),
                    ("<=", Op::Le),
                    ("!=", Op::Ne),
                    ("==", Op::Eq),
                    (">", Op::Gt),
                    ("<", Op::Lt),
                    ("=", Op::Eq),
                    ("!", Op::Ne),
                ]
                .iter()
                .find_map(|(p, op)| part.strip_prefix(p).map(|rest| (*op, rest)))
                .unwrap_or((Op::Eq, part));
                let version = Version::parse(rest).map_err(|source| RangeError::Version {
                    range: text.to_owned(),
                    version: rest.to_owned(),
                    source,
                })?;
                all.push((op, version));
            }
            if all.is_empty() {
                return Err(RangeError::Empty(text.to_owned()));
            }
            alternatives.push(all);
        }
        Ok(Self { alternatives })
    }

    /// Whether `version` is in the range.
    pub fn matches(&self, version: &Version) -> bool {
        self.alternatives.iter().any(|all| {
            all.iter().all(|(op, v)| match op {
                Op::Eq => version == v,
                Op::Ne => version != v,
                Op::Gt => version > v,
                Op::Ge => version >= v,
                Op::Lt => version < v,
                Op::Le => version <= v,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(range: &str, version: &str, expected: bool) {
        let r = VersionRange::parse(range).expect("parses");
        assert_eq!(
            r.matches(&Version::parse(version).expect("version")),
            expected,
            "{range} ∋ {version}"
        );
    }

    #[test]
    fn ranges_match_as_blang_does() {
        check(">=0.1.0 <0.2.0", "0.1.5", true);
        check(">=0.1.0 <0.2.0", "0.2.0", false);
        check("<0.1.0 || >=1.0.0", "1.2.0", true);
        check("0.1.0", "0.1.0", true);
        check("!0.1.0", "0.1.0", false);
    }

    #[test]
    fn bad_ranges_are_named() {
        let err = VersionRange::parse(">=0.1 <0.2.0").expect_err("partial version");
        assert!(err.to_string().contains("\"0.1\""), "{err}");
        assert!(VersionRange::parse(" || ").is_err());
    }
}
