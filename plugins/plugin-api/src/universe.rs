//! The [`Universe`]: the project's files in memory, `path → contents`, ordered by path.
//!
//! The CLI fills a Universe from the files on disk ([`Universe::insert_existing`]); each plugin
//! in the chain then writes files through [`Universe::write`], whose [`IfExists`] policy decides
//! what happens when the file is already there, or edits existing files through
//! [`Universe::modify`]. The engine (`mni-machinery`) validates the result and commits the files
//! whose [`FileState`] says a plugin touched them. Nothing here touches the file system.

use std::collections::BTreeMap;

/// What [`Universe::write`] does when the path already holds a file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum IfExists {
    /// Keep the existing file (files the user owns after the first scaffold, e.g. `main.rs`).
    Skip,
    /// Fail (the default): scaffolding the same thing twice is a mistake unless `--force`.
    #[default]
    Error,
    /// Replace the existing file.
    Overwrite,
}

/// Where a file in the Universe stands relative to the project on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// Loaded from the project and untouched by any plugin.
    Existing,
    /// Written or edited by a plugin; the policy applies again at commit if the file appeared on
    /// disk meanwhile (or was not loaded, e.g. because it is git-ignored).
    Written(IfExists),
    /// A plugin asked to write it with [`IfExists::Skip`] and it already existed.
    Skipped,
}

/// One file of a [`Universe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniverseFile {
    contents: String,
    state: FileState,
}

impl UniverseFile {
    /// Counts a file that holds what is on disk (loaded, or loaded and skipped) as touched.
    /// Overwrite: its contents are the disk's, and a later edit ([`Universe::modify`]) must
    /// reach the disk as an update.
    fn touch(&mut self) {
        if matches!(self.state, FileState::Existing | FileState::Skipped) {
            self.state = FileState::Written(IfExists::Overwrite);
        }
    }

    /// The file's current contents.
    #[must_use]
    pub fn contents(&self) -> &str {
        &self.contents
    }

    /// Whether a plugin touched the file.
    #[must_use]
    pub fn state(&self) -> FileState {
        self.state
    }
}

/// What a [`Universe::write`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The path was free.
    Created,
    /// The path held different contents, which were replaced.
    Overwritten,
    /// The path already held exactly these contents.
    Unchanged,
    /// The path was taken and the policy said [`IfExists::Skip`].
    Skipped,
}

/// Why a Universe operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UniverseError {
    /// The file exists and the policy is [`IfExists::Error`].
    #[error("{path} already exists; pass --force to overwrite it")]
    AlreadyExists {
        /// The path written.
        path: String,
    },
    /// [`Universe::modify`] was called for a path that holds no file.
    #[error("{path} does not exist, so it cannot be edited")]
    NotFound {
        /// The path edited.
        path: String,
    },
    /// The path is not a clean relative path inside the project.
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// The project's files in memory, ordered by path. See the docs atop `src/universe.rs`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Universe {
    files: BTreeMap<String, UniverseFile>,
    /// Paths [`Universe::remove`] took out: a commit deletes them from the project.
    removed: std::collections::BTreeSet<String>,
    force: bool,
}

impl Universe {
    /// An empty Universe.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// With `--force`: [`IfExists::Error`] behaves like [`IfExists::Overwrite`].
    /// [`IfExists::Skip`] still skips: those files belong to the user once scaffolded.
    #[must_use]
    pub fn with_force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// Whether `--force` is on.
    #[must_use]
    pub fn force(&self) -> bool {
        self.force
    }

    /// The policy actually applied for `policy`, taking `--force` into account.
    #[must_use]
    pub fn effective_policy(&self, policy: IfExists) -> IfExists {
        match policy {
            IfExists::Error if self.force => IfExists::Overwrite,
            other => other,
        }
    }

    /// Records a file that is already in the project (state [`FileState::Existing`]).
    pub fn insert_existing(
        &mut self,
        path: &str,
        contents: impl Into<String>,
    ) -> Result<(), UniverseError> {
        let path = normalize_path(path)?;
        self.files.insert(
            path,
            UniverseFile {
                contents: contents.into(),
                state: FileState::Existing,
            },
        );
        Ok(())
    }

    /// Writes a file, applying `if_exists` (after `--force`) when the path is taken.
    pub fn write(
        &mut self,
        path: &str,
        contents: impl Into<String>,
        if_exists: IfExists,
    ) -> Result<WriteOutcome, UniverseError> {
        let path = normalize_path(path)?;
        let contents = contents.into();
        let policy = self.effective_policy(if_exists);
        self.removed.remove(&path);
        let Some(file) = self.files.get_mut(&path) else {
            self.files.insert(
                path,
                UniverseFile {
                    contents,
                    state: FileState::Written(if_exists),
                },
            );
            return Ok(WriteOutcome::Created);
        };
        if file.contents == contents {
            // Nothing to write, whatever the policy; but a plugin asked for this file, so a
            // commit reports it (as unchanged) instead of leaving it out or calling it skipped.
            file.touch();
            return Ok(WriteOutcome::Unchanged);
        }
        match policy {
            IfExists::Skip => {
                if file.state == FileState::Existing {
                    file.state = FileState::Skipped;
                }
                Ok(WriteOutcome::Skipped)
            }
            IfExists::Error => Err(UniverseError::AlreadyExists { path }),
            IfExists::Overwrite => {
                file.contents = contents;
                file.state = FileState::Written(IfExists::Overwrite);
                Ok(WriteOutcome::Overwritten)
            }
        }
    }

