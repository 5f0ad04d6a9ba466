//! Testing a plugin the way users run it: the real `mni-scaffold` binary, the plugin binary
//! installed as an external plugin, a project in a temporary directory.
//!
//! Start with [`Sandbox`]: it finds `mni-scaffold` (`$MNI_SCAFFOLD`, else `PATH`), makes a
//! temporary directory holding a plugins directory and an empty project, and installs plugin
//! binaries with [`Sandbox::with_plugin`] (in a plugin crate's integration test the binary is
//! `env!("CARGO_BIN_EXE_<name>")`). [`Sandbox::run`] runs `mni-scaffold` in the project with a
//! clean environment (`PATH`, a private `HOME`, `USER`, `MNI_PLUGINS_PATH`), so what the test
//! sees is what a user sees; [`Sandbox::read`] and [`Sandbox::assert_contains`] check files;
//! [`Sandbox::cargo_check`] compiles the scaffolded project.
//!
//! ```no_run
//! use mni_plugin_sdk::testing::{Sandbox, TestingError};
//!
//! fn scaffolds_a_page() -> Result<(), TestingError> {
//!     let sandbox = Sandbox::new()?
//!         .with_plugin("pages.acme.io/v1", "target/debug/pages.acme.io")?;
//!     sandbox.run(&["init", "--plugins", "rust-operator,pages", "--domain", "acme.io"])?;
//!     sandbox.run(&["create", "api", "--group", "crew", "--version", "v1", "--kind", "Ship"])?;
//!     sandbox.assert_contains("docs/ship.md", "# Ship")?;
//!     sandbox.cargo_check()
//! }
//! ```
//!
//! **Compiling.** [`Sandbox::cargo_check`] runs `cargo check --offline --tests` in the project,
//! with `CARGO_TARGET_DIR` passed on when it is set (point it at a target directory shared
//! between runs, or every run compiles the project's dependencies afresh) and with the lock
//! file of [`Sandbox::with_lockfile`] copied in first (the lock file of the mNi checkout the
//! project depends on keeps dependency versions — and so compiled artefacts — the same).

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use mni_plugin::PluginKey;

/// Why a test step failed; every message names the command or file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestingError {
    /// `mni-scaffold` was not found.
    #[error(
        "mni-scaffold not found: set MNI_SCAFFOLD to the binary or put it on PATH (cargo install --path scaffold-cli in the mNi checkout)"
    )]
    ScaffoldNotFound,
    /// A plugin key does not parse.
    #[error("plugin key {key:?}: {message}")]
    Key {
        /// The key given.
        key: String,
        /// Why it is not a key.
        message: String,
    },
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A command exited unsuccessfully.
    #[error("`{command}` exited with {code}\nstdout:\n{stdout}\nstderr:\n{stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Its exit code (-1 when killed by a signal).
        code: i32,
        /// What it printed.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A file does not contain what the test expects.
    #[error("{path} does not contain {expected:?}; it reads:\n{actual}")]
    Mismatch {
        /// The file, relative to the project.
        path: String,
        /// The text looked for.
        expected: String,
        /// The file's contents.
        actual: String,
    },
}

/// What one `mni-scaffold` run printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// A temporary project and plugins directory. See the [module docs](self).
#[derive(Debug)]
pub struct Sandbox {
    scaffold: PathBuf,
    tmp: tempfile::TempDir,
    lockfile: Option<PathBuf>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TestingError + '_ {
    move |source| TestingError::Io {
        path: path.to_owned(),
        source,
    }
}

/// `$MNI_SCAFFOLD`, else `mni-scaffold` on `PATH`.
fn find_scaffold() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MNI_SCAFFOLD").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("mni-scaffold"))
        .find(|p| p.is_file())
}

impl Sandbox {
    /// A sandbox using the `mni-scaffold` found as the [module docs](self) say.
    pub fn new() -> Result<Self, TestingError> {
        Self::with_scaffold(find_scaffold().ok_or(TestingError::ScaffoldNotFound)?)
    }

