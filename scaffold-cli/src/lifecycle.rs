//! `delete` and `upgrade`: change what was generated, and carry the change into the user's tree.
//!
//! Both replay the project's [history](crate::history) twice into temporary directories — the
//! generated tree as it is (*base*) and as it should become (*target*): without one command for
//! `delete`, with the newest plugin versions (or from an older mni-scaffold's base) for
//! `upgrade` — and merge per file, three ways, into the project:
//!
//! - a file the user left as generated takes the target's contents (or goes, if the target has
//!   none);
//! - a file the user changed is merged line by line ([`diffy`]); where both changed the same lines
//!   the file keeps conflict markers and is listed. `delete` refuses to touch changed files at
//!   all unless `--force`, and names them.
//!
//! Files the generator did not change are never touched, nor is anything outside the tree the
//! replays produce. The result is written in one atomic commit (`--dry-run` prints the plan and
//! the diff instead), so create followed by delete leaves the project byte-identical.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use mni_machinery::{Action, CommitError, LoadError};
use mni_plugin::{IfExists, PROJECT_FILE, PluginKey, UniverseError};

use crate::Environment;
use crate::cli::{DeleteCommand, GlobalArgs, UpgradeArgs};
use crate::history::{History, HistoryError, Tree};
use crate::registry::Registry;
use crate::scaffold::{self, ScaffoldError};

/// Why `delete` or `upgrade` failed. Nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// PROJECT is missing or malformed.
    #[error(transparent)]
    Project(#[from] ScaffoldError),
    /// The history is missing, malformed or does not replay.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// `delete api` of a resource the project does not have.
    #[error("--kind: no resource {0} in {PROJECT_FILE}; nothing to delete")]
    NoSuchApi(String),
    /// `delete api` of a resource another command made.
    #[error(
        "--kind: {gvk} was not added by `create api` but by `mni-scaffold {command}`; delete that instead"
    )]
    NotCreatedByApi {
        /// The resource.
        gvk: String,
        /// The command that made it, or a description when none did.
        command: String,
    },
    /// `delete api` of a kind that still has webhooks.
    #[error(
        "--kind: {gvk} has webhooks; delete them first with `mni-scaffold delete webhook --group {group} --version {version} --kind {kind}`"
    )]
    HasWebhooks {
        /// The resource.
        gvk: String,
        /// Its group.
        group: String,
        /// Its version.
        version: String,
        /// Its kind.
        kind: String,
    },
    /// `delete webhook` of a kind without webhooks made by `create webhook`.
    #[error("--kind: {0} has no webhooks added by `create webhook`; nothing to delete")]
    NoSuchWebhook(String),
    /// `delete service` of a service the project does not have.
    #[error("NAME: no service {0:?} in {PROJECT_FILE}; nothing to delete")]
    NoSuchService(String),
    /// `delete` would remove or edit files the user changed since they were generated.
    #[error(
        "changed since they were generated: {}; nothing was deleted (pass --force to delete anyway, merging your changes where the files stay)",
        .0.join(", ")
    )]
    Modified(Vec<String>),
    /// `upgrade` in a tree with uncommitted changes.
    #[error(
        "{}: uncommitted changes ({}); commit or stash them first so the merge can be undone, or pass --force",
        .root.display(), .paths.join(", ")
    )]
    Uncommitted {
        /// The project.
        root: PathBuf,
        /// What `git status` lists.
        paths: Vec<String>,
    },
    /// `upgrade` outside a git work tree.
    #[error(
        "{}: not in a git work tree; upgrade merges into your files, so put them under git first, or pass --force",
        .0.display()
    )]
    NotGit(PathBuf),
    /// The project could not be loaded, planned or committed.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// The project could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A merged path is not a valid project path.
    #[error(transparent)]
    Universe(#[from] UniverseError),
    /// Reading a file, a temporary directory or printing failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl LifecycleError {
    /// 2 for bad input (what to delete does not exist, changed files, a dirty tree), 1 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Project(e) => e.exit_code(),
            Self::History(HistoryError::Malformed { .. } | HistoryError::Missing(_))
            | Self::NoSuchApi(_)
            | Self::NotCreatedByApi { .. }
            | Self::NoSuchWebhook(_)
            | Self::HasWebhooks { .. }
            | Self::NoSuchService(_)
            | Self::Modified(_)
            | Self::Uncommitted { .. }
            | Self::NotGit(_) => 2,
            _ => 1,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> LifecycleError + '_ {
    move |source| LifecycleError::Io {
        path: path.to_owned(),
        source,
    }
}

