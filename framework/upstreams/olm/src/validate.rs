//! Validating a [`Catalog`]: what `opm validate` refuses, and a few checks of mNi's own.
//!
//! The opm rules follow operator-registry's `declcfg.ConvertToModel` and `model.Validate`
//! (`alpha/declcfg/declcfg_to_model.go`, `alpha/model/model.go`): unique, DNS-1123 package
//! names; channels and bundles of declared packages; no duplicate channels, entries or bundles;
//! exactly one `olm.package` property with a semantic version; every bundle in a channel and
//! every entry backed by a bundle; a default channel that exists; one head per channel; a
//! `replaces` chain from the head without cycles that reaches every entry not skipped; no empty
//! `skips`; no two bundles of a package with one version. Like opm, a `replaces` naming a
//! bundle outside the catalog is tolerated at the tail of a chain.
//!
//! Beyond opm (labelled `[mni]` in messages, left out with
//! [`ValidateOptions::with_opm_rules_only`]): a `skipRange` that does not parse (opm v1.65, the
//! pinned reference, accepts any; newer releases refuse it), a `replaces` naming a bundle the
//! catalog does not hold, and dependencies (`olm.gvk.required`, `olm.package.required`) no bundle of the
//! catalog satisfies.

use std::collections::{BTreeMap, BTreeSet};

use semver::Version;
use serde_json::Value;

use crate::fbc::Catalog;
use crate::range::VersionRange;

/// One thing wrong with a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Whether `opm validate` refuses it too (otherwise it is mNi's own check).
    pub opm: bool,
    /// What is wrong, naming the package, channel or bundle, and the fix.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.opm {
            f.write_str(&self.message)
        } else {
            write!(f, "[mni] {}", self.message)
        }
    }
}

/// Why a catalog is invalid: every finding.
#[derive(Debug, thiserror::Error)]
#[error("invalid catalog: {}", .findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
#[non_exhaustive]
pub struct ValidationError {
    /// The findings, opm's first.
    pub findings: Vec<Finding>,
}

/// What [`validate`] checks.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    opm_rules_only: bool,
}

impl ValidateOptions {
    /// Checks only what `opm validate` checks (for comparing verdicts with opm).
    #[must_use]
    pub fn with_opm_rules_only(mut self, only: bool) -> Self {
        self.opm_rules_only = only;
        self
    }
}

