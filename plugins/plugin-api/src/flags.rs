//! Flag declarations and parsed flag values.
//!
//! A plugin declares its flags per subcommand as [`FlagSpec`]s (name, [`FlagType`], default,
//! help); the CLI turns them into command-line options and hands the parsed values back as
//! [`FlagValues`]. [`FlagValues::parse_args`] parses raw `--name value` arguments the way
//! Kubebuilder does for external plugins, so the CLI and external plugins share one parser.

use std::collections::BTreeMap;
use std::fmt;

/// The type of a flag's value; mirrors the types Kubebuilder's external-plugin flags support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlagType {
    /// Any string.
    String,
    /// `true`/`false`; `--name` alone means `true`.
    Bool,
    /// A signed integer.
    Int,
    /// A floating-point number.
    Float,
}

impl FlagType {
    /// The wire name: `string`, `bool`, `int` or `float`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Bool => "bool",
            Self::Int => "int",
            Self::Float => "float",
        }
    }

    /// Parses a wire name; anything unknown is a string, as in Kubebuilder.
    #[must_use]
    pub fn from_wire(s: &str) -> Self {
        match s {
            "bool" => Self::Bool,
            "int" => Self::Int,
            "float" => Self::Float,
            _ => Self::String,
        }
    }
}

/// One flag a plugin accepts for a subcommand.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagSpec {
    /// The name without dashes: `domain` becomes `--domain`.
    pub name: String,
    /// The value type.
    pub flag_type: FlagType,
    /// The default, as text; `None` means the flag is unset unless given.
    pub default: Option<String>,
    /// One line of help.
    pub help: String,
}

impl FlagSpec {
    /// A flag with no default.
    #[must_use]
    pub fn new(name: &str, flag_type: FlagType, help: &str) -> Self {
        Self {
            name: name.to_owned(),
            flag_type,
            default: None,
            help: help.to_owned(),
        }
    }

    /// Sets the default value.
    #[must_use]
    pub fn with_default(mut self, default: &str) -> Self {
        self.default = Some(default.to_owned());
        self
    }
}

/// A parsed flag value.
#[derive(Debug, Clone, PartialEq)]
pub enum FlagValue {
    /// A string flag.
    String(String),
    /// A bool flag.
    Bool(bool),
    /// An int flag.
    Int(i64),
    /// A float flag.
    Float(f64),
}

impl fmt::Display for FlagValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => f.write_str(s),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x}"),
        }
    }
}

/// Why flags did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlagError {
    /// `--name` is not declared.
    #[error("unknown flag --{name}")]
    Unknown {
        /// The flag name.
        name: String,
    },
    /// A non-bool flag was given without a value.
    #[error("flag --{name} needs a value")]
    MissingValue {
        /// The flag name.
        name: String,
    },
    /// The value does not fit the flag's type.
    #[error("flag --{name}: {value:?} is not a valid {expected}")]
    InvalidValue {
        /// The flag name.
        name: String,
        /// The value given.
        value: String,
        /// The expected type.
        expected: &'static str,
    },
    /// An argument that is not a flag.
    #[error("unexpected argument {arg:?}: expected --name value")]
    Positional {
        /// The argument.
        arg: String,
    },
}

/// The values of a subcommand's flags, defaults filled in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlagValues {
    values: BTreeMap<String, FlagValue>,
}

impl FlagValues {
    /// No values.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a value.
    #[must_use]
    pub fn with(mut self, name: &str, value: FlagValue) -> Self {
        self.values.insert(name.to_owned(), value);
        self
    }

    /// Sets a value in place.
    pub fn set(&mut self, name: &str, value: FlagValue) {
        self.values.insert(name.to_owned(), value);
    }

