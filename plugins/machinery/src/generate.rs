//! Community templates: a local cargo-generate template directory, instantiated into files.
//!
//! Start with [`Generate`]: the template directory, the project name and the `--define`d
//! values. [`Generate::run`] expands the template with the `cargo-generate` library (built
//! without its `git` feature: no network, no git, no hooks allowed to run commands) into a
//! temporary directory, non-interactively — a placeholder takes its `--define`d value, else its
//! default, else the run fails naming it — and returns the [`Generated`] files, `path →
//! contents`. [`Generated::write_into`] puts them into a Universe under a prefix (e.g.
//! `services/billing`), where they are validated and committed atomically like every other
//! scaffold, so `--dry-run` works and nothing is half-written.
//!
//! Two things cargo-generate takes from the process, and this module cannot pass it as
//! arguments: a user name for its `authors` value (`$CARGO_NAME`, `$GIT_AUTHOR_NAME`,
//! `$GIT_COMMITTER_NAME`, `$USER`, `$USERNAME` or `$NAME`; [`Generate::run`] fails with
//! [`GenerateError::NoUser`] up front when none is set) and values from `CARGO_GENERATE_VALUE_*`
//! variables (which `--define` overrides). cargo-generate also reports progress on stderr:
//! while it runs, the process's stdout and stderr point at a temporary file (restored
//! afterwards, even on panic), whose text is quoted only when generation fails. Callers must not
//! print from other threads meanwhile.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Seek, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use cargo_generate::{GenerateArgs, TemplatePath, Vcs};
use mni_plugin::{IfExists, Universe, UniverseError, WriteOutcome};

/// The variables cargo-generate reads a user name from, for its `authors` value.
const USER_VARS: [&str; 6] = [
    "CARGO_NAME",
    "GIT_AUTHOR_NAME",
    "GIT_COMMITTER_NAME",
    "USER",
    "USERNAME",
    "NAME",
];

/// Why a template could not be instantiated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The template path is not a readable directory.
    #[error("--template {}: {reason}", .template.display())]
    Template {
        /// The template directory as given.
        template: PathBuf,
        /// What is wrong, e.g. `not a directory`.
        reason: String,
    },
    /// A `--define` is not `KEY=VALUE`.
    #[error("--define {0:?}: expected KEY=VALUE, e.g. --define description=\"My service\"")]
    Define(String),
    /// A placeholder has neither a `--define`d value nor a default.
    #[error(
        "--template {}: placeholder `{name}` has no default; pass --define {name}=VALUE",
        .template.display()
    )]
    MissingPlaceholder {
        /// The template directory.
        template: PathBuf,
        /// The placeholder.
        name: String,
    },
    /// A `--define`d value does not fit its placeholder (its `regex` or `choices`).
    #[error(
        "--define {name}={value}: not a valid value for placeholder `{name}` of --template {}",
        .template.display()
    )]
    InvalidPlaceholder {
        /// The template directory.
        template: PathBuf,
        /// The placeholder.
        name: String,
        /// The value given.
        value: String,
    },
    /// No environment variable gives cargo-generate a user name.
    #[error(
        "cargo-generate needs a user name for the template's `authors` value: set $USER or $CARGO_NAME"
    )]
    NoUser,
    /// cargo-generate failed (a template that does not render, a hook that fails, …).
    #[error(
        "--template {}: cargo-generate failed: {message}{}",
        .template.display(),
        quote(.output)
    )]
    Failed {
        /// The template directory.
        template: PathBuf,
        /// cargo-generate's error, with its causes.
        message: String,
        /// What it printed meanwhile.
        output: String,
    },
    /// A generated file is not UTF-8 text (the Universe holds text only).
    #[error(
        "--template {}: generated file {path} is not UTF-8 text; mni-scaffold scaffolds text files only",
        .template.display()
    )]
    Binary {
        /// The template directory.
        template: PathBuf,
        /// The file, relative to the output.
        path: String,
    },
    /// The template produced nothing.
    #[error("--template {}: the template produced no files", .template.display())]
    Empty {
        /// The template directory.
        template: PathBuf,
    },
    /// A temporary file or directory could not be made or read.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A generated file could not be written into the Universe (e.g. it exists, without
    /// `--force`).
    #[error(transparent)]
    Universe(#[from] UniverseError),
}

