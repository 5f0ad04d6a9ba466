//! Integration tests of `mni-machinery` (with `mni-plugin`) against real temporary projects.
//!
//! One test binary; [`Fixture`] builds a project directory fluently.

mod commit;
mod markers;
mod project;
mod templates;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use mni_plugin::Universe;
use tempfile::TempDir;

/// A temporary project directory.
pub(crate) struct Fixture {
    dir: TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Adds a file (creating parent directories).
    pub(crate) fn file(self, path: &str, contents: &str) -> Self {
        let p = self.dir.path().join(path);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, contents).expect("write");
        self
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn read(&self, path: &str) -> String {
        fs::read_to_string(self.root().join(path)).expect("read")
    }

    /// Loads the project into a Universe.
    pub(crate) fn universe(&self) -> Universe {
        mni_machinery::load_universe(self.root())
            .expect("load")
            .universe
    }

    /// Every entry below the root (directories as `/`), with file bytes.
    pub(crate) fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        walkdir::WalkDir::new(self.root())
            .min_depth(1)
            .into_iter()
            .map(|e| e.expect("walk"))
            .map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(self.root())
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                let body = if e.file_type().is_file() {
                    fs::read(e.path()).expect("read")
                } else {
                    b"/".to_vec()
                };
                (rel, body)
            })
            .collect()
    }
}
