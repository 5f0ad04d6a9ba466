//! Checks a Universe before it is committed.
//!
//! [`validate`] looks at every file a plugin wrote or edited: its path is relative, has no `..`,
//! does not go into `.git/` and does not pass through a symbolic link that leads out of the
//! project or into `.git/`; Rust files parse (`syn`); YAML files parse. Every problem is
//! reported, not just the first.

use std::fmt;
use std::path::{Path, PathBuf};

use mni_plugin::{FileState, Universe, normalize_path};

use crate::marker::check_yaml;
use crate::rust::{self, RustError};

/// A problem found in a Universe. [`ValidationError::Many`] holds several.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The path cannot name a file inside the project.
    #[error("{path}: {reason}")]
    Path {
        /// The path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The path passes through a symbolic link leading out of the project or into `.git/`.
    #[error(
        "{path}: goes through symbolic link {link} to {target}, which is outside the project or inside .git/"
    )]
    Symlink {
        /// The path.
        path: String,
        /// The link, relative to the project.
        link: String,
        /// Where the link points (resolved), or why it could not be resolved.
        target: String,
    },
    /// A Rust file does not parse.
    #[error(transparent)]
    Rust(#[from] RustError),
    /// A YAML file does not parse.
    #[error("{path}:{line}: invalid YAML: {message}")]
    Yaml {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// The project root cannot be resolved.
    #[error("cannot resolve project root {root}: {source}")]
    Root {
        /// The root.
        root: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Several problems.
    #[error("{}", ManyDisplay(.0))]
    Many(Vec<ValidationError>),
}

struct ManyDisplay<'a>(&'a [ValidationError]);

impl fmt::Display for ManyDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problems in the scaffolded files:", self.0.len())?;
        for e in self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

/// Validates the files plugins touched, against the project at `root`.
pub fn validate(root: &Path, universe: &Universe) -> Result<(), ValidationError> {
    let canonical_root = root
        .canonicalize()
        .map_err(|source| ValidationError::Root {
            root: root.to_owned(),
            source,
        })?;
    let mut problems = Vec::new();
    for (path, file) in universe.touched() {
        if file.state() == FileState::Skipped {
            continue;
        }
        if let Err(e) = check_path(&canonical_root, path) {
            problems.push(e);
            continue;
        }
        if path.ends_with(".rs") {
            if let Err(e) = rust::check(path, file.contents()) {
                problems.push(e.into());
            }
        } else if (path.ends_with(".yaml") || path.ends_with(".yml"))
            && let Err((line, message)) = check_yaml(file.contents())
        {
            problems.push(ValidationError::Yaml {
                path: path.to_owned(),
                line,
                message,
            });
        }
    }
    match problems.len() {
        0 => Ok(()),
        1 => Err(problems.remove(0)),
        _ => Err(ValidationError::Many(problems)),
    }
}

/// Checks one project-relative path against the project at (canonical) `root`.
pub(crate) fn check_path(root: &Path, path: &str) -> Result<(), ValidationError> {
    let bad = |reason: String| ValidationError::Path {
        path: path.to_owned(),
        reason,
    };
    let normal = normalize_path(path).map_err(|e| bad(e.to_string()))?;
    if normal != path {
        return Err(bad(format!("must be written in normal form {normal:?}")));
    }
    if path.split('/').any(|c| c == ".git") {
        return Err(bad("must not write into .git/".to_owned()));
    }
    let git = root.join(".git");
    let mut current = root.to_path_buf();
    let mut rel = String::new();
    for part in path.split('/') {
        current.push(part);
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(part);
        let Ok(meta) = current.symlink_metadata() else {
            break;
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let escape = |target: String| ValidationError::Symlink {
            path: path.to_owned(),
            link: rel.clone(),
            target,
        };
        match current.canonicalize() {
            Ok(target) if target.starts_with(root) && !target.starts_with(&git) => {}
            Ok(target) => return Err(escape(target.display().to_string())),
            Err(e) => return Err(escape(format!("(unresolvable: {e})"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::IfExists;

    #[test]
    fn reports_every_problem() {
        let dir = tempfile::tempdir().unwrap();
        let mut u = Universe::new();
        u.write("src/lib.rs", "fn (", IfExists::Error).unwrap();
        u.write("config/a.yaml", "a: [", IfExists::Error).unwrap();
        u.write("ok.rs", "fn ok() {}", IfExists::Error).unwrap();
        u.write(".git/config", "x", IfExists::Error).unwrap();
        u.insert_existing("broken_but_untouched.rs", "fn (")
            .unwrap();
        let err = validate(dir.path(), &u).unwrap_err().to_string();
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines[0], "3 problems in the scaffolded files:");
        assert_eq!(lines[1], "  .git/config: must not write into .git/");
        assert!(
            lines[2].starts_with("  config/a.yaml:2: invalid YAML: "),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].starts_with("  src/lib.rs:1:4: Rust syntax error: "),
            "{}",
            lines[3]
        );
    }
}
