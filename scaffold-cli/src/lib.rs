//! `mni-scaffold`: the Kubebuilder-style CLI that scaffolds mNi projects with plugins.
//!
//! Start with [`parse`], which reads the command line together with the flags the plugin chain
//! declares (see [`cli::PluginFlags`]), then [`run`], which acts on the parsed [`Cli`]: the
//! scaffolding subcommands go through
//! [`scaffold`](scaffold()) (read PROJECT → resolve the plugin chain → load the Universe → run
//! the plugins → validate → commit atomically, PROJECT included), `plugins list|describe` through
//! the [`Registry`], `delete` and `upgrade` through [`lifecycle`] (which replays the
//! [`history`]), `plugins new` through [`plugin_new`], `plugins search|install|remove|verify`
//! through the [`catalog`], `olm bundle|catalog|validate` through [`olm`] (calling
//! `mni-plugin-olm`) and `completion` through `clap_complete`. Built-in plugins are listed in one
//! place, the [`builtin`] module; external plugins are executables found under
//! `$MNI_PLUGINS_PATH` and spoken to as the [`external`] module describes (Kubebuilder's
//! external-plugin protocol `v1alpha1`, plus mNi's `new service`, in a sandbox).
//!
//! Exit codes, as [`Error::exit_code`] computes them: 0 on success, 2 on bad input (invalid
//! names, unknown plugin key, missing or foreign PROJECT, conflicting resource, malformed flags,
//! a plugin answering `error: true`, a flag no plugin of the chain declares), 1 on any other
//! failure; clap's own usage errors keep clap's code (2; 0 for `--help`). Nothing is written on
//! failure.
//!
//! **Architecture invariant:** the CLI touches the project only through `mni-machinery`
//! (`load_universe`, `validate`, `plan`, atomic commit); it never writes a file itself. The one
//! exception is `olm`, whose plugin writes only its own output directories (a bundle, a
//! catalog), staged and swapped in whole.

pub mod builtin;
pub mod catalog;
pub mod cli;
pub mod external;
pub mod history;
pub mod lifecycle;
pub mod olm;
pub mod plugin_new;
mod registry;
mod scaffold;
pub mod user_config;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, FromArgMatches};
use mni_plugin::{FlagSpec, PluginKey, subcommand};

pub use cli::Cli;
pub use registry::{PluginRef, Registry, RegistryError};
pub use scaffold::{Request, ScaffoldError, TEMPLATE_KEY, scaffold};

