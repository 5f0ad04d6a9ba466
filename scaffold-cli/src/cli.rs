//! The command line, as `clap` derive structs.
//!
//! Start with [`Cli`]: the global flags ([`GlobalArgs`]) and one [`Command`] per subcommand. The
//! structs only describe the surface; [`crate::run`] acts on them. [`GlobalArgs`] and the
//! subcommand argument structs can be flattened into other binaries. Scaffolding flags are turned
//! into plugin flags by [`InitArgs::to_flags`], [`CreateApiArgs::to_flags`],
//! [`CreateWebhookArgs::to_flags`] and friends, in
//! `--name=value` form, which Kubebuilder's pflag-based external plugins, `mni-plugin`'s
//! `FlagValues::parse_args` and Python's `argparse` all read.
//!
//! These fixed flags are the ones every chain understands. Flags that only some plugins declare
//! are added to the command at parse time ([`crate::parse`]) and carried in
//! [`Cli::plugin_flags`]; the [`PluginFlags`] docs explain how.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};
use mni_plugin::{FlagValue, FlagValues};

mod plugin_flags;

pub use plugin_flags::{PluginFlags, PluginFlagsError, Scan, scan};

/// The default of `--plugin-timeout`, in seconds.
pub const DEFAULT_PLUGIN_TIMEOUT: u64 = 60;

/// `mni-scaffold`: scaffold mNi service operators with a chain of plugins.
#[derive(Debug, Clone, Parser)]
#[command(name = "mni-scaffold", version, about, long_about = None)]
pub struct Cli {
    /// Flags every subcommand accepts.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// The flags the chain's plugins declare for the subcommand, with the values given; empty
    /// when the command line was parsed without the chain (e.g. by `Cli::parse`).
    #[arg(skip)]
    pub plugin_flags: PluginFlags,
}

/// Flags every subcommand accepts.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// The plugin chain, comma-separated keys or short names (overrides the PROJECT layout).
    #[arg(long, global = true, value_name = "KEY[,KEY…]")]
    pub plugins: Option<String>,
    /// Print the plan and a unified diff; write nothing.
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Overwrite files that already exist (files the user owns are still skipped).
    #[arg(long, global = true)]
    pub force: bool,
    /// Run as if started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Seconds an external plugin may run before it is killed.
    #[arg(long, global = true, value_name = "SECS", default_value_t = DEFAULT_PLUGIN_TIMEOUT)]
    pub plugin_timeout: u64,
}

/// The subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Create a project: PROJECT and the files of each plugin in the chain.
    Init(InitArgs),
    /// Add something new to the project.
    #[command(subcommand)]
    New(NewCommand),
    /// Add an API or webhooks to the project.
    #[command(subcommand)]
    Create(CreateCommand),
    /// Change project-wide settings.
    Edit,
    /// Remove what a `create` or `new` added, as it was generated (see `.mni-scaffold.yaml`).
    #[command(subcommand)]
    Delete(DeleteCommand),
    /// Bring the project to this mni-scaffold and the newest installed plugin versions: a
    /// three-way merge of the old and the new generated files into your tree.
    Upgrade(UpgradeArgs),
    /// List, describe, scaffold and install plugins.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// Ship the project through OLM: bundles, file-based catalogs and their validation.
    #[command(subcommand)]
    Olm(OlmCommand),
    /// Print a shell completion script.
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `olm …`: a command group calling `mni-plugin-olm` directly rather than a plugin subcommand —
/// a bundle is a versioned release artifact generated *from* the scaffolded tree with its own
/// merge base (`bundle/.mni-generated/`), not a scaffolding step of the plugin chain (see the
/// `mni-plugin-olm` crate docs).
#[derive(Debug, Clone, Subcommand)]
pub enum OlmCommand {
    /// Write (or regenerate, keeping your edits) the OLM bundle of the project.
    Bundle(OlmBundleArgs),
    /// Build a file-based catalog from bundle directories.
    Catalog(OlmCatalogArgs),
    /// Check a file-based catalog as `opm validate` does, plus mNi's own checks.
    Validate(OlmValidateArgs),
}

