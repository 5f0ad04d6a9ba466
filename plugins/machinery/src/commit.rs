//! Atomic commit of a Universe to disk: every planned file or none.
//!
//! Start with [`commit`] (validate, plan, apply) or [`Plan::apply`]. The commit runs in phases:
//!
//! 1. **Lock and journal.** Create `<root>/.mni-commit/` (failing if it exists: one commit at
//!    a time) and write, fsync and atomically rename into place a journal listing every file to
//!    create or update, the temporary and backup names it will use and the directories it will
//!    create.
//! 2. **Stage.** Create missing directories; check that each file to update still holds what
//!    the plan saw; hard-link it as a backup under `.mni-commit/` (copy where links are not
//!    supported); write the new contents to a temporary file next to the target, with the old
//!    file's permissions, and fsync it.
//!    Files to delete are checked and backed up the same way, with no temporary.
//! 3. **Switch.** Rename each temporary over its target (updates), or hard-link it to its target
//!    and remove it (creates: the link fails if anything appeared at the path, so a create never
//!    clobbers), or remove the target (deletes). Then fsync the touched directories.
//! 4. **Commit point.** Remove the journal, then the backups and `.mni-commit/`; then the
//!    directories deletes left empty.
//!
//! **Guarantee.** If any step before the commit point fails, the commit rolls back before
//! returning the error: backups are renamed over updated files, created files are removed (only
//! if they still hold what we wrote), temporaries and created directories are removed. If the
//! process dies before the commit point (crash, kill, power loss on a file system that honours
//! fsync and rename ordering, such as ext4, XFS or btrfs), the journal is on disk and the next
//! [`recover`] — which [`load_universe`](crate::load_universe), [`plan`](crate::plan()) and
//! [`commit`] call first — performs the same rollback, so the previous tree is what any later
//! scaffold sees. Once the journal is gone, every new file is durable. What is *not* promised: a
//! process reading the tree while a commit runs can see some files new and others old (POSIX
//! has no multi-file atomic rename), and two commands scaffolding the same project at once are
//! not supported (the second fails on the lock, but `recover` would roll back a running commit).

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use mni_plugin::Universe;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::plan::{Action, CommitReport, Plan, PlanError, plan};
use crate::validate::{ValidationError, validate};

/// The directory, at the project root, that holds the journal and backups during a commit.
pub const STATE_DIR: &str = ".mni-commit";
const JOURNAL: &str = "journal.json";

