//! The scaffolding flow shared by `init`, `new service`, `create api`, `create webhook` and
//! `edit`.
//!
//! Start with [`scaffold`]. It reads `PROJECT` (a malformed one is bad input naming line and
//! field), checks the user's input, resolves the plugin chain (`--plugins`, else the PROJECT
//! `layout`, else the built-in default), loads the project into a Universe, runs every plugin
//! of the chain that implements the subcommand (validation of all in-process plugins first,
//! then each plugin in order; external plugins as processes), records the result in the
//! config, renders `PROJECT` into the same Universe, validates, and commits atomically — or,
//! with `--dry-run`, prints the plan and a diff. Any error leaves the disk as it was: a
//! directory created for a new project is removed again.
//!
//! `new service` in a directory without `PROJECT` first runs `init` (with defaults) in the same
//! Universe, so the project and the service land in one commit.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use mni_machinery::{
    Action, CommitError, Generate, GenerateError, Generated, Insert, LoadError, MarkerError,
    PlanError, TemplateError, ValidationError,
};
use mni_plugin::names::{self, NameError};
use mni_plugin::{
    Context, FlagSpec, FlagValue, FlagValues, IfExists, PROJECT_FILE, PluginError, PluginKey,
    ProjectConfig, ProjectError, ResolveError, Resource, ResourceApi, Service, Subcommand,
    UniverseError, subcommand,
};
use serde::{Deserialize, Serialize};

use crate::cli::{
    self, CreateApiArgs, CreateWebhookArgs, GlobalArgs, InitArgs, NewServiceArgs, PluginFlags,
};
use crate::external::{ExternalError, Runner};
use crate::history::{self, HISTORY_FILE, History, HistoryError};
use crate::registry::{PluginRef, Registry};

/// Why a scaffold failed. [`ScaffoldError::exit_code`] is 2 for bad input, 1 otherwise; in
/// both cases nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScaffoldError {
    /// PROJECT does not parse or is of another version.
    #[error("{}: {source}", .dir.display())]
    Project {
        /// The project directory.
        dir: PathBuf,
        /// The parse error, naming line and field.
        #[source]
        source: ProjectError,
    },
    /// The subcommand needs a project and there is none.
    #[error("no {PROJECT_FILE} file in {}: run `mni-scaffold init` first (or pass -C DIR)", .0.display())]
    NoProject(PathBuf),
    /// An argument breaks a naming rule.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `create api` for a kind the project already has.
    #[error(
        "--kind: resource {0} already exists in {PROJECT_FILE}; choose another --group, --version or --kind"
    )]
    ResourceExists(String),
    /// The plugin chain could not be resolved.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// No plugin of the chain implements the subcommand.
    #[error(
        "no plugin in the chain ({chain}) supports `{subcommand}`; pass --plugins with one that does (see `mni-scaffold plugins list`)"
    )]
    Unsupported {
        /// The subcommand.
        subcommand: Subcommand,
        /// The chain, comma-separated.
        chain: String,
    },
    /// An in-process plugin failed or refused the input.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// An external plugin failed or refused the input.
    #[error(transparent)]
    External(#[from] ExternalError),
    /// The project could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The scaffolded files are invalid.
    #[error(transparent)]
    Validation(#[from] ValidationError),
    /// Planning or committing failed.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// `new service --template`: the template could not be instantiated.
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// `new service --template`: the workspace member could not be added.
    #[error(transparent)]
    Member(#[from] MarkerError),
    /// The scaffolding history cannot be read.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// Reading PROJECT, creating the project directory or printing failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl ScaffoldError {
    /// 2 for bad input, 1 for everything else.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        let bad_input = match self {
            Self::Project { .. }
            | Self::History(HistoryError::Malformed { .. })
            | Self::NoProject(_)
            | Self::Name(_)
            | Self::ResourceExists(_)
            | Self::Resolve(_)
            | Self::Unsupported { .. } => true,
            Self::Plugin(e) => {
                e.is_invalid_input()
                    || matches!(
                        e,
                        PluginError::Project(
                            ProjectError::DuplicateResource(_) | ProjectError::DuplicateService(_)
                        )
                    )
                    || caused_by_existing_file(e)
            }
            Self::External(e) => e.is_invalid_input(),
            Self::Generate(e) => e.is_invalid_input(),
            Self::Commit(CommitError::Plan(PlanError::AlreadyExists { .. })) => true,
            _ => false,
        };
        if bad_input { 2 } else { 1 }
    }
}