/// `olm bundle` flags.
#[derive(Debug, Clone, Args)]
pub struct OlmBundleArgs {
    /// The bundle's semantic version (the CSV is named `<package>.v<version>`).
    #[arg(long, value_name = "SEMVER")]
    pub version: String,
    /// The CSV this version replaces (default: the CSV already in the bundle directory, if its
    /// version differs).
    #[arg(long, value_name = "CSV")]
    pub replaces: Option<String>,
    /// The versions this one may upgrade from directly (`olm.skipRange`), e.g. ">=0.1.0 <0.2.0".
    #[arg(long, value_name = "RANGE")]
    pub skip_range: Option<String>,
    /// The channels, comma-separated (default: alpha).
    #[arg(long, value_delimiter = ',', value_name = "CHANNEL[,CHANNEL…]")]
    pub channels: Vec<String>,
    /// The default channel (default: the first of --channels).
    #[arg(long, value_name = "CHANNEL")]
    pub default_channel: Option<String>,
    /// The package name (default: the project name).
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// A package this one needs, as PACKAGE=RANGE (`olm.package` dependency); repeatable.
    #[arg(long, value_name = "PACKAGE=RANGE")]
    pub depends_on: Vec<String>,
    /// The operator image of the CSV's Deployment (default: as in config/manager).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// The bundle directory, relative to the project.
    #[arg(long, short = 'o', default_value = "bundle", value_name = "DIR")]
    pub output: PathBuf,
}

/// `olm catalog` flags.
#[derive(Debug, Clone, Args)]
pub struct OlmCatalogArgs {
    /// Bundle directories (each with manifests/ and metadata/).
    #[arg(required = true, value_name = "BUNDLE_DIR")]
    pub bundles: Vec<PathBuf>,
    /// The catalog directory to write (replaced as a whole).
    #[arg(long, short = 'o', default_value = "catalog", value_name = "DIR")]
    pub output: PathBuf,
    /// The registry bundle images are named in: `<registry>/<package>-bundle:v<version>`.
    #[arg(long, default_value = mni_plugin_olm::DEFAULT_REGISTRY, value_name = "REGISTRY")]
    pub registry: String,
    /// Check the catalog only as `opm validate` does (leave out mNi's `[mni]` checks, e.g. to
    /// catalog a bundle whose `replaces` names a bundle not given).
    #[arg(long)]
    pub opm_rules_only: bool,
}

/// `olm validate` flags.
#[derive(Debug, Clone, Args)]
pub struct OlmValidateArgs {
    /// The catalog directory.
    #[arg(value_name = "DIR")]
    pub catalog: PathBuf,
    /// Check only what `opm validate` checks (leave out mNi's `[mni]` checks).
    #[arg(long)]
    pub opm_rules_only: bool,
}

/// `new …`.
#[derive(Debug, Clone, Subcommand)]
pub enum NewCommand {
    /// Scaffold a service operator (creates the project first when there is none).
    Service(NewServiceArgs),
}

/// `create …`.
#[derive(Debug, Clone, Subcommand)]
pub enum CreateCommand {
    /// Scaffold a resource kind and, optionally, its controller.
    Api(CreateApiArgs),
    /// Scaffold defaulting, validating or conversion webhooks for a kind of the project.
    Webhook(CreateWebhookArgs),
}

/// `delete …`.
#[derive(Debug, Clone, Subcommand)]
pub enum DeleteCommand {
    /// Remove an API that `create api` added (its files, marker insertions and PROJECT entry).
    Api(DeleteApiArgs),
    /// Remove a service that `new service` added.
    Service(DeleteServiceArgs),
    /// Remove the webhooks that `create webhook` added for a kind.
    Webhook(DeleteApiArgs),
}

/// `delete api` flags.
#[derive(Debug, Clone, Args)]
pub struct DeleteApiArgs {
    /// The API group without the domain, as given to `create api`.
    #[arg(long, value_name = "G")]
    pub group: String,
    /// The API version.
    #[arg(long, value_name = "V")]
    pub version: String,
    /// The kind.
    #[arg(long, value_name = "K")]
    pub kind: String,
}

/// `delete service` arguments.
#[derive(Debug, Clone, Args)]
pub struct DeleteServiceArgs {
    /// The service name, as given to `new service`.
    #[arg(value_name = "NAME")]
    pub name: String,
}

/// `upgrade` flags.
#[derive(Debug, Clone, Args)]
pub struct UpgradeArgs {
    /// The mni-scaffold binary that scaffolded the project (default: this one, with the plugin
    /// versions the project records): it replays the project's commands to get the old files.
    #[arg(long, value_name = "PATH")]
    pub from_binary: Option<PathBuf>,
}

/// `plugins …`.
#[derive(Debug, Clone, Subcommand)]
pub enum PluginsCommand {
    /// List built-in and external plugins.
    List,
    /// Show a plugin's description, subcommands and flags.
    Describe {
        /// The plugin key or a short name, e.g. `base` or `base.mni.dev/v1`.
        key: String,
    },
    /// Scaffold a plugin project on mni-plugin-sdk in ./NAME (or -C DIR/NAME).
    New(PluginNewArgs),
    /// List a catalog's plugins (whose name or description contains TERM).
    Search {
        /// Only plugins whose name or description contains this.
        term: Option<String>,
        /// The catalog.
        #[command(flatten)]
        catalog: CatalogArg,
    },
    /// Install a plugin from a catalog, checking its SHA-256 before anything is written
    /// (--force replaces an installed copy).
    Install {
        /// `NAME` (the newest compatible version) or `NAME/VERSION`; a short name will do.
        #[arg(value_name = "NAME[/VERSION]")]
        key: String,
        /// The catalog.
        #[command(flatten)]
        catalog: CatalogArg,
    },
    /// Remove an installed plugin version.
    Remove {
        /// `NAME/VERSION`, or `NAME` when one version is installed.
        #[arg(value_name = "NAME[/VERSION]")]
        key: String,
    },
    /// Re-hash the plugins installed from a catalog; exits 1 when any changed.
    Verify {
        /// Only this plugin.
        #[arg(value_name = "NAME[/VERSION]")]
        key: Option<String>,
    },
}

