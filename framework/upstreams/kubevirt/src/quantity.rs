//! Kubernetes quantities (`500m`, `2`, `1Gi`, `64G`, `1e3`) as plain numbers, for the
//! simulated scheduler's comparisons: parsed by [`mni_formats::quantity`].

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Errors of quantity parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// The text is not a Kubernetes quantity.
    #[error("{0:?} is not a quantity (e.g. 500m, 2, 1Gi)")]
    Invalid(String),
}

/// The quantity's value, in base units (cores, bytes), as a float; negative quantities are
/// refused (nothing a VM asks for can be).
pub(crate) fn value(q: &Quantity) -> Result<f64, Error> {
    let text = q.0.trim();
    let parsed: mni_formats::quantity::Quantity =
        text.parse().map_err(|_| Error::Invalid(text.to_string()))?;
    if parsed.nanos() < 0 {
        return Err(Error::Invalid(text.to_string()));
    }
    // Nano-units to units; exact for every size a VM asks for.
    #[allow(clippy::cast_precision_loss)]
    let units = parsed.nanos() as f64 / 1e9;
    Ok(units)
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
