//! Kubernetes name, label and annotation validation with kube-apiserver's exact messages.
//!
//! The `is_*` functions mirror `k8s.io/apimachinery/pkg/util/validation` and return the list of
//! problems (empty when valid); the `validate_*` functions mirror the ObjectMeta validators and
//! return [`FieldError`]s with a path, e.g.
//! `metadata.labels: Invalid value: "-bad": name part must consist of alphanumeric characters…`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use mni_formats::names::{self, DNS1035_LABEL_FMT, DNS1123_LABEL_FMT, DNS1123_SUBDOMAIN_FMT};
pub use mni_formats::names::{
    DNS1035_LABEL_MAX_LENGTH, DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH,
};
use regex::Regex;
use serde_json::json;

use crate::field::FieldError;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/// The maximum length of a label value.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
/// The maximum total size of annotation keys and values (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A compiled, anchored pattern; the patterns are constants checked by the tests, and a
/// pattern that failed to compile matches nothing rather than panicking.
struct Anchored(Option<Regex>);

impl Anchored {
    fn new(fmt: &str) -> Self {
        Self(Regex::new(&format!("^(?:{fmt})$")).ok())
    }

    fn is_match(&self, s: &str) -> bool {
        self.0.as_ref().is_some_and(|re| re.is_match(s))
    }
}

static QUALIFIED_NAME_RE: LazyLock<Anchored> = LazyLock::new(|| Anchored::new(QUALIFIED_NAME_FMT));
static LABEL_VALUE_RE: LazyLock<Anchored> = LazyLock::new(|| Anchored::new(LABEL_VALUE_FMT));

/// `must be non-empty`.
fn empty_error() -> String {
    "must be non-empty".to_string()
}

/// `must be no more than N characters`.
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// Kubernetes' `RegexError`: the message, examples and the regex used.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

/// Validates a qualified name (label key, annotation key, finalizer): an optional DNS-1123
/// subdomain prefix and `/`, then a name of at most 63 characters.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                for msg in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !QUALIFIED_NAME_RE.is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Validates a label value: empty, or at most 63 characters of the qualified-name alphabet.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !LABEL_VALUE_RE.is_match(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Validates a DNS-1123 label (namespace names, many resource names).
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !names::matches_dns1123_label(value) {
        if names::matches_dns1123_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// Validates a DNS-1123 subdomain (most object names).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !names::matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Validates a DNS-1035 label (service names).
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !names::matches_dns1035_label(value) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Kubernetes' `maskTrailingDash`: a `generateName` prefix may end in `-`.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(stripped) if name.len() > 1 => format!("{stripped}a"),
        _ => name.to_string(),
    }
}

/// `NameIsDNSSubdomain`: object name validation; with `prefix`, validates a `generateName`.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    is_dns1123_subdomain(&name)
}

/// `NameIsDNSLabel`: namespace-style name validation; with `prefix`, validates a `generateName`.
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    is_dns1123_label(&name)
}

/// `NameIsDNS1035Label`: service-style name validation; with `prefix`, validates a `generateName`.
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    is_dns1035_label(&name)
}

/// Kubernetes' path-segment name check (`IsValidPathSegmentName`), applied to every name.
pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name == "." || name == ".." {
        errs.push(format!("may not be '{name}'"));
    }
    for illegal in ["/", "%"] {
        if name.contains(illegal) {
            errs.push(format!("may not contain '{illegal}'"));
        }
    }
    errs
}

/// `ValidateLabels`: each key is a qualified name and each value a label value; errors carry
/// `path` itself (e.g. `metadata.labels`), as Kubernetes does.
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid(path, json!(k), msg));
        }
        for msg in is_valid_label_value(v) {
            errs.push(FieldError::invalid(path, json!(v), msg));
        }
    }
    errs
}

/// `ValidateAnnotations`: keys are qualified names (case-insensitive) and the total size of keys
/// and values is at most 256 KiB.
pub fn validate_annotations(annotations: &BTreeMap<String, String>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, json!(k), msg));
        }
        total = total.saturating_add(k.len()).saturating_add(v.len());
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            path,
            Some(TOTAL_ANNOTATION_SIZE_LIMIT),
        ));
    }
    errs
}