/// Why a commit failed. Unless the variant says otherwise, nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// The Universe failed validation.
    #[error(transparent)]
    Validation(#[from] ValidationError),
    /// The plan could not be made.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Another commit holds the lock.
    #[error(
        "{path} exists: another mni-scaffold command is writing this project (if none is, run it again to recover)"
    )]
    Busy {
        /// The lock directory.
        path: PathBuf,
    },
    /// A file changed on disk between planning and committing.
    #[error("{path} changed on disk while scaffolding ({reason}); nothing was written")]
    Conflict {
        /// The project-relative path.
        path: String,
        /// What changed.
        reason: String,
    },
    /// A file-system operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The journal of an interrupted commit cannot be read.
    #[error("cannot read commit journal {path}: {message}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The commit failed and so did the rollback: the tree may be mixed. The journal is kept,
    /// so running any scaffold command again retries the rollback.
    #[error("{cause}; rolling back also failed: {rollback}")]
    RollbackFailed {
        /// Why the commit failed.
        cause: Box<CommitError>,
        /// Why the rollback failed.
        rollback: Box<CommitError>,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct Op {
    path: String,
    temp: String,
    /// Set for updates and deletes: where the previous contents are kept.
    backup: Option<String>,
    /// The file is removed, not written (`temp` is unused).
    #[serde(default)]
    delete: bool,
    /// SHA-256 of the new contents, so a rollback removes only what it wrote.
    sha256: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    ops: Vec<Op>,
    created_dirs: Vec<String>,
}

/// Validates `universe`, plans and applies it to the project at `root`.
pub fn commit(root: &Path, universe: &Universe) -> Result<CommitReport, CommitError> {
    validate(root, universe)?;
    plan(root, universe)?.apply()
}

impl Plan {
    /// Writes the plan to disk atomically. See the [module docs](crate::commit).
    pub fn apply(&self) -> Result<CommitReport, CommitError> {
        apply_with(self, None)
    }
}

fn io(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CommitError {
    let path = path.to_owned();
    move |source| CommitError::Io { op, path, source }
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn sync_dir(dir: &Path) {
    // Best effort: directory fsync is not available everywhere.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), CommitError> {
    let f = write_new(path, bytes)?;
    f.sync_all().map_err(io("fsync", path))
}

/// Creates `path` (which must not exist) with `bytes`; the open file, not yet fsync'd.
fn write_new(path: &Path, bytes: &[u8]) -> Result<File, CommitError> {
    let mut f = File::create_new(path).map_err(io("create", path))?;
    f.write_all(bytes).map_err(io("write", path))?;
    Ok(f)
}

/// Makes every file durable. A scaffold writes dozens of small files, and an fsync each costs
/// a device flush each (most of a `new service`'s time); on Linux one `syncfs` per file system
/// they live on writes them all back with one flush. Where `syncfs` fails, or elsewhere, each
/// file is fsync'd. Every file is durable when this returns `Ok`.
fn sync_files(files: &[(File, PathBuf)]) -> Result<(), CommitError> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt as _;
        let mut devices = BTreeSet::new();
        let synced = files.iter().try_for_each(|(f, _)| {
            let dev = f.metadata()?.dev();
            if devices.insert(dev) {
                rustix::fs::syncfs(f)?;
            }
            Ok::<_, std::io::Error>(())
        });
        if synced.is_ok() {
            return Ok(());
        }
    }
    files
        .iter()
        .try_for_each(|(f, path)| f.sync_all().map_err(io("fsync", path)))
}

/// [`sync_dir`] for each directory (best effort, as there), with [`sync_files`]' economy.
fn sync_dirs(dirs: &BTreeSet<PathBuf>) {
    let opened: Vec<_> = dirs
        .iter()
        .filter_map(|d| File::open(d).ok().map(|f| (f, d.clone())))
        .collect();
    let _ = sync_files(&opened);
}

/// `fail_at` makes the switch phase fail before the given file, to test rollback.
fn apply_with(plan: &Plan, fail_at: Option<usize>) -> Result<CommitReport, CommitError> {
    let report = plan.report();
    let writes: Vec<_> = plan
        .changes
        .iter()
        .filter(|c| matches!(c.action, Action::Create | Action::Update | Action::Delete))
        .collect();
    if writes.is_empty() {
        return Ok(report);
    }
    let root = &plan.root;
    let state = root.join(STATE_DIR);
    if let Err(e) = fs::create_dir(&state) {
        return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
            CommitError::Busy { path: state }
        } else {
            io("create", &state)(e)
        });
    }

    let mut created_dirs = Vec::new();
    let mut seen = BTreeSet::new();
    let mut ops = Vec::new();
    for (i, change) in writes.iter().enumerate() {
        let (dir, name) = change.path.rsplit_once('/').unwrap_or(("", &change.path));
        let mut prefix = String::new();
        let parents = if change.action == Action::Delete {
            ""
        } else {
            dir
        };
        for part in parents.split('/').filter(|p| !p.is_empty()) {
            prefix = if prefix.is_empty() {
                part.to_owned()
            } else {
                format!("{prefix}/{part}")
            };
            if seen.insert(prefix.clone()) && !root.join(&prefix).exists() {
                created_dirs.push(prefix.clone());
            }
        }
        let temp = if dir.is_empty() {
            format!(".{name}.mni-tmp-{i}")
        } else {
            format!("{dir}/.{name}.mni-tmp-{i}")
        };
        let delete = change.action == Action::Delete;
        let backup = matches!(change.action, Action::Update | Action::Delete)
            .then(|| format!("{STATE_DIR}/backup-{i}"));
        ops.push(Op {
            path: change.path.clone(),
            temp,
            backup,
            delete,
            sha256: sha256(change.new.as_bytes()),
        });
    }
    let journal = Journal { ops, created_dirs };
    let journal_path = state.join(JOURNAL);
    let staged = state.join(format!("{JOURNAL}.tmp"));
    let json = serde_json::to_vec_pretty(&journal).map_err(|e| CommitError::Journal {
        path: journal_path.clone(),
        message: e.to_string(),
    })?;
    let written = write_synced(&staged, &json)
        .and_then(|()| fs::rename(&staged, &journal_path).map_err(io("rename", &staged)));
    if let Err(e) = written {
        let _ = fs::remove_dir_all(&state);
        return Err(e);
    }
    sync_dir(&state);

    match stage_and_switch(root, &journal, &writes, fail_at) {
        Ok(()) => {
            // The commit point. If the journal cannot be removed, the commit did not happen:
            // roll back now rather than leave it to the next `recover`.
            if let Err(e) = fs::remove_file(&journal_path) {
                let cause = io("remove", &journal_path)(e);
                return match rollback(root, &journal) {
                    Ok(()) => Err(cause),
                    Err(rb) => Err(CommitError::RollbackFailed {
                        cause: Box::new(cause),
                        rollback: Box::new(rb),
                    }),
                };
            }
            sync_dir(&state);
            let _ = fs::remove_dir_all(&state);
            remove_emptied_dirs(root, &journal);
            sync_dir(root);
            Ok(report)
        }
        Err(cause) => match rollback(root, &journal) {
            Ok(()) => Err(cause),
            Err(rb) => Err(CommitError::RollbackFailed {
                cause: Box::new(cause),
                rollback: Box::new(rb),
            }),
        },
    }
}

