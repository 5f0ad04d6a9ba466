//! `mni-tests`: workspace-level tests of mNi.
//!
//! The heart of it is the list of [`GOLDEN`] projects: each is a fixed sequence of
//! `mni-scaffold` commands whose output is committed under `tests/golden/<name>/` — or, for the
//! reference services, under `services/<name>/` (see [`Golden::dir`]). Three things use the
//! list:
//!
//! - `cargo run -p mni-tests --bin regen-golden` ([`REGEN_COMMAND`]) regenerates every golden
//!   project after a deliberate change to a plugin or template;
//! - the drift test (`tests/golden.rs`) generates each into a temporary directory and fails,
//!   naming the first differing file and that command, when the committed tree differs;
//! - `scripts/golden.sh` (run by `scripts/test.sh`) builds each golden project and runs its own tests, sharing the
//!   workspace's target directory and lock file, so CI proves that what the plugins generate
//!   compiles, is formatted and passes its tests.
//!
//! Commands run in-process through `mni_scaffold::parse` and `mni_scaffold::run`, with the
//! repository's sample external plugin on the plugin path.

pub mod book;
pub mod portal;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The command that regenerates every golden project.
pub const REGEN_COMMAND: &str = "cargo run -p mni-tests --bin regen-golden";

/// Files a generated tree may hold that are not scaffolded: build output and the lock file
/// `scripts/test.sh` copies in before building.
pub const IGNORED: &[&str] = &["Cargo.lock", "target"];

/// One golden project: a name, where it is committed, and the commands that make it, each
/// without the program name, run in order in the project directory.
#[derive(Debug, Clone, Copy)]
pub struct Golden {
    /// The project's name: its directory under `tests/golden/` unless [`dir`](Self::dir)
    /// says otherwise.
    pub name: &'static str,
    /// Where it is committed, relative to the repository root, when not `tests/golden/<name>`
    /// (the reference services live under `services/`).
    pub dir: Option<&'static str>,
    /// What the project shows.
    pub about: &'static str,
    /// The `mni-scaffold` commands, in order.
    pub commands: &'static [&'static [&'static str]],
}

/// The mNi crates, seen from `tests/golden/<name>/`.
const MNI_PATH: &str = "../../..";

/// The mNi crates, seen from `services/<name>/`.
const SERVICE_MNI_PATH: &str = "../..";

/// Every golden project.
pub const GOLDEN: &[Golden] = &[
    Golden {
        name: "plain-operator",
        dir: None,
        about: "the default chain: one kind with its controller",
        commands: &[
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "guestbook",
                "--owner",
                "The mNi authors",
                "--mni-path",
                MNI_PATH,
            ],
            &[
                "create",
                "api",
                "--group",
                "webapp",
                "--version",
                "v1",
                "--kind",
                "Guestbook",
            ],
        ],
    },
    Golden {
        name: "multi-api",
        dir: None,
        about: "two groups, a cluster-scoped kind, a type without controller, webhooks and a service crate",
        commands: &[
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "fleet",
                "--license",
                "mit",
                "--mni-path",
                MNI_PATH,
            ],
            &[
                "create",
                "api",
                "--group",
                "ships",
                "--version",
                "v1",
                "--kind",
                "Ship",
            ],
            &[
                "create",
                "api",
                "--group",
                "ships",
                "--version",
                "v1",
                "--kind",
                "Harbor",
                "--namespaced=false",
            ],
            &[
                "create",
                "api",
                "--group",
                "crew",
                "--version",
                "v1alpha1",
                "--kind",
                "Sailor",
                "--controller=false",
            ],
            &[
                "create",
                "webhook",
                "--group",
                "ships",
                "--version",
                "v1",
                "--kind",
                "Harbor",
                "--defaulting",
                "--programmatic-validation",
            ],
            &[
                "create",
                "webhook",
                "--group",
                "crew",
                "--version",
                "v1alpha1",
                "--kind",
                "Sailor",
                "--programmatic-validation",
            ],
            &["new", "service", "ledger"],
            &[
                "create",
                "api",
                "--group",
                "ledger",
                "--version",
                "v1beta1",
                "--kind",
                "Entry",
                "--service",
                "ledger",
            ],
        ],
    },
    Golden {
        name: "external-plugin",
        dir: None,
        about: "the Rust and kustomize plugins chained with the sample external plugin (Python)",
        commands: &[
            &[
                "--plugins",
                "rust-operator/v1,apidocs/v1",
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "docs-demo",
                "--mni-path",
                MNI_PATH,
            ],
            &[
                "create",
                "api",
                "--group",
                "crew",
                "--version",
                "v1",
                "--kind",
                "Captain",
            ],
        ],
    },
    Golden {
        name: "vpc",
        dir: Some("services/vpc"),
        about: "the reference VPC service: vpc.mni.dev/v1 on Kube-OVN",
        commands: &[
            &[
                "--plugins",
                "vpc/v1",
                "init",
                "--domain",
                "mni.dev",
                "--project-name",
                "mni-vpc",
                "--owner",
                "The mNi authors",
                "--mni-path",
                SERVICE_MNI_PATH,
            ],
            &["--plugins", "vpc/v1", "new", "service", "network"],
        ],
    },
    Golden {
        name: "vm",
        dir: Some("services/vm"),
        about: "the reference VM service: vm.mni.dev/v1 on KubeVirt, in VPC subnets",
        commands: &[
            &[
                "--plugins",
                "vm/v1",
                "init",
                "--domain",
                "mni.dev",
                "--project-name",
                "mni-vm",
                "--owner",
                "The mNi authors",
                "--mni-path",
                SERVICE_MNI_PATH,
            ],
            &["--plugins", "vm/v1", "new", "service", "compute"],
        ],
    },
    Golden {
        name: "baremetal",
        dir: Some("services/baremetal"),
        about: "the reference bare-metal service: baremetal.mni.dev/v1 on Metal3, pre-flighted over Redfish",
        commands: &[
            &[
                "--plugins",
                "baremetal/v1",
                "init",
                "--domain",
                "mni.dev",
                "--project-name",
                "mni-baremetal",
                "--owner",
                "The mNi authors",
                "--mni-path",
                SERVICE_MNI_PATH,
            ],
            &["--plugins", "baremetal/v1", "new", "service", "metal"],
        ],
    },
];

