//! `mni-scaffold`: the Kubebuilder-style CLI that scaffolds mNi projects with plugins.
//!
//! Start with [`run`], which acts on a parsed [`Cli`]: the scaffolding subcommands go through
//! [`scaffold`](scaffold()) (read PROJECT → resolve the plugin chain → load the Universe → run
//! the plugins → validate → commit atomically, PROJECT included), `plugins list|describe` through
//! the [`Registry`] and `completion` through `clap_complete`. Built-in plugins are listed in one
//! place, the [`builtin`] module; external plugins are executables found under
//! `$MNI_PLUGINS_PATH` and spoken to as the [`external`] module describes (Kubebuilder's
//! external-plugin protocol `v1alpha1`, plus mNi's `new service`, in a sandbox).
//!
//! Exit codes, as [`Error::exit_code`] computes them: 0 on success, 2 on bad input (invalid
//! names, unknown plugin key, missing or foreign PROJECT, conflicting resource, malformed flags,
//! a plugin answering `error: true`), 1 on any other failure. Nothing is written on failure.
//!
//! **Architecture invariant:** the CLI touches the project only through `mni-machinery`
//! (`load_universe`, `validate`, `plan`, atomic commit); it never writes a file itself.

pub mod builtin;
pub mod cli;
pub mod external;
mod registry;
mod scaffold;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::CommandFactory;

pub use cli::Cli;
pub use registry::{PluginRef, Registry, RegistryError};
pub use scaffold::{Request, ScaffoldError, scaffold};

use cli::{Command, CreateCommand, NewCommand, PluginsCommand};
use external::{Limits, MAX_RESPONSE, Runner};

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A scaffolding subcommand failed.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// `plugins describe` failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// Printing failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The process exit code: 2 for bad input, 1 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Scaffold(e) => e.exit_code(),
            Self::Registry(RegistryError::Resolve(_)) => 2,
            Self::Registry(RegistryError::External(e)) if e.is_invalid_input() => 2,
            _ => 1,
        }
    }
}

/// What the CLI takes from its environment.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// Where external plugins live; `None` when no directory can be determined.
    pub plugins_dir: Option<PathBuf>,
    /// The variables external plugins may inherit (only `PATH`, `HOME` and `LANG` are used).
    pub vars: Vec<(OsString, OsString)>,
}

impl Environment {
    /// Reads the process environment.
    #[must_use]
    pub fn from_process() -> Self {
        Self::from_vars(std::env::vars_os())
    }

    /// Reads `MNI_PLUGINS_PATH`, else `${XDG_CONFIG_HOME:-$HOME/.config}/mni/plugins`.
    #[must_use]
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
        let get = |name: &str| {
            vars.iter()
                .find(|(k, v)| k == name && !v.is_empty())
                .map(|(_, v)| PathBuf::from(v))
        };
        let plugins_dir = get("MNI_PLUGINS_PATH").or_else(|| {
            get("XDG_CONFIG_HOME")
                .or_else(|| get("HOME").map(|h| h.join(".config")))
                .map(|c| c.join("mni").join("plugins"))
        });
        Self { plugins_dir, vars }
    }
}

/// Runs a parsed command line, printing to `out` (warnings go to `err`).
pub fn run(
    cli: Cli,
    env: &Environment,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let registry = Registry::discover(env.plugins_dir.as_deref());
    let runner = Runner::new(
        env.vars.iter().cloned(),
        Limits {
            timeout: Duration::from_secs(cli.global.plugin_timeout),
            max_output: MAX_RESPONSE,
        },
    );
    let request = match cli.command {
        Command::Init(args) => Request::Init(args),
        Command::New(NewCommand::Service(args)) => Request::NewService(args),
        Command::Create(CreateCommand::Api(args)) => Request::CreateApi(args),
        Command::Edit => Request::Edit,
        Command::Plugins(PluginsCommand::List) => {
            for warning in registry.warnings() {
                writeln!(err, "warning: {warning}")?;
            }
            out.write_all(registry.list().as_bytes())?;
            return Ok(());
        }
        Command::Plugins(PluginsCommand::Describe { key }) => {
            let cwd = cli.global.dir.as_deref().unwrap_or(Path::new("."));
            let cwd = if cwd.is_dir() { cwd } else { Path::new(".") };
            out.write_all(registry.describe(&key, &runner, cwd)?.as_bytes())?;
            return Ok(());
        }
        Command::Completion { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "mni-scaffold", out);
            return Ok(());
        }
    };
    scaffold(&registry, &runner, &cli.global, &request, out)?;
    Ok(())
}