impl GenerateError {
    /// Whether the user's input is at fault (the CLI exits with 2): a bad `--template` or
    /// `--define`, a missing placeholder, a template producing nothing or binary files, or a
    /// file that exists without `--force`.
    #[must_use]
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Self::Template { .. }
                | Self::Define(_)
                | Self::MissingPlaceholder { .. }
                | Self::InvalidPlaceholder { .. }
                | Self::Binary { .. }
                | Self::Empty { .. }
                | Self::Universe(UniverseError::AlreadyExists { .. })
        )
    }
}

fn quote(output: &str) -> String {
    let lines: Vec<String> = output
        .lines()
        .map(plain)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("; cargo-generate said: {}", lines.join(" | "))
    }
}

/// cargo-generate's text without its emoji decorations and runs of spaces.
fn plain(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii() || c.is_alphanumeric() || c.is_whitespace())
        .filter(|c| !matches!(c, '\u{fe0f}' | '\u{200d}'))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// An instantiation of a local cargo-generate template (the `mni_machinery` crate docs say where
/// it fits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generate {
    template: PathBuf,
    name: String,
    defines: BTreeMap<String, String>,
}

impl Generate {
    /// Instantiates the template directory `template` as project `name` (cargo-generate's
    /// `project-name`; `crate_name` is its snake case).
    #[must_use]
    pub fn new(template: impl Into<PathBuf>, name: &str) -> Self {
        Self {
            template: template.into(),
            name: name.to_owned(),
            defines: BTreeMap::new(),
        }
    }

    /// Sets placeholder `key` to `value`.
    #[must_use]
    pub fn with_define(mut self, key: &str, value: &str) -> Self {
        self.defines.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Sets placeholders from `KEY=VALUE` texts (the `--define` flag).
    pub fn with_defines<S: AsRef<str>>(
        mut self,
        defines: impl IntoIterator<Item = S>,
    ) -> Result<Self, GenerateError> {
        for define in defines {
            let define = define.as_ref();
            match define.split_once('=') {
                Some((key, value)) if !key.trim().is_empty() => {
                    self.defines.insert(key.trim().to_owned(), value.to_owned());
                }
                _ => return Err(GenerateError::Define(define.to_owned())),
            }
        }
        Ok(self)
    }

    /// The template directory.
    #[must_use]
    pub fn template(&self) -> &Path {
        &self.template
    }

    /// The placeholder values given.
    #[must_use]
    pub fn defines(&self) -> &BTreeMap<String, String> {
        &self.defines
    }

    /// Checks the template directory without running anything.
    pub fn check(&self) -> Result<(), GenerateError> {
        let bad = |reason: &str| GenerateError::Template {
            template: self.template.clone(),
            reason: reason.to_owned(),
        };
        match fs::metadata(&self.template) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(bad("not a directory")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(bad("no such directory")),
            Err(e) => return Err(bad(&e.to_string())),
        }
        fs::read_dir(&self.template).map_err(|e| bad(&e.to_string()))?;
        Ok(())
    }

    /// Expands the template into a temporary directory and reads the files back. Writes
    /// nothing anywhere else.
    pub fn run(&self) -> Result<Generated, GenerateError> {
        self.check()?;
        if !USER_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
            return Err(GenerateError::NoUser);
        }
        let io_err = |path: &Path| {
            let path = path.to_owned();
            move |source| GenerateError::Io { path, source }
        };
        let tmp = tempfile::Builder::new()
            .prefix("mni-generate-")
            .tempdir()
            .map_err(io_err(&std::env::temp_dir()))?;
        let out_dir = tmp.path().join("out");
        fs::create_dir(&out_dir).map_err(io_err(&out_dir))?;
        // An empty application config, so the user's favorites and defaults do not apply.
        let config = tmp.path().join("cargo-generate.toml");
        fs::write(&config, "").map_err(io_err(&config))?;
        let mut log = tempfile::tempfile().map_err(io_err(&std::env::temp_dir()))?;

        let args = GenerateArgs {
            template_path: TemplatePath {
                path: Some(self.template.to_string_lossy().into_owned()),
                ..TemplatePath::default()
            },
            name: Some(self.name.clone()),
            silent: true,
            config: Some(config),
            vcs: Some(Vcs::None),
            define: self
                .defines
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            init: true,
            destination: Some(out_dir.clone()),
            no_workspace: true,
            no_fmt: true,
            ..GenerateArgs::default()
        };
        let result = {
            let _quiet = Redirect::to(&log).map_err(io_err(Path::new("<stderr>")))?;
            cargo_generate::generate(args)
        };
        if let Err(e) = result {
            let mut output = String::new();
            let _ = log.rewind();
            let _ = log.read_to_string(&mut output);
            let message = plain(&format!("{e:#}"));
            if let Some(name) = missing_placeholder(&message) {
                return Err(GenerateError::MissingPlaceholder {
                    template: self.template.clone(),
                    name,
                });
            }
            if let Some((name, value)) = invalid_placeholder(&message) {
                return Err(GenerateError::InvalidPlaceholder {
                    template: self.template.clone(),
                    name,
                    value,
                });
            }
            return Err(GenerateError::Failed {
                template: self.template.clone(),
                message,
                output,
            });
        }
        let files = read_tree(&self.template, &out_dir)?;
        if files.is_empty() {
            return Err(GenerateError::Empty {
                template: self.template.clone(),
            });
        }
        Ok(Generated { files })
    }
}

