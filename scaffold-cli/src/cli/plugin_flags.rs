//! Flags the plugins of the chain declare, accepted on the command line.
//!
//! The clap structs of the parent module fix the flags every chain understands (`--group`,
//! `--domain`, …). A plugin may declare more ([`FlagSpec`]s of a built-in plugin, or an external
//! plugin's answer to `flags`). Since the chain depends on `--plugins`, `-C` and the project's
//! `PROJECT`, the command line is read twice:
//!
//! 1. [`scan`] picks the subcommand, `--plugins`, `-C` and `--plugin-timeout` out of the raw
//!    arguments without knowing the plugin flags;
//! 2. the caller resolves the chain, collects what each plugin declares for that subcommand into
//!    a [`PluginFlags`], lets [`PluginFlags::augment`] add those flags to the clap command (typed:
//!    string, bool, int, float; listed by `--help` under `Flags of KEY`), parses, and reads the
//!    given values back with [`PluginFlags::read`].
//!
//! At run time [`PluginFlags::values_for`] gives an in-process plugin its [`FlagValues`] (the
//! fixed flags, plus its own declared flags, given or defaulted) and
//! [`PluginFlags::args_for`] gives an external plugin the `--name=value` arguments of its own
//! declared flags that were given. A flag that is neither fixed nor declared is refused by clap
//! before anything runs; [`PluginFlags::unknown_flag`] words that refusal.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use mni_plugin::{FlagError, FlagSpec, FlagType, FlagValue, FlagValues, PluginKey, Subcommand};

/// Why the declared flags cannot be offered on the command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PluginFlagsError {
    /// A plugin declared a flag whose name cannot be a long option.
    #[error(
        "plugin {key} declares an invalid flag name {name:?} for `{subcommand}`: use letters, digits, '-', '_' or '.'"
    )]
    InvalidName {
        /// The plugin.
        key: PluginKey,
        /// The subcommand.
        subcommand: Subcommand,
        /// The name as declared.
        name: String,
    },
    /// A flag that no plugin of the chain declares (and that is not a fixed flag).
    #[error(
        "unknown flag {flag} for `{subcommand}` with {chain}; the flags are {}",
        .declared.join(", ")
    )]
    Unknown {
        /// The flag as given, e.g. `--doc-titel`.
        flag: String,
        /// The subcommand.
        subcommand: Subcommand,
        /// The chain, comma-separated.
        chain: String,
        /// Every flag the subcommand accepts, `--name` each.
        declared: Vec<String>,
    },
}

/// What [`scan`] finds in the raw arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The scaffolding subcommand, if the arguments name one.
    pub subcommand: Option<Subcommand>,
    /// The value of `--plugins`.
    pub plugins: Option<String>,
    /// The value of `-C`.
    pub dir: Option<PathBuf>,
    /// The value of `--plugin-timeout`, if it parses.
    pub plugin_timeout: Option<u64>,
    /// Whether `-h`/`--help` is among the arguments.
    pub help: bool,
}

/// Reads the subcommand and the chain-related global flags from raw arguments (program name
/// first), the way clap will: only global flags may come before the subcommand words; after
/// them, global flags may still appear anywhere until `--`.
#[must_use]
pub fn scan(args: &[OsString]) -> Scan {
    let mut scan = Scan::default();
    let mut words: Vec<String> = Vec::new();
    let mut iter = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = iter.next() {
        if arg == "--" {
            break;
        }
        let mut value = |inline: Option<&str>| inline.map(str::to_owned).or_else(|| iter.next());
        if let Some(rest) = arg.strip_prefix("--") {
            let (name, inline) = match rest.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (rest, None),
            };
            match name {
                "plugins" => scan.plugins = value(inline),
                "plugin-timeout" => {
                    scan.plugin_timeout = value(inline).and_then(|v| v.parse().ok())
                }
                "help" => scan.help = true,
                _ => {}
            }
        } else if let Some(rest) = arg.strip_prefix("-C") {
            let inline = rest.strip_prefix('=').unwrap_or(rest);
            scan.dir = value((!inline.is_empty()).then_some(inline)).map(PathBuf::from);
        } else if arg.starts_with('-') && arg.len() > 1 {
            scan.help |= arg[1..].contains('h');
        } else if words.len() < 2 {
            words.push(arg);
        }
    }
    scan.subcommand = match (
        words.first().map(String::as_str),
        words.get(1).map(String::as_str),
    ) {
        (Some("init"), _) => Some(Subcommand::Init),
        (Some("edit"), _) => Some(Subcommand::Edit),
        (Some("new"), Some("service")) => Some(Subcommand::NewService),
        (Some("create"), Some("api")) => Some(Subcommand::CreateApi),
        (Some("create"), Some("webhook")) => Some(Subcommand::CreateWebhook),
        _ => None,
    };
    scan
}

