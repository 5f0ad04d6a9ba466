//! Resolution: which bundles a Subscription needs — the one it asks for and, transitively,
//! the operators that provide what that one requires.
//!
//! Pure logic over parsed catalogs and what is installed in the namespace; the
//! `subscription` module turns a [`Resolution`] into Subscriptions and an InstallPlan.
//! Picking follows OLM's rules in a simplified form: a new Subscription gets its channel's
//! head (or `startingCSV`); an installed one the channel entry that `replaces` (or `skips`,
//! or whose `skipRange` covers) its installed CSV, one edge at a time; an `olm.gvk.required`
//! is met by an installed CSV that owns the API or else by the head of a channel (the default
//! channel first) of a package providing it, in the Subscription's catalog first and then
//! the other catalogs by namespace and name; an `olm.package.required` by an installed
//! package in range or else the highest version in range. No SAT solving: a conflict is not
//! searched around, it fails.

use std::collections::BTreeSet;

use crate::catalog::{self, Bundle, Catalog, Gvk};

/// Why a Subscription cannot be resolved; the message goes into its `ResolutionFailed`
/// condition.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum Error {
    /// The Subscription's CatalogSource is unknown or not ready.
    #[error("catalog source {namespace}/{name} is not available")]
    NoCatalog {
        /// The CatalogSource's namespace.
        namespace: String,
        /// The CatalogSource's name.
        name: String,
    },
    /// The package, channel or starting CSV is not in the catalog.
    #[error("{0}")]
    NotFound(String),
    /// A requirement of a bundle cannot be met by anything installed or in any catalog.
    #[error("constraints not satisfiable: {0}")]
    Unsatisfiable(String),
}

/// A loaded catalog and the CatalogSource it came from.
#[derive(Debug)]
pub(crate) struct Source<'a> {
    /// The CatalogSource's name.
    pub(crate) name: String,
    /// The CatalogSource's namespace.
    pub(crate) namespace: String,
    /// Its content.
    pub(crate) catalog: &'a Catalog,
}

/// What a Subscription asks for.
#[derive(Debug, Default)]
pub(crate) struct Request {
    /// The package (`spec.name`).
    pub(crate) package: String,
    /// The channel (`spec.channel`; the package's default channel when absent).
    pub(crate) channel: Option<String>,
    /// `spec.source`.
    pub(crate) source: String,
    /// `spec.sourceNamespace`.
    pub(crate) source_namespace: String,
    /// `spec.startingCSV`.
    pub(crate) starting_csv: Option<String>,
    /// The CSV the Subscription has installed (`status.installedCSV`).
    pub(crate) installed_csv: Option<String>,
}

/// An operator installed in the namespace.
#[derive(Debug, Default, Clone)]
pub(crate) struct Installed {
    /// Its package, when a Subscription says.
    pub(crate) package: Option<String>,
    /// Its version.
    pub(crate) version: Option<semver::Version>,
    /// The APIs its CSV owns.
    pub(crate) provides: Vec<Gvk>,
}

/// One bundle picked for installation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pick {
    /// The CatalogSource it comes from.
    pub(crate) source: String,
    /// That CatalogSource's namespace.
    pub(crate) source_namespace: String,
    /// Its package.
    pub(crate) package: String,
    /// The channel it was found in.
    pub(crate) channel: String,
    /// The bundle's (and CSV's) name.
    pub(crate) bundle: String,
}

/// The outcome: the bundle the Subscription wants, then the dependencies to add.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolution {
    /// The bundle of the Subscription itself.
    pub(crate) target: Pick,
    /// Bundles of packages to subscribe to as well, in the order found.
    pub(crate) dependencies: Vec<Pick>,
}

impl<'a> Source<'a> {
    fn bundle(&self, name: &str) -> Option<&'a Bundle> {
        self.catalog.bundles.get(name)
    }
}

