//! The whole `main` of an operator binary: [`run`] parses kubebuilder's flags, answers the `crd`
//! subcommand, sets up logging, connects to the cluster and runs a [`Manager`] with the
//! controllers the binary registers.
//!
//! A generated operator's `main` is then only what is specific to it — its CRDs and its
//! controllers:
//!
//! ```no_run
//! # use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
//! # fn crds() -> Vec<CustomResourceDefinition> { Vec::new() }
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     mni_operator::run(mni_operator::command!(), crds(), |manager| {
//!         // let manager = manager.with_controller(MyReconciler);
//!         manager
//!     })
//!     .await?;
//!     Ok(())
//! }
//! ```

use std::ffi::OsString;

use clap::{Args, FromArgMatches, Subcommand};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::{
    ArgsError, Manager, ManagerBuilder, OperatorArgs, OperatorCommand, telemetry, write_crds,
};

/// Errors of [`run`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The CRDs could not be written (`crd` subcommand).
    #[error(transparent)]
    Crds(#[from] ArgsError),
    /// No kubeconfig or in-cluster configuration could be loaded.
    #[error("connect to the cluster: {0}")]
    Client(#[source] kube::Error),
    /// The manager failed.
    #[error(transparent)]
    Manager(#[from] crate::Error),
}

/// The `clap` command named after the calling crate: its package name, version and description,
/// for `--help` and `--version`. Pass it to [`run`].
#[macro_export]
macro_rules! command {
    () => {
        $crate::about_command(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_DESCRIPTION"),
        )
    };
}

/// The command [`command!`] builds; an empty `description` gives no `about` line.
#[doc(hidden)]
pub fn about_command(
    name: &'static str,
    version: &'static str,
    description: &'static str,
) -> clap::Command {
    let command = clap::Command::new(name).version(version);
    if description.is_empty() {
        command
    } else {
        command.about(description)
    }
}

/// What an operator's command line asked for.
#[derive(Clone, Debug)]
pub struct OperatorCli {
    /// The flags.
    pub args: OperatorArgs,
    /// The subcommand, if any (none: run the operator).
    pub command: Option<OperatorCommand>,
}

impl OperatorCli {
    /// Parses `args` (the first one the program name) with `command` extended by
    /// [`OperatorArgs`] and [`OperatorCommand`].
    pub fn try_parse_from<I, T>(command: clap::Command, args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let mut command = OperatorCommand::augment_subcommands(OperatorArgs::augment_args(command));
        let matches = command.try_get_matches_from_mut(args)?;
        let args = OperatorArgs::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
        let subcommand = match matches.subcommand_name() {
            Some(_) => Some(
                OperatorCommand::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?,
            ),
            None => None,
        };
        Ok(Self {
            args,
            command: subcommand,
        })
    }
}

/// Runs an operator binary: parses the process's command line with `command` (build it with
/// [`command!`]); for `crd`, prints `crds` as YAML and returns; otherwise sets up logging
/// ([`telemetry::init`]), connects with the current kubeconfig or in-cluster configuration and
/// runs a [`Manager`] configured by the flags, with the controllers `register` adds.
///
/// A malformed command line, `--help` and `--version` exit the process as `clap` does.
pub async fn run(
    command: clap::Command,
    crds: Vec<CustomResourceDefinition>,
    register: impl FnOnce(ManagerBuilder) -> ManagerBuilder,
) -> Result<(), RunError> {
    let cli =
        OperatorCli::try_parse_from(command, std::env::args_os()).unwrap_or_else(|e| e.exit());
    if let Some(OperatorCommand::Crd) = cli.command {
        write_crds(&crds, std::io::stdout().lock())?;
        return Ok(());
    }
    telemetry::init(cli.args.log_format);
    let client = kube::Client::try_default()
        .await
        .map_err(RunError::Client)?;
    let manager = register(Manager::builder(client).with_args(&cli.args));
    manager.build().run().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<OperatorCli, clap::Error> {
        OperatorCli::try_parse_from(crate::command!(), args)
    }

    #[test]
    fn the_command_line_has_the_flags_and_the_crd_subcommand() {
        let cli = parse(&["op", "--leader-elect", "--metrics-bind-address", "0"]).unwrap();
        assert!(cli.args.leader_elect);
        assert_eq!(cli.args.metrics_bind_address.socket_addr(), None);
        assert!(cli.command.is_none());

        let cli = parse(&["op", "crd"]).unwrap();
        assert!(matches!(cli.command, Some(OperatorCommand::Crd)));

        assert!(parse(&["op", "--no-such-flag"]).is_err());
    }

    #[test]
    fn the_command_is_named_after_the_crate() {
        let command = crate::command!();
        assert_eq!(command.get_name(), "mni-operator");
        assert_eq!(command.get_version(), Some(env!("CARGO_PKG_VERSION")));
        assert!(command.get_about().is_some());
        assert!(about_command("x", "1", "").get_about().is_none());
    }
}