/// The command words of a scaffolding subcommand.
fn words(sub: Subcommand) -> &'static [&'static str] {
    match sub {
        Subcommand::Init => &["init"],
        Subcommand::Edit => &["edit"],
        Subcommand::NewService => &["new", "service"],
        Subcommand::CreateApi => &["create", "api"],
        Subcommand::CreateWebhook => &["create", "webhook"],
    }
}

/// The flags the plugins of a chain declare for one subcommand, and the values given for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PluginFlags {
    subcommand: Option<Subcommand>,
    /// Each plugin's declared flags, in chain order.
    declared: Vec<(PluginKey, Vec<FlagSpec>)>,
    /// The flags added to the clap command: name → (arg id, declaring plugin).
    added: BTreeMap<String, (String, PluginKey)>,
    /// Values given on the command line, as text, by flag name.
    given: BTreeMap<String, String>,
}

/// The clap id of the plugin flag `name` (kept apart from the ids of the derive structs).
fn arg_id(name: &str) -> String {
    format!("plugin-flag:{name}")
}

fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl PluginFlags {
    /// The flags each plugin of the chain (in order) declares for `subcommand`.
    #[must_use]
    pub fn new(subcommand: Subcommand, declared: Vec<(PluginKey, Vec<FlagSpec>)>) -> Self {
        Self {
            subcommand: Some(subcommand),
            declared,
            ..Self::default()
        }
    }

    /// The subcommand the flags were declared for.
    #[must_use]
    pub fn subcommand(&self) -> Option<Subcommand> {
        self.subcommand
    }

    /// What `key` declared for `sub`, if it was asked.
    #[must_use]
    pub fn declared(&self, key: &PluginKey, sub: Subcommand) -> Option<&[FlagSpec]> {
        if self.subcommand != Some(sub) {
            return None;
        }
        self.declared
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, specs)| specs.as_slice())
    }

    /// The chain the flags were collected from, comma-separated.
    fn chain(&self) -> String {
        self.declared
            .iter()
            .map(|(k, _)| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Adds every declared flag that `cmd`'s subcommand does not already have (fixed flags and
    /// global flags win; of two plugins declaring the same name, the first in the chain sets
    /// its type and help).
    pub fn augment(&mut self, cmd: Command) -> Result<Command, PluginFlagsError> {
        let Some(sub) = self.subcommand else {
            return Ok(cmd);
        };
        let path = words(sub);
        let mut taken: Vec<String> = ["help", "version"].map(str::to_owned).to_vec();
        taken.extend(longs(&cmd));
        let target = find(&cmd, path).expect("scaffolding subcommands exist");
        taken.extend(longs(target));
        taken.extend(target.get_arguments().map(|a| a.get_id().to_string()));

        let mut args = Vec::new();
        for (key, specs) in &self.declared {
            for spec in specs {
                if !valid_name(&spec.name) {
                    return Err(PluginFlagsError::InvalidName {
                        key: key.clone(),
                        subcommand: sub,
                        name: spec.name.clone(),
                    });
                }
                if taken.contains(&spec.name) || self.added.contains_key(&spec.name) {
                    continue;
                }
                let id = arg_id(&spec.name);
                self.added
                    .insert(spec.name.clone(), (id.clone(), key.clone()));
                args.push(to_arg(id, spec, key));
            }
        }
        Ok(mutate(cmd, path, move |c| c.args(args)))
    }

    /// Reads the values given for the added flags from the top-level matches.
    pub fn read(&mut self, matches: &ArgMatches) {
        let Some(sub) = self.subcommand else {
            return;
        };
        let mut m = matches;
        for word in words(sub) {
            match m.subcommand_matches(word) {
                Some(next) => m = next,
                None => return,
            }
        }
        for (name, (id, _)) in &self.added {
            if m.value_source(id) != Some(ValueSource::CommandLine) {
                continue;
            }
            let value = m
                .get_raw(id)
                .and_then(|mut v| v.next_back())
                .map(|v| v.to_string_lossy().into_owned());
            if let Some(value) = value {
                self.given.insert(name.clone(), value);
            }
        }
    }

    /// Sets a value as if given on the command line (for callers that build a [`crate::Cli`]
    /// themselves).
    pub fn set(&mut self, name: &str, value: &str) {
        self.given.insert(name.to_owned(), value.to_owned());
    }

    /// The values given on the command line, by flag name.
    #[must_use]
    pub fn given(&self) -> &BTreeMap<String, String> {
        &self.given
    }

    /// The `--name=value` arguments, for a plugin declaring `specs` for `sub`, of the flags that
    /// were given (none when the flags were parsed for another subcommand).
    #[must_use]
    pub fn args_for(&self, sub: Subcommand, specs: &[FlagSpec]) -> Vec<String> {
        if self.subcommand != Some(sub) {
            return Vec::new();
        }
        specs
            .iter()
            .filter_map(|s| self.given.get(&s.name).map(|v| format!("--{}={v}", s.name)))
            .collect()
    }

    /// The [`FlagValues`] of an in-process plugin declaring `specs` for `sub`: the `fixed`
    /// flags, then each declared flag that is not fixed, as given or by its default, parsed by
    /// the plugin's own type.
    pub fn values_for(
        &self,
        sub: Subcommand,
        specs: &[FlagSpec],
        fixed: &[(String, FlagValue)],
    ) -> Result<FlagValues, FlagError> {
        let own: Vec<FlagSpec> = specs
            .iter()
            .filter(|s| !fixed.iter().any(|(n, _)| *n == s.name))
            .cloned()
            .collect();
        let mut values = FlagValues::parse_args(&own, &self.args_for(sub, &own))?;
        for (name, value) in fixed {
            values.set(name, value.clone());
        }
        Ok(values)
    }

    /// Words clap's refusal of `flag` for the subcommand of `cmd` (augmented): one line naming
    /// the flag and listing every flag the subcommand accepts (global flags aside).
    #[must_use]
    pub fn unknown_flag(&self, cmd: &Command, flag: &str) -> Option<PluginFlagsError> {
        let sub = self.subcommand?;
        let target = find(cmd, words(sub))?;
        let declared = target
            .get_arguments()
            .filter(|a| !a.is_global_set())
            .filter_map(Arg::get_long)
            .filter(|l| *l != "help")
            .map(|l| format!("--{l}"))
            .collect();
        Some(PluginFlagsError::Unknown {
            flag: flag.to_owned(),
            subcommand: sub,
            chain: self.chain(),
            declared,
        })
    }
}

fn longs(cmd: &Command) -> impl Iterator<Item = String> + '_ {
    cmd.get_arguments()
        .filter_map(|a| a.get_long().map(str::to_owned))
}