/// Resolves `request`: `Ok(None)` when the installed CSV is the newest the channel offers.
pub(crate) fn resolve(
    request: &Request,
    sources: &[Source<'_>],
    installed: &[Installed],
) -> Result<Option<Resolution>, Error> {
    let source = sources
        .iter()
        .find(|s| s.name == request.source && s.namespace == request.source_namespace)
        .ok_or_else(|| Error::NoCatalog {
            namespace: request.source_namespace.clone(),
            name: request.source.clone(),
        })?;
    let package = source
        .catalog
        .packages
        .get(&request.package)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no package {} in catalog {}/{}",
                request.package, source.namespace, source.name
            ))
        })?;
    let channel = request
        .channel
        .clone()
        .or_else(|| package.default_channel.clone())
        .ok_or_else(|| {
            Error::NotFound(format!(
                "package {} has no default channel; set spec.channel",
                request.package
            ))
        })?;
    let entries = package.channels.get(&channel).ok_or_else(|| {
        Error::NotFound(format!(
            "no channel {channel} in package {} of catalog {}/{}",
            request.package, source.namespace, source.name
        ))
    })?;
    let bundle = match &request.installed_csv {
        Some(installed) => {
            let version = source.bundle(installed).and_then(|b| b.version.clone());
            match next_after(entries, source, installed, version.as_ref()) {
                Some(next) => next,
                None => return Ok(None),
            }
        }
        None => match &request.starting_csv {
            Some(start) => {
                if !entries.iter().any(|e| &e.name == start) {
                    return Err(Error::NotFound(format!(
                        "startingCSV {start} is not in channel {channel} of package {}",
                        request.package
                    )));
                }
                start.clone()
            }
            None => head(entries, source).ok_or_else(|| {
                Error::NotFound(format!("channel {channel} of {} is empty", request.package))
            })?,
        },
    };
    let target = Pick {
        source: source.name.clone(),
        source_namespace: source.namespace.clone(),
        package: request.package.clone(),
        channel,
        bundle,
    };
    let dependencies = dependencies(&target, sources, installed)?;
    Ok(Some(Resolution {
        target,
        dependencies,
    }))
}

/// The head of a channel: the entry no other entry replaces or skips (the newest if several).
fn head(entries: &[catalog::Entry], source: &Source<'_>) -> Option<String> {
    let superseded: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| e.replaces.iter().chain(e.skips.iter()))
        .map(String::as_str)
        .collect();
    entries
        .iter()
        .filter(|e| !superseded.contains(e.name.as_str()))
        .max_by_key(|e| source.bundle(&e.name).and_then(|b| b.version.clone()))
        .map(|e| e.name.clone())
}

/// The entry that upgrades from `installed` (the newest if several).
fn next_after(
    entries: &[catalog::Entry],
    source: &Source<'_>,
    installed: &str,
    version: Option<&semver::Version>,
) -> Option<String> {
    entries
        .iter()
        .filter(|e| e.name != installed)
        .filter(|e| {
            e.replaces.as_deref() == Some(installed)
                || e.skips.iter().any(|s| s == installed)
                || e.skip_range
                    .as_deref()
                    .zip(version)
                    .is_some_and(|(range, v)| catalog::in_range(range, v))
        })
        .max_by_key(|e| source.bundle(&e.name).and_then(|b| b.version.clone()))
        .map(|e| e.name.clone())
}

/// The dependencies of `target`, transitively.
fn dependencies(
    target: &Pick,
    sources: &[Source<'_>],
    installed: &[Installed],
) -> Result<Vec<Pick>, Error> {
    let mut picked: Vec<Pick> = vec![target.clone()];
    let mut index = 0;
    while index < picked.len() {
        let pick = picked[index].clone();
        index += 1;
        let bundle = bundle_of(&pick, sources).ok_or_else(|| {
            Error::NotFound(format!(
                "bundle {} is not in catalog {}/{}",
                pick.bundle, pick.source_namespace, pick.source
            ))
        })?;
        for gvk in &bundle.requires {
            let provided = installed.iter().any(|i| i.provides.contains(gvk))
                || picked
                    .iter()
                    .any(|p| bundle_of(p, sources).is_some_and(|b| b.provides.contains(gvk)));
            if provided {
                continue;
            }
            let found = find(
                &pick,
                sources,
                |b| b.provides.contains(gvk),
                &picked,
                installed,
            )
            .ok_or_else(|| {
                Error::Unsatisfiable(format!(
                    "bundle {} requires an operator providing an API with group: {}, \
                         version: {}, kind: {}, and no catalog has one",
                    bundle.name, gvk.group, gvk.version, gvk.kind
                ))
            })?;
            picked.push(found);
        }
        for required in &bundle.requires_packages {
            let in_range = |v: Option<&semver::Version>| {
                v.is_some_and(|v| catalog::in_range(&required.range, v))
            };
            let met = installed.iter().any(|i| {
                i.package.as_deref() == Some(required.package.as_str())
                    && in_range(i.version.as_ref())
            }) || picked.iter().any(|p| {
                p.package == required.package
                    && in_range(bundle_of(p, sources).and_then(|b| b.version.as_ref()))
            });
            if met {
                continue;
            }
            let found = find(
                &pick,
                sources,
                |b| b.package == required.package && in_range(b.version.as_ref()),
                &picked,
                installed,
            )
            .ok_or_else(|| {
                Error::Unsatisfiable(format!(
                    "bundle {} requires package {} in range {}, and no catalog has it",
                    bundle.name, required.package, required.range
                ))
            })?;
            picked.push(found);
        }
    }
    picked.remove(0);
    Ok(picked)
}

fn bundle_of<'a>(pick: &Pick, sources: &[Source<'a>]) -> Option<&'a Bundle> {
    sources
        .iter()
        .find(|s| s.name == pick.source && s.namespace == pick.source_namespace)
        .and_then(|s| s.bundle(&pick.bundle))
}

