//! Kubernetes pluralisation of kinds: `Policy` → `policies`.
//!
//! The rules are kube-rs's (`-es` after s/x/z/ch/sh, `-ies` after a consonant + y, `-s`
//! otherwise) plus the irregular and uncountable words of Kubebuilder's `flect` that plausibly
//! end a kind name, and Kubernetes' own special cases (`Endpoints` stays `endpoints`).

/// Whole-word or final-word irregulars, singular → plural.
const IRREGULAR: &[(&str, &str)] = &[
    ("endpoints", "endpoints"),
    ("endpointslices", "endpointslices"),
    ("nodemetrics", "nodes"),
    ("podmetrics", "pods"),
    ("person", "people"),
    ("child", "children"),
    ("man", "men"),
    ("woman", "women"),
    ("mouse", "mice"),
    ("goose", "geese"),
    ("tooth", "teeth"),
    ("foot", "feet"),
    ("ox", "oxen"),
    ("quiz", "quizzes"),
    ("matrix", "matrices"),
    ("vertex", "vertices"),
    ("index", "indices"),
    ("criterion", "criteria"),
    ("datum", "data"),
    ("analysis", "analyses"),
    ("basis", "bases"),
    ("crisis", "crises"),
    ("thesis", "theses"),
    ("leaf", "leaves"),
    ("knife", "knives"),
    ("life", "lives"),
    ("wife", "wives"),
    ("half", "halves"),
    ("shelf", "shelves"),
];

/// Words whose plural is themselves.
const UNCOUNTABLE: &[&str] = &[
    "data",
    "metadata",
    "information",
    "equipment",
    "series",
    "species",
    "news",
    "sheep",
    "fish",
    "deer",
    "moose",
    "aircraft",
    "software",
    "hardware",
    "firmware",
    "feedback",
    "metrics",
];

/// The plural resource name of a kind: lower-cased, then pluralised (`NetworkPolicy` →
/// `networkpolicies`, `Ingress` → `ingresses`, `Status` → `statuses`, `Proxy` → `proxies`).
///
/// Irregular words match the whole kind or its last PascalCase word (`SalesPerson` →
/// `salespeople`, but `Human` → `humans`).
#[must_use]
pub fn pluralize(kind: &str) -> String {
    let lower = kind.to_lowercase();
    let last_word_start = last_word_start(kind);
    let ends_with_word = |word: &str| {
        lower == word
            || (lower.ends_with(word) && last_word_start == Some(lower.len() - word.len()))
    };
    if let Some(&(singular, plural)) = IRREGULAR.iter().find(|(s, _)| ends_with_word(s)) {
        return format!("{}{plural}", &lower[..lower.len() - singular.len()]);
    }
    if UNCOUNTABLE.iter().any(|w| ends_with_word(w)) {
        return lower;
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        return format!("{lower}es");
    }
    if let Some(stem) = lower.strip_suffix('y')
        && stem.chars().last().is_some_and(|c| !"aeiou".contains(c))
    {
        return format!("{stem}ies");
    }
    format!("{lower}s")
}

/// The byte index where the last PascalCase word of `kind` starts, if the kind has several.
fn last_word_start(kind: &str) -> Option<usize> {
    kind.char_indices()
        .skip(1)
        .filter(|(_, c)| c.is_ascii_uppercase())
        .map(|(i, _)| i)
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(kind: &str, expected: &str) {
        assert_eq!(pluralize(kind), expected, "{kind}");
    }

    #[test]
    fn pluralizes_kinds() {
        check("Policy", "policies");
        check("NetworkPolicy", "networkpolicies");
        check("Status", "statuses");
        check("Endpoints", "endpoints");
        check("EndpointSlices", "endpointslices");
        check("Ingress", "ingresses");
        check("Proxy", "proxies");
        check("Gateway", "gateways");
        check("Key", "keys");
        check("Box", "boxes");
        check("Switch", "switches");
        check("Mesh", "meshes");
        check("CronJob", "cronjobs");
        check("VirtualMachine", "virtualmachines");
        check("BareMetalHost", "baremetalhosts");
        check("Person", "people");
        check("SalesPerson", "salespeople");
        check("Human", "humans");
        check("Index", "indices");
        check("Quiz", "quizzes");
        check("NodeMetrics", "nodes");
        check("Metadata", "metadata");
        check("Vpc", "vpcs");
        check("Subnet", "subnets");
        check("IP", "ips");
    }
}