use cli::{Command, CreateCommand, NewCommand, PluginFlags, PluginFlagsError, PluginsCommand};
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
    /// The command line does not parse (or asks for `--help`); print it with
    /// [`clap::Error::print`].
    #[error("{0}")]
    Usage(#[source] clap::Error),
    /// A flag no plugin declares, or a plugin declaring a flag that cannot be offered.
    #[error(transparent)]
    PluginFlags(#[from] PluginFlagsError),
    /// `plugins new` failed.
    #[error(transparent)]
    PluginNew(#[from] plugin_new::PluginNewError),
    /// A catalog command failed.
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    /// The user config file is malformed.
    #[error(transparent)]
    UserConfig(#[from] user_config::UserConfigError),
    /// `delete` or `upgrade` failed.
    #[error(transparent)]
    Lifecycle(#[from] lifecycle::LifecycleError),
    /// `olm bundle`, `olm catalog` or `olm validate` failed.
    #[error(transparent)]
    Olm(#[from] mni_plugin_olm::BundleError),
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
            Self::Usage(e) => u8::try_from(e.exit_code()).unwrap_or(2),
            Self::PluginFlags(PluginFlagsError::Unknown { .. }) => 2,
            Self::PluginNew(e) => e.exit_code(),
            Self::Catalog(e) => e.exit_code(),
            Self::UserConfig(_) => 2,
            Self::Lifecycle(e) => e.exit_code(),
            Self::Olm(mni_plugin_olm::BundleError::Io { .. }) => 1,
            Self::Olm(_) => 2,
            _ => 1,
        }
    }
}

/// What the CLI takes from its environment.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// Where external plugins live; `None` when no directory can be determined.
    pub plugins_dir: Option<PathBuf>,
    /// The variables external plugins may inherit (`PATH`, `HOME` and `LANG`, plus those a
    /// plugin is allowed by its install record or the user config).
    pub vars: Vec<(OsString, OsString)>,
    /// The user config file ([`user_config`]); `None` when no directory can be determined.
    pub config_file: Option<PathBuf>,
    /// `$MNI_CATALOG`, the catalog when `--catalog` is not given.
    pub catalog: Option<String>,
    /// `$MNI_REPLACE_BUILTINS` (comma-separated plugin keys): the built-in plugins an installed
    /// plugin of the same key replaces, e.g. a reference plugin built and installed from a
    /// catalog, or a fork of one. Keys that do not parse are ignored.
    pub replace_builtins: Vec<PluginKey>,
}

impl Environment {
    /// Reads the process environment.
    #[must_use]
    pub fn from_process() -> Self {
        Self::from_vars(std::env::vars_os())
    }

    /// Reads `MNI_PLUGINS_PATH`, else `${XDG_CONFIG_HOME:-$HOME/.config}/mni/plugins`;
    /// `MNI_SCAFFOLD_CONFIG`, else `${XDG_CONFIG_HOME:-$HOME/.config}/mni/scaffold.yaml`;
    /// `MNI_CATALOG`; and `MNI_REPLACE_BUILTINS`.
    #[must_use]
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
        let get = |name: &str| {
            vars.iter()
                .find(|(k, v)| k == name && !v.is_empty())
                .map(|(_, v)| PathBuf::from(v))
        };
        let config_dir = get("XDG_CONFIG_HOME")
            .or_else(|| get("HOME").map(|h| h.join(".config")))
            .map(|c| c.join("mni"));
        let plugins_dir =
            get("MNI_PLUGINS_PATH").or_else(|| config_dir.as_ref().map(|c| c.join("plugins")));
        let config_file = get("MNI_SCAFFOLD_CONFIG")
            .or_else(|| config_dir.as_ref().map(|c| c.join("scaffold.yaml")));
        let catalog = get("MNI_CATALOG").map(|c| c.to_string_lossy().into_owned());
        let replace_builtins = get("MNI_REPLACE_BUILTINS")
            .map(|v| {
                v.to_string_lossy()
                    .split(',')
                    .filter_map(|k| k.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        Self {
            plugins_dir,
            vars,
            config_file,
            catalog,
            replace_builtins,
        }
    }
}

impl Environment {
    /// The user config ([`user_config`]); the default when there is no file.
    pub fn user_config(&self) -> Result<user_config::UserConfig, Error> {
        Ok(match &self.config_file {
            Some(path) => user_config::UserConfig::load(path)?,
            None => user_config::UserConfig::default(),
        })
    }
}

fn runner(env: &Environment, timeout_secs: u64) -> Result<Runner, Error> {
    Ok(Runner::new(
        env.vars.iter().cloned(),
        Limits {
            timeout: Duration::from_secs(timeout_secs),
            max_output: MAX_RESPONSE,
        },
    )
    .with_allowed(env.user_config()?.allowed_env()))
}

/// The catalog to use: `--catalog`, else `$MNI_CATALOG`, else the user config's.
fn open_catalog(arg: &cli::CatalogArg, env: &Environment) -> Result<catalog::Catalog, Error> {
    let location = match (&arg.location, &env.catalog) {
        (Some(l), _) | (None, Some(l)) => l.clone(),
        (None, None) => {
            env.user_config()?
                .catalog
                .ok_or_else(|| catalog::CatalogError::NoCatalog {
                    config: env
                        .config_file
                        .as_ref()
                        .map_or_else(|| "the user config".to_owned(), |p| p.display().to_string()),
                })?
        }
    };
    Ok(catalog::Catalog::open(&location)?)
}

fn plugins_dir(env: &Environment) -> Result<&Path, Error> {
    Ok(env
        .plugins_dir
        .as_deref()
        .ok_or(catalog::CatalogError::NoPluginsDir)?)
}

/// Parses a command line (program name first) with the fixed flags of [`Cli`] plus every flag
/// the plugins of the resolved chain declare for the subcommand, typed as declared and listed
/// by the subcommand's `--help`.
///
/// The chain is resolved as [`scaffold()`] will resolve it (`--plugins`, else the PROJECT
/// `layout` under `-C`, else the default); external plugins of the chain are asked for their
/// `flags`. A flag that neither [`Cli`] nor the chain declares is [`Error::PluginFlags`] (exit
/// code 2) naming it and listing the accepted ones; other clap errors, and `--help`, are
/// [`Error::Usage`]. If the chain cannot be resolved, `--help` still prints the fixed flags.
pub fn parse<I, T>(args: I, env: &Environment) -> Result<Cli, Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let scan = cli::scan(&args);
    let mut flags = PluginFlags::default();
    if let Some(sub) = scan.subcommand {
        match declared_flags(&scan, sub, env) {
            Ok(declared) => flags = PluginFlags::new(sub, declared),
            Err(_) if scan.help => {}
            Err(e) => return Err(e),
        }
    }
    let mut cmd = flags.augment(Cli::command())?;
    let matches = cmd.try_get_matches_from_mut(&args).map_err(|e| {
        if e.kind() == ErrorKind::UnknownArgument
            && let Some(ContextValue::String(flag)) = e.get(ContextKind::InvalidArg)
            && flag.starts_with('-')
            && let Some(unknown) = flags.unknown_flag(&cmd, flag)
        {
            return Error::PluginFlags(unknown);
        }
        Error::Usage(e)
    })?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(Error::Usage)?;
    flags.read(&matches);
    cli.plugin_flags = flags;
    Ok(cli)
}

/// What each plugin of the chain declares for `sub`.
fn declared_flags(
    scan: &cli::Scan,
    sub: mni_plugin::Subcommand,
    env: &Environment,
) -> Result<Vec<(PluginKey, Vec<FlagSpec>)>, Error> {
    let registry = Registry::discover(env.plugins_dir.as_deref(), &env.replace_builtins);
    let root = scaffold::project_root(scan.dir.as_deref())?;
    let (_, config) = scaffold::read_project(&root)?;
    let chain = scaffold::resolve_chain(&registry, &config, scan.plugins.as_deref())?;
    let runner = runner(
        env,
        scan.plugin_timeout.unwrap_or(cli::DEFAULT_PLUGIN_TIMEOUT),
    )?;
    let cwd = if root.is_dir() { &root } else { Path::new(".") };
    let mut declared = Vec::with_capacity(chain.len());
    for key in chain {
        let specs = match registry.get(&key) {
            Some(PluginRef::BuiltIn(p)) => {
                subcommand(p, sub).map(|s| s.flags()).unwrap_or_default()
            }
            Some(PluginRef::External(e)) => {
                e.flags(&runner, cwd, sub).map_err(ScaffoldError::from)?
            }
            None => Vec::new(),
        };
        declared.push((key, specs));
    }
    Ok(declared)
}

/// Runs a parsed command line, printing to `out` (warnings go to `err`).
pub fn run(
    cli: Cli,
    env: &Environment,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let registry = Registry::discover(env.plugins_dir.as_deref(), &env.replace_builtins);
    let runner = runner(env, cli.global.plugin_timeout)?;
    let request = match cli.command {
        Command::Init(args) => Request::Init(args),
        Command::New(NewCommand::Service(args)) => Request::NewService(args),
        Command::Create(CreateCommand::Api(args)) => Request::CreateApi(args),
        Command::Create(CreateCommand::Webhook(args)) => Request::CreateWebhook(args),
        Command::Edit => Request::Edit,
        Command::Delete(what) => {
            lifecycle::delete(&what, &cli.global, env, out)?;
            return Ok(());
        }
        Command::Upgrade(args) => {
            lifecycle::upgrade(&args, &cli.global, env, &registry, out)?;
            return Ok(());
        }
        Command::Plugins(PluginsCommand::List) => {
            for warning in registry.warnings() {
                writeln!(err, "warning: {warning}")?;
            }
            out.write_all(registry.list().as_bytes())?;
            let installed = catalog::installed_table(registry.externals());
            if !installed.is_empty() {
                writeln!(out, "\nInstalled from a catalog:")?;
                out.write_all(installed.as_bytes())?;
            }
            return Ok(());
        }
        Command::Plugins(PluginsCommand::Search { term, catalog }) => {
            let catalog = open_catalog(&catalog, env)?;
            out.write_all(catalog.search(term.as_deref()).as_bytes())?;
            return Ok(());
        }
        Command::Plugins(PluginsCommand::Install { key, catalog }) => {
            let catalog = open_catalog(&catalog, env)?;
            let dir = plugins_dir(env)?;
            let record = catalog.install(&key, dir, cli.global.force)?;
            writeln!(
                out,
                "installed {} from {}\n  sha256 {}\n  source {}",
                record.key, record.url, record.sha256, record.source
            )?;
            if !record.env.is_empty() {
                writeln!(out, "  env    {}", record.env.join(", "))?;
            }
            return Ok(());
        }
        Command::Plugins(PluginsCommand::Remove { key }) => {
            let removed = catalog::remove(plugins_dir(env)?, &key)?;
            writeln!(out, "removed {removed}")?;
            return Ok(());
        }
        Command::Plugins(PluginsCommand::Verify { key }) => {
            let dir = plugins_dir(env)?;
            let (text, result) = catalog::verify(dir, key.as_deref());
            out.write_all(text.as_bytes())?;
            result?;
            return Ok(());
        }
        Command::Plugins(PluginsCommand::Describe { key }) => {
            let cwd = cli.global.dir.as_deref().unwrap_or(Path::new("."));
            let cwd = if cwd.is_dir() { cwd } else { Path::new(".") };
            out.write_all(registry.describe(&key, &runner, cwd)?.as_bytes())?;
            return Ok(());
        }
        Command::Plugins(PluginsCommand::New(args)) => {
            let mut request = plugin_new::PluginNew::new(&args.name)
                .with_domain(&args.domain)
                .with_dry_run(cli.global.dry_run);
            if let Some(path) = &args.mni_path {
                request = request.with_mni_path(path);
            }
            let dir = cli.global.dir.as_deref().unwrap_or(Path::new("."));
            plugin_new::new_plugin(&request, dir, out)?;
            return Ok(());
        }
        Command::Olm(command) => {
            olm::run(&command, &cli.global, out)?;
            return Ok(());
        }
        Command::Completion { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "mni-scaffold", out);
            return Ok(());
        }
    };
    scaffold(
        &registry,
        &runner,
        &cli.global,
        &cli.plugin_flags,
        &request,
        out,
    )?;
    Ok(())
}
