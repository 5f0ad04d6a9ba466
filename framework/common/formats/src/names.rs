//! DNS-1123 and DNS-1035 names, as Kubernetes' `k8s.io/apimachinery/pkg/util/validation`
//! defines them.
//!
//! `matches_*` checks the shape only (the regular expression Kubernetes uses); `is_*` checks
//! the shape and the maximum length. Kubernetes reports the two separately, so both are here.

/// The longest DNS-1123 label.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// The longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// The longest DNS-1035 label.
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;

/// The regular expression of a DNS-1123 label.
pub const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
/// The regular expression of a DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
/// The regular expression of a DNS-1035 label.
pub const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// A label whose first byte passes `first`: lowercase letters, digits and `-` inside, a
/// lowercase letter or digit last.
fn matches_label_with(value: &str, first: fn(u8) -> bool) -> bool {
    let b = value.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            first(f) && is_lower_alnum(l) && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// Whether `value` has the shape of a DNS-1123 label ([`DNS1123_LABEL_FMT`]), of any length.
#[must_use]
pub fn matches_dns1123_label(value: &str) -> bool {
    matches_label_with(value, is_lower_alnum)
}

/// Whether `value` is a DNS-1123 label: its shape and at most 63 characters.
#[must_use]
pub fn is_dns1123_label(value: &str) -> bool {
    value.len() <= DNS1123_LABEL_MAX_LENGTH && matches_dns1123_label(value)
}

/// Whether `value` has the shape of a DNS-1123 subdomain ([`DNS1123_SUBDOMAIN_FMT`]):
/// DNS-1123 labels joined by dots, of any length.
#[must_use]
pub fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// Whether `value` is a DNS-1123 subdomain: its shape and at most 253 characters.
#[must_use]
pub fn is_dns1123_subdomain(value: &str) -> bool {
    value.len() <= DNS1123_SUBDOMAIN_MAX_LENGTH && matches_dns1123_subdomain(value)
}

/// Whether `value` has the shape of a DNS-1035 label ([`DNS1035_LABEL_FMT`]): a DNS-1123 label
/// that starts with a letter.
#[must_use]
pub fn matches_dns1035_label(value: &str) -> bool {
    matches_label_with(value, |b| b.is_ascii_lowercase())
}

/// Whether `value` is a DNS-1035 label: its shape and at most 63 characters.
#[must_use]
pub fn is_dns1035_label(value: &str) -> bool {
    value.len() <= DNS1035_LABEL_MAX_LENGTH && matches_dns1035_label(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        for good in ["a", "0", "my-name", "123-abc", "a--b"] {
            assert!(is_dns1123_label(good), "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", "ä"] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
        assert!(is_dns1123_label(&"a".repeat(63)));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(matches_dns1123_label(&"a".repeat(64)));
    }

    #[test]
    fn subdomains() {
        for good in ["example.com", "a", "1.2.3", "my-name.example"] {
            assert!(is_dns1123_subdomain(good), "{good}");
        }
        for bad in ["", ".a", "a.", "a..b", "A.com", "a_b.com", "-a.com"] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
        // Kubernetes bounds the whole name, not each label.
        assert!(is_dns1123_subdomain(&format!("{}.com", "a".repeat(70))));
        assert!(!is_dns1123_subdomain(&"a".repeat(254)));
    }

    #[test]
    fn dns1035_labels_start_with_a_letter() {
        assert!(is_dns1035_label("abc-123"));
        assert!(!is_dns1035_label("1abc"));
        assert!(!is_dns1035_label("abc-"));
        assert!(!is_dns1035_label(&"a".repeat(64)));
    }
}