/// `ValidateFinalizers`: each finalizer is a qualified name; the two garbage-collector
/// finalizers cannot both be set. Errors carry `path` (e.g. `metadata.finalizers`).
pub fn validate_finalizers(finalizers: &[String], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for f in finalizers {
        for msg in is_qualified_name(f) {
            errs.push(FieldError::invalid(path, json!(f), msg));
        }
    }
    let has = |n: &str| finalizers.iter().any(|f| f == n);
    if has("orphan") && has("foregroundDeletion") {
        errs.push(FieldError::invalid(
            path,
            json!(finalizers),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(got: Vec<String>, expected: &[&str]) {
        assert_eq!(got, expected);
    }

    const QN: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    #[test]
    fn the_dns_checks_match_their_regular_expressions() {
        let samples = [
            "",
            "a",
            "0",
            "-",
            "a-",
            "-a",
            "a-b",
            "a.b",
            "a..b",
            ".a",
            "a.",
            "A",
            "aB",
            "1a",
            "a1",
            "a_b",
            "my-name.example.com",
            "x--y.z",
            "ä",
            "a b",
        ];
        type Check = fn(&str) -> bool;
        let checks: [(&str, Check); 3] = [
            (DNS1123_LABEL_FMT, names::matches_dns1123_label),
            (DNS1123_SUBDOMAIN_FMT, names::matches_dns1123_subdomain),
            (DNS1035_LABEL_FMT, names::matches_dns1035_label),
        ];
        for (fmt, check) in checks {
            let re = Anchored::new(fmt);
            for s in samples {
                assert_eq!(re.is_match(s), check(s), "{fmt} on {s:?}");
            }
        }
    }

    #[test]
    fn qualified_names() {
        check(is_qualified_name("app.kubernetes.io/name"), &[]);
        check(is_qualified_name("MyName"), &[]);
        check(is_qualified_name("-bad"), &[&format!("name part {QN}")]);
        check(is_qualified_name("/x"), &["prefix part must be non-empty"]);
        check(
            is_qualified_name("a/"),
            &["name part must be non-empty", &format!("name part {QN}")],
        );
        check(
            is_qualified_name("Bad_Prefix/x"),
            &[
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ],
        );
        check(
            is_qualified_name(&"a".repeat(64)),
            &["name part must be no more than 63 characters"],
        );
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert!(is_qualified_name("a/b/c")[0].starts_with("a qualified name must consist"));
    }

    #[test]
    fn label_values_and_dns() {
        check(is_valid_label_value(""), &[]);
        check(is_valid_label_value("my_value.1"), &[]);
        check(
            is_valid_label_value("-x"),
            &[
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ],
        );
        check(is_dns1123_label("default"), &[]);
        check(is_dns1123_label("a.b"), &["must not contain dots"]);
        check(
            is_dns1123_label("Bad"),
            &[
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ],
        );
        check(is_dns1123_subdomain("foo.example.com"), &[]);
        assert_eq!(
            is_dns1123_subdomain(&"a".repeat(254))[0],
            "must be no more than 253 characters"
        );
        check(is_dns1035_label("svc-1"), &[]);
        check(
            is_dns1035_label("1svc"),
            &[
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
        );
        check(name_is_dns_subdomain("gen-", true), &[]);
        assert!(!name_is_dns_subdomain("gen-", false).is_empty());
        check(is_valid_path_segment_name(".."), &["may not be '..'"]);
        check(
            is_valid_path_segment_name("a/b%"),
            &["may not contain '/'", "may not contain '%'"],
        );
    }

    #[test]
    fn object_meta_validators() {
        let labels = BTreeMap::from([("-bad".to_string(), "ok".to_string())]);
        let errs = validate_labels(&labels, "metadata.labels");
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            format!("metadata.labels: Invalid value: \"-bad\": name part {QN}")
        );
        let big = BTreeMap::from([("a".to_string(), "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT))]);
        let errs = validate_annotations(&big, "metadata.annotations");
        assert_eq!(
            errs[0].to_string(),
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
        assert!(
            validate_annotations(
                &BTreeMap::from([("Example.com/X".to_string(), String::new())]),
                "a"
            )
            .is_empty()
        );
        let fins = vec!["orphan".to_string(), "foregroundDeletion".to_string()];
        assert_eq!(
            validate_finalizers(&fins, "metadata.finalizers")[0].to_string(),
            "metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set"
        );
    }
}
