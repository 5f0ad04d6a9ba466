//! Answering one request of the external-plugin protocol with a [`Plugin`].
//!
//! Start with [`run`], the whole `main` of a plugin binary: it reads one [`PluginRequest`] from
//! stdin, answers it with [`handle`] and writes the [`PluginResponse`] to stdout. [`handle`] is
//! the pure part and what unit tests call:
//!
//! - `flags` and `metadata` are answered from the plugin's subcommand implementation named in
//!   `args` (`--init`, `--api`, `--webhook`, `--edit`, `--service`);
//! - a scaffolding command loads the request's universe into a [`Universe`] (every file
//!   existing), the `config` into a [`ProjectConfig`], parses `args` against the flags the
//!   subcommand declares plus the fixed flags the CLI always sends for it ([`fixed_flags`]),
//!   and calls the subcommand's `validate` then `run` with a [`Context`], exactly as the CLI
//!   calls a built-in plugin. The response carries the files the plugin touched, and `PROJECT`
//!   when the config changed;
//! - a subcommand the plugin does not implement answers with no files (the project is left as
//!   it is), as Kubebuilder's external plugins do;
//! - an error of the plugin, or flags that do not parse, become `error: true` with the message
//!   in `errorMsgs`, which the CLI prints before exiting with 2.
//!
//! The protocol carries neither [`Plugin::description`] nor
//! [`Plugin::supported_project_versions`]: `plugins describe` shows what `metadata` and `flags`
//! answer. The CLI does not pass `--force` on the wire, so [`Universe::write`] with
//! [`IfExists::Error`](mni_plugin::IfExists::Error) on an existing file is refused here.

use std::io::{Read, Write};
use std::process::ExitCode;

use mni_plugin::external::{Command, Flag, Metadata, PluginRequest, PluginResponse, WireError};
use mni_plugin::{
    Context, FlagSpec, FlagType, FlagValues, PROJECT_FILE, Plugin, PluginError, PluginKey,
    ProjectConfig, Subcommand, Universe, subcommand,
};

/// Why [`serve`] could not answer at all (a plugin error is an answer, not a `ServeError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Reading stdin or writing stdout failed.
    #[error("external plugin i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The request is not a `v1alpha1` request.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The response could not be encoded.
    #[error("cannot encode the response: {0}")]
    Encode(#[source] serde_json::Error),
}

/// The `main` of a plugin binary: [`serve`] over stdin and stdout. Exits with 0 whenever a
/// response was written (failures of the plugin are reported inside it) and with 1, after a
/// message on stderr, when the request could not be read.
pub fn run(plugin: &dyn Plugin) -> ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match serve(plugin, stdin.lock(), stdout.lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", plugin.key());
            ExitCode::FAILURE
        }
    }
}

/// Reads one request from `input`, answers it with [`handle`] and writes the response to
/// `output`, followed by a newline.
pub fn serve(
    plugin: &dyn Plugin,
    mut input: impl Read,
    mut output: impl Write,
) -> Result<(), ServeError> {
    let mut text = String::new();
    input.read_to_string(&mut text)?;
    let request = PluginRequest::from_json(&text)?;
    let response = handle(plugin, &request);
    let json = serde_json::to_string(&response).map_err(ServeError::Encode)?;
    writeln!(output, "{json}")?;
    output.flush()?;
    Ok(())
}

/// The `args` value naming a subcommand in `flags` and `metadata` requests.
fn subcommand_of_arg(arg: &str) -> Option<Subcommand> {
    Some(match arg {
        "--init" => Subcommand::Init,
        "--api" => Subcommand::CreateApi,
        "--webhook" => Subcommand::CreateWebhook,
        "--edit" => Subcommand::Edit,
        "--service" => Subcommand::NewService,
        _ => return None,
    })
}