/// The placeholder named in cargo-generate's "missing default value … in silent mode" error.
fn missing_placeholder(message: &str) -> Option<String> {
    let rest = message.split("variable `").nth(1)?;
    let (name, tail) = rest.split_once('`')?;
    tail.contains("missing default value")
        .then(|| name.to_owned())
}

/// The placeholder and value of cargo-generate's `Sorry, "VALUE" is not a valid value for NAME`.
fn invalid_placeholder(message: &str) -> Option<(String, String)> {
    let rest = message.split("Sorry, \"").nth(1)?;
    let (value, tail) = rest.split_once("\" is not a valid value for ")?;
    let name = tail.split_whitespace().next()?;
    Some((name.to_owned(), value.to_owned()))
}

/// Every file below `dir`, relative, as text.
fn read_tree(template: &Path, dir: &Path) -> Result<BTreeMap<String, String>, GenerateError> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| GenerateError::Io {
            path: dir.to_owned(),
            source: e.into(),
        })?;
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        let binary = || GenerateError::Binary {
            template: template.to_owned(),
            path: rel.clone(),
        };
        if !entry.file_type().is_file() {
            // A symbolic link has no contents of its own to scaffold.
            return Err(binary());
        }
        let bytes = fs::read(entry.path()).map_err(|source| GenerateError::Io {
            path: entry.path().to_owned(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|_| binary())?;
        files.insert(rel, text);
    }
    Ok(files)
}

/// The files a template produced, `path → contents`, paths relative to the output directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Generated {
    /// The files.
    pub files: BTreeMap<String, String>,
}

impl Generated {
    /// Writes every file into `universe` under `prefix` (e.g. `services/billing`) with
    /// `if_exists`, returning each path with what the write did.
    pub fn write_into(
        &self,
        universe: &mut Universe,
        prefix: &str,
        if_exists: IfExists,
    ) -> Result<Vec<(String, WriteOutcome)>, GenerateError> {
        let mut outcomes = Vec::with_capacity(self.files.len());
        for (path, contents) in &self.files {
            let path = format!("{}/{path}", prefix.trim_end_matches('/'));
            let outcome = universe.write(&path, contents.clone(), if_exists)?;
            outcomes.push((path, outcome));
        }
        Ok(outcomes)
    }
}

/// Points the process's stdout and stderr at a file until dropped.
struct Redirect {
    stdout: OwnedFd,
    stderr: OwnedFd,
}

