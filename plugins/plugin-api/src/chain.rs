//! Plugin-chain resolution, as Kubebuilder does it.
//!
//! Start with [`ChainResolver`]: give it the keys of every plugin the CLI knows (built-in and
//! external), the project's `layout` and a default chain, then call
//! [`ChainResolver::resolve`] with the value of `--plugins`. `--plugins` overrides the layout;
//! the layout overrides the default. A key may be given in short form: `service/v1` matches
//! `service.mni.dev/v1`, and `service` alone resolves to the only version of that plugin or to
//! its newest stable version.

use std::collections::BTreeSet;

use crate::key::{KeyError, PluginKey, PluginVersion, validate_name};

/// Why a plugin chain could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A `--plugins` entry is not a valid key or short name.
    #[error("invalid --plugins entry: {0}")]
    InvalidQuery(#[source] KeyError),
    /// No known plugin matches the query.
    #[error("no plugin matches {query:?}; available: {available}")]
    NoMatch {
        /// The query as given.
        query: String,
        /// The keys of all known plugins, comma-separated.
        available: String,
    },
    /// More than one plugin matches and none is preferred.
    #[error("plugin {query:?} is ambiguous; candidates: {candidates} (give the full key)")]
    Ambiguous {
        /// The query as given.
        query: String,
        /// The matching keys, comma-separated.
        candidates: String,
    },
    /// The PROJECT `layout` names a plugin this CLI does not have.
    #[error("the PROJECT layout uses plugin {key} which is not available; available: {available}")]
    LayoutUnavailable {
        /// The layout key.
        key: String,
        /// The keys of all known plugins, comma-separated.
        available: String,
    },
    /// The same plugin appears twice in the chain.
    #[error("plugin {key} appears more than once in the plugin chain")]
    Duplicate {
        /// The repeated key.
        key: String,
    },
    /// `--plugins` was empty and there is neither a layout nor a default chain.
    #[error("no plugin chain: pass --plugins (e.g. --plugins service/v1)")]
    Empty,
}

/// Resolves `--plugins`, the PROJECT layout and a default into a chain of known plugin keys.
#[derive(Debug, Clone, Default)]
pub struct ChainResolver {
    available: Vec<PluginKey>,
    layout: Vec<PluginKey>,
    default: Vec<PluginKey>,
}