/// The flags `mni-scaffold` sends to every external plugin for `sub`, whether the plugin
/// declares them or not: `init` gets `--domain`, `--project-name`, `--owner` and `--license`;
/// `create api` gets `--group`, `--version`, `--kind`, `--namespaced`, `--resource` and
/// `--controller`; `new service` gets `--name`.
#[must_use]
pub fn fixed_flags(sub: Subcommand) -> Vec<FlagSpec> {
    let string = |name: &str, help: &str| FlagSpec::new(name, FlagType::String, help);
    let boolean = |name: &str, help: &str| FlagSpec::new(name, FlagType::Bool, help);
    match sub {
        Subcommand::Init => vec![
            string("domain", "the domain API groups live under"),
            string("project-name", "the project name"),
            string("owner", "the copyright owner"),
            string("license", "the license"),
        ],
        Subcommand::CreateApi => vec![
            string("group", "API group"),
            string("version", "API version"),
            string("kind", "kind, PascalCase"),
            boolean("namespaced", "namespaced kind").with_default("true"),
            boolean("resource", "scaffold the API types").with_default("true"),
            boolean("controller", "scaffold a controller").with_default("true"),
        ],
        Subcommand::NewService => vec![string("name", "the service name")],
        Subcommand::CreateWebhook | Subcommand::Edit => Vec::new(),
    }
}

/// Answers `request` with `plugin`. Never fails: every failure is a response with
/// `error: true`. See the [module docs](self).
#[must_use]
pub fn handle(plugin: &dyn Plugin, request: &PluginRequest) -> PluginResponse {
    let command = request.command.clone();
    match &request.command {
        Command::Flags | Command::Metadata => {
            let mut response = PluginResponse::new(command.clone());
            let sub = request
                .args
                .first()
                .and_then(|a| subcommand_of_arg(a))
                .and_then(|s| subcommand(plugin, s));
            if let Some(sub) = sub {
                if command == Command::Flags {
                    response.flags = sub.flags().iter().map(Flag::from).collect();
                } else {
                    response.metadata = Metadata::from(sub.metadata());
                }
            }
            response
        }
        Command::Scaffold(sub) => match scaffold(plugin, *sub, request) {
            Ok(universe) => {
                let mut response = PluginResponse::new(command);
                response.universe = universe;
                response
            }
            Err(e) => PluginResponse::failure(command, vec![e.to_string()]),
        },
        Command::Other(other) => PluginResponse::failure(
            command.clone(),
            vec![format!(
                "{} does not know the command {other:?}",
                plugin.key()
            )],
        ),
    }
}