impl Redirect {
    fn to(file: &fs::File) -> io::Result<Self> {
        io::stdout().flush()?;
        io::stderr().flush()?;
        let stdout = rustix::io::dup(io::stdout())?;
        let stderr = rustix::io::dup(io::stderr())?;
        let redirect = Self { stdout, stderr };
        rustix::stdio::dup2_stdout(file)?;
        rustix::stdio::dup2_stderr(file)?;
        Ok(redirect)
    }
}

impl Drop for Redirect {
    fn drop(&mut self) {
        let _ = io::stdout().flush();
        let _ = io::stderr().flush();
        let _ = rustix::stdio::dup2_stdout(&self.stdout);
        let _ = rustix::stdio::dup2_stderr(&self.stderr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_and_template_checks() {
        let g = Generate::new("/nonexistent/tpl", "billing")
            .with_defines(["owner=ACME Inc.", "eq=a=b"])
            .unwrap();
        assert_eq!(g.defines()["owner"], "ACME Inc.");
        assert_eq!(g.defines()["eq"], "a=b");
        for bad in ["novalue", "=x"] {
            let err = Generate::new("t", "b").with_defines([bad]).unwrap_err();
            assert!(err.is_invalid_input());
            assert_eq!(
                err.to_string(),
                format!(
                    "--define {bad:?}: expected KEY=VALUE, e.g. --define description=\"My service\""
                )
            );
        }
        let err = g.run().unwrap_err();
        assert!(err.is_invalid_input());
        assert_eq!(
            err.to_string(),
            "--template /nonexistent/tpl: no such directory"
        );
        let file = tempfile::NamedTempFile::new().unwrap();
        let err = Generate::new(file.path(), "b").check().unwrap_err();
        assert!(err.to_string().ends_with(": not a directory"), "{err}");
    }

    #[test]
    fn recognises_placeholder_errors() {
        assert_eq!(
            missing_placeholder(
                "variable `owner` is missing default value in config file running in silent mode"
            )
            .as_deref(),
            Some("owner")
        );
        assert_eq!(missing_placeholder("variable `x` is fine"), None);
        assert_eq!(missing_placeholder("something else"), None);
        let message = plain("⚠️   Sorry, \"abc\" is not a valid value for port");
        assert_eq!(message, "Sorry, \"abc\" is not a valid value for port");
        assert_eq!(
            invalid_placeholder(&message),
            Some(("port".to_owned(), "abc".to_owned()))
        );
        assert_eq!(invalid_placeholder("Sorry, no"), None);
        assert_eq!(
            quote("🔸   owner: \"x\"\n\n⛔   boom  now\n"),
            "; cargo-generate said: owner: \"x\" | boom now"
        );
    }

    #[test]
    fn writes_under_a_prefix() {
        let generated = Generated {
            files: BTreeMap::from([
                ("Cargo.toml".to_owned(), "[package]\n".to_owned()),
                ("src/main.rs".to_owned(), "fn main() {}\n".to_owned()),
            ]),
        };
        let mut u = Universe::new();
        u.insert_existing("services/billing/Cargo.toml", "mine")
            .unwrap();
        let err = generated
            .write_into(&mut u, "services/billing/", IfExists::Error)
            .unwrap_err();
        assert!(err.is_invalid_input());
        assert_eq!(
            err.to_string(),
            "services/billing/Cargo.toml already exists; pass --force to overwrite it"
        );
        let mut u = Universe::new();
        let out = generated
            .write_into(&mut u, "services/billing", IfExists::Error)
            .unwrap();
        assert_eq!(
            out.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
            [
                "services/billing/Cargo.toml",
                "services/billing/src/main.rs"
            ]
        );
        assert_eq!(
            u.get("services/billing/src/main.rs"),
            Some("fn main() {}\n")
        );
    }

    #[test]
    fn redirect_captures_the_streams() {
        let mut log = tempfile::tempfile().unwrap();
        {
            let _quiet = Redirect::to(&log).unwrap();
            // Through the file descriptor, as cargo-generate's eprintln! does outside tests.
            let mut err = rustix::io::dup(io::stderr()).map(fs::File::from).unwrap();
            err.write_all(b"captured\n").unwrap();
        }
        let mut text = String::new();
        log.rewind().unwrap();
        log.read_to_string(&mut text).unwrap();
        assert_eq!(text, "captured\n");
    }
}