/// Checks `catalog`: opm's rules and, unless `options` say otherwise, mNi's `[mni]` checks (see
/// the crate docs).
pub fn validate(catalog: &Catalog, options: &ValidateOptions) -> Result<(), ValidationError> {
    let mut findings = Vec::new();
    let mut opm = |message: String| findings.push(Finding { opm: true, message });

    let mut packages: BTreeMap<&str, &str> = BTreeMap::new();
    for p in &catalog.packages {
        if p.name.is_empty() {
            opm("a package has no name; set \"name\" on every olm.package".into());
        } else if packages.insert(&p.name, &p.default_channel).is_some() {
            opm(format!(
                "duplicate package {:?}: declare each olm.package once",
                p.name
            ));
        } else if !is_dns1123_label(&p.name) {
            opm(format!(
                "invalid package name {:?}: use lower-case letters, digits and '-', at most 63 characters",
                p.name
            ));
        }
    }

    // Channels: package → channel → entries.
    let mut channels: BTreeMap<&str, BTreeMap<&str, Vec<&crate::ChannelEntry>>> = BTreeMap::new();
    for c in &catalog.channels {
        if !packages.contains_key(c.package.as_str()) {
            opm(format!(
                "unknown package {:?} for channel {:?}: add an olm.package named {:?}",
                c.package, c.name, c.package
            ));
            continue;
        }
        if c.name.is_empty() {
            opm(format!(
                "package {:?} has a channel with no name",
                c.package
            ));
            continue;
        }
        let pkg = channels.entry(&c.package).or_default();
        if pkg.contains_key(c.name.as_str()) {
            opm(format!(
                "package {:?} has duplicate channel {:?}: merge their entries into one olm.channel",
                c.package, c.name
            ));
            continue;
        }
        let mut seen = BTreeSet::new();
        for e in &c.entries {
            if !seen.insert(&e.name) {
                opm(format!(
                    "package {:?}, channel {:?}: duplicate entry {:?}",
                    c.package, c.name, e.name
                ));
            }
        }
        pkg.insert(&c.name, c.entries.iter().collect());
    }

    // Bundles: package → name → version.
    let mut bundles: BTreeMap<&str, BTreeMap<&str, Option<Version>>> = BTreeMap::new();
    for b in &catalog.bundles {
        if b.package.is_empty() {
            opm(format!(
                "bundle {:?} has no package; set \"package\"",
                b.name
            ));
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            opm(format!(
                "unknown package {:?} for bundle {:?}: add an olm.package named {:?}",
                b.package, b.name, b.package
            ));
            continue;
        }
        let pkg = bundles.entry(&b.package).or_default();
        if pkg.contains_key(b.name.as_str()) {
            opm(format!(
                "package {:?} has duplicate bundle {:?}",
                b.package, b.name
            ));
            continue;
        }
        let props: Vec<&Value> = b.properties_of("olm.package").collect();
        let mut version = None;
        if props.len() != 1 {
            opm(format!(
                "package {:?} bundle {:?} must have exactly 1 \"olm.package\" property, found {}",
                b.package,
                b.name,
                props.len()
            ));
        } else {
            let name = props[0]
                .get("packageName")
                .and_then(Value::as_str)
                .unwrap_or("");
            let raw = props[0]
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or("");
            if name != b.package {
                opm(format!(
                    "bundle {:?}: package {:?} does not match its olm.package property {:?}",
                    b.name, b.package, name
                ));
            }
            match Version::parse(raw) {
                Ok(v) => version = Some(v),
                Err(e) => opm(format!(
                    "bundle {:?}: version {:?} is not a semantic version: {e}",
                    b.name, raw
                )),
            }
        }
        if b.image.is_empty() && b.properties_of("olm.bundle.object").next().is_none() {
            opm(format!(
                "bundle {:?}: bundle image must be set (or the manifests embedded as olm.bundle.object)",
                b.name
            ));
        }
        let in_channel = channels
            .get(b.package.as_str())
            .is_some_and(|cs| cs.values().any(|es| es.iter().any(|e| e.name == b.name)));
        if !in_channel {
            opm(format!(
                "package {:?}, bundle {:?} not found in any channel entries: add it to an olm.channel",
                b.package, b.name
            ));
        }
        pkg.insert(&b.name, version);
    }

    for (package, default_channel) in &packages {
        let pkg_channels = channels.get(package);
        let pkg_bundles = bundles.get(package);
        for (channel, entries) in pkg_channels.into_iter().flatten() {
            for e in entries {
                if !pkg_bundles.is_some_and(|bs| bs.contains_key(e.name.as_str())) {
                    opm(format!(
                        "package {package:?}, channel {channel:?}: entry {:?} has no olm.bundle; add the bundle or remove the entry",
                        e.name
                    ));
                }
                for (i, skip) in e.skips.iter().enumerate() {
                    if skip.is_empty() {
                        opm(format!(
                            "package {package:?}, channel {channel:?}, bundle {:?}: skip[{i}] is empty",
                            e.name
                        ));
                    }
                }
            }
            if let Err(message) = replaces_chain(entries) {
                opm(format!(
                    "package {package:?}, channel {channel:?}: {message}"
                ));
            }
        }
        if default_channel.is_empty() {
            opm(format!(
                "package {package:?}: default channel must be set (\"defaultChannel\")"
            ));
        } else if !pkg_channels.is_some_and(|cs| cs.contains_key(default_channel)) {
            opm(format!(
                "package {package:?}: default channel {default_channel:?} not found in its channels; add an olm.channel {default_channel:?} or change defaultChannel"
            ));
        }
        if pkg_channels.is_none_or(BTreeMap::is_empty) && default_channel.is_empty() {
            opm(format!(
                "package {package:?} must contain at least one channel"
            ));
        }
        let mut by_version: BTreeMap<&Version, Vec<&str>> = BTreeMap::new();
        for (name, version) in pkg_bundles.into_iter().flatten() {
            if let Some(v) = version {
                by_version.entry(v).or_default().push(name);
            }
        }
        for (v, names) in by_version {
            if names.len() > 1 {
                opm(format!(
                    "package {package:?}: duplicate version {v} in bundles {}",
                    names.join(", ")
                ));
            }
        }
    }

    if !options.opm_rules_only {
        findings.extend(beyond_opm(catalog, &bundles));
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(ValidationError { findings })
    }
}

