//! Integration tests of the `mni-scaffold` binary against temporary projects.
//!
//! One test binary; [`Project`] builds a project directory (and a private plugins directory)
//! fluently, runs the binary in it and snapshots the tree so tests can prove nothing changed.

mod bad_input;
mod book;
mod catalog;
mod external;
mod flags;
mod olm;
mod plugins_new;
mod scaffold;
mod template;
mod webhook;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// The arguments of `create api --group <group> --version <version> --kind <kind>`.
pub(crate) fn create_api<'a>(group: &'a str, version: &'a str, kind: &'a str) -> [&'a str; 8] {
    [
        "create",
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ]
}

/// [`create_api`] for `crew/v1` with `kind`, followed by `extra`.
pub(crate) fn create_crew_api<'a>(kind: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    [&create_api("crew", "v1", kind)[..], extra].concat()
}

/// A temporary project directory `<tmp>/demo` plus `<tmp>/plugins` as `MNI_PLUGINS_PATH`.
pub(crate) struct Project {
    tmp: TempDir,
}

/// What one run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Asserts success and returns stdout.
    #[track_caller]
    pub(crate) fn ok(self) -> String {
        assert_eq!(self.code, 0, "{self:#?}");
        self.stdout
    }

    /// Asserts exit code `code`, a single-line error containing every `needle`; returns it.
    #[track_caller]
    pub(crate) fn fails(self, code: i32, needles: &[&str]) -> String {
        assert_eq!(self.code, code, "{self:#?}");
        let err = self.stderr.trim_end().to_owned();
        assert_eq!(err.lines().count(), 1, "not one line: {err}");
        assert!(err.starts_with("error: "), "{err}");
        for needle in needles {
            assert!(err.contains(needle), "{err:?} should contain {needle:?}");
        }
        err
    }
}

impl Project {
    /// An empty project directory.
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        fs::create_dir(tmp.path().join("demo")).expect("mkdir demo");
        fs::create_dir(tmp.path().join("plugins")).expect("mkdir plugins");
        Self { tmp }
    }

    /// Adds a project file (creating parent directories).
    pub(crate) fn file(self, path: &str, contents: &str) -> Self {
        let p = self.root().join(path);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, contents).expect("write");
        self
    }

    /// Installs an executable as external plugin `name/version`.
    pub(crate) fn plugin(self, name: &str, version: &str, script: &str) -> Self {
        let dir = self.tmp.path().join("plugins").join(name).join(version);
        fs::create_dir_all(&dir).expect("mkdir plugin");
        let path = dir.join(name);
        fs::write(&path, script).expect("write plugin");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
        self
    }

    /// Installs the executable file `binary` as external plugin `name/version`.
    pub(crate) fn plugin_binary(self, name: &str, version: &str, binary: &Path) -> Self {
        let dir = self.tmp.path().join("plugins").join(name).join(version);
        fs::create_dir_all(&dir).expect("mkdir plugin");
        fs::copy(binary, dir.join(name)).expect("install plugin binary");
        self
    }

    /// Installs the sample plugin of `plugins/external-sample` as `apidocs.mni.dev/v1`.
    pub(crate) fn sample(self) -> Self {
        let script = fs::read_to_string(sample_path()).expect("read sample plugin");
        self.plugin("apidocs.mni.dev", "v1", &script)
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.tmp.path().join("demo")
    }

    pub(crate) fn read(&self, path: &str) -> String {
        fs::read_to_string(self.root().join(path)).expect("read")
    }

    /// Runs `mni-scaffold -C <root> args…` with a clean environment (plus `USER`, which
    /// cargo-generate needs).
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        run_in(&self.root(), &self.tmp.path().join("plugins"), args)
    }

    /// Like [`Project::run`], with exactly `vars` added to the clean environment.
    pub(crate) fn run_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        run_in_env(&self.root(), &self.tmp.path().join("plugins"), args, vars)
    }

    /// Every entry below the project root (directories as `/`), with file bytes.
    pub(crate) fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        tree(&self.root())
    }
}

pub(crate) fn sample_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/external-sample/apidocs.mni.dev")
}

pub(crate) fn run_in(dir: &Path, plugins: &Path, args: &[&str]) -> Run {
    run_in_env(dir, plugins, args, &[("USER", "mni-test")])
}

/// Runs `mni-scaffold -C <dir> args…` with only PATH, HOME, `MNI_PLUGINS_PATH`, a secret that
/// must not reach plugins, and `vars`.
pub(crate) fn run_in_env(dir: &Path, plugins: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_mni-scaffold"))
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", plugins.parent().expect("tmp"))
        .env("MNI_PLUGINS_PATH", plugins)
        // Must not reach external plugins: only PATH, HOME and LANG do.
        .env("MNI_TEST_SECRET", "hunter2")
        .envs(vars.iter().copied())
        .output()
        .expect("run mni-scaffold");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.insert(rel, b"/".to_vec());
                stack.push(path);
            } else {
                out.insert(rel, fs::read(&path).expect("read"));
            }
        }
    }
    out
}