/// Runs `sub` and returns the files to send back.
fn scaffold(
    plugin: &dyn Plugin,
    sub: Subcommand,
    request: &PluginRequest,
) -> Result<std::collections::BTreeMap<String, String>, PluginError> {
    let Some(implementation) = subcommand(plugin, sub) else {
        return Ok(Default::default());
    };
    let mut universe = Universe::new();
    for (path, contents) in &request.universe {
        universe.insert_existing(path, contents.as_str())?;
    }
    // PROJECT's text keeps its comments; the `config` object is the fallback.
    let mut config = match (request.universe.get(PROJECT_FILE), &request.config) {
        (Some(text), _) => ProjectConfig::from_yaml(text)?,
        (None, Some(value)) => ProjectConfig::from_json(value)?,
        (None, None) => ProjectConfig::default(),
    };
    let before = config.to_yaml()?;
    let mut specs = implementation.flags();
    for fixed in fixed_flags(sub) {
        if !specs.iter().any(|s| s.name == fixed.name) {
            specs.push(fixed);
        }
    }
    let flags = FlagValues::parse_args(&specs, &request.args)
        .map_err(|e| PluginError::InvalidInput(format!("{}: `{sub}`: {e}", plugin.key())))?;
    let chain: Vec<PluginKey> = request
        .plugin_chain
        .iter()
        .filter_map(|k| k.parse().ok())
        .collect();
    let mut cx = Context {
        universe: &mut universe,
        config: &mut config,
        flags: &flags,
        chain: &chain,
    };
    implementation.validate(&cx)?;
    implementation.run(&mut cx)?;

    let mut files: std::collections::BTreeMap<String, String> = universe
        .touched()
        .map(|(path, file)| (path.to_owned(), file.contents().to_owned()))
        .collect();
    let after = config.to_yaml()?;
    if after != before {
        files.insert(PROJECT_FILE.to_owned(), after);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::{CreateApi, IfExists, SubcommandMetadata};

    struct Pages(PluginKey);

    impl Plugin for Pages {
        fn key(&self) -> &PluginKey {
            &self.0
        }

        fn create_api(&self) -> Option<&dyn CreateApi> {
            Some(self)
        }
    }

    impl CreateApi for Pages {
        fn metadata(&self) -> SubcommandMetadata {
            SubcommandMetadata {
                description: "Adds a page.".into(),
                examples: String::new(),
            }
        }

        fn flags(&self) -> Vec<FlagSpec> {
            vec![FlagSpec::new("title", FlagType::String, "page title")]
        }

        fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
            let kind = cx.flags.string("kind").unwrap_or_default();
            if kind.is_empty() {
                return Err(PluginError::InvalidInput("--kind is required".into()));
            }
            let title = cx.flags.string("title").unwrap_or_else(|| kind.clone());
            let path = format!("docs/{}.md", kind.to_lowercase());
            cx.universe
                .write(&path, format!("# {title}\n"), IfExists::Error)?;
            Ok(())
        }
    }

    fn plugin() -> Pages {
        Pages("pages.acme.io/v1".parse().unwrap())
    }

    fn request(json: &str) -> PluginRequest {
        PluginRequest::from_json(json).unwrap()
    }

    #[test]
    fn answers_flags_and_metadata_of_the_named_subcommand() {
        let flags = handle(
            &plugin(),
            &request(r#"{"apiVersion":"v1alpha1","command":"flags","args":["--api"]}"#),
        );
        assert_eq!(flags.flags.len(), 1);
        assert_eq!(flags.flags[0].name, "title");
        let none = handle(
            &plugin(),
            &request(r#"{"apiVersion":"v1alpha1","command":"flags","args":["--init"]}"#),
        );
        assert!(none.flags.is_empty() && !none.error);
        let meta = handle(
            &plugin(),
            &request(r#"{"apiVersion":"v1alpha1","command":"metadata","args":["--api"]}"#),
        );
        assert_eq!(meta.metadata.description, "Adds a page.");
    }

    #[test]
    fn scaffolds_with_fixed_and_declared_flags_and_returns_touched_files() {
        let res = handle(
            &plugin(),
            &request(
                r#"{"apiVersion":"v1alpha1","command":"create api",
                "args":["--group=crew","--version=v1","--kind=Captain","--namespaced=true",
                        "--resource=true","--controller=true","--title=Skipper"],
                "universe":{"README.md":"hi\n"},"config":{"domain":"acme.io","version":"3"}}"#,
            ),
        );
        assert!(!res.error, "{:?}", res.error_msgs);
        assert_eq!(
            res.universe.into_iter().collect::<Vec<_>>(),
            [("docs/captain.md".to_owned(), "# Skipper\n".to_owned())]
        );
    }

    #[test]
    fn unsupported_subcommands_change_nothing() {
        let res = handle(
            &plugin(),
            &request(
                r#"{"apiVersion":"v1alpha1","command":"init","args":["--domain=x.io"],"universe":{"a":"b"}}"#,
            ),
        );
        assert!(!res.error && res.universe.is_empty());
    }

    #[test]
    fn plugin_errors_and_bad_flags_become_error_responses() {
        let res = handle(
            &plugin(),
            &request(r#"{"apiVersion":"v1alpha1","command":"create api","args":["--kind="]}"#),
        );
        assert!(res.error);
        assert_eq!(res.error_msgs, ["--kind is required"]);
        let res = handle(
            &plugin(),
            &request(r#"{"apiVersion":"v1alpha1","command":"create api","args":["--colour=red"]}"#),
        );
        assert!(res.error);
        assert!(
            res.error_msgs[0].starts_with("pages.acme.io/v1: `create api`: ")
                && res.error_msgs[0].contains("colour"),
            "{:?}",
            res.error_msgs
        );
        let existing = handle(
            &plugin(),
            &request(
                r#"{"apiVersion":"v1alpha1","command":"create api","args":["--kind=Ship"],
                "universe":{"docs/ship.md":"mine\n"}}"#,
            ),
        );
        assert!(existing.error && existing.error_msgs[0].contains("docs/ship.md"));
    }

    #[test]
    fn serve_round_trips_json_and_refuses_other_versions() {
        let mut out = Vec::new();
        serve(
            &plugin(),
            &br#"{"apiVersion":"v1alpha1","command":"create api","args":["--kind=Ship"]}"#[..],
            &mut out,
        )
        .unwrap();
        let res = PluginResponse::from_json(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(res.universe["docs/ship.md"], "# Ship\n");
        let err = serve(
            &plugin(),
            &br#"{"apiVersion":"v2","command":"init"}"#[..],
            Vec::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("v2"), "{err}");
    }
}