/// `delete api|webhook|service`: replays the history with and without the command that added it and
/// merges the difference into the project. See the [module docs](self).
pub fn delete(
    what: &DeleteCommand,
    global: &GlobalArgs,
    env: &Environment,
    out: &mut dyn Write,
) -> Result<(), LifecycleError> {
    let root = scaffold::project_root(global.dir.as_deref())?;
    let (text, config) = scaffold::read_project(&root)?;
    if text.is_none() {
        return Err(ScaffoldError::NoProject(root).into());
    }
    let history = History::require(&root)?;
    let (index, name) = match what {
        DeleteCommand::Api(a) => {
            let Some(resource) = config.resource(&a.group, &a.version, &a.kind) else {
                return Err(LifecycleError::NoSuchApi(format!(
                    "{}/{}, Kind={}",
                    a.group, a.version, a.kind
                )));
            };
            let index = history
                .find_create_api(&a.group, &a.version, &a.kind)
                .ok_or_else(|| LifecycleError::NotCreatedByApi {
                    gvk: resource.gvk(),
                    command: history
                        .commands
                        .iter()
                        .find(|c| c.iter().any(|w| w == "service"))
                        .map_or_else(|| "an earlier command".to_owned(), |c| c.join(" ")),
                })?;
            if history
                .find_create_webhook(&a.group, &a.version, &a.kind)
                .is_some()
            {
                return Err(LifecycleError::HasWebhooks {
                    gvk: resource.gvk(),
                    group: a.group.clone(),
                    version: a.version.clone(),
                    kind: a.kind.clone(),
                });
            }
            (index, format!("api {}", resource.gvk()))
        }
        DeleteCommand::Webhook(a) => {
            let gvk = format!("{}/{}, Kind={}", a.group, a.version, a.kind);
            if config.resource(&a.group, &a.version, &a.kind).is_none() {
                return Err(LifecycleError::NoSuchApi(gvk));
            }
            let index = history
                .find_create_webhook(&a.group, &a.version, &a.kind)
                .ok_or_else(|| LifecycleError::NoSuchWebhook(gvk.clone()))?;
            (index, format!("webhook {gvk}"))
        }
        DeleteCommand::Service(s) => {
            if config.service(&s.name).is_none() {
                return Err(LifecycleError::NoSuchService(s.name.clone()));
            }
            let index = history.find_new_service(&s.name).ok_or_else(|| {
                LifecycleError::NotCreatedByApi {
                    gvk: format!("service {}", s.name),
                    command: "an unrecorded command".to_owned(),
                }
            })?;
            (index, format!("service {}", s.name))
        }
    };
    let base = replay(&history, &root, env, None)?;
    let mut without = history.clone();
    without.commands.remove(index);
    let target = replay(&without, &root, env, None)?;
    let merged = merge(
        &root,
        &base,
        &target,
        Mode::Delete {
            force: global.force,
        },
    )?;
    finish(
        &root,
        merged,
        global.dry_run,
        &format!("delete {name}"),
        out,
    )
}