    /// Edits an existing file in place (e.g. an insert at a scaffold marker). Returns whether the
    /// contents changed; an edit that changes nothing leaves the state alone.
    pub fn modify(
        &mut self,
        path: &str,
        edit: impl FnOnce(&str) -> String,
    ) -> Result<bool, UniverseError> {
        let path = normalize_path(path)?;
        let file = self
            .files
            .get_mut(&path)
            .ok_or(UniverseError::NotFound { path })?;
        let new = edit(&file.contents);
        if new == file.contents {
            return Ok(false);
        }
        file.contents = new;
        if !matches!(file.state, FileState::Written(_)) {
            file.state = FileState::Written(IfExists::Overwrite);
        }
        Ok(true)
    }

    /// Marks an existing file as looked at by a plugin without changing it (e.g. an insert at
    /// a scaffold marker that is already there), so a commit reports it as unchanged. A file
    /// skipped earlier counts as unchanged too, as it would count as updated had the edit
    /// changed it ([`Universe::modify`]); files a plugin wrote keep their state.
    pub fn touch(&mut self, path: &str) -> Result<(), UniverseError> {
        let path = normalize_path(path)?;
        let file = self
            .files
            .get_mut(&path)
            .ok_or(UniverseError::NotFound { path })?;
        file.touch();
        Ok(())
    }

    /// Takes the file at `path` out of the project: a commit deletes it (and directories it
    /// leaves empty). Returns whether there was a file; writing the path again undoes the removal.
    pub fn remove(&mut self, path: &str) -> Result<bool, UniverseError> {
        let path = normalize_path(path)?;
        let existed = self.files.remove(&path).is_some();
        if existed {
            self.removed.insert(path);
        }
        Ok(existed)
    }

    /// The paths [`Universe::remove`] took out, ordered.
    pub fn removed(&self) -> impl Iterator<Item = &str> {
        self.removed.iter().map(String::as_str)
    }

    /// The contents at `path`, if any.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&str> {
        let path = normalize_path(path).ok()?;
        self.files.get(&path).map(|f| f.contents.as_str())
    }

    /// The file at `path`, with its state.
    #[must_use]
    pub fn file(&self, path: &str) -> Option<&UniverseFile> {
        let path = normalize_path(path).ok()?;
        self.files.get(&path)
    }

    /// Whether `path` holds a file.
    #[must_use]
    pub fn contains(&self, path: &str) -> bool {
        self.file(path).is_some()
    }

    /// All files, ordered by path.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &UniverseFile)> {
        self.files.iter().map(|(p, f)| (p.as_str(), f))
    }

    /// The files a plugin wrote, edited or skipped: what a commit looks at.
    pub fn touched(&self) -> impl Iterator<Item = (&str, &UniverseFile)> {
        self.iter().filter(|(_, f)| f.state != FileState::Existing)
    }

    /// The number of files.
    #[must_use]
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The Universe as a plain `path → contents` map (the external-plugin wire shape).
    #[must_use]
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .map(|(p, f)| (p.clone(), f.contents.clone()))
            .collect()
    }

    /// Applies a `path → contents` map returned by an external plugin: new or changed files are
    /// written with `if_exists`, identical ones are left alone. Files missing from the map are
    /// kept (external plugins cannot delete).
    pub fn merge_map(
        &mut self,
        map: BTreeMap<String, String>,
        if_exists: IfExists,
    ) -> Result<(), UniverseError> {
        for (path, contents) in map {
            if self.get(&path) != Some(contents.as_str()) {
                self.write(&path, contents, if_exists)?;
            }
        }
        Ok(())
    }
}

