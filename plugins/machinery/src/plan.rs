//! What a commit would do: a [`Plan`] of per-file [`Action`]s, a report and a unified diff.
//!
//! [`plan`] compares the files plugins touched with the disk and applies each file's
//! [`IfExists`] policy once more (a file may have appeared on disk without being loaded, e.g.
//! because it is git-ignored). `--dry-run` prints [`Plan::report`] and [`Plan::diff`] and stops
//! there; otherwise [`Plan::apply`] (in the `commit` module) writes it.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use mni_plugin::{FileState, IfExists, Universe};
use similar::TextDiff;

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A new file.
    Create,
    /// An existing file gets new contents.
    Update,
    /// The file already has these contents.
    Unchanged,
    /// The file exists and its policy said skip.
    Skip,
    /// The file is removed ([`Universe::remove`]).
    Delete,
}

impl Action {
    /// The verb printed in reports.
    #[must_use]
    pub fn verb(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Unchanged => "unchanged",
            Self::Skip => "skip",
            Self::Delete => "delete",
        }
    }
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The file exists on disk and its policy is [`IfExists::Error`].
    #[error("{path} already exists; pass --force to overwrite it")]
    AlreadyExists {
        /// The path.
        path: String,
    },
    /// A directory is where the file should go, or a file is where a directory should be.
    #[error("{path}: {blocker} is in the way")]
    InTheWay {
        /// The path to write.
        path: String,
        /// What blocks it, e.g. `directory src/main.rs`.
        blocker: String,
    },
    /// Reading the current file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Rolling back an interrupted commit failed.
    #[error(transparent)]
    Recover(#[from] Box<crate::commit::CommitError>),
}

/// One planned file change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The project-relative path.
    pub path: String,
    /// What happens.
    pub action: Action,
    /// The current contents on disk, if the file exists.
    pub old: Option<Vec<u8>>,
    /// The contents after the commit (empty for [`Action::Delete`]).
    pub new: String,
}

/// What a commit would do. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Plan {
    pub(crate) root: PathBuf,
    pub(crate) changes: Vec<Change>,
}

/// Plans committing the files plugins touched in `universe` to the project at `root`.
pub fn plan(root: &Path, universe: &Universe) -> Result<Plan, PlanError> {
    crate::commit::recover(root).map_err(Box::new)?;
    let mut changes = Vec::new();
    for (path, file) in universe.touched() {
        let new = file.contents().to_owned();
        let policy = match file.state() {
            FileState::Skipped => {
                changes.push(Change {
                    path: path.to_owned(),
                    action: Action::Skip,
                    old: None,
                    new,
                });
                continue;
            }
            FileState::Written(policy) => universe.effective_policy(policy),
            FileState::Existing => continue,
        };
        let old = read_existing(root, path)?;
        let action = match &old {
            None => Action::Create,
            Some(bytes) if bytes == new.as_bytes() => Action::Unchanged,
            Some(_) => match policy {
                IfExists::Overwrite => Action::Update,
                IfExists::Skip => Action::Skip,
                IfExists::Error => {
                    return Err(PlanError::AlreadyExists {
                        path: path.to_owned(),
                    });
                }
            },
        };
        changes.push(Change {
            path: path.to_owned(),
            action,
            old,
            new,
        });
    }
    for path in universe.removed() {
        if let Some(old) = read_existing(root, path)? {
            changes.push(Change {
                path: path.to_owned(),
                action: Action::Delete,
                old: Some(old),
                new: String::new(),
            });
        }
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Plan {
        root: root.to_owned(),
        changes,
    })
}