/// `upgrade`: replays the history as it was generated (by `--from-binary`, else by this
/// mni-scaffold with the recorded plugin versions) and with the newest installed version of
/// each plugin of the chain, and merges the difference into the project. Refuses a tree with
/// uncommitted changes, or outside git, unless `--force`.
pub fn upgrade(
    args: &UpgradeArgs,
    global: &GlobalArgs,
    env: &Environment,
    registry: &Registry,
    out: &mut dyn Write,
) -> Result<(), LifecycleError> {
    let root = scaffold::project_root(global.dir.as_deref())?;
    let (text, _) = scaffold::read_project(&root)?;
    if text.is_none() {
        return Err(ScaffoldError::NoProject(root).into());
    }
    if !global.force && !global.dry_run {
        check_committed(&root)?;
    }
    let history = History::require(&root)?;
    let base = replay(&history, &root, env, args.from_binary.as_deref())?;
    let (newer, bumped) = bump_plugins(&history, registry);
    let target = replay(&newer, &root, env, None)?;
    let merged = merge(&root, &base, &target, Mode::Upgrade)?;
    for (from, to) in &bumped {
        writeln!(out, "plugin {from} → {to}").map_err(io_error(Path::new("<stdout>")))?;
    }
    finish(&root, merged, global.dry_run, "upgrade", out)
}

fn replay(
    history: &History,
    root: &Path,
    env: &Environment,
    binary: Option<&Path>,
) -> Result<Tree, LifecycleError> {
    let dir = tempfile::Builder::new()
        .prefix("mni-replay-")
        .tempdir()
        .map_err(io_error(Path::new("temporary directory")))?;
    Ok(history.replay(dir.path(), root, env, binary)?)
}

/// The history with every `--plugins` key replaced by the newest stable version of the same
/// plugin the registry has, and the replacements made.
fn bump_plugins(history: &History, registry: &Registry) -> (History, Vec<(PluginKey, PluginKey)>) {
    let keys = registry.keys();
    let mut bumped: Vec<(PluginKey, PluginKey)> = Vec::new();
    let mut newer = history.clone();
    for command in &mut newer.commands {
        let [flag, chain, ..] = command.as_mut_slice() else {
            continue;
        };
        if flag != "--plugins" {
            continue;
        }
        let Ok(resolved) = registry.resolver().resolve(Some(chain.as_str())) else {
            continue;
        };
        let mut changed = false;
        let upgraded: Vec<PluginKey> = resolved
            .into_iter()
            .map(|key| {
                let newest = keys
                    .iter()
                    .filter(|k| k.name() == key.name() && k.version().is_stable())
                    .filter(|k| k.version() > key.version())
                    .max_by_key(|k| k.version());
                match newest {
                    Some(n) => {
                        changed = true;
                        if !bumped.iter().any(|(f, _)| *f == key) {
                            bumped.push((key, n.clone()));
                        }
                        n.clone()
                    }
                    None => key,
                }
            })
            .collect();
        if changed {
            *chain = upgraded
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",");
        }
    }
    (newer, bumped)
}

/// Refuses a tree git does not track or that has uncommitted changes.
fn check_committed(root: &Path) -> Result<(), LifecycleError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--untracked-files=all", "--", "."])
        .output();
    match output {
        Ok(o) if o.status.success() => {
            let paths: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| l.get(3..).unwrap_or(l).to_owned())
                .collect();
            if paths.is_empty() {
                Ok(())
            } else {
                Err(LifecycleError::Uncommitted {
                    root: root.to_owned(),
                    paths,
                })
            }
        }
        _ => Err(LifecycleError::NotGit(root.to_owned())),
    }
}

/// How [`merge`] treats a file the user changed.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Refuse unless `force`; with it, remove or merge.
    Delete { force: bool },
    /// Merge, leaving conflicts marked.
    Upgrade,
}

/// What to commit.
#[derive(Debug, Default)]
struct Merged {
    writes: Vec<(String, String)>,
    removes: Vec<String>,
    conflicts: Vec<String>,
}

