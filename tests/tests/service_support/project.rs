//! [`Project`]: the scaffolded project with the `billing` service, built once for every test
//! process.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{BACKEND, FRONTEND, OPERATOR, run_ok, workspace_bin};

/// The scaffolded project with the `billing` service, built.
///
/// `mni-scaffold init` and `new service billing` run in a fresh temporary directory; the tree
/// is then synced (changed files only) into one directory under Cargo's `target/tmp`, where
/// `cargo build` runs with the workspace's lock file and target directory. The fixed path lets
/// every test binary and every run reuse what Cargo compiled for the last one, so the project
/// is compiled once, not once per test process (nextest runs each test in a process of its
/// own). A file lock serialises scaffolding and building between test processes.
pub struct Project {
    dir: PathBuf,
    bins: tempfile::TempDir,
    /// The operator's binary name ([`OPERATOR`] for the scaffolded `billing` service).
    operator: &'static str,
}

impl Project {
    /// Scaffolds and builds the project (see the [type docs](Project)).
    pub fn build() -> Self {
        let root = mni_tests::repo_root();
        let scaffold = workspace_bin("mni-scaffold");
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("service-tests");
        std::fs::create_dir_all(&tmp).expect("create target/tmp/service-tests");
        let lock = File::create(tmp.join("build.lock")).expect("create the build lock");
        lock.lock().expect("take the build lock");

        let scratch = tempfile::tempdir().expect("tempdir");
        let fresh = scratch.path().join("shop");
        std::fs::create_dir(&fresh).expect("create the project directory");
        for args in [
            &["init", "--domain", "example.com"][..],
            &["new", "service", "billing"][..],
        ] {
            let mut command = Command::new(&scaffold);
            command
                .args(args)
                .current_dir(&fresh)
                .env_remove("MNI_PLUGINS_PATH");
            let out = run_ok(command, Duration::from_secs(120));
            println!("mni-scaffold {}: {}", args.join(" "), last_line(&out));
        }
        let dir = tmp.join("shop");
        sync_tree(&fresh, &dir);
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
            .expect("copy the workspace's Cargo.lock into the project");

        let bins = build_bins(
            &root,
            &dir,
            "the billing service",
            &[OPERATOR, BACKEND, FRONTEND],
        );
        drop(lock);
        Self {
            dir,
            bins,
            operator: OPERATOR,
        }
    }

    /// Builds binaries `operator`, `backend` and `frontend` of the project committed at
    /// `relative` in the repository (e.g. `services/vpc`), in place: its Cargo manifests name
    /// the mNi crates by relative paths. The workspace's Cargo.lock is copied in (projects
    /// ignore it) and the workspace's target directory is used, as for [`Project::build`],
    /// under the same build lock.
    pub fn build_committed(
        relative: &str,
        operator: &'static str,
        backend: &str,
        frontend: &str,
    ) -> Self {
        let root = mni_tests::repo_root();
        let dir = root.join(relative);
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("service-tests");
        std::fs::create_dir_all(&tmp).expect("create target/tmp/service-tests");
        let lock = File::create(tmp.join("build.lock")).expect("create the build lock");
        lock.lock().expect("take the build lock");

        let workspace_lock = std::fs::read(root.join("Cargo.lock")).expect("read Cargo.lock");
        let project_lock = dir.join("Cargo.lock");
        // Written only when it differs, so Cargo sees no change otherwise.
        if std::fs::read(&project_lock).ok().as_ref() != Some(&workspace_lock) {
            std::fs::write(&project_lock, &workspace_lock)
                .unwrap_or_else(|e| panic!("write {}: {e}", project_lock.display()));
        }

        // Cargo identifies a workspace member by its name and its path relative to the
        // workspace: a project scaffolded elsewhere with the same service name (the book's
        // chapter) looks like this one to Cargo, and committed sources are older than its
        // build. Touch them, so that Cargo rebuilds this project's crates.
        touch_tree(&dir);
        let bins = build_bins(&root, &dir, relative, &[operator, backend, frontend]);
        drop(lock);
        Self {
            dir,
            bins,
            operator,
        }
    }

    /// A path in the project.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// The project directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The built binary `name` ([`OPERATOR`], [`BACKEND`] or [`FRONTEND`], or the names given
    /// to [`Project::build_committed`]).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bins.path().join(name)
    }

    /// The operator's binary name.
    pub fn operator(&self) -> &'static str {
        self.operator
    }
}

/// Builds the packages `names` of the project in `dir` into the workspace's target directory and
/// keeps links to their binaries (other projects build binaries of the same names there).
fn build_bins(root: &Path, dir: &Path, what: &str, names: &[&str]) -> tempfile::TempDir {
    let started = Instant::now();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    mni_tests::clean_cargo_env(&mut cargo)
        .arg("build")
        .args(names.iter().flat_map(|name| ["-p", name]))
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("CARGO_NET_OFFLINE", "true");
    run_ok(cargo, Duration::from_secs(40 * 60));
    println!("cargo build of {what}: {:.1?}", started.elapsed());
    keep_bins(root, names)
}

/// Sets the modification time of every file under `dir` (but `target/`) to now.
fn touch_tree(dir: &Path) {
    let now = std::time::SystemTime::now();
    for path in mni_tests::read_tree(dir).expect("read the project").keys() {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(path))
            .unwrap_or_else(|e| panic!("open {path}: {e}"));
        file.set_modified(now)
            .unwrap_or_else(|e| panic!("touch {path}: {e}"));
    }
}

/// Hard links (or copies) to binaries `names` of `target/debug`, in a directory of their own:
/// other builds writing the same file names do not change them.
fn keep_bins(root: &Path, names: &[&str]) -> tempfile::TempDir {
    let bins = tempfile::tempdir().expect("tempdir");
    for name in names {
        let built = root.join("target/debug").join(name);
        let kept = bins.path().join(name);
        if std::fs::hard_link(&built, &kept).is_err() {
            std::fs::copy(&built, &kept)
                .unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
        }
    }
    bins
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or_default()
}

/// Makes `to` hold the files of `from`, writing only the files that differ, so that Cargo sees
/// unchanged sources as unchanged.
fn sync_tree(from: &Path, to: &Path) {
    let want = mni_tests::read_tree(from).expect("read the scaffolded project");
    let have = if to.exists() {
        mni_tests::read_tree(to).expect("read the build copy of the project")
    } else {
        Default::default()
    };
    for (path, bytes) in &want {
        if have.get(path) != Some(bytes) {
            let target = to.join(path);
            std::fs::create_dir_all(target.parent().expect("a file has a parent"))
                .expect("create a project directory");
            std::fs::write(&target, bytes)
                .unwrap_or_else(|e| panic!("write {}: {e}", target.display()));
        }
    }
    for path in have.keys().filter(|p| !want.contains_key(*p)) {
        std::fs::remove_file(to.join(path)).expect("remove a file no longer scaffolded");
    }
}