    /// A sandbox using the `mni-scaffold` binary at `scaffold`.
    pub fn with_scaffold(scaffold: impl Into<PathBuf>) -> Result<Self, TestingError> {
        let tmp = tempfile::tempdir().map_err(io(&std::env::temp_dir()))?;
        for dir in ["project", "plugins", "home"] {
            let path = tmp.path().join(dir);
            fs::create_dir(&path).map_err(io(&path))?;
        }
        Ok(Self {
            scaffold: scaffold.into(),
            tmp,
            lockfile: None,
        })
    }

    /// Installs the executable `binary` as external plugin `key` (`NAME/VERSION`), where
    /// `mni-scaffold` discovers it: `<plugins>/NAME/VERSION/NAME`.
    pub fn with_plugin(self, key: &str, binary: impl AsRef<Path>) -> Result<Self, TestingError> {
        let parsed: PluginKey = key.parse().map_err(|e| TestingError::Key {
            key: key.to_owned(),
            message: format!("{e}"),
        })?;
        let key = parsed.to_string();
        let (name, version) = key.split_once('/').unwrap_or((&key, ""));
        let dir = self.plugins_dir().join(name).join(version);
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let installed = dir.join(name);
        fs::copy(binary.as_ref(), &installed).map_err(io(binary.as_ref()))?;
        fs::set_permissions(&installed, fs::Permissions::from_mode(0o755))
            .map_err(io(&installed))?;
        Ok(self)
    }

    /// Copies `lockfile` into the project before [`cargo_check`](Self::cargo_check).
    #[must_use]
    pub fn with_lockfile(mut self, lockfile: impl Into<PathBuf>) -> Self {
        self.lockfile = Some(lockfile.into());
        self
    }

    /// The project directory (empty until the first `init`).
    #[must_use]
    pub fn project_dir(&self) -> PathBuf {
        self.tmp.path().join("project")
    }

    /// The directory plugins are installed in (`MNI_PLUGINS_PATH`).
    #[must_use]
    pub fn plugins_dir(&self) -> PathBuf {
        self.tmp.path().join("plugins")
    }