fn stage_and_switch(
    root: &Path,
    journal: &Journal,
    writes: &[&crate::plan::Change],
    fail_at: Option<usize>,
) -> Result<(), CommitError> {
    for dir in &journal.created_dirs {
        let path = root.join(dir);
        match fs::create_dir(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(io("create directory", &path)(e));
            }
            _ => {}
        }
    }
    let mut staged = Vec::with_capacity(writes.len());
    for (op, change) in journal.ops.iter().zip(writes) {
        let target = root.join(&op.path);
        let temp = root.join(&op.temp);
        if let Some(backup) = &op.backup {
            let current = fs::read(&target).map_err(io("read", &target))?;
            if change.old.as_deref() != Some(current.as_slice()) {
                return Err(CommitError::Conflict {
                    path: op.path.clone(),
                    reason: "its contents differ".into(),
                });
            }
            let backup = root.join(backup);
            if fs::hard_link(&target, &backup).is_err() {
                fs::copy(&target, &backup).map_err(io("back up", &target))?;
            }
        }
        if op.delete {
            continue;
        }
        let file = write_new(&temp, change.new.as_bytes())?;
        if op.backup.is_some() {
            let perms = fs::metadata(&target)
                .map_err(io("stat", &target))?
                .permissions();
            fs::set_permissions(&temp, perms).map_err(io("chmod", &temp))?;
        }
        staged.push((file, temp));
    }
    // Every temporary is durable before the first one is switched into place.
    sync_files(&staged)?;
    drop(staged);
    let mut dirs = BTreeSet::new();
    for (i, op) in journal.ops.iter().enumerate() {
        let target = root.join(&op.path);
        let temp = root.join(&op.temp);
        if fail_at == Some(i) {
            return Err(io("switch", &target)(std::io::Error::other(
                "injected failure",
            )));
        }
        if op.delete {
            fs::remove_file(&target).map_err(io("remove", &target))?;
        } else if op.backup.is_some() {
            fs::rename(&temp, &target).map_err(io("rename into place", &target))?;
        } else {
            match fs::hard_link(&temp, &target) {
                Ok(()) => fs::remove_file(&temp).map_err(io("remove", &temp))?,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(CommitError::Conflict {
                        path: op.path.clone(),
                        reason: "something was created there".into(),
                    });
                }
                Err(_) if !target.exists() => {
                    fs::rename(&temp, &target).map_err(io("rename into place", &target))?
                }
                Err(e) => return Err(io("link into place", &target)(e)),
            }
        }
        if let Some(parent) = target.parent() {
            dirs.insert(parent.to_owned());
        }
    }
    sync_dirs(&dirs);
    Ok(())
}

