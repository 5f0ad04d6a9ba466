//! Name validation and case conversion used by the CLI and by templates.
//!
//! Validators take the argument's name (e.g. `"--group"`) and its value and return a
//! [`NameError`] whose message is one line naming the argument and the rule it breaks.
//! [`pluralize`] gives a kind's Kubernetes resource name; the `to_*_case` functions back the
//! template helpers of `mni-machinery`.

mod plural;

pub use plural::pluralize;

/// A name that breaks a rule. Each message names the argument, the value and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The value is empty.
    #[error("{arg} must not be empty")]
    Empty {
        /// The argument, e.g. `--kind`.
        arg: String,
    },
    /// Not a DNS-1123 label.
    #[error(
        "{arg} {value:?} is not a DNS-1123 label: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit (e.g. \"billing\")"
    )]
    Dns1123Label {
        /// The argument.
        arg: String,
        /// The value.
        value: String,
    },
    /// Not a DNS-1123 subdomain.
    #[error(
        "{arg} {value:?} is not a DNS-1123 subdomain: use at most 253 characters of dot-separated DNS-1123 labels (e.g. \"compute.mni.dev\")"
    )]
    Dns1123Subdomain {
        /// The argument.
        arg: String,
        /// The value.
        value: String,
    },
    /// A name that must start with a letter does not.
    #[error("{arg} {value:?} must start with a lowercase letter")]
    LeadingLetter {
        /// The argument.
        arg: String,
        /// The value.
        value: String,
    },
    /// Not a PascalCase kind.
    #[error(
        "{arg} {value:?} is not a PascalCase kind: start with an uppercase letter, then use only letters and digits, at most 63 characters (e.g. \"VirtualMachine\")"
    )]
    Kind {
        /// The argument.
        arg: String,
        /// The value.
        value: String,
    },
    /// Not a Kubernetes API version.
    #[error(
        "{arg} {value:?} is not a Kubernetes API version: use v<N>, v<N>alpha<M> or v<N>beta<M> with N >= 1 (e.g. \"v1\", \"v1alpha1\", \"v2beta3\")"
    )]
    ApiVersion {
        /// The argument.
        arg: String,
        /// The value.
        value: String,
    },
    /// The name becomes a Rust keyword in generated code.
    #[error(
        "{arg} {value:?} becomes the Rust keyword `{ident}` in generated code; choose another name"
    )]
    RustKeyword {
        /// The argument.
        arg: String,
        /// The value.
        value: String,
        /// The keyword it turns into.
        ident: String,
    },
}

/// Every Rust keyword, strict, reserved and weak-but-troublesome (2024 edition).
const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