/// Normalises a project-relative path (`./a//b` → `a/b`) and rejects paths that cannot name a
/// file inside the project: empty, absolute, with `..`, a backslash or a NUL byte.
pub fn normalize_path(path: &str) -> Result<String, UniverseError> {
    let invalid = |reason| UniverseError::InvalidPath {
        path: path.to_owned(),
        reason,
    };
    if path.starts_with('/') || path.get(1..2) == Some(":") {
        return Err(invalid(
            "must be relative to the project root, not absolute",
        ));
    }
    if path.contains('\\') {
        return Err(invalid("must use '/' as separator"));
    }
    if path.contains('\0') {
        return Err(invalid("must not contain a NUL byte"));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(invalid("must not contain '..'")),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(invalid("must name a file"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_takes_a_file_out_until_it_is_written_again() {
        let mut u = Universe::new();
        u.insert_existing("a/b.txt", "x").unwrap();
        assert!(u.remove("./a//b.txt").unwrap());
        assert!(!u.remove("a/b.txt").unwrap(), "already gone");
        assert!(!u.contains("a/b.txt"));
        assert_eq!(u.removed().collect::<Vec<_>>(), ["a/b.txt"]);
        u.write("a/b.txt", "y", IfExists::Error).unwrap();
        assert_eq!(u.removed().count(), 0);
        assert_eq!(u.get("a/b.txt"), Some("y"));
    }

    fn check(path: &str, expected: Result<&str, &str>) {
        match (normalize_path(path), expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e),
            (Err(g), Err(e)) => assert!(g.to_string().contains(e), "{path}: {g}"),
            (g, e) => panic!("{path}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn normalizes_paths() {
        check("src/main.rs", Ok("src/main.rs"));
        check("./src//main.rs", Ok("src/main.rs"));
        check("/etc/passwd", Err("not absolute"));
        check("C:/x", Err("not absolute"));
        check("a/../../b", Err("'..'"));
        check("a\\b", Err("'/'"));
        check("./", Err("must name a file"));
    }

    #[test]
    fn write_applies_policy() {
        let mut u = Universe::new();
        u.insert_existing("main.rs", "old").unwrap();
        assert_eq!(
            u.write("main.rs", "new", IfExists::Skip),
            Ok(WriteOutcome::Skipped)
        );
        assert_eq!(u.file("main.rs").unwrap().state(), FileState::Skipped);
        assert_eq!(u.get("main.rs"), Some("old"));
        assert_eq!(
            u.write("main.rs", "new", IfExists::Error)
                .unwrap_err()
                .to_string(),
            "main.rs already exists; pass --force to overwrite it"
        );
        assert_eq!(
            u.write("main.rs", "new", IfExists::Overwrite),
            Ok(WriteOutcome::Overwritten)
        );
        assert_eq!(
            u.write("./main.rs", "new", IfExists::Error),
            Ok(WriteOutcome::Unchanged)
        );
        assert_eq!(
            u.write("lib.rs", "x", IfExists::Error),
            Ok(WriteOutcome::Created)
        );
        assert_eq!(u.touched().count(), 2);

        // Writing what is already there is unchanged, whatever the policy, and counts as
        // touched so that the report lists it.
        for policy in [IfExists::Skip, IfExists::Error, IfExists::Overwrite] {
            let mut u = Universe::new();
            u.insert_existing("same.rs", "x").unwrap();
            assert_eq!(u.write("same.rs", "x", policy), Ok(WriteOutcome::Unchanged));
            assert_eq!(
                u.file("same.rs").unwrap().state(),
                FileState::Written(IfExists::Overwrite)
            );
        }
        let mut u = Universe::new();
        u.insert_existing("a.rs", "x").unwrap();
        u.insert_existing("b.rs", "y").unwrap();
        u.touch("./a.rs").unwrap();
        u.write("b.rs", "template", IfExists::Skip).unwrap();
        u.touch("b.rs").unwrap();
        for path in ["a.rs", "b.rs"] {
            assert_eq!(
                u.file(path).unwrap().state(),
                FileState::Written(IfExists::Overwrite)
            );
        }
        // An edit after the touch still reaches the disk.
        assert_eq!(u.modify("b.rs", |s| format!("{s}z")), Ok(true));
        assert_eq!(u.get("b.rs"), Some("yz"));
        assert!(matches!(
            u.touch("c.rs"),
            Err(UniverseError::NotFound { .. })
        ));

        let mut forced = Universe::new().with_force(true);
        forced.insert_existing("a", "1").unwrap();
        assert_eq!(
            forced.write("a", "2", IfExists::Error),
            Ok(WriteOutcome::Overwritten)
        );
        assert_eq!(
            forced.write("a", "3", IfExists::Skip),
            Ok(WriteOutcome::Skipped)
        );
    }

    #[test]
    fn modify_and_merge() {
        let mut u = Universe::new();
        u.insert_existing("a.txt", "x").unwrap();
        assert_eq!(u.modify("a.txt", |s| s.to_owned()), Ok(false));
        assert_eq!(u.file("a.txt").unwrap().state(), FileState::Existing);
        assert_eq!(u.modify("a.txt", |s| format!("{s}y")), Ok(true));
        assert_eq!(
            u.file("a.txt").unwrap().state(),
            FileState::Written(IfExists::Overwrite)
        );
        assert!(matches!(
            u.modify("b.txt", |s| s.to_owned()),
            Err(UniverseError::NotFound { .. })
        ));

        let map = BTreeMap::from([
            ("a.txt".to_owned(), "xy".to_owned()),
            ("b.txt".to_owned(), "b".to_owned()),
        ]);
        u.merge_map(map, IfExists::Overwrite).unwrap();
        assert_eq!(u.to_map().len(), 2);
    }
}