/// Where a catalog lives.
#[derive(Debug, Clone, Args)]
pub struct CatalogArg {
    /// The catalog: a directory holding index.json, the index file, or an http(s) URL of either
    /// (default: $MNI_CATALOG, else `catalog:` in the user config).
    #[arg(long = "catalog", value_name = "PATH|URL")]
    pub location: Option<String>,
}

/// `plugins new` arguments.
#[derive(Debug, Clone, Args)]
pub struct PluginNewArgs {
    /// The plugin's short name, a DNS-1123 label starting with a letter: the package, binary
    /// and directory name (e.g. `docs`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The domain of the plugin key, `NAME.DOMAIN/v1`.
    #[arg(long, value_name = "D", default_value = crate::plugin_new::DEFAULT_DOMAIN)]
    pub domain: String,
    /// The mNi checkout whose plugins/sdk the plugin depends on, absolute or relative to the new
    /// project (default: the checkout this mni-scaffold was built from).
    #[arg(long, value_name = "PATH")]
    pub mni_path: Option<String>,
}

/// `init` flags.
#[derive(Debug, Clone, Default, Args)]
pub struct InitArgs {
    /// The domain API groups live under (default: my.domain, or the PROJECT's).
    #[arg(long, value_name = "D")]
    pub domain: Option<String>,
    /// The project name (default: the directory name, or the PROJECT's).
    #[arg(long, value_name = "N")]
    pub project_name: Option<String>,
    /// The copyright owner.
    #[arg(long, value_name = "O")]
    pub owner: Option<String>,
    /// The license: apache2, mit or none.
    #[arg(long, value_name = "L")]
    pub license: Option<String>,
}

impl InitArgs {
    /// The plugin flags, given the effective domain and project name.
    #[must_use]
    pub fn to_flags(&self, domain: &str, project_name: &str) -> Vec<(String, FlagValue)> {
        let mut flags = vec![
            string("domain", domain),
            string("project-name", project_name),
        ];
        flags.extend(self.owner.as_deref().map(|o| string("owner", o)));
        flags.extend(self.license.as_deref().map(|l| string("license", l)));
        flags
    }
}

/// `new service` arguments.
#[derive(Debug, Clone, Args)]
pub struct NewServiceArgs {
    /// The service name, a DNS-1123 label starting with a letter (e.g. `billing`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Instantiate this local cargo-generate template directory as services/NAME instead of
    /// running the chain's `new service` (relative to -C DIR).
    #[arg(long, value_name = "DIR")]
    pub template: Option<PathBuf>,
    /// A value for a template placeholder (repeatable); placeholders without one take their
    /// default.
    #[arg(long, value_name = "KEY=VALUE", requires = "template")]
    pub define: Vec<String>,
    /// The domain, when there is no project yet and `new service` creates it (default:
    /// my.domain).
    #[arg(long, value_name = "D")]
    pub domain: Option<String>,
    /// The project name, when `new service` creates the project (default: the directory name).
    #[arg(long, value_name = "N")]
    pub project_name: Option<String>,
}

impl NewServiceArgs {
    /// The plugin flags.
    #[must_use]
    pub fn to_flags(&self) -> Vec<(String, FlagValue)> {
        vec![string("name", &self.name)]
    }
}

/// `create api` flags.
#[derive(Debug, Clone, Args)]
pub struct CreateApiArgs {
    /// The API group without the domain, a DNS-1123 subdomain (e.g. `compute`).
    #[arg(long, value_name = "G")]
    pub group: String,
    /// The API version (e.g. `v1`, `v1alpha1`).
    #[arg(long, value_name = "V")]
    pub version: String,
    /// The kind, PascalCase (e.g. `VirtualMachine`).
    #[arg(long, value_name = "K")]
    pub kind: String,
    /// Whether the kind is namespaced.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    pub namespaced: bool,
    /// Scaffold the API types.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value_t = true, default_missing_value = "true", action = ArgAction::Set)]
    pub resource: bool,
    /// Scaffold a controller.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value_t = true, default_missing_value = "true", action = ArgAction::Set)]
    pub controller: bool,
}