/// A channel entry of a package not yet picked or installed whose bundle satisfies
/// `wanted`: the requiring bundle's catalog first, default channels first, newest first.
fn find(
    from: &Pick,
    sources: &[Source<'_>],
    wanted: impl Fn(&Bundle) -> bool,
    picked: &[Pick],
    installed: &[Installed],
) -> Option<Pick> {
    let mut ordered: Vec<&Source<'_>> = sources.iter().collect();
    ordered.sort_by_key(|s| {
        (
            !(s.name == from.source && s.namespace == from.source_namespace),
            s.namespace.clone(),
            s.name.clone(),
        )
    });
    for source in ordered {
        for (package_name, package) in &source.catalog.packages {
            let taken = picked.iter().any(|p| &p.package == package_name)
                || installed
                    .iter()
                    .any(|i| i.package.as_deref() == Some(package_name.as_str()));
            if taken {
                continue;
            }
            let mut channels: Vec<(&String, &Vec<catalog::Entry>)> =
                package.channels.iter().collect();
            channels
                .sort_by_key(|(name, _)| Some(name.as_str()) != package.default_channel.as_deref());
            for (channel, entries) in channels {
                let best = entries
                    .iter()
                    .filter_map(|e| source.bundle(&e.name))
                    .filter(|b| wanted(b))
                    .max_by_key(|b| b.version.clone());
                if let Some(bundle) = best {
                    return Some(Pick {
                        source: source.name.clone(),
                        source_namespace: source.namespace.clone(),
                        package: package_name.clone(),
                        channel: channel.clone(),
                        bundle: bundle.name.clone(),
                    });
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOG: &str = r#"
{"schema":"olm.package","name":"db","defaultChannel":"stable"}
{"schema":"olm.channel","package":"db","name":"stable","entries":[{"name":"db.v1"},{"name":"db.v2","replaces":"db.v1"}]}
{"schema":"olm.bundle","name":"db.v1","package":"db","properties":[{"type":"olm.package","value":{"packageName":"db","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"db.example.com","version":"v1","kind":"Database"}}]}
{"schema":"olm.bundle","name":"db.v2","package":"db","properties":[{"type":"olm.package","value":{"packageName":"db","version":"2.0.0"}},{"type":"olm.gvk","value":{"group":"db.example.com","version":"v1","kind":"Database"}}]}
{"schema":"olm.package","name":"app","defaultChannel":"stable"}
{"schema":"olm.channel","package":"app","name":"stable","entries":[{"name":"app.v1"}]}
{"schema":"olm.bundle","name":"app.v1","package":"app","properties":[{"type":"olm.package","value":{"packageName":"app","version":"1.0.0"}},{"type":"olm.gvk.required","value":{"group":"db.example.com","version":"v1","kind":"Database"}}]}
{"schema":"olm.package","name":"broken","defaultChannel":"stable"}
{"schema":"olm.channel","package":"broken","name":"stable","entries":[{"name":"broken.v1"}]}
{"schema":"olm.bundle","name":"broken.v1","package":"broken","properties":[{"type":"olm.package","value":{"packageName":"broken","version":"1.0.0"}},{"type":"olm.package.required","value":{"packageName":"db","versionRange":">=3.0.0"}}]}
{"schema":"olm.package","name":"ping","defaultChannel":"stable"}
{"schema":"olm.channel","package":"ping","name":"stable","entries":[{"name":"ping.v1"}]}
{"schema":"olm.bundle","name":"ping.v1","package":"ping","properties":[{"type":"olm.package","value":{"packageName":"ping","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"ping.example.com","version":"v1","kind":"Ping"}},{"type":"olm.gvk.required","value":{"group":"pong.example.com","version":"v1","kind":"Pong"}}]}
{"schema":"olm.package","name":"pong","defaultChannel":"stable"}
{"schema":"olm.channel","package":"pong","name":"stable","entries":[{"name":"pong.v1"}]}
{"schema":"olm.bundle","name":"pong.v1","package":"pong","properties":[{"type":"olm.package","value":{"packageName":"pong","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"pong.example.com","version":"v1","kind":"Pong"}},{"type":"olm.gvk.required","value":{"group":"ping.example.com","version":"v1","kind":"Ping"}},{"type":"olm.package.required","value":{"packageName":"ping","versionRange":">=1.0.0"}}]}
"#;

    fn catalog() -> Catalog {
        let mut catalog = Catalog::default();
        catalog.add_documents("test", CATALOG).expect("catalog");
        catalog
    }

    fn request(package: &str, installed_csv: Option<&str>) -> Request {
        Request {
            package: package.into(),
            source: "cat".into(),
            source_namespace: "olm".into(),
            installed_csv: installed_csv.map(str::to_string),
            ..Request::default()
        }
    }

    fn check(
        request: Request,
        installed: &[Installed],
    ) -> Result<Option<(String, Vec<String>)>, Error> {
        let catalog = catalog();
        let sources = [Source {
            name: "cat".into(),
            namespace: "olm".into(),
            catalog: &catalog,
        }];
        Ok(resolve(&request, &sources, installed)?.map(|r| {
            (
                r.target.bundle,
                r.dependencies.into_iter().map(|d| d.bundle).collect(),
            )
        }))
    }

    #[test]
    fn a_new_subscription_gets_the_channel_head() {
        assert_eq!(
            check(request("db", None), &[]),
            Ok(Some(("db.v2".into(), vec![])))
        );
    }

    #[test]
    fn starting_csv_wins_over_the_head() {
        let mut r = request("db", None);
        r.starting_csv = Some("db.v1".into());
        assert_eq!(check(r, &[]), Ok(Some(("db.v1".into(), vec![]))));
    }

    #[test]
    fn an_installed_csv_upgrades_along_replaces_then_stays() {
        assert_eq!(
            check(request("db", Some("db.v1")), &[]),
            Ok(Some(("db.v2".into(), vec![])))
        );
        assert_eq!(check(request("db", Some("db.v2")), &[]), Ok(None));
    }

    #[test]
    fn a_required_api_pulls_in_its_provider_unless_installed() {
        assert_eq!(
            check(request("app", None), &[]),
            Ok(Some(("app.v1".into(), vec!["db.v2".into()])))
        );
        let db = Installed {
            package: Some("db".into()),
            version: Some(semver::Version::new(1, 0, 0)),
            provides: vec![Gvk {
                group: "db.example.com".into(),
                version: "v1".into(),
                kind: "Database".into(),
            }],
        };
        assert_eq!(
            check(request("app", None), &[db]),
            Ok(Some(("app.v1".into(), vec![])))
        );
    }

    /// Two operators that need each other's API (and one the other's package) resolve
    /// together into one plan, as OLM installs them, rather than looping or failing.
    #[test]
    fn a_dependency_cycle_resolves_both_operators_together() {
        assert_eq!(
            check(request("ping", None), &[]),
            Ok(Some(("ping.v1".into(), vec!["pong.v1".into()])))
        );
        assert_eq!(
            check(request("pong", None), &[]),
            Ok(Some(("pong.v1".into(), vec!["ping.v1".into()])))
        );
    }

    #[test]
    fn an_unavailable_package_range_is_unsatisfiable() {
        let error = check(request("broken", None), &[]).expect_err("unsatisfiable");
        assert!(
            error
                .to_string()
                .contains("requires package db in range >=3.0.0"),
            "{error}"
        );
    }

    #[test]
    fn unknown_catalogs_and_packages_are_named() {
        let mut r = request("nope", None);
        assert!(
            check(r, &[])
                .expect_err("no package")
                .to_string()
                .contains("no package nope")
        );
        r = request("db", None);
        r.source = "other".into();
        assert_eq!(
            check(r, &[]),
            Err(Error::NoCatalog {
                namespace: "olm".into(),
                name: "other".into()
            })
        );
    }
}