impl ChainResolver {
    /// A resolver over the keys of every plugin the CLI can run.
    #[must_use]
    pub fn new(available: impl IntoIterator<Item = PluginKey>) -> Self {
        let available: BTreeSet<PluginKey> = available.into_iter().collect();
        Self {
            available: available.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Uses the project's `layout` when `--plugins` is not given.
    #[must_use]
    pub fn with_layout(mut self, layout: &[PluginKey]) -> Self {
        self.layout = layout.to_vec();
        self
    }

    /// Uses `default` when neither `--plugins` nor a layout is given (e.g. on `init`).
    #[must_use]
    pub fn with_default(mut self, default: &[PluginKey]) -> Self {
        self.default = default.to_vec();
        self
    }

    /// Resolves the chain. `plugins_flag` is the raw, comma-separated value of `--plugins`.
    pub fn resolve(&self, plugins_flag: Option<&str>) -> Result<Vec<PluginKey>, ResolveError> {
        let chain = match plugins_flag {
            Some(flag) if flag.split(',').any(|s| !s.trim().is_empty()) => flag
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|q| self.resolve_one(q))
                .collect::<Result<Vec<_>, _>>()?,
            _ if !self.layout.is_empty() => self
                .layout
                .iter()
                .map(|k| {
                    self.available
                        .contains(k)
                        .then(|| k.clone())
                        .ok_or_else(|| ResolveError::LayoutUnavailable {
                            key: k.to_string(),
                            available: self.list(),
                        })
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ if !self.default.is_empty() => self
                .default
                .iter()
                .map(|k| self.resolve_one(&k.to_string()))
                .collect::<Result<_, _>>()?,
            _ => return Err(ResolveError::Empty),
        };
        let mut seen = BTreeSet::new();
        for key in &chain {
            if !seen.insert(key) {
                return Err(ResolveError::Duplicate {
                    key: key.to_string(),
                });
            }
        }
        Ok(chain)
    }

    /// Resolves one `name[/version]` query against the known plugins.
    pub fn resolve_one(&self, query: &str) -> Result<PluginKey, ResolveError> {
        let (name, version) = match query.split_once('/') {
            Some((n, v)) => {
                let v = v.parse::<PluginVersion>().map_err(|_| {
                    ResolveError::InvalidQuery(KeyError::InvalidVersion {
                        key: query.to_owned(),
                        version: v.to_owned(),
                    })
                })?;
                (n, Some(v))
            }
            None => (query, None),
        };
        validate_name(name, query).map_err(ResolveError::InvalidQuery)?;

        // Exact names win over short names (`service` matching `service.mni.dev`).
        let dotted = format!("{name}.");
        let exact: Vec<&PluginKey> = self.available.iter().filter(|k| k.name() == name).collect();
        let by_name = if exact.is_empty() {
            self.available
                .iter()
                .filter(|k| k.name().starts_with(&dotted))
                .collect()
        } else {
            exact
        };
        let candidates: Vec<&PluginKey> = by_name
            .into_iter()
            .filter(|k| version.is_none_or(|v| k.version() == v))
            .collect();

        let names: BTreeSet<&str> = candidates.iter().map(|k| k.name()).collect();
        let ambiguous = || ResolveError::Ambiguous {
            query: query.to_owned(),
            candidates: join(&candidates),
        };
        match candidates.as_slice() {
            [] => Err(ResolveError::NoMatch {
                query: query.to_owned(),
                available: self.list(),
            }),
            [only] => Ok((*only).clone()),
            _ if names.len() > 1 || version.is_some() => Err(ambiguous()),
            _ => candidates
                .iter()
                .filter(|k| k.version().is_stable())
                .max()
                .map(|k| (*k).clone())
                .ok_or_else(ambiguous),
        }
    }

    fn list(&self) -> String {
        if self.available.is_empty() {
            return "(none)".to_owned();
        }
        join(&self.available.iter().collect::<Vec<_>>())
    }
}

fn join(keys: &[&PluginKey]) -> String {
    keys.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver() -> ChainResolver {
        let keys = [
            "service.mni.dev/v1",
            "service.mni.dev/v2-alpha",
            "vpc.mni.dev/v1-alpha",
            "vpc.mni.dev/v1-beta",
            "go.kubebuilder.io/v4",
            "go.acme.io/v4",
            "kustomize.common.kubebuilder.io/v2",
        ];
        ChainResolver::new(keys.iter().map(|k| k.parse().unwrap()))
    }

    fn check(flag: &str, expected: Result<&str, &str>) {
        let got = resolver()
            .resolve(Some(flag))
            .map(|c| {
                c.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .map_err(|e| e.to_string());
        match (got, expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e, "{flag}"),
            (Err(g), Err(e)) => assert!(g.contains(e), "{flag}: {g:?} should contain {e:?}"),
            (g, e) => panic!("{flag}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn resolves_queries() {
        check("service.mni.dev/v1", Ok("service.mni.dev/v1"));
        check("service/v1", Ok("service.mni.dev/v1"));
        check("service", Ok("service.mni.dev/v1"));
        check("service.mni/v2-alpha", Ok("service.mni.dev/v2-alpha"));
        check(
            "kustomize.common/v2",
            Ok("kustomize.common.kubebuilder.io/v2"),
        );
        check(
            " service/v1 , kustomize/v2 ",
            Ok("service.mni.dev/v1,kustomize.common.kubebuilder.io/v2"),
        );
        check(
            "foo/v1",
            Err("no plugin matches \"foo/v1\"; available: go.acme.io/v4, "),
        );
        check("serv/v1", Err("no plugin matches \"serv/v1\""));
        check("service/v3", Err("no plugin matches"));
        check(
            "go/v4",
            Err("plugin \"go/v4\" is ambiguous; candidates: go.acme.io/v4, go.kubebuilder.io/v4"),
        );
        check(
            "vpc",
            Err("candidates: vpc.mni.dev/v1-alpha, vpc.mni.dev/v1-beta"),
        );
        check("Service/v1", Err("name \"Service\""));
        check("service/1", Err("version \"1\""));
        check(
            "service/v1,service.mni.dev/v1",
            Err("appears more than once"),
        );
    }

    #[test]
    fn flag_overrides_layout_overrides_default() {
        let layout: Vec<PluginKey> = vec!["go.acme.io/v4".parse().unwrap()];
        let default: Vec<PluginKey> = vec!["service.mni.dev/v1".parse().unwrap()];
        let r = resolver().with_layout(&layout).with_default(&default);
        assert_eq!(
            r.resolve(Some("vpc/v1-beta")).unwrap()[0].to_string(),
            "vpc.mni.dev/v1-beta"
        );
        assert_eq!(r.resolve(None).unwrap(), layout);
        assert_eq!(r.resolve(Some(" ")).unwrap(), layout);
        let r = resolver().with_default(&default);
        assert_eq!(r.resolve(None).unwrap(), default);
        assert_eq!(resolver().resolve(None), Err(ResolveError::Empty));
        let missing: Vec<PluginKey> = vec!["gone.io/v1".parse().unwrap()];
        let err = resolver().with_layout(&missing).resolve(None).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the PROJECT layout uses plugin gone.io/v1"),
            "{err}"
        );
    }
}
