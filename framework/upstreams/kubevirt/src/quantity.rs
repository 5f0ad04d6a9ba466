//! Kubernetes quantities (`500m`, `2`, `1Gi`, `64G`, `1e3`) as plain numbers, for the
//! simulated scheduler's comparisons.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Errors of quantity parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// The text is not a Kubernetes quantity.
    #[error("{0:?} is not a quantity (e.g. 500m, 2, 1Gi)")]
    Invalid(String),
}

/// The quantity's value, in base units (cores, bytes), as a float.
pub(crate) fn value(q: &Quantity) -> Result<f64, Error> {
    let text = q.0.trim();
    let invalid = || Error::Invalid(text.to_string());
    let suffixes: [(&str, f64); 15] = [
        ("Ki", 1024.0),
        ("Mi", 1024.0_f64.powi(2)),
        ("Gi", 1024.0_f64.powi(3)),
        ("Ti", 1024.0_f64.powi(4)),
        ("Pi", 1024.0_f64.powi(5)),
        ("Ei", 1024.0_f64.powi(6)),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let (number, factor) = suffixes
        .iter()
        .find_map(|(s, f)| text.strip_suffix(s).map(|n| (n, *f)))
        .unwrap_or((text, 1.0));
    if number.is_empty() || number.starts_with('-') {
        return Err(invalid());
    }
    let n: f64 = number.parse().map_err(|_| invalid())?;
    if !n.is_finite() {
        return Err(invalid());
    }
    Ok(n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: Result<f64, ()>) {
        let got = value(&Quantity(text.into())).map_err(|_| ());
        assert_eq!(got, expected, "{text}");
    }

    #[test]
    fn parses_kubernetes_quantities() {
        check("2", Ok(2.0));
        check("500m", Ok(0.5));
        check("1Gi", Ok(1_073_741_824.0));
        check("64Gi", Ok(68_719_476_736.0));
        check("2G", Ok(2e9));
        check("1e3", Ok(1000.0));
        check("1.5Gi", Ok(1_610_612_736.0));
        check("", Err(()));
        check("Gi", Err(()));
        check("lots", Err(()));
        check("-1", Err(()));
    }
}