/// opm's `validateReplacesChain`: one head; from it, `replaces` reaches every entry no other
/// entry skips, without a cycle.
fn replaces_chain(entries: &[&crate::ChannelEntry]) -> Result<(), String> {
    if entries.is_empty() {
        return Err("channel must contain at least one bundle".into());
    }
    let mut incoming: BTreeSet<&str> = BTreeSet::new();
    for e in entries {
        if !e.replaces.is_empty() {
            incoming.insert(&e.replaces);
        }
        incoming.extend(e.skips.iter().map(String::as_str));
    }
    let heads: Vec<&str> = entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| !incoming.contains(n))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let head = match heads.as_slice() {
        [] => return Err("no channel head found in graph (every entry is replaced or skipped by another: a cycle); break the cycle".into()),
        [one] => *one,
        many => return Err(format!("multiple channel heads found in graph: {}; make all but the newest replaced or skipped by a newer entry", many.join(", "))),
    };
    let by_name: BTreeMap<&str, &crate::ChannelEntry> =
        entries.iter().map(|e| (e.name.as_str(), *e)).collect();
    let skipped: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| e.skips.iter().map(String::as_str))
        .collect();
    let mut chain = vec![head];
    let mut reached: BTreeSet<&str> = BTreeSet::from([head]);
    let mut cur = by_name.get(head).copied();
    while let Some(entry) = cur {
        let next = entry.replaces.as_str();
        if skipped.contains(next) {
            break;
        }
        chain.push(next);
        if !reached.insert(next) {
            return Err(format!(
                "detected cycle in replaces chain of upgrade graph: {}",
                chain.join(" -> ")
            ));
        }
        cur = by_name.get(next).copied();
    }
    let stranded: Vec<&str> = by_name
        .keys()
        .filter(|n| !reached.contains(*n) && !skipped.contains(*n))
        .copied()
        .collect();
    if !stranded.is_empty() {
        return Err(format!(
            "channel contains one or more stranded bundles: {}; make a newer entry replace or skip them",
            stranded.join(", ")
        ));
    }
    Ok(())
}

/// mNi's own checks: upgrade edges into the catalog, satisfiable dependencies.
fn beyond_opm(
    catalog: &Catalog,
    bundles: &BTreeMap<&str, BTreeMap<&str, Option<Version>>>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut mni = |message: String| {
        findings.push(Finding {
            opm: false,
            message,
        })
    };
    for c in &catalog.channels {
        for e in &c.entries {
            if !e.skip_range.is_empty()
                && let Err(err) = VersionRange::parse(&e.skip_range)
            {
                mni(format!(
                    "package {:?}, channel {:?}, bundle {:?}: invalid skipRange: {err} (opm v1.65 does not check this; newer operator-registry releases do)",
                    c.package, c.name, e.name
                ));
            }
            if !e.replaces.is_empty()
                && !bundles
                    .get(c.package.as_str())
                    .is_some_and(|bs| bs.contains_key(e.replaces.as_str()))
            {
                mni(format!(
                    "package {:?}, channel {:?}: bundle {:?} replaces {:?}, which is not in the catalog; add that bundle or drop the replaces edge (opm tolerates this at the tail of a channel)",
                    c.package, c.name, e.name, e.replaces
                ));
            }
        }
    }
    let provided: BTreeSet<(String, String, String)> = catalog
        .bundles
        .iter()
        .flat_map(|b| b.properties_of("olm.gvk"))
        .map(gvk)
        .collect();
    for b in &catalog.bundles {
        for required in b.properties_of("olm.gvk.required") {
            let key = gvk(required);
            if !provided.contains(&key) {
                mni(format!(
                    "bundle {:?} requires {}/{} {}, which no bundle of the catalog provides (olm.gvk); add the package that owns it",
                    b.name, key.0, key.1, key.2
                ));
            }
        }
        for required in b.properties_of("olm.package.required") {
            let name = required
                .get("packageName")
                .and_then(Value::as_str)
                .unwrap_or("");
            let range = required
                .get("versionRange")
                .and_then(Value::as_str)
                .unwrap_or("");
            let satisfied = match VersionRange::parse(range) {
                Ok(range) => bundles
                    .get(name)
                    .is_some_and(|bs| bs.values().flatten().any(|v| range.matches(v))),
                Err(e) => {
                    mni(format!(
                        "bundle {:?}: olm.package.required {name:?}: {e}",
                        b.name
                    ));
                    continue;
                }
            };
            if !satisfied {
                mni(format!(
                    "bundle {:?} requires package {name:?} {range:?}, which no bundle of the catalog satisfies; add a bundle of {name:?} in that range",
                    b.name
                ));
            }
        }
    }
    findings
}

fn gvk(v: &Value) -> (String, String, String) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    (s("group"), s("version"), s("kind"))
}