/// After the commit point: removes the directories the deletes left empty, deepest first, up
/// to (not including) the root. Best effort: a directory that is not empty stays.
fn remove_emptied_dirs(root: &Path, journal: &Journal) {
    let mut dirs = BTreeSet::new();
    for op in journal.ops.iter().filter(|op| op.delete) {
        let mut dir = Path::new(&op.path).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(d.to_owned());
            dir = d.parent();
        }
    }
    // Deeper paths sort after their parents: reverse order removes children first.
    for dir in dirs.iter().rev() {
        let _ = fs::remove_dir(root.join(dir));
    }
}

/// Undoes every step the journal lists, in reverse; safe to run more than once.
fn rollback(root: &Path, journal: &Journal) -> Result<(), CommitError> {
    for op in journal.ops.iter().rev() {
        let target = root.join(&op.path);
        let temp = root.join(&op.temp);
        match &op.backup {
            Some(backup) => {
                let backup = root.join(backup);
                if backup.exists() {
                    fs::rename(&backup, &target).map_err(io("restore", &target))?;
                }
            }
            None => {
                if let Ok(bytes) = fs::read(&target)
                    && sha256(&bytes) == op.sha256
                {
                    fs::remove_file(&target).map_err(io("remove", &target))?;
                }
            }
        }
        if temp.exists() {
            fs::remove_file(&temp).map_err(io("remove", &temp))?;
        }
    }
    for dir in journal.created_dirs.iter().rev() {
        let _ = fs::remove_dir(root.join(dir));
    }
    let state = root.join(STATE_DIR);
    fs::remove_dir_all(&state).map_err(io("remove", &state))?;
    sync_dir(root);
    Ok(())
}