/// Why a golden project could not be generated or compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoldenError {
    /// A scaffold command failed.
    #[error("{golden}: `mni-scaffold {command}` failed: {message}")]
    Command {
        /// The golden project.
        golden: String,
        /// The command line.
        command: String,
        /// The CLI's error.
        message: String,
    },
    /// Reading or writing a tree failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// The repository root.
#[must_use]
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// A `cargo` started from here builds as one started from a shell (see [`mni_bench::clean_cargo_env`]).
pub use mni_bench::clean_cargo_env;

/// The directory of the committed golden project `name` (see [`Golden::dir`]).
#[must_use]
pub fn golden_dir(name: &str) -> PathBuf {
    let root = repo_root();
    match GOLDEN.iter().find(|g| g.name == name).and_then(|g| g.dir) {
        Some(dir) => root.join(dir),
        None => root.join("tests/golden").join(name),
    }
}

impl Golden {
    /// Where the project is committed, relative to the repository root.
    #[must_use]
    pub fn relative_dir(&self) -> String {
        self.dir
            .map_or_else(|| format!("tests/golden/{}", self.name), ToOwned::to_owned)
    }
}

/// Runs `golden`'s commands in `dir` (created if missing), with the repository's sample
/// external plugin on the plugin path.
pub fn generate(golden: &Golden, dir: &Path) -> Result<(), GoldenError> {
    generate_with(golden, dir, |_| {})
}

/// [`generate`], calling `after_step` with each command once it has run (the project directory
/// then holds that command's output), e.g. to check every intermediate state of the project.
pub fn generate_with(
    golden: &Golden,
    dir: &Path,
    after_step: impl FnMut(&[&str]),
) -> Result<(), GoldenError> {
    let plugins = sample_plugins_dir()?;
    run_commands(golden, dir, plugins.path(), &[], after_step)
}

/// Runs `golden`'s commands in `dir` (created if missing) with the external plugins installed
/// under `plugins_dir` and `vars` set besides `PATH`, `HOME` and `LANG` (e.g.
/// `MNI_REPLACE_BUILTINS`).
pub fn generate_with_plugins(
    golden: &Golden,
    dir: &Path,
    plugins_dir: &Path,
    vars: &[(&str, &str)],
) -> Result<(), GoldenError> {
    run_commands(golden, dir, plugins_dir, vars, |_| {})
}

fn run_commands(
    golden: &Golden,
    dir: &Path,
    plugins_dir: &Path,
    extra: &[(&str, &str)],
    mut after_step: impl FnMut(&[&str]),
) -> Result<(), GoldenError> {
    std::fs::create_dir_all(dir).map_err(|source| GoldenError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let env = scaffold_env(plugins_dir, extra);
    for command in golden.commands {
        let mut args: Vec<OsString> = vec!["mni-scaffold".into(), "-C".into(), dir.into()];
        args.extend(command.iter().map(OsString::from));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        mni_scaffold::parse(args, &env)
            .and_then(|cli| mni_scaffold::run(cli, &env, &mut out, &mut err))
            .map_err(|e| GoldenError::Command {
                golden: golden.name.to_owned(),
                command: command.join(" "),
                message: e.to_string(),
            })?;
        after_step(command);
    }
    Ok(())
}

/// The environment the golden projects are scaffolded in: `PATH`, `HOME` and `LANG`, external
/// plugins under `plugins_dir`, and `extra`.
#[must_use]
pub fn scaffold_env(plugins_dir: &Path, extra: &[(&str, &str)]) -> mni_scaffold::Environment {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k == "PATH" || k == "HOME" || k == "LANG")
        .chain([(
            OsString::from("MNI_PLUGINS_PATH"),
            plugins_dir.as_os_str().to_owned(),
        )])
        .chain(
            extra
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        )
        .collect();
    mni_scaffold::Environment::from_vars(vars)
}