/// The `plugin` of services made from a cargo-generate template, and the key under which PROJECT
/// records their templates.
pub const TEMPLATE_KEY: &str = "cargo-generate.mni.dev/v1";

/// What PROJECT keeps under `plugins.<TEMPLATE_KEY>`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TemplateServices {
    /// By service name.
    #[serde(default)]
    services: BTreeMap<String, TemplateSource>,
}

/// Where a service came from.
#[derive(Debug, Serialize, Deserialize)]
struct TemplateSource {
    /// The template directory: relative to the project if inside it, else absolute.
    template: String,
    /// The `--define`d placeholder values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    defines: BTreeMap<String, String>,
}

/// Whether a file that exists without `--force` is somewhere in `e`'s causes (a plugin may wrap
/// it in its own failure; it is still the user's input clashing with the project).
fn caused_by_existing_file(e: &PluginError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if matches!(
            c.downcast_ref::<UniverseError>(),
            Some(UniverseError::AlreadyExists { .. })
        ) || matches!(
            c.downcast_ref::<TemplateError>(),
            Some(TemplateError::Universe(UniverseError::AlreadyExists { .. }))
        ) || matches!(
            c.downcast_ref::<PlanError>(),
            Some(PlanError::AlreadyExists { .. })
        ) {
            return true;
        }
        cause = c.source();
    }
    false
}

/// A scaffolding subcommand with its arguments.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Request {
    /// `init`.
    Init(InitArgs),
    /// `new service NAME`.
    NewService(NewServiceArgs),
    /// `create api`.
    CreateApi(CreateApiArgs),
    /// `create webhook`.
    CreateWebhook(CreateWebhookArgs),
    /// `edit`.
    Edit,
}

/// One subcommand to run over the Universe, with its flags.
pub(crate) struct Step {
    pub(crate) sub: Subcommand,
    pub(crate) flags: Vec<(String, FlagValue)>,
}

/// The project directory: `-C DIR`, else the current directory, made absolute.
pub(crate) fn project_root(dir: Option<&Path>) -> Result<PathBuf, ScaffoldError> {
    std::path::absolute(dir.unwrap_or(Path::new(".")))
        .map_err(|source| io_error(Path::new("."), source))
}

/// Reads `root/PROJECT`: its text (`None` when there is none) and the parsed config (the
/// default when there is none). A malformed file is bad input naming line and field.
pub(crate) fn read_project(root: &Path) -> Result<(Option<String>, ProjectConfig), ScaffoldError> {
    let project_path = root.join(PROJECT_FILE);
    let text = match fs::read_to_string(&project_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => None,
        Err(source) => return Err(io_error(&project_path, source)),
    };
    let config = match &text {
        Some(text) => ProjectConfig::from_yaml(text).map_err(|source| ScaffoldError::Project {
            dir: root.to_owned(),
            source,
        })?,
        None => ProjectConfig::default(),
    };
    Ok((text, config))
}

/// The chain: `--plugins`, else the PROJECT `layout`, else the built-in default.
pub(crate) fn resolve_chain(
    registry: &Registry,
    config: &ProjectConfig,
    plugins: Option<&str>,
) -> Result<Vec<PluginKey>, ScaffoldError> {
    Ok(registry
        .resolver()
        .with_layout(&config.layout)
        .resolve(plugins)?)
}

