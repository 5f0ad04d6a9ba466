//! RBAC rules derived from what the code declares.
//!
//! A controller declares each permission it needs in a comment line of its Rust source:
//!
//! ```text
//! // +mni:rbac:groups=webapp.example.com,resources=guestbooks;guestbooks/status,verbs=get;list;watch
//! ```
//!
//! `groups` takes `""` or `core` for the core group. [`collect`] reads every such line under a
//! crate's `src/`, refuses wildcards and unknown keys (naming file and line), and merges them:
//! verbs are united per group and resource, then resources with the same group and verbs share
//! one rule. The result is sorted, so `config/rbac/role.yaml` is deterministic.

use std::collections::{BTreeMap, BTreeSet};

use mni_plugin::Universe;
use serde::Serialize;

/// The comment prefix of a declaration.
pub const MARKER: &str = "+mni:rbac:";

/// Why a declaration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RbacError {
    /// A key other than `groups`, `resources` and `verbs`, or a missing one.
    #[error("{path}:{line}: {message} in `{text}` (write groups=…,resources=…,verbs=…)")]
    Malformed {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
        /// The declaration.
        text: String,
    },
    /// A `*` anywhere: least privilege means naming what is needed.
    #[error("{path}:{line}: `*` is not allowed in `{text}`: name each group, resource and verb")]
    Wildcard {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The declaration.
        text: String,
    },
}

/// One rule of the generated ClusterRole.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Rule {
    /// API groups (one per rule here; `""` is the core group).
    pub groups: Vec<String>,
    /// Resources, sorted.
    pub resources: Vec<String>,
    /// Verbs, sorted.
    pub verbs: Vec<String>,
}

/// The merged rules declared by the `.rs` files under `src_dir` (e.g. `services/x/operator/src/`).
pub fn collect(universe: &Universe, src_dir: &str) -> Result<Vec<Rule>, RbacError> {
    let mut verbs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (path, file) in universe.iter() {
        if !path.starts_with(src_dir) || !path.ends_with(".rs") {
            continue;
        }
        for (i, line) in file.contents().lines().enumerate() {
            let Some(text) = line
                .trim_start()
                .strip_prefix("//")
                .map(|l| l.trim_start_matches(['/', '!']).trim())
                .and_then(|l| l.strip_prefix(MARKER))
            else {
                continue;
            };
            for (group, resource, verb) in parse(path, i + 1, text)? {
                verbs.entry((group, resource)).or_default().insert(verb);
            }
        }
    }
    let mut grouped: BTreeMap<(String, Vec<String>), BTreeSet<String>> = BTreeMap::new();
    for ((group, resource), verbs) in verbs {
        grouped
            .entry((group, verbs.into_iter().collect()))
            .or_default()
            .insert(resource);
    }
    let mut rules: Vec<Rule> = grouped
        .into_iter()
        .map(|((group, verbs), resources)| Rule {
            groups: vec![group],
            resources: resources.into_iter().collect(),
            verbs,
        })
        .collect();
    rules.sort();
    Ok(rules)
}

/// The (group, resource, verb) triples of one declaration.
fn parse(path: &str, line: usize, text: &str) -> Result<Vec<(String, String, String)>, RbacError> {
    let malformed = |message: String| RbacError::Malformed {
        path: path.to_owned(),
        line,
        message,
        text: text.to_owned(),
    };
    if text.contains('*') {
        return Err(RbacError::Wildcard {
            path: path.to_owned(),
            line,
            text: text.to_owned(),
        });
    }
    let (mut groups, mut resources, mut verbs) = (None, None, None);
    for part in text.split(',') {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| malformed(format!("`{part}` has no `=`")))?;
        let values: Vec<String> = value
            .split(';')
            .map(|v| v.trim().trim_matches('"').to_owned())
            .collect();
        match key.trim() {
            "groups" => {
                groups = Some(
                    values
                        .into_iter()
                        .map(|g| if g == "core" { String::new() } else { g })
                        .collect::<Vec<_>>(),
                );
            }
            "resources" => resources = Some(values),
            "verbs" => verbs = Some(values),
            other => return Err(malformed(format!("unknown key `{other}`"))),
        }
    }
    let (Some(groups), Some(resources), Some(verbs)) = (groups, resources, verbs) else {
        return Err(malformed(
            "groups, resources and verbs are all required".to_owned(),
        ));
    };
    if resources.iter().chain(&verbs).any(String::is_empty) {
        return Err(malformed("an empty resource or verb".to_owned()));
    }
    let mut out = Vec::new();
    for g in &groups {
        for r in &resources {
            for v in &verbs {
                out.push((g.clone(), r.clone(), v.clone()));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn universe(files: &[(&str, &str)]) -> Universe {
        let mut u = Universe::new();
        for (p, c) in files {
            u.insert_existing(p, *c).unwrap();
        }
        u
    }

    #[test]
    fn merges_and_sorts_declarations() {
        let u = universe(&[
            (
                "src/controllers/a.rs",
                "// +mni:rbac:groups=example.com,resources=as,verbs=get;list;watch\n\
                 // +mni:rbac:groups=example.com,resources=as/status,verbs=get;patch\n\
                 //! +mni:rbac:groups=core,resources=configmaps,verbs=get;create\n",
            ),
            (
                "src/main.rs",
                "// +mni:rbac:groups=example.com,resources=bs,verbs=watch;list;get\n\
                 // +mni:rbac:groups=\"\",resources=configmaps,verbs=patch\n",
            ),
            (
                "services/x/operator/src/main.rs",
                "// +mni:rbac:groups=x,resources=y,verbs=z\n",
            ),
            (
                "src/notes.md",
                "// +mni:rbac:groups=x,resources=y,verbs=z\n",
            ),
        ]);
        let rules = collect(&u, "src/").unwrap();
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            rules,
            vec![
                Rule {
                    groups: s(&[""]),
                    resources: s(&["configmaps"]),
                    verbs: s(&["create", "get", "patch"]),
                },
                Rule {
                    groups: s(&["example.com"]),
                    resources: s(&["as", "bs"]),
                    verbs: s(&["get", "list", "watch"]),
                },
                Rule {
                    groups: s(&["example.com"]),
                    resources: s(&["as/status"]),
                    verbs: s(&["get", "patch"]),
                },
            ]
        );
    }

    #[test]
    fn refuses_wildcards_and_unknown_keys() {
        let u = universe(&[(
            "src/a.rs",
            "\n// +mni:rbac:groups=*,resources=pods,verbs=get\n",
        )]);
        assert_eq!(
            collect(&u, "src/").unwrap_err().to_string(),
            "src/a.rs:2: `*` is not allowed in `groups=*,resources=pods,verbs=get`: name each group, resource and verb"
        );
        let u = universe(&[("src/a.rs", "// +mni:rbac:groups=a,resources=p,verb=get\n")]);
        let err = collect(&u, "src/").unwrap_err().to_string();
        assert!(err.starts_with("src/a.rs:1: unknown key `verb`"), "{err}");
        let u = universe(&[("src/a.rs", "// +mni:rbac:groups=a,resources=p\n")]);
        assert!(
            collect(&u, "src/")
                .unwrap_err()
                .to_string()
                .contains("all required")
        );
    }
}