fn find<'a>(cmd: &'a Command, path: &[&str]) -> Option<&'a Command> {
    path.iter().try_fold(cmd, |c, word| {
        c.get_subcommands().find(|s| s.get_name() == *word)
    })
}

fn mutate(cmd: Command, path: &[&'static str], f: impl FnOnce(Command) -> Command) -> Command {
    match path.split_first() {
        None => f(cmd),
        Some((first, rest)) => cmd.mut_subcommand(*first, |c| mutate(c, rest, f)),
    }
}

fn to_arg(id: String, spec: &FlagSpec, key: &PluginKey) -> Arg {
    let mut help = spec.help.clone();
    if let Some(default) = spec.default.as_deref().filter(|d| !d.is_empty()) {
        help.push_str(&format!(" [default: {default}]"));
    }
    let arg = Arg::new(id)
        .long(spec.name.clone())
        .help(help)
        .help_heading(format!("Flags of {key}"))
        .action(ArgAction::Set);
    match spec.flag_type {
        FlagType::String => arg.value_name("STRING"),
        FlagType::Int => arg.value_name("INT").value_parser(clap::value_parser!(i64)),
        FlagType::Float => arg
            .value_name("FLOAT")
            .value_parser(clap::value_parser!(f64)),
        FlagType::Bool => arg
            .value_name("BOOL")
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true")
            .value_parser(clap::value_parser!(bool)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    fn os(args: &[&str]) -> Vec<OsString> {
        std::iter::once("mni-scaffold")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn scans_subcommand_and_chain_flags() {
        let s = scan(&os(&[
            "-C",
            "/p",
            "create",
            "api",
            "--group",
            "init",
            "--plugins=base,docs",
            "--plugin-timeout",
            "5",
        ]));
        assert_eq!(s.subcommand, Some(Subcommand::CreateApi));
        assert_eq!(s.plugins.as_deref(), Some("base,docs"));
        assert_eq!(s.dir, Some(PathBuf::from("/p")));
        assert_eq!(s.plugin_timeout, Some(5));
        assert!(!s.help);
        let s = scan(&os(&[
            "-C=/q",
            "--plugins",
            "x",
            "new",
            "service",
            "b",
            "-h",
        ]));
        assert_eq!(
            (s.subcommand, s.dir, s.plugins.as_deref(), s.help),
            (
                Some(Subcommand::NewService),
                Some(PathBuf::from("/q")),
                Some("x"),
                true
            )
        );
        assert_eq!(scan(&os(&["-C/r", "init"])).dir, Some(PathBuf::from("/r")));
        assert_eq!(scan(&os(&["plugins", "list"])).subcommand, None);
        assert_eq!(scan(&os(&["--", "init"])).subcommand, None);
    }

    fn flags() -> PluginFlags {
        let a: PluginKey = "a.acme.io/v1".parse().unwrap();
        let b: PluginKey = "b.acme.io/v1".parse().unwrap();
        PluginFlags::new(
            Subcommand::CreateApi,
            vec![
                (
                    a,
                    vec![
                        FlagSpec::new("kind", FlagType::Int, "shadowed by the fixed --kind"),
                        FlagSpec::new("doc-title", FlagType::String, "title").with_default("API"),
                        FlagSpec::new("replicas", FlagType::Int, "replicas"),
                    ],
                ),
                (
                    b,
                    vec![
                        FlagSpec::new("doc-title", FlagType::String, "also mine"),
                        FlagSpec::new("crd", FlagType::Bool, "crd").with_default("true"),
                    ],
                ),
            ],
        )
    }

    fn parse(flags: &mut PluginFlags, args: &[&str]) -> Result<Command, clap::Error> {
        let mut cmd = flags.augment(Cli::command()).unwrap();
        let m = cmd.try_get_matches_from_mut(os(args))?;
        flags.read(&m);
        Ok(cmd)
    }

    #[test]
    fn declared_flags_are_typed_and_routed() {
        let api = [
            "create",
            "api",
            "--group",
            "g",
            "--version",
            "v1",
            "--kind",
            "K",
        ];
        let mut f = flags();
        let mut args = api.to_vec();
        args.extend(["--doc-title", "X Y", "--replicas=3", "--crd=false"]);
        parse(&mut f, &args).unwrap();
        let specs_a = &f.declared[0].1.clone();
        let specs_b = &f.declared[1].1.clone();
        let fixed = vec![("kind".to_owned(), FlagValue::String("K".into()))];
        let a = f
            .values_for(Subcommand::CreateApi, specs_a, &fixed)
            .unwrap();
        assert_eq!(a.string("doc-title").as_deref(), Some("X Y"));
        assert_eq!(a.int("replicas"), Some(3));
        assert_eq!(a.string("kind").as_deref(), Some("K"));
        assert_eq!(
            f.args_for(Subcommand::CreateApi, specs_b),
            ["--doc-title=X Y", "--crd=false"]
        );
        // Another subcommand's step gets defaults only.
        let init = f.values_for(Subcommand::Init, specs_a, &[]).unwrap();
        assert_eq!(init.string("doc-title").as_deref(), Some("API"));
        assert!(f.args_for(Subcommand::Init, specs_b).is_empty());

        let mut f = flags();
        let mut args = api.to_vec();
        args.push("--crd");
        parse(&mut f, &args).unwrap();
        assert_eq!(f.given().get("crd").map(String::as_str), Some("true"));
        let b = f.values_for(Subcommand::CreateApi, specs_b, &[]).unwrap();
        assert!(b.bool("crd"));

        let mut f = flags();
        let mut args = api.to_vec();
        args.extend(["--replicas", "many"]);
        let err = parse(&mut f, &args).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        let mut f = flags();
        let mut args = api.to_vec();
        args.push("--doc-titel");
        let err = parse(&mut f, &args).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        let cmd = PluginFlags::new(Subcommand::CreateApi, f.declared.clone())
            .augment(Cli::command())
            .unwrap();
        let message = f.unknown_flag(&cmd, "--doc-titel").unwrap().to_string();
        assert!(
            message.starts_with(
                "unknown flag --doc-titel for `create api` with a.acme.io/v1, b.acme.io/v1; \
                 the flags are --group, --version, --kind,"
            ),
            "{message}"
        );
        assert!(
            message.ends_with("--doc-title, --replicas, --crd"),
            "{message}"
        );
    }

    #[test]
    fn help_lists_plugin_flags_and_bad_names_are_refused() {
        let mut f = flags();
        let mut cmd = f.augment(Cli::command()).unwrap();
        let help = cmd
            .find_subcommand_mut("create")
            .and_then(|c| c.find_subcommand_mut("api"))
            .unwrap()
            .render_help()
            .to_string();
        assert!(help.contains("Flags of a.acme.io/v1:"), "{help}");
        assert!(help.contains("--doc-title <STRING>"), "{help}");
        assert!(help.contains("title [default: API]"), "{help}");
        assert!(help.contains("Flags of b.acme.io/v1:"), "{help}");

        let mut bad = PluginFlags::new(
            Subcommand::Init,
            vec![(
                "a.acme.io/v1".parse().unwrap(),
                vec![FlagSpec::new("no spaces", FlagType::String, "")],
            )],
        );
        assert_eq!(
            bad.augment(Cli::command()).unwrap_err().to_string(),
            "plugin a.acme.io/v1 declares an invalid flag name \"no spaces\" for `init`: use letters, digits, '-', '_' or '.'"
        );
    }
}