/// Rolls back a commit interrupted before its commit point. Returns whether there was one.
pub fn recover(root: &Path) -> Result<bool, CommitError> {
    let state = root.join(STATE_DIR);
    if !state.is_dir() {
        return Ok(false);
    }
    let journal_path = state.join(JOURNAL);
    match fs::read(&journal_path) {
        Ok(bytes) => {
            let journal: Journal =
                serde_json::from_slice(&bytes).map_err(|e| CommitError::Journal {
                    path: journal_path.clone(),
                    message: e.to_string(),
                })?;
            rollback(root, &journal)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Died before the journal was in place (nothing was touched) or after the commit
            // point (only backups are left): either way just clean up.
            fs::remove_dir_all(&state).map_err(io("remove", &state))?;
            Ok(false)
        }
        Err(e) => Err(io("read", &journal_path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::IfExists;

    fn tree(root: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .map(|e| e.unwrap())
            .map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let body = if e.file_type().is_file() {
                    fs::read_to_string(e.path()).unwrap()
                } else {
                    "/".into()
                };
                (rel, body)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn failure_at_any_point_restores_the_tree() {
        for fail_at in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            fs::write(root.join("a.txt"), "old a").unwrap();
            fs::write(root.join("c.txt"), "old c").unwrap();
            let before = tree(root);
            let mut u = Universe::new();
            u.insert_existing("a.txt", "old a").unwrap();
            u.insert_existing("c.txt", "old c").unwrap();
            u.write("a.txt", "new a", IfExists::Overwrite).unwrap();
            u.write("b/deep/b.txt", "new b", IfExists::Error).unwrap();
            u.write("c.txt", "new c", IfExists::Overwrite).unwrap();
            u.write("d.txt", "new d", IfExists::Error).unwrap();
            let p = plan(root, &u).unwrap();
            let err = apply_with(&p, Some(fail_at)).unwrap_err();
            assert!(err.to_string().contains("injected failure"), "{err}");
            assert_eq!(tree(root), before, "fail_at {fail_at}");
        }
    }

    #[test]
    fn deletes_are_atomic_with_the_writes_and_leave_no_empty_directory() {
        let setup = |root: &Path| {
            fs::create_dir_all(root.join("api/v1")).unwrap();
            fs::write(root.join("api/v1/kind.rs"), "kind").unwrap();
            fs::write(root.join("lib.rs"), "mod api;").unwrap();
            let mut u = Universe::new();
            u.insert_existing("api/v1/kind.rs", "kind").unwrap();
            u.insert_existing("lib.rs", "mod api;").unwrap();
            assert!(u.remove("api/v1/kind.rs").unwrap());
            u.write("lib.rs", "", IfExists::Overwrite).unwrap();
            plan(root, &u).unwrap()
        };
        for fail_at in 0..2 {
            let dir = tempfile::tempdir().unwrap();
            let p = setup(dir.path());
            let before = tree(dir.path());
            apply_with(&p, Some(fail_at)).unwrap_err();
            assert_eq!(tree(dir.path()), before, "fail_at {fail_at}");
        }
        let dir = tempfile::tempdir().unwrap();
        let p = setup(dir.path());
        assert!(p.diff().contains("+++ /dev/null"), "{}", p.diff());
        let report = p.apply().unwrap();
        assert_eq!(
            report.paths(Action::Delete).collect::<Vec<_>>(),
            ["api/v1/kind.rs"]
        );
        assert_eq!(tree(dir.path()), [("lib.rs".to_owned(), String::new())]);
    }

    #[test]
    fn recover_rolls_back_a_crashed_commit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "old").unwrap();
        let before = tree(root);
        let mut u = Universe::new();
        u.write("a.txt", "new", IfExists::Overwrite).unwrap();
        u.write("n/new.txt", "n", IfExists::Error).unwrap();
        let p = plan(root, &u).unwrap();
        // Simulate a crash in the switch phase: stage and switch everything, but never reach the
        // commit point (the journal stays).
        let writes: Vec<_> = p.changes.iter().collect();
        fs::create_dir(root.join(STATE_DIR)).unwrap();
        let journal = Journal {
            ops: vec![
                Op {
                    path: "a.txt".into(),
                    temp: ".a.txt.mni-tmp-0".into(),
                    backup: Some(format!("{STATE_DIR}/backup-0")),
                    delete: false,
                    sha256: sha256(b"new"),
                },
                Op {
                    path: "n/new.txt".into(),
                    temp: "n/.new.txt.mni-tmp-1".into(),
                    backup: None,
                    delete: false,
                    sha256: sha256(b"n"),
                },
            ],
            created_dirs: vec!["n".into()],
        };
        fs::write(
            root.join(STATE_DIR).join(JOURNAL),
            serde_json::to_vec(&journal).unwrap(),
        )
        .unwrap();
        stage_and_switch(root, &journal, &writes, None).unwrap();
        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "new");
        assert!(recover(root).unwrap());
        assert_eq!(tree(root), before);
        assert!(!recover(root).unwrap());
    }

    #[test]
    fn busy_lock_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut u = Universe::new();
        u.write("a.txt", "a", IfExists::Error).unwrap();
        let p = plan(dir.path(), &u).unwrap();
        fs::create_dir(dir.path().join(STATE_DIR)).unwrap();
        assert!(matches!(p.apply(), Err(CommitError::Busy { .. })));
    }
}