/// The per-file three-way merge of `base → target` into the project at `root`.
fn merge(root: &Path, base: &Tree, target: &Tree, mode: Mode) -> Result<Merged, LifecycleError> {
    let mut merged = Merged::default();
    let mut modified = Vec::new();
    let paths: std::collections::BTreeSet<&String> = base.keys().chain(target.keys()).collect();
    for path in paths {
        let (b, t) = (base.get(path), target.get(path));
        if b == t {
            continue;
        }
        let full = root.join(path);
        let ours = match fs::read(&full) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&full)(e)),
        };
        if ours.as_ref() == b {
            match t {
                Some(t) => merged.writes.push((path.clone(), t.clone())),
                None => merged.removes.push(path.clone()),
            }
            continue;
        }
        if ours.as_ref() == t {
            continue;
        }
        modified.push(path.clone());
        let force = match mode {
            Mode::Delete { force } => force,
            Mode::Upgrade => true,
        };
        if !force {
            continue;
        }
        match (ours, t) {
            (Some(ours), Some(t)) => {
                let ancestor = b.map_or("", String::as_str);
                match diffy::merge(ancestor, &ours, t) {
                    Ok(clean) => merged.writes.push((path.clone(), clean)),
                    Err(marked) => {
                        merged.writes.push((path.clone(), marked));
                        merged.conflicts.push(path.clone());
                    }
                }
            }
            // Generated no more, changed by the user: `delete --force` removes it; `upgrade`
            // keeps the user's file and lists it.
            (Some(_), None) => match mode {
                Mode::Delete { .. } => merged.removes.push(path.clone()),
                Mode::Upgrade => merged.conflicts.push(path.clone()),
            },
            // Removed by the user, still generated (changed): left removed, listed.
            (None, Some(_)) => merged.conflicts.push(path.clone()),
            (None, None) => {}
        }
    }
    if let Mode::Delete { force: false } = mode
        && !modified.is_empty()
    {
        return Err(LifecycleError::Modified(modified));
    }
    Ok(merged)
}

/// Commits (or, with `--dry-run`, prints) the merge and reports it.
fn finish(
    root: &Path,
    merged: Merged,
    dry_run: bool,
    what: &str,
    out: &mut dyn Write,
) -> Result<(), LifecycleError> {
    let mut universe = mni_machinery::load_universe(root)?.universe;
    for (path, contents) in merged.writes {
        universe.write(&path, contents, IfExists::Overwrite)?;
    }
    for path in &merged.removes {
        if !universe.contains(path) {
            // Not loaded (e.g. git-ignored): it is on disk, so it is removed all the same.
            let full = root.join(path);
            let text = fs::read_to_string(&full).map_err(io_error(&full))?;
            universe.insert_existing(path, text)?;
        }
        universe.remove(path)?;
    }
    let plan = mni_machinery::plan(root, &universe).map_err(CommitError::from)?;
    let print = |out: &mut dyn Write, text: &str| {
        out.write_all(text.as_bytes())
            .map_err(io_error(Path::new("<stdout>")))
    };
    let report = if dry_run {
        plan.report()
    } else {
        plan.apply()?
    };
    print(out, &report.to_string())?;
    let count = |a| report.paths(a).count();
    let summary = format!(
        "create {}, update {}, delete {}",
        count(Action::Create),
        count(Action::Update),
        count(Action::Delete)
    );
    if dry_run {
        print(
            out,
            &format!("dry run of `{what}`: would {summary}; nothing was written\n"),
        )?;
        print(out, &plan.diff())?;
    } else {
        print(out, &format!("`{what}`: {summary}\n"))?;
    }
    if !merged.conflicts.is_empty() {
        print(
            out,
            &format!(
                "conflicts (your changes and the generator's overlap; resolve the <<<<<<< markers, or compare with what is generated): {}\n",
                merged.conflicts.join(", ")
            ),
        )?;
    }
    Ok(())
}
