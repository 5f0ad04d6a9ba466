//! Building a [`Universe`] from a project directory.
//!
//! [`load_universe`] first rolls back an interrupted commit (see the `commit` module), then walks
//! the project and records every text file as [`FileState::Existing`](mni_plugin::FileState),
//! leaving out `.git/`, any `target/` directory, the commit journal directory and whatever the
//! project's `.gitignore` files ignore. Symbolic links and non-UTF-8 files are not loaded; they
//! are listed in [`Loaded::skipped`] so the CLI can say so.

use std::fs;
use std::path::{Path, PathBuf};

use mni_plugin::Universe;
use walkdir::WalkDir;

use crate::commit::{self, STATE_DIR};
use crate::gitignore::{Gitignore, GitignoreError};

/// Why a project could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Reading a file or directory failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Walking the tree failed.
    #[error("cannot walk {root}: {source}")]
    Walk {
        /// The project root.
        root: PathBuf,
        /// The cause.
        #[source]
        source: walkdir::Error,
    },
    /// A `.gitignore` has a pattern that cannot be compiled.
    #[error(transparent)]
    Gitignore(#[from] GitignoreError),
    /// Rolling back an interrupted commit failed.
    #[error(transparent)]
    Recover(#[from] commit::CommitError),
}

/// What [`load_universe`] found.
#[derive(Debug)]
pub struct Loaded {
    /// The project's text files.
    pub universe: Universe,
    /// The compiled `.gitignore` rules, for later checks.
    pub gitignore: Gitignore,
    /// Files left out because they are symbolic links or not UTF-8.
    pub skipped: Vec<String>,
    /// Whether an interrupted commit was rolled back first.
    pub recovered: bool,
}

/// Directory names never loaded, at any depth.
const ALWAYS_SKIPPED: &[&str] = &[".git", "target", STATE_DIR];

/// Loads the project at `root` into a Universe. See the [module docs](self).
pub fn load_universe(root: &Path) -> Result<Loaded, LoadError> {
    let recovered = commit::recover(root)?;
    let mut gitignore = Gitignore::new();
    let mut universe = Universe::new();
    let mut skipped = Vec::new();
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| LoadError::Io { path, source }
    };

    let mut walk = WalkDir::new(root)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    read_gitignore(root, "", &mut gitignore)?;
    while let Some(entry) = walk.next() {
        let entry = entry.map_err(|source| LoadError::Walk {
            root: root.to_owned(),
            source,
        })?;
        let Some(rel) = relative(root, entry.path()) else {
            continue;
        };
        let file_type = entry.file_type();
        if file_type.is_dir() {
            if ALWAYS_SKIPPED.contains(&entry.file_name().to_string_lossy().as_ref())
                || gitignore.is_ignored(&rel, true)
            {
                walk.skip_current_dir();
            } else {
                read_gitignore(entry.path(), &rel, &mut gitignore)?;
            }
            continue;
        }
        if gitignore.is_ignored(&rel, false) {
            continue;
        }
        if file_type.is_symlink() {
            skipped.push(rel);
            continue;
        }
        let bytes = fs::read(entry.path()).map_err(io(entry.path()))?;
        match String::from_utf8(bytes) {
            Ok(text) => {
                // `rel` comes from a walk below `root`, so it is always a valid Universe path.
                if universe.insert_existing(&rel, text).is_err() {
                    skipped.push(rel);
                }
            }
            Err(_) => skipped.push(rel),
        }
    }
    Ok(Loaded {
        universe,
        gitignore,
        skipped,
        recovered,
    })
}

fn read_gitignore(dir: &Path, rel: &str, gitignore: &mut Gitignore) -> Result<(), LoadError> {
    let path = dir.join(".gitignore");
    match fs::read_to_string(&path) {
        Ok(text) => Ok(gitignore.add(rel, &text)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(LoadError::Io { path, source }),
    }
}

/// `path` relative to `root`, `/`-separated; `None` for non-UTF-8 names.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_text_files_and_skips_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, contents) in [
            ("src/main.rs", "fn main() {}\n"),
            (".gitignore", "*.log\n/local/\n"),
            ("debug.log", "x"),
            ("local/notes.txt", "x"),
            ("target/debug/x", "x"),
            (".git/HEAD", "ref"),
            ("crate/target/y", "y"),
            ("crate/.gitignore", "gen.rs\n"),
            ("crate/gen.rs", "x"),
            ("crate/lib.rs", "x"),
        ] {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, contents).unwrap();
        }
        fs::write(root.join("blob.bin"), [0xff, 0xfe, 0x00]).unwrap();
        let loaded = load_universe(root).unwrap();
        let paths: Vec<&str> = loaded.universe.iter().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            [
                ".gitignore",
                "crate/.gitignore",
                "crate/lib.rs",
                "src/main.rs"
            ]
        );
        assert_eq!(loaded.skipped, ["blob.bin"]);
        assert!(!loaded.recovered);
    }
}