/// The file's bytes, `None` if absent; errors if a directory or a non-directory parent blocks it.
fn read_existing(root: &Path, path: &str) -> Result<Option<Vec<u8>>, PlanError> {
    let parts: Vec<&str> = path.split('/').collect();
    let mut current = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        current.push(part);
        let last = i + 1 == parts.len();
        let meta = match fs::metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(PlanError::Io {
                    path: current,
                    source,
                });
            }
        };
        let shown = parts[..=i].join("/");
        if last && meta.is_dir() {
            return Err(PlanError::InTheWay {
                path: path.to_owned(),
                blocker: format!("directory {shown}"),
            });
        }
        if !last && !meta.is_dir() {
            return Err(PlanError::InTheWay {
                path: path.to_owned(),
                blocker: format!("file {shown}"),
            });
        }
    }
    fs::read(&current)
        .map(Some)
        .map_err(|source| PlanError::Io {
            path: current,
            source,
        })
}

impl Plan {
    /// The project root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every planned change, ordered by path.
    #[must_use]
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Whether the commit would write nothing.
    #[must_use]
    pub fn is_noop(&self) -> bool {
        self.changes
            .iter()
            .all(|c| matches!(c.action, Action::Unchanged | Action::Skip))
    }

    /// The report a commit of this plan returns.
    #[must_use]
    pub fn report(&self) -> CommitReport {
        CommitReport {
            entries: self
                .changes
                .iter()
                .map(|c| (c.path.clone(), c.action))
                .collect(),
        }
    }

    /// A unified diff (`a/…`/`b/…`, three lines of context) of every create, update and delete.
    #[must_use]
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for change in &self.changes {
            let old = match (&change.action, &change.old) {
                (Action::Create, _) => String::new(),
                (Action::Update | Action::Delete, Some(bytes)) => {
                    match String::from_utf8(bytes.clone()) {
                        Ok(text) => text,
                        Err(_) => {
                            out.push_str(&format!("Binary file {} changes to text\n", change.path));
                            continue;
                        }
                    }
                }
                _ => continue,
            };
            let from = if change.action == Action::Create {
                "/dev/null".to_owned()
            } else {
                format!("a/{}", change.path)
            };
            let to = if change.action == Action::Delete {
                "/dev/null".to_owned()
            } else {
                format!("b/{}", change.path)
            };
            let diff = TextDiff::from_lines(old.as_str(), change.new.as_str());
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&from, &to)
                    .to_string(),
            );
        }
        out
    }
}

/// What a commit did (or, from [`Plan::report`], would do), per path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitReport {
    /// Every touched path with its action, ordered by path.
    pub entries: Vec<(String, Action)>,
}

impl CommitReport {
    /// The paths with the given action.
    pub fn paths(&self, action: Action) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(move |(_, a)| *a == action)
            .map(|(p, _)| p.as_str())
    }
}

impl fmt::Display for CommitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (path, action) in &self.entries {
            writeln!(f, "{:>9} {path}", action.verb())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_and_diffs() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        fs::write(dir.path().join("same.txt"), "s\n").unwrap();
        fs::create_dir(dir.path().join("blocked.txt")).unwrap();
        let mut u = Universe::new();
        u.insert_existing("a.txt", "one\ntwo\n").unwrap();
        u.write("a.txt", "one\nthree\n", IfExists::Overwrite)
            .unwrap();
        u.write("new.txt", "hi\n", IfExists::Error).unwrap();
        u.write("same.txt", "s\n", IfExists::Error).unwrap();
        let p = plan(dir.path(), &u).unwrap();
        assert_eq!(
            p.report().to_string(),
            "   update a.txt\n   create new.txt\nunchanged same.txt\n"
        );
        assert_eq!(
            p.diff(),
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
        );
        assert!(!p.is_noop());

        u.write("blocked.txt", "x", IfExists::Error).unwrap();
        let err = plan(dir.path(), &u).unwrap_err().to_string();
        assert_eq!(err, "blocked.txt: directory blocked.txt is in the way");
        let mut u = Universe::new();
        u.write("a.txt/inner", "x", IfExists::Error).unwrap();
        assert_eq!(
            plan(dir.path(), &u).unwrap_err().to_string(),
            "a.txt/inner: file a.txt is in the way"
        );
        let mut u = Universe::new();
        u.write("a.txt", "other", IfExists::Error).unwrap();
        assert!(matches!(
            plan(dir.path(), &u),
            Err(PlanError::AlreadyExists { .. })
        ));
    }
}