/// Runs `mni-scaffold -C dir ARGS…` in this process; its standard output, or the error with its
/// exit code.
pub fn mni_scaffold(
    dir: &Path,
    args: &[&str],
    env: &mni_scaffold::Environment,
) -> Result<String, (u8, String)> {
    let mut argv: Vec<OsString> = vec!["mni-scaffold".into(), "-C".into(), dir.into()];
    argv.extend(args.iter().map(OsString::from));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    mni_scaffold::parse(argv, env)
        .and_then(|cli| mni_scaffold::run(cli, env, &mut out, &mut err))
        .map(|()| String::from_utf8_lossy(&out).into_owned())
        .map_err(|e| (e.exit_code(), e.to_string()))
}

/// A plugin directory holding the repository's sample external plugin, installed the way users
/// install plugins: `<dir>/apidocs.mni.dev/v1/apidocs.mni.dev`.
pub fn sample_plugins() -> Result<tempfile::TempDir, GoldenError> {
    sample_plugins_dir()
}

/// [`sample_plugins`].
fn sample_plugins_dir() -> Result<tempfile::TempDir, GoldenError> {
    const SAMPLE: &str = "apidocs.mni.dev";
    let io = |path: PathBuf| move |source| GoldenError::Io { path, source };
    let dir = tempfile::tempdir().map_err(io(std::env::temp_dir()))?;
    let version_dir = dir.path().join(SAMPLE).join("v1");
    std::fs::create_dir_all(&version_dir).map_err(io(version_dir.clone()))?;
    let source = repo_root().join("plugins/external-sample").join(SAMPLE);
    std::fs::copy(&source, version_dir.join(SAMPLE)).map_err(io(source))?;
    Ok(dir)
}

/// Every file under `root` (but [`IGNORED`] ones) as relative path → bytes.
pub fn read_tree(root: &Path) -> Result<BTreeMap<String, Vec<u8>>, GoldenError> {
    let mut tree = BTreeMap::new();
    let walker = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() != 1 || !IGNORED.iter().any(|i| e.file_name() == *i));
    for entry in walker {
        let entry = entry.map_err(|e| GoldenError::Io {
            path: root.to_path_buf(),
            source: e.into(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .expect("walkdir stays under its root")
            .to_string_lossy()
            .replace('\\', "/");
        let bytes = std::fs::read(path).map_err(|source| GoldenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        tree.insert(rel, bytes);
    }
    Ok(tree)
}

/// The first difference between two trees, as a sentence, or `None` when they are equal.
#[must_use]
pub fn first_difference(
    expected: &BTreeMap<String, Vec<u8>>,
    actual: &BTreeMap<String, Vec<u8>>,
) -> Option<String> {
    for (path, bytes) in expected {
        match actual.get(path) {
            None => return Some(format!("{path} is generated but not committed")),
            Some(b) if b != bytes => {
                let line = first_line_difference(bytes, b);
                return Some(format!(
                    "{path} differs from what the plugins generate{line}"
                ));
            }
            Some(_) => {}
        }
    }
    actual
        .keys()
        .find(|p| !expected.contains_key(*p))
        .map(|p| format!("{p} is committed but no longer generated"))
}

fn first_line_difference(expected: &[u8], actual: &[u8]) -> String {
    let (e, a) = (
        String::from_utf8_lossy(expected),
        String::from_utf8_lossy(actual),
    );
    let mut expected_lines = e.lines();
    let mut actual_lines = a.lines();
    let mut n = 0;
    loop {
        n += 1;
        match (expected_lines.next(), actual_lines.next()) {
            (Some(x), Some(y)) if x == y => {}
            (None, None) => return String::new(),
            (x, y) => {
                return format!(
                    " at line {n}:\n  generated: {}\n  committed: {}",
                    x.unwrap_or("<end of file>"),
                    y.unwrap_or("<end of file>")
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_file_and_line() {
        let a: BTreeMap<String, Vec<u8>> = [("a".to_owned(), b"x\ny\n".to_vec())].into();
        let mut b = a.clone();
        assert_eq!(first_difference(&a, &b), None);
        b.insert("a".into(), b"x\nz\n".to_vec());
        assert_eq!(
            first_difference(&a, &b).unwrap(),
            "a differs from what the plugins generate at line 2:\n  generated: y\n  committed: z"
        );
        b.insert("a".into(), a["a"].clone());
        b.insert("extra".into(), vec![]);
        assert_eq!(
            first_difference(&a, &b).unwrap(),
            "extra is committed but no longer generated"
        );
        assert_eq!(
            first_difference(&b, &a).unwrap(),
            "extra is generated but not committed"
        );
    }

    #[test]
    fn golden_names_are_unique_directories() {
        let mut names: Vec<&str> = GOLDEN.iter().map(|g| g.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), GOLDEN.len());
        let mut dirs: Vec<String> = GOLDEN.iter().map(Golden::relative_dir).collect();
        dirs.sort_unstable();
        dirs.dedup();
        assert_eq!(dirs.len(), GOLDEN.len());
        assert_eq!(golden_dir("vpc"), repo_root().join("services/vpc"));
        assert_eq!(
            golden_dir("multi-api"),
            repo_root().join("tests/golden/multi-api")
        );
    }
}
