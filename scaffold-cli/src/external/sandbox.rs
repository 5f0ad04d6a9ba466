//! What an external plugin may write: paths inside the project, outside `.git/`, not through a
//! symbolic link that leaves the project.
//!
//! [`check_path`] is applied to every path of a response's `universe` before anything of the
//! response is used, so one bad path rejects the whole response. `mni-machinery`'s `validate`
//! checks the same rules again before the commit; this check exists so the error names the
//! plugin and the exact path it sent.

use std::path::Path;

use mni_plugin::normalize_path;

/// A response path an external plugin may not write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The path is absolute.
    #[error("path {path:?} is absolute; plugins may only write paths relative to the project")]
    Absolute {
        /// The path as sent.
        path: String,
    },
    /// The path has a `..` component.
    #[error("path {path:?} contains '..'; plugins may only write inside the project")]
    ParentDir {
        /// The path as sent.
        path: String,
    },
    /// The path goes into `.git/`.
    #[error("path {path:?} is inside .git/; plugins may not write there")]
    Git {
        /// The path as sent.
        path: String,
    },
    /// The path is not usable for another reason (empty, backslash, NUL byte).
    #[error("path {path:?} is invalid: {reason}")]
    Invalid {
        /// The path as sent.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The path passes through a symbolic link leading out of the project or into `.git/`.
    #[error(
        "path {path:?} goes through symbolic link {link} which leads out of the project or into .git/"
    )]
    Symlink {
        /// The path as sent.
        path: String,
        /// The link, relative to the project.
        link: String,
    },
}

/// Checks one response path against the project at `root`; returns it normalised.
pub(super) fn check_path(root: &Path, path: &str) -> Result<String, SandboxError> {
    let owned = || path.to_owned();
    if path.starts_with('/') || path.get(1..2) == Some(":") {
        return Err(SandboxError::Absolute { path: owned() });
    }
    if path.split(['/', '\\']).any(|c| c == "..") {
        return Err(SandboxError::ParentDir { path: owned() });
    }
    let normal = normalize_path(path).map_err(|e| SandboxError::Invalid {
        path: owned(),
        reason: e.to_string(),
    })?;
    if normal.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
        return Err(SandboxError::Git { path: owned() });
    }
    // A project that does not exist yet has no links to follow.
    let Ok(canonical_root) = root.canonicalize() else {
        return Ok(normal);
    };
    let git = canonical_root.join(".git");
    let mut current = canonical_root.clone();
    let mut rel = String::new();
    for part in normal.split('/') {
        current.push(part);
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(part);
        let Ok(meta) = current.symlink_metadata() else {
            break;
        };
        if meta.file_type().is_symlink() {
            match current.canonicalize() {
                Ok(target) if target.starts_with(&canonical_root) && !target.starts_with(&git) => {}
                _ => {
                    return Err(SandboxError::Symlink {
                        path: owned(),
                        link: rel,
                    });
                }
            }
        }
    }
    Ok(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(root: &Path, path: &str, expected: Result<&str, &str>) {
        match (check_path(root, path), expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e),
            (Err(g), Err(e)) => assert!(g.to_string().contains(e), "{path}: {g}"),
            (g, e) => panic!("{path}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn rejects_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("inside")).unwrap();
        std::os::unix::fs::symlink("/tmp", root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("inside"), root.join("ok")).unwrap();
        check(root, "docs/a.md", Ok("docs/a.md"));
        check(root, "./docs//a.md", Ok("docs/a.md"));
        check(root, "ok/a.md", Ok("ok/a.md"));
        check(root, "/etc/passwd", Err("is absolute"));
        check(root, "../x", Err("contains '..'"));
        check(root, "a/../../x", Err("contains '..'"));
        check(root, ".git/config", Err("inside .git/"));
        check(root, "sub/.GIT/hooks/x", Err("inside .git/"));
        check(root, "out/x", Err("symbolic link out"));
        check(root, "a\\b", Err("is invalid"));
    }
}