    /// Parses `--name value`, `--name=value` and bare `--bool` arguments against `specs`, then
    /// fills in defaults.
    pub fn parse_args(specs: &[FlagSpec], args: &[String]) -> Result<Self, FlagError> {
        let mut out = Self::new();
        for spec in specs {
            if let Some(default) = &spec.default {
                out.set(&spec.name, convert(spec, default)?);
            }
        }
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            let Some(flag) = arg.strip_prefix("--") else {
                return Err(FlagError::Positional { arg: arg.clone() });
            };
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (flag, None),
            };
            let spec = specs
                .iter()
                .find(|s| s.name == name)
                .ok_or_else(|| FlagError::Unknown {
                    name: name.to_owned(),
                })?;
            let value = match inline {
                Some(v) => v,
                None if spec.flag_type == FlagType::Bool => {
                    match args.get(i + 1).map(String::as_str) {
                        Some(v @ ("true" | "false")) => {
                            i += 1;
                            v.to_owned()
                        }
                        _ => "true".to_owned(),
                    }
                }
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| FlagError::MissingValue {
                            name: name.to_owned(),
                        })?
                }
            };
            out.set(name, convert(spec, &value)?);
            i += 1;
        }
        Ok(out)
    }

    /// The value of `name`, if set.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&FlagValue> {
        self.values.get(name)
    }

    /// The string value of `name` (any type, displayed), if set.
    #[must_use]
    pub fn string(&self, name: &str) -> Option<String> {
        self.get(name).map(ToString::to_string)
    }

    /// The bool value of `name`; `false` when unset or not a bool.
    #[must_use]
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some(FlagValue::Bool(true)))
    }

    /// The int value of `name`, if set and an int.
    #[must_use]
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(FlagValue::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// All values, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FlagValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The values as `--name value` arguments (what an external plugin receives in `args`).
    #[must_use]
    pub fn to_args(&self) -> Vec<String> {
        self.values
            .iter()
            .flat_map(|(k, v)| [format!("--{k}"), v.to_string()])
            .collect()
    }
}

fn convert(spec: &FlagSpec, value: &str) -> Result<FlagValue, FlagError> {
    let invalid = |expected| FlagError::InvalidValue {
        name: spec.name.clone(),
        value: value.to_owned(),
        expected,
    };
    Ok(match spec.flag_type {
        FlagType::String => FlagValue::String(value.to_owned()),
        FlagType::Bool => FlagValue::Bool(value.parse().map_err(|_| invalid("bool"))?),
        FlagType::Int => FlagValue::Int(value.parse().map_err(|_| invalid("int"))?),
        FlagType::Float => FlagValue::Float(value.parse().map_err(|_| invalid("float"))?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<FlagSpec> {
        vec![
            FlagSpec::new("domain", FlagType::String, "the domain").with_default("example.com"),
            FlagSpec::new("namespaced", FlagType::Bool, "namespaced CRD").with_default("true"),
            FlagSpec::new("replicas", FlagType::Int, "replicas"),
            FlagSpec::new("ratio", FlagType::Float, "ratio"),
        ]
    }

    fn check(args: &[&str], expected: Result<&str, &str>) {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let got = FlagValues::parse_args(&specs(), &args)
            .map(|v| {
                v.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .map_err(|e| e.to_string());
        match (got, expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e),
            (Err(g), Err(e)) => assert_eq!(g, e),
            (g, e) => panic!("{args:?}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn parses_args() {
        check(&[], Ok("domain=example.com namespaced=true"));
        check(
            &["--domain", "acme.io", "--replicas=3"],
            Ok("domain=acme.io namespaced=true replicas=3"),
        );
        check(
            &["--namespaced", "false", "--ratio", "0.5"],
            Ok("domain=example.com namespaced=false ratio=0.5"),
        );
        check(
            &["--namespaced", "--domain=x"],
            Ok("domain=x namespaced=true"),
        );
        check(&["--nope"], Err("unknown flag --nope"));
        check(&["--domain"], Err("flag --domain needs a value"));
        check(
            &["--replicas", "three"],
            Err("flag --replicas: \"three\" is not a valid int"),
        );
        check(
            &["stray"],
            Err("unexpected argument \"stray\": expected --name value"),
        );
    }

    #[test]
    fn accessors_and_args() {
        let v = FlagValues::new()
            .with("a", FlagValue::Bool(true))
            .with("n", FlagValue::Int(2));
        assert!(v.bool("a"));
        assert!(!v.bool("missing"));
        assert_eq!(v.int("n"), Some(2));
        assert_eq!(v.to_args(), ["--a", "true", "--n", "2"]);
        assert_eq!(FlagType::from_wire("weird"), FlagType::String);
    }
}