/// Kubernetes' DNS-1123 label: lower-case alphanumerics and '-', alphanumeric at both ends.
fn is_dns1123_label(name: &str) -> bool {
    name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::{Bundle, Channel, ChannelEntry, Package, Property};
    use serde_json::json;

    fn entry(name: &str, replaces: &str) -> ChannelEntry {
        ChannelEntry {
            name: name.into(),
            replaces: replaces.into(),
            ..Default::default()
        }
    }

    fn bundle(name: &str, version: &str) -> Bundle {
        Bundle {
            schema: "olm.bundle".into(),
            name: name.into(),
            package: "a".into(),
            image: format!("x/a:{version}"),
            properties: vec![Property::new(
                "olm.package",
                json!({"packageName": "a", "version": version}),
            )],
            ..Default::default()
        }
    }

    fn catalog(entries: Vec<ChannelEntry>, bundles: Vec<Bundle>) -> Catalog {
        Catalog {
            packages: vec![Package {
                schema: "olm.package".into(),
                name: "a".into(),
                default_channel: "alpha".into(),
                ..Default::default()
            }],
            channels: vec![Channel {
                schema: "olm.channel".into(),
                package: "a".into(),
                name: "alpha".into(),
                entries,
                ..Default::default()
            }],
            bundles,
            others: vec![],
        }
    }

    /// Validates with all rules and with opm's only; `None` means valid.
    fn check(catalog: &Catalog, all: Option<&str>, opm_only: Option<&str>) {
        let verdict = |opm_rules_only| {
            validate(
                catalog,
                &ValidateOptions::default().with_opm_rules_only(opm_rules_only),
            )
            .err()
            .map(|e| e.to_string())
        };
        for (got, want) in [(verdict(false), all), (verdict(true), opm_only)] {
            match (got, want) {
                (None, None) => {}
                (Some(got), Some(want)) => {
                    assert!(got.contains(want), "{got:?} should contain {want:?}")
                }
                (got, want) => panic!("got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_linear_channel_is_valid() {
        let c = catalog(
            vec![entry("a.v0.1.0", ""), entry("a.v0.2.0", "a.v0.1.0")],
            vec![bundle("a.v0.1.0", "0.1.0"), bundle("a.v0.2.0", "0.2.0")],
        );
        check(&c, None, None);
    }

    #[test]
    fn two_heads_are_refused() {
        let c = catalog(
            vec![entry("a.v0.1.0", ""), entry("a.v0.2.0", "")],
            vec![bundle("a.v0.1.0", "0.1.0"), bundle("a.v0.2.0", "0.2.0")],
        );
        check(
            &c,
            Some("multiple channel heads found in graph: a.v0.1.0, a.v0.2.0"),
            Some("multiple channel heads"),
        );
    }

    #[test]
    fn a_cycle_has_no_head() {
        let c = catalog(
            vec![entry("a.v0.1.0", "a.v0.2.0"), entry("a.v0.2.0", "a.v0.1.0")],
            vec![bundle("a.v0.1.0", "0.1.0"), bundle("a.v0.2.0", "0.2.0")],
        );
        check(&c, Some("no channel head"), Some("no channel head"));
    }

    #[test]
    fn replaces_outside_the_catalog_is_only_mnis_concern() {
        let c = catalog(
            vec![entry("a.v0.2.0", "a.v0.1.0")],
            vec![bundle("a.v0.2.0", "0.2.0")],
        );
        check(
            &c,
            Some(
                "[mni] package \"a\", channel \"alpha\": bundle \"a.v0.2.0\" replaces \"a.v0.1.0\"",
            ),
            None,
        );
    }

    #[test]
    fn an_entry_without_a_bundle_and_a_missing_default_channel_are_refused() {
        let mut c = catalog(vec![entry("a.v0.1.0", "")], vec![]);
        check(
            &c,
            Some("entry \"a.v0.1.0\" has no olm.bundle"),
            Some("has no olm.bundle"),
        );
        c = catalog(
            vec![entry("a.v0.1.0", "")],
            vec![bundle("a.v0.1.0", "0.1.0")],
        );
        c.packages[0].default_channel = "stable".into();
        check(
            &c,
            Some("default channel \"stable\" not found"),
            Some("not found"),
        );
    }

    #[test]
    fn unsatisfied_dependencies_are_only_mnis_concern() {
        let mut b = bundle("a.v0.1.0", "0.1.0");
        b.properties.push(Property::new(
            "olm.gvk.required",
            json!({"group": "g", "version": "v1", "kind": "K"}),
        ));
        let c = catalog(vec![entry("a.v0.1.0", "")], vec![b]);
        check(&c, Some("[mni] bundle \"a.v0.1.0\" requires g/v1 K"), None);
    }

    #[test]
    fn a_bundle_of_an_undeclared_package_is_refused() {
        let mut c = catalog(
            vec![entry("a.v0.1.0", "")],
            vec![bundle("a.v0.1.0", "0.1.0")],
        );
        c.bundles[0].package = "b".into();
        check(
            &c,
            Some("unknown package \"b\" for bundle \"a.v0.1.0\""),
            Some("unknown package"),
        );
    }
}