    /// Runs `mni-scaffold args…` in the project and returns what it printed, whatever its exit
    /// code.
    pub fn try_run(&self, args: &[&str]) -> Result<Output, TestingError> {
        let out = Command::new(&self.scaffold)
            .args(args)
            .current_dir(self.project_dir())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.tmp.path().join("home"))
            .env("USER", "mni-test")
            .env("MNI_PLUGINS_PATH", self.plugins_dir())
            .output()
            .map_err(io(&self.scaffold))?;
        Ok(Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Runs `mni-scaffold args…` in the project; fails unless it exits with 0. Returns stdout.
    pub fn run(&self, args: &[&str]) -> Result<String, TestingError> {
        let out = self.try_run(args)?;
        if out.code == 0 {
            Ok(out.stdout)
        } else {
            Err(TestingError::Failed {
                command: format!("mni-scaffold {}", args.join(" ")),
                code: out.code,
                stdout: out.stdout,
                stderr: out.stderr,
            })
        }
    }

    /// The file at `path` in the project.
    pub fn read(&self, path: &str) -> Result<String, TestingError> {
        let full = self.project_dir().join(path);
        fs::read_to_string(&full).map_err(io(&full))
    }

    /// Fails unless the file at `path` contains `expected`.
    pub fn assert_contains(&self, path: &str, expected: &str) -> Result<(), TestingError> {
        let actual = self.read(path)?;
        if actual.contains(expected) {
            Ok(())
        } else {
            Err(TestingError::Mismatch {
                path: path.to_owned(),
                expected: expected.to_owned(),
                actual,
            })
        }
    }

    /// Compiles the project and its tests (`cargo check --offline --tests`). See the
    /// [module docs](self) for `CARGO_TARGET_DIR` and the lock file.
    pub fn cargo_check(&self) -> Result<(), TestingError> {
        let dir = self.project_dir();
        if let Some(lock) = &self.lockfile {
            let to = dir.join("Cargo.lock");
            fs::copy(lock, &to).map_err(io(lock))?;
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        let mut command = Command::new(cargo);
        command
            .args(["check", "--offline", "--tests", "--quiet"])
            .current_dir(&dir);
        // Variables Cargo sets for the crate whose test is running would make the nested build
        // differ from one started in a shell (and rebuild what build scripts watch).
        for (name, _) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            if matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_RUSTC_CURRENT_DIR"
                    | "OUT_DIR"
            ) || name.starts_with("CARGO_PKG_")
                || name.starts_with("CARGO_BIN_EXE_")
            {
                command.env_remove(name);
            }
        }
        let out = command.output().map_err(io(Path::new("cargo")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(TestingError::Failed {
                command: format!("cargo check --offline --tests in {}", dir.display()),
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell script standing in for `mni-scaffold`: prints its arguments and the plugins
    /// directory, and fails on `fail`.
    fn fake_scaffold(dir: &Path) -> PathBuf {
        let path = dir.join("mni-scaffold");
        fs::write(
            &path,
            "#!/bin/sh\n[ \"$1\" = fail ] && { echo nope >&2; exit 2; }\necho \"$*\" > args.txt\nls \"$MNI_PLUGINS_PATH\"/*/*\n",
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn installs_plugins_runs_in_the_project_and_checks_files() {
        let bin = tempfile::tempdir().unwrap();
        let scaffold = fake_scaffold(bin.path());
        let sandbox = Sandbox::with_scaffold(&scaffold)
            .unwrap()
            .with_plugin("pages.acme.io/v1", &scaffold)
            .unwrap();
        let stdout = sandbox.run(&["init", "--domain", "acme.io"]).unwrap();
        assert_eq!(stdout, "pages.acme.io\n");
        assert!(
            sandbox
                .plugins_dir()
                .join("pages.acme.io/v1/pages.acme.io")
                .is_file()
        );
        sandbox
            .assert_contains("args.txt", "init --domain acme.io")
            .unwrap();
        let err = sandbox.assert_contains("args.txt", "create").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("args.txt does not contain \"create\"")
        );
        let err = sandbox.run(&["fail"]).unwrap_err();
        assert!(
            matches!(&err, TestingError::Failed { code: 2, stderr, .. } if stderr == "nope\n"),
            "{err}"
        );
        assert_eq!(sandbox.try_run(&["fail"]).unwrap().code, 2);
    }

    /// A stand-in `mni-scaffold` that writes a dependency-free crate whose `main` is `$1`.
    fn crate_writer(dir: &Path) -> PathBuf {
        let path = dir.join("mni-scaffold");
        fs::write(
            &path,
            "#!/bin/sh\nmkdir -p src\nprintf '[package]\\nname = \"demo\"\\nversion = \"0.1.0\"\\nedition = \"2024\"\\n\\n[workspace]\\n' > Cargo.toml\necho \"fn main() { $1 }\" > src/main.rs\n",
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn cargo_check_compiles_the_project_and_reports_errors() {
        let bin = tempfile::tempdir().unwrap();
        let scaffold = crate_writer(bin.path());
        let lock = bin.path().join("Cargo.lock");
        fs::write(&lock, "version = 4\n").unwrap();
        let good = Sandbox::with_scaffold(&scaffold)
            .unwrap()
            .with_lockfile(&lock);
        good.run(&["let _ = 1;"]).unwrap();
        good.cargo_check().unwrap();
        let bad = Sandbox::with_scaffold(&scaffold).unwrap();
        bad.run(&["let x: u8 = \"no\";"]).unwrap();
        let err = bad.cargo_check().unwrap_err();
        assert!(
            matches!(&err, TestingError::Failed { command, stderr, .. }
                if command.starts_with("cargo check --offline --tests in ") && stderr.contains("mismatched types")),
            "{err}"
        );
    }

    #[test]
    fn refuses_bad_keys_and_missing_binaries() {
        let bin = tempfile::tempdir().unwrap();
        let scaffold = fake_scaffold(bin.path());
        let err = Sandbox::with_scaffold(&scaffold)
            .unwrap()
            .with_plugin("Not A Key", &scaffold)
            .unwrap_err();
        assert!(
            err.to_string().starts_with("plugin key \"Not A Key\""),
            "{err}"
        );
        let err = Sandbox::with_scaffold(&scaffold)
            .unwrap()
            .with_plugin("pages.acme.io/v1", bin.path().join("missing"))
            .unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