fn non_empty(arg: &str, value: &str) -> Result<(), NameError> {
    if value.is_empty() {
        Err(NameError::Empty {
            arg: arg.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Checks a DNS-1123 label (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters).
pub fn validate_dns1123_label(arg: &str, value: &str) -> Result<(), NameError> {
    non_empty(arg, value)?;
    if mni_formats::names::is_dns1123_label(value) {
        Ok(())
    } else {
        Err(NameError::Dns1123Label {
            arg: arg.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// Checks a DNS-1123 subdomain (dot-separated labels, at most 253 characters); API groups and
/// domains are subdomains.
pub fn validate_dns1123_subdomain(arg: &str, value: &str) -> Result<(), NameError> {
    non_empty(arg, value)?;
    if mni_formats::names::is_dns1123_subdomain(value) {
        Ok(())
    } else {
        Err(NameError::Dns1123Subdomain {
            arg: arg.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// Checks a PascalCase kind (`[A-Z][A-Za-z0-9]*`, at most 63 characters) that is no Rust keyword.
pub fn validate_kind(arg: &str, value: &str) -> Result<(), NameError> {
    non_empty(arg, value)?;
    let mut chars = value.chars();
    let first_upper = chars.next().is_some_and(|c| c.is_ascii_uppercase());
    if !first_upper || value.len() > 63 || !chars.all(|c| c.is_ascii_alphanumeric()) {
        return Err(NameError::Kind {
            arg: arg.to_owned(),
            value: value.to_owned(),
        });
    }
    reject_keyword(arg, value, value)?;
    reject_keyword(arg, value, &to_snake_case(value))
}

/// Checks a Kubernetes API version: `v1`, `v1alpha1`, `v2beta3`.
pub fn validate_api_version(arg: &str, value: &str) -> Result<(), NameError> {
    non_empty(arg, value)?;
    let bad = || NameError::ApiVersion {
        arg: arg.to_owned(),
        value: value.to_owned(),
    };
    let rest = value.strip_prefix('v').ok_or_else(bad)?;
    let digits =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
    let (major, stage) = match rest.find(|c: char| !c.is_ascii_digit()) {
        None => (rest, None),
        Some(i) => (&rest[..i], Some(&rest[i..])),
    };
    let stage_ok = match stage {
        None => true,
        Some(s) => s
            .strip_prefix("alpha")
            .or_else(|| s.strip_prefix("beta"))
            .is_some_and(digits),
    };
    if digits(major) && stage_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Checks a service name: a DNS-1123 label starting with a letter (it becomes a crate name)
/// whose snake_case form is not a Rust keyword (it becomes a module name).
pub fn validate_service_name(arg: &str, value: &str) -> Result<(), NameError> {
    validate_dns1123_label(arg, value)?;
    if !value.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(NameError::LeadingLetter {
            arg: arg.to_owned(),
            value: value.to_owned(),
        });
    }
    reject_keyword(arg, value, &to_snake_case(value))
}

/// Fails if `ident` (what `value` becomes in code) is a Rust keyword.
pub fn reject_keyword(arg: &str, value: &str, ident: &str) -> Result<(), NameError> {
    if RUST_KEYWORDS.contains(&ident) || ident == "Self" {
        return Err(NameError::RustKeyword {
            arg: arg.to_owned(),
            value: value.to_owned(),
            ident: ident.to_owned(),
        });
    }
    Ok(())
}

/// Splits a name into words at `-`, `_`, spaces, `.`, lower→upper changes and acronym ends
/// (`HTTPServer` → `HTTP`, `Server`). Digits stay with the word before them.
#[must_use]
pub fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        let chars: Vec<char> = part.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = c.is_uppercase()
                && prev.is_some_and(|p| {
                    p.is_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
                });
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            current.push(c);
        }
        if !current.is_empty() {
            words.push(current);
        }
    }
    words
}

fn capitalize(word: &str) -> String {
    let lower = word.to_lowercase();
    let mut chars = lower.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `VirtualMachine` → `virtual_machine`.
#[must_use]
pub fn to_snake_case(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("_")
}

/// `VirtualMachine` → `virtual-machine`.
#[must_use]
pub fn to_kebab_case(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("-")
}

/// `virtual-machine` → `VirtualMachine`.
#[must_use]
pub fn to_pascal_case(name: &str) -> String {
    words(name).iter().map(|w| capitalize(w)).collect()
}

/// `virtual-machine` → `virtualMachine`.
#[must_use]
pub fn to_camel_case(name: &str) -> String {
    let pascal: Vec<String> = words(name).iter().map(|w| capitalize(w)).collect();
    match pascal.split_first() {
        Some((first, rest)) => first.to_lowercase() + &rest.concat(),
        None => String::new(),
    }
}

/// `virtual-machine` → `VIRTUAL_MACHINE`.
#[must_use]
pub fn to_upper_snake_case(name: &str) -> String {
    to_snake_case(name).to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Validator = fn(&str, &str) -> Result<(), NameError>;

    fn check(validate: Validator, value: &str, expected: Result<(), &str>) {
        let got = validate("--arg", value).map_err(|e| e.to_string());
        match (got, expected) {
            (Ok(()), Ok(())) => {}
            (Err(g), Err(e)) => {
                assert!(
                    g.starts_with(&format!("--arg {value:?}")) || g.starts_with("--arg must"),
                    "{g}"
                );
                assert!(g.contains(e), "{value}: {g:?} should contain {e:?}");
                assert!(!g.contains('\n'));
            }
            (g, e) => panic!("{value}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn validates_names() {
        check(validate_dns1123_label, "billing", Ok(()));
        check(validate_dns1123_label, "9lives", Ok(()));
        check(validate_dns1123_label, "Billing", Err("DNS-1123 label"));
        check(validate_dns1123_label, "bill-", Err("DNS-1123 label"));
        check(
            validate_dns1123_label,
            &"a".repeat(64),
            Err("DNS-1123 label"),
        );
        check(validate_dns1123_label, "", Err("must not be empty"));
        check(validate_dns1123_subdomain, "compute.mni.dev", Ok(()));
        check(
            validate_dns1123_subdomain,
            "compute..dev",
            Err("DNS-1123 subdomain"),
        );
        check(validate_kind, "VirtualMachine", Ok(()));
        check(validate_kind, "virtualMachine", Err("PascalCase"));
        check(validate_kind, "Virtual_Machine", Err("PascalCase"));
        check(validate_kind, "Self", Err("Rust keyword `Self`"));
        check(validate_kind, "Type", Err("Rust keyword `type`"));
        check(validate_api_version, "v1", Ok(()));
        check(validate_api_version, "v1alpha1", Ok(()));
        check(validate_api_version, "v2beta3", Ok(()));
        check(validate_api_version, "v0", Err("Kubernetes API version"));
        check(
            validate_api_version,
            "v1alpha",
            Err("Kubernetes API version"),
        );
        check(validate_api_version, "1", Err("Kubernetes API version"));
        check(
            validate_api_version,
            "v1gamma1",
            Err("Kubernetes API version"),
        );
        check(validate_service_name, "billing", Ok(()));
        check(
            validate_service_name,
            "9lives",
            Err("must start with a lowercase letter"),
        );
        check(validate_service_name, "type", Err("Rust keyword `type`"));
        check(validate_service_name, "crate", Err("Rust keyword `crate`"));
    }

    #[test]
    fn converts_case() {
        let cases = [
            (
                "VirtualMachine",
                "virtual_machine",
                "virtual-machine",
                "VirtualMachine",
                "virtualMachine",
            ),
            (
                "bare-metal-host",
                "bare_metal_host",
                "bare-metal-host",
                "BareMetalHost",
                "bareMetalHost",
            ),
            (
                "HTTPServer",
                "http_server",
                "http-server",
                "HttpServer",
                "httpServer",
            ),
            ("v1alpha1", "v1alpha1", "v1alpha1", "V1alpha1", "v1alpha1"),
            (
                "Ipv4Address",
                "ipv4_address",
                "ipv4-address",
                "Ipv4Address",
                "ipv4Address",
            ),
            ("billing", "billing", "billing", "Billing", "billing"),
            ("", "", "", "", ""),
        ];
        for (input, snake, kebab, pascal, camel) in cases {
            assert_eq!(to_snake_case(input), snake, "{input}");
            assert_eq!(to_kebab_case(input), kebab, "{input}");
            assert_eq!(to_pascal_case(input), pascal, "{input}");
            assert_eq!(to_camel_case(input), camel, "{input}");
        }
        assert_eq!(to_upper_snake_case("virtualMachine"), "VIRTUAL_MACHINE");
    }
}