impl CreateApiArgs {
    /// The plugin flags.
    #[must_use]
    pub fn to_flags(&self) -> Vec<(String, FlagValue)> {
        vec![
            string("group", &self.group),
            string("version", &self.version),
            string("kind", &self.kind),
            ("namespaced".to_owned(), FlagValue::Bool(self.namespaced)),
            ("resource".to_owned(), FlagValue::Bool(self.resource)),
            ("controller".to_owned(), FlagValue::Bool(self.controller)),
        ]
    }
}

/// `create webhook` flags.
#[derive(Debug, Clone, Args)]
pub struct CreateWebhookArgs {
    /// The API group of the kind, without the domain, as given to `create api`.
    #[arg(long, value_name = "G")]
    pub group: String,
    /// The API version of the kind; with `--conversion`, the hub version.
    #[arg(long, value_name = "V")]
    pub version: String,
    /// The kind.
    #[arg(long, value_name = "K")]
    pub kind: String,
    /// Scaffold a defaulting (mutating) webhook: a `mni_webhook::Defaulter`.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub defaulting: bool,
    /// Scaffold a validating webhook: a `mni_webhook::Validator`.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub programmatic_validation: bool,
    /// Scaffold a conversion webhook: `--version` is the hub, `--spoke` the other versions.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value_t = false, default_missing_value = "true", action = ArgAction::Set)]
    pub conversion: bool,
    /// With `--conversion`: another version of the kind (repeatable, or comma-separated).
    #[arg(long, value_name = "V", value_delimiter = ',')]
    pub spoke: Vec<String>,
}

impl CreateWebhookArgs {
    /// The plugin flags.
    #[must_use]
    pub fn to_flags(&self) -> Vec<(String, FlagValue)> {
        let mut flags = vec![
            string("group", &self.group),
            string("version", &self.version),
            string("kind", &self.kind),
            ("defaulting".to_owned(), FlagValue::Bool(self.defaulting)),
            (
                "programmatic-validation".to_owned(),
                FlagValue::Bool(self.programmatic_validation),
            ),
            ("conversion".to_owned(), FlagValue::Bool(self.conversion)),
        ];
        if !self.spoke.is_empty() {
            flags.push(string("spoke", &self.spoke.join(",")));
        }
        flags
    }
}

fn string(name: &str, value: &str) -> (String, FlagValue) {
    (name.to_owned(), FlagValue::String(value.to_owned()))
}

/// The parsed values, for in-process plugins.
#[must_use]
pub fn flag_values(flags: &[(String, FlagValue)]) -> FlagValues {
    let mut values = FlagValues::new();
    for (name, value) in flags {
        values.set(name, value.clone());
    }
    values
}

/// The same flags as `--name=value` arguments, for external plugins.
#[must_use]
pub fn flag_args(flags: &[(String, FlagValue)]) -> Vec<String> {
    flags
        .iter()
        .map(|(name, value)| format!("--{name}={value}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_bool_forms() {
        let cli = Cli::try_parse_from([
            "mni-scaffold",
            "create",
            "api",
            "--group=compute",
            "--version",
            "v1",
            "--kind",
            "Vm",
            "--namespaced",
            "false",
            "--resource",
            "--controller=false",
        ])
        .unwrap();
        let Command::Create(CreateCommand::Api(api)) = cli.command else {
            panic!("not create api");
        };
        assert!(!api.namespaced && api.resource && !api.controller);
        assert_eq!(
            flag_args(&api.to_flags()),
            [
                "--group=compute",
                "--version=v1",
                "--kind=Vm",
                "--namespaced=false",
                "--resource=true",
                "--controller=false"
            ]
        );
        assert!(
            Cli::try_parse_from(["mni-scaffold", "create", "api", "--resource=maybe"]).is_err()
        );
    }

    #[test]
    fn create_webhook_flags_round_trip_through_the_history_form() {
        let cli = Cli::try_parse_from([
            "mni-scaffold",
            "create",
            "webhook",
            "--group=ships",
            "--version",
            "v1",
            "--kind",
            "Ship",
            "--defaulting",
            "--conversion=true",
            "--spoke",
            "v2,v3",
        ])
        .unwrap();
        let Command::Create(CreateCommand::Webhook(webhook)) = cli.command else {
            panic!("not create webhook");
        };
        let args = flag_args(&webhook.to_flags());
        assert_eq!(
            args,
            [
                "--group=ships",
                "--version=v1",
                "--kind=Ship",
                "--defaulting=true",
                "--programmatic-validation=false",
                "--conversion=true",
                "--spoke=v2,v3"
            ]
        );
        // What the history records parses again.
        let replay = [
            &["mni-scaffold", "create", "webhook"][..],
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat();
        assert!(Cli::try_parse_from(replay).is_ok());
    }
}