/// Runs `request`: read PROJECT, check input, resolve the chain, load the Universe, run the
/// plugins, render PROJECT, validate, then commit atomically (or print plan and diff with
/// `--dry-run`), printing the report to `out`. Nothing is written when it fails.
///
/// Each plugin gets the fixed flags of the request plus the flags it declared itself, from
/// `plugin_flags` (see [`PluginFlags`]); an external plugin whose declarations are not in
/// `plugin_flags` gets the fixed flags only.
pub fn scaffold(
    registry: &Registry,
    runner: &Runner,
    global: &GlobalArgs,
    plugin_flags: &PluginFlags,
    request: &Request,
    out: &mut dyn Write,
) -> Result<(), ScaffoldError> {
    let root = project_root(global.dir.as_deref())?;
    let (text, mut config) = read_project(&root)?;

    let steps = plan_steps(request, &root, &config, text.is_some())?;
    let chain = resolve_chain(registry, &config, global.plugins.as_deref())?;
    let plugins: Vec<(PluginKey, PluginRef<'_>)> = chain
        .iter()
        .filter_map(|k| registry.get(k).map(|p| (k.clone(), p)))
        .collect();
    for step in &steps {
        if !plugins.iter().any(|(_, p)| p.supports(step.sub)) {
            return Err(ScaffoldError::Unsupported {
                subcommand: step.sub,
                chain: join(&chain),
            });
        }
    }

    // A template is instantiated first, into a temporary directory: a bad one fails before
    // any plugin runs.
    let template = match request {
        Request::NewService(args) => match &args.template {
            Some(path) => {
                if config.service(&args.name).is_some() {
                    return Err(PluginError::from(ProjectError::DuplicateService(
                        args.name.clone(),
                    ))
                    .into());
                }
                let generate =
                    Generate::new(root.join(path), &args.name).with_defines(&args.define)?;
                let generated = generate.run()?;
                Some((generate, generated))
            }
            None => None,
        },
        _ => None,
    };

    let mut dir = CreatedDirs::create(&root)?;
    let mut universe = mni_machinery::load_universe(&root)?
        .universe
        .with_force(global.force);
    for step in &steps {
        // What each built-in plugin sees: the fixed flags and its own declared flags.
        let mut values = Vec::with_capacity(plugins.len());
        for (key, plugin) in &plugins {
            values.push(match plugin {
                PluginRef::BuiltIn(p) => match subcommand(*p, step.sub) {
                    Some(s) => plugin_flags
                        .values_for(step.sub, &s.flags(), &step.flags)
                        .map_err(|e| PluginError::InvalidInput(format!("plugin {key}: {e}")))?,
                    None => FlagValues::new(),
                },
                PluginRef::External(_) => FlagValues::new(),
            });
        }
        macro_rules! cx {
            ($flags:expr) => {
                Context {
                    universe: &mut universe,
                    config: &mut config,
                    flags: $flags,
                    chain: &chain,
                }
            };
        }
        for ((_, plugin), flags) in plugins.iter().zip(&values) {
            if let PluginRef::BuiltIn(p) = plugin
                && let Some(s) = subcommand(*p, step.sub)
            {
                s.validate(&cx!(flags))?;
            }
        }
        for ((key, plugin), flags) in plugins.iter().zip(&values) {
            match plugin {
                PluginRef::BuiltIn(p) => {
                    if let Some(s) = subcommand(*p, step.sub) {
                        s.run(&mut cx!(flags))?;
                    }
                }
                PluginRef::External(e) => {
                    let mut args = cli::flag_args(&step.flags);
                    if let Some(specs) = plugin_flags.declared(key, step.sub) {
                        let own: Vec<FlagSpec> = specs
                            .iter()
                            .filter(|s| !step.flags.iter().any(|(n, _)| *n == s.name))
                            .cloned()
                            .collect();
                        args.extend(plugin_flags.args_for(step.sub, &own));
                    }
                    e.scaffold(runner, &root, step.sub, args, &mut cx!(flags))?;
                }
            }
        }
    }

    // Chains without a plugin that records them (e.g. only external plugins) still get the
    // domain and project name `init` was given.
    if let Some(step) = steps.iter().find(|s| s.sub == Subcommand::Init) {
        for (name, value) in &step.flags {
            match (name.as_str(), value) {
                ("domain", FlagValue::String(d)) if config.domain.is_empty() => {
                    config.domain.clone_from(d);
                }
                ("project-name", FlagValue::String(n)) if config.project_name.is_none() => {
                    config.project_name = Some(n.clone());
                }
                _ => {}
            }
        }
    }
    if let (Request::NewService(args), Some((generate, generated))) = (request, &template) {
        add_template_service(
            &root,
            &args.name,
            generate,
            generated,
            &mut universe,
            &mut config,
        )?;
    }
    if let Request::CreateApi(api) = request
        && config
            .resource(&api.group, &api.version, &api.kind)
            .is_none()
    {
        let mut resource = Resource::new(&api.group, &api.version, &api.kind);
        resource.api = api.resource.then(|| ResourceApi {
            crd_version: "v1".to_owned(),
            namespaced: api.namespaced,
        });
        resource.controller = api.controller;
        resource.domain = (!config.domain.is_empty()).then(|| config.domain.clone());
        config.add_resource(resource).map_err(PluginError::from)?;
    }
    if config.layout.is_empty() || matches!(request, Request::Init(_)) {
        config.layout = chain.clone();
    }
    let yaml = config.to_yaml().map_err(PluginError::from)?;
    universe
        .write(PROJECT_FILE, yaml, IfExists::Overwrite)
        .map_err(PluginError::from)?;
    // A command that changes nothing (e.g. `init` run again) is not recorded either.
    let changes = !mni_machinery::plan(&root, &universe)
        .map_err(CommitError::from)?
        .is_noop();
    if changes {
        let mut history = History::read(&root)?.unwrap_or_default();
        history.commands.push(history::record(
            request,
            global,
            plugin_flags,
            &steps,
            &chain,
        ));
        universe
            .write(HISTORY_FILE, history.to_yaml(), IfExists::Overwrite)
            .map_err(PluginError::from)?;
    }

    mni_machinery::validate(&root, &universe)?;
    let plan = mni_machinery::plan(&root, &universe).map_err(CommitError::from)?;
    let what = match request {
        Request::Init(_) => "init",
        Request::NewService(_) => "new service",
        Request::CreateApi(_) => "create api",
        Request::CreateWebhook(_) => "create webhook",
        Request::Edit => "edit",
    };
    let with = match &template {
        Some((generate, _)) => format!("--template {}", generate.template().display()),
        None => join(&chain),
    };
    let print = |out: &mut dyn Write, text: &str| {
        out.write_all(text.as_bytes())
            .map_err(|source| io_error(Path::new("<stdout>"), source))
    };
    if global.dry_run {
        let report = plan.report();
        print(out, &report.to_string())?;
        print(
            out,
            &format!(
                "dry run of `{what}` with {with}: would {}; nothing was written\n",
                summary(&report)
            ),
        )?;
        print(out, &plan.diff())?;
        return Ok(());
    }
    let report = plan.apply()?;
    dir.keep();
    print(out, &report.to_string())?;
    print(
        out,
        &format!("`{what}` with {with}: {}\n", summary(&report)),
    )
}

/// Checks the input and lists the subcommands to run.
fn plan_steps(
    request: &Request,
    root: &Path,
    config: &ProjectConfig,
    has_project: bool,
) -> Result<Vec<Step>, ScaffoldError> {
    let init = |args: &InitArgs| {
        let domain = args
            .domain
            .clone()
            .or_else(|| (!config.domain.is_empty()).then(|| config.domain.clone()))
            .unwrap_or_else(|| "my.domain".to_owned());
        let project_name = args
            .project_name
            .clone()
            .or_else(|| config.project_name.clone())
            .unwrap_or_else(|| {
                root.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        Step {
            sub: Subcommand::Init,
            flags: args.to_flags(&domain, &project_name),
        }
    };
    Ok(match request {
        Request::Init(args) => vec![init(args)],
        Request::NewService(args) => {
            names::validate_service_name("NAME", &args.name)?;
            let mut steps = Vec::new();
            if has_project {
                let given = [
                    ("--domain", &args.domain),
                    ("--project-name", &args.project_name),
                ];
                if let Some((flag, _)) = given.iter().find(|(_, v)| v.is_some()) {
                    return Err(PluginError::InvalidInput(format!(
                        "{flag}: only for a new project; {} exists in {}",
                        PROJECT_FILE,
                        root.display()
                    ))
                    .into());
                }
            } else {
                steps.push(init(&InitArgs {
                    domain: args.domain.clone(),
                    project_name: args.project_name.clone(),
                    ..InitArgs::default()
                }));
            }
            // With --template, the template makes the service instead of the chain.
            if args.template.is_none() {
                steps.push(Step {
                    sub: Subcommand::NewService,
                    flags: args.to_flags(),
                });
            }
            steps
        }
        Request::CreateApi(args) => {
            if !has_project {
                return Err(ScaffoldError::NoProject(root.to_owned()));
            }
            names::validate_dns1123_subdomain("--group", &args.group)?;
            names::validate_api_version("--version", &args.version)?;
            names::validate_kind("--kind", &args.kind)?;
            if let Some(r) = config.resource(&args.group, &args.version, &args.kind) {
                return Err(ScaffoldError::ResourceExists(r.gvk()));
            }
            vec![Step {
                sub: Subcommand::CreateApi,
                flags: args.to_flags(),
            }]
        }
        Request::CreateWebhook(args) => {
            if !has_project {
                return Err(ScaffoldError::NoProject(root.to_owned()));
            }
            names::validate_dns1123_subdomain("--group", &args.group)?;
            names::validate_api_version("--version", &args.version)?;
            names::validate_kind("--kind", &args.kind)?;
            vec![Step {
                sub: Subcommand::CreateWebhook,
                flags: args.to_flags(),
            }]
        }
        Request::Edit => {
            if !has_project {
                return Err(ScaffoldError::NoProject(root.to_owned()));
            }
            vec![Step {
                sub: Subcommand::Edit,
                flags: Vec::new(),
            }]
        }
    })
}

/// Writes a generated service into `services/NAME/`, makes it a workspace member (at the root
/// Cargo.toml's `members` marker, if any) and records it in the config.
fn add_template_service(
    root: &Path,
    name: &str,
    generate: &Generate,
    generated: &Generated,
    universe: &mut mni_plugin::Universe,
    config: &mut ProjectConfig,
) -> Result<(), ScaffoldError> {
    let dir = format!("services/{name}");
    generated.write_into(universe, &dir, IfExists::Error)?;
    if generated.files.contains_key("Cargo.toml")
        && universe
            .get("Cargo.toml")
            .is_some_and(|t| t.contains("+mni:scaffold:members"))
    {
        let member = Insert::new("members", name, &format!("\"{dir}\","));
        mni_machinery::insert(universe, "Cargo.toml", &member)?;
    }
    let key: PluginKey = TEMPLATE_KEY.parse().expect("TEMPLATE_KEY is a valid key");
    config
        .add_service(Service {
            crates: [("crate".to_owned(), dir)].into(),
            name: name.to_owned(),
            plugin: key.clone(),
        })
        .map_err(PluginError::from)?;
    let template = generate.template();
    let source = TemplateSource {
        template: template
            .strip_prefix(root)
            .unwrap_or(template)
            .to_string_lossy()
            .into_owned(),
        defines: generate.defines().clone(),
    };
    let mut stored: TemplateServices = config
        .plugin_config(&key)
        .map_err(PluginError::from)?
        .unwrap_or_default();
    stored.services.insert(name.to_owned(), source);
    config
        .set_plugin_config(&key, &stored)
        .map_err(PluginError::from)?;
    Ok(())
}

fn summary(report: &mni_machinery::CommitReport) -> String {
    let count = |a| report.paths(a).count();
    format!(
        "create {}, update {}, skip {}, unchanged {}",
        count(Action::Create),
        count(Action::Update),
        count(Action::Skip),
        count(Action::Unchanged)
    )
}

fn join(chain: &[PluginKey]) -> String {
    chain
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn io_error(path: &Path, source: io::Error) -> ScaffoldError {
    ScaffoldError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Directories created for a new project; removed again (if still empty) unless kept.
struct CreatedDirs {
    created: Vec<PathBuf>,
}

impl CreatedDirs {
    /// Creates `root` and any missing parents, remembering which.
    fn create(root: &Path) -> Result<Self, ScaffoldError> {
        let mut missing = Vec::new();
        let mut current = Some(root);
        while let Some(dir) = current {
            if dir.exists() {
                break;
            }
            missing.push(dir.to_owned());
            current = dir.parent();
        }
        let dirs = Self {
            created: Vec::new(),
        };
        let mut dirs = dirs;
        for dir in missing.into_iter().rev() {
            fs::create_dir(&dir).map_err(|source| io_error(&dir, source))?;
            dirs.created.push(dir);
        }
        Ok(dirs)
    }

    fn keep(&mut self) {
        self.created.clear();
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        for dir in self.created.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::Limits;
    use mni_plugin::{FlagType, Init, Plugin};

    /// Writes its flag values to `flags.txt` on `init`.
    struct Flagged(PluginKey);

    impl Init for Flagged {
        fn flags(&self) -> Vec<FlagSpec> {
            vec![
                FlagSpec::new("title", FlagType::String, "title").with_default("untitled"),
                FlagSpec::new("count", FlagType::Int, "count"),
                FlagSpec::new("domain", FlagType::String, "fixed, so not overridden"),
            ]
        }

        fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
            let text: String = cx
                .flags
                .iter()
                .map(|(k, v)| format!("{k}={v:?}\n"))
                .collect();
            cx.universe.write("flags.txt", text, IfExists::Overwrite)?;
            Ok(())
        }
    }

    impl Plugin for Flagged {
        fn key(&self) -> &PluginKey {
            &self.0
        }
        fn init(&self) -> Option<&dyn Init> {
            Some(self)
        }
    }

    /// `init` writes a user-owned file (skip), inserts at its marker, renders a generated file
    /// (error if it exists) and, with `--wrap`, wraps template errors in its own failure.
    struct Writer(PluginKey);

    impl Init for Writer {
        fn flags(&self) -> Vec<FlagSpec> {
            vec![FlagSpec::new("wrap", FlagType::Bool, "wrap errors")]
        }

        fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
            cx.universe.write(
                "src/main.rs",
                "fn main() {}\n// +mni:scaffold:items\n",
                IfExists::Skip,
            )?;
            mni_machinery::insert(
                cx.universe,
                "src/main.rs",
                &mni_machinery::Insert::new("items", "a", "fn a() {}"),
            )
            .map_err(|e| PluginError::InvalidInput(e.to_string()))?;
            let mut templates = mni_machinery::Templates::new();
            templates.register("gen", "generated\n").unwrap();
            let files = [mni_machinery::TemplateFile::new("gen", "gen.txt")];
            let result = templates.scaffold(cx.universe, &files, &());
            if cx.flags.bool("wrap") {
                result.map_err(|e| PluginError::Failed {
                    key: self.0.to_string(),
                    message: e.to_string(),
                    source: Some(Box::new(e)),
                })?;
            } else {
                result.map_err(|e| e.into_plugin_error(&self.0))?;
            }
            Ok(())
        }
    }

    impl Plugin for Writer {
        fn key(&self) -> &PluginKey {
            &self.0
        }
        fn init(&self) -> Option<&dyn Init> {
            Some(self)
        }
    }

    fn runner() -> Runner {
        Runner::new(
            [],
            Limits {
                timeout: std::time::Duration::from_secs(1),
                max_output: 1024,
            },
        )
    }

    fn global(dir: &Path, plugins: &str) -> GlobalArgs {
        GlobalArgs {
            plugins: Some(plugins.to_owned()),
            dry_run: false,
            force: false,
            dir: Some(dir.to_owned()),
            plugin_timeout: 1,
        }
    }

    #[test]
    fn a_second_run_reports_every_file_unchanged() {
        let key: PluginKey = "writer.acme.io/v1".parse().unwrap();
        let registry = Registry::new(vec![Box::new(Writer(key))], Vec::new(), Vec::new());
        let dir = tempfile::tempdir().unwrap();
        let run = |global: &GlobalArgs, flags: &PluginFlags| {
            let mut out = Vec::new();
            let request = Request::Init(InitArgs::default());
            scaffold(&registry, &runner(), global, flags, &request, &mut out)
                .map(|()| String::from_utf8(out).unwrap())
        };
        let global = global(dir.path(), "writer");
        let none = PluginFlags::default();
        let first = run(&global, &none).unwrap();
        assert!(first.contains("   create src/main.rs\n"), "{first}");
        let before = mni_machinery::load_universe(dir.path()).unwrap().universe;
        let second = run(&global, &none).unwrap();
        assert_eq!(
            second,
            "unchanged PROJECT\nunchanged gen.txt\nunchanged src/main.rs\n\
             `init` with writer.acme.io/v1: create 0, update 0, skip 0, unchanged 3\n"
        );
        assert_eq!(
            mni_machinery::load_universe(dir.path()).unwrap().universe,
            before
        );

        // A generated file the user changed: exit code 2, naming the path and --force,
        // whether the plugin passes the error on or wraps it in its own failure.
        fs::write(dir.path().join("gen.txt"), "mine\n").unwrap();
        for wrap in [false, true] {
            let mut flags = PluginFlags::default();
            if wrap {
                let specs = vec![FlagSpec::new("wrap", FlagType::Bool, "")];
                flags = PluginFlags::new(
                    Subcommand::Init,
                    vec![("writer.acme.io/v1".parse().unwrap(), specs)],
                );
                flags.set("wrap", "true");
            }
            let err = run(&global, &flags).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{err:?}");
            assert!(
                err.to_string()
                    .ends_with("gen.txt already exists; pass --force to overwrite it"),
                "{err}"
            );
        }
        assert_eq!(
            fs::read_to_string(dir.path().join("gen.txt")).unwrap(),
            "mine\n"
        );
        let forced = GlobalArgs {
            force: true,
            ..global.clone()
        };
        let out = run(&forced, &none).unwrap();
        assert!(out.contains("   update gen.txt\n"), "{out}");
        assert!(out.contains("unchanged src/main.rs\n"), "{out}");
    }

    #[test]
    fn built_ins_get_their_declared_flags() {
        let key: PluginKey = "flagged.acme.io/v1".parse().unwrap();
        let plugin = Flagged(key.clone());
        let specs = plugin.flags();
        let registry = Registry::new(vec![Box::new(plugin)], Vec::new(), Vec::new());
        let runner = runner();
        let dir = tempfile::tempdir().unwrap();
        let global = global(dir.path(), "flagged");
        let mut flags = PluginFlags::new(Subcommand::Init, vec![(key, specs)]);
        flags.set("count", "3");
        flags.set("domain", "ignored.io");
        let request = Request::Init(InitArgs::default());
        scaffold(
            &registry,
            &runner,
            &global,
            &flags,
            &request,
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("flags.txt")).unwrap(),
            format!(
                "count=Int(3)\ndomain=String(\"my.domain\")\nproject-name=String({:?})\ntitle=String(\"untitled\")\n",
                dir.path().file_name().unwrap().to_string_lossy()
            )
        );

        // A value that does not fit the plugin's type is bad input, and nothing is written.
        let mut flags = flags.clone();
        flags.set("count", "three");
        let before = fs::read_to_string(dir.path().join("flags.txt")).unwrap();
        let err = scaffold(
            &registry,
            &runner,
            &global,
            &flags,
            &request,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert_eq!(
            err.to_string(),
            "plugin flagged.acme.io/v1: flag --count: \"three\" is not a valid int"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("flags.txt")).unwrap(),
            before
        );
    }
}
