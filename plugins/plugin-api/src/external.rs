//! Wire types of the external-plugin protocol, compatible with Kubebuilder's
//! `external.PluginRequest`/`PluginResponse` (`apiVersion: v1alpha1`).
//!
//! The CLI writes a [`PluginRequest`] as JSON to the plugin's stdin and reads a
//! [`PluginResponse`] from its stdout. Field names follow Kubebuilder exactly: `apiVersion`,
//! `args`, `command`, `universe`, `pluginChain`, `config`; `metadata`, `error`, `errorMsgs`,
//! `flags`. Kubebuilder's `Flag` and `SubcommandMetadata` carry no JSON tags, so Go writes
//! `Name`/`Type`/`Default`/`Usage` and `Description`/`Examples`; that is what we write, and we
//! read those and the lower-case spellings alike (Go's decoder is case-insensitive, so
//! Kubebuilder accepts both too). A `null` where a list or map is expected (Go's nil) reads as
//! empty.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::flags::{FlagSpec, FlagType};
use crate::plugin::{Subcommand, SubcommandMetadata};

/// The protocol version.
pub const API_VERSION: &str = "v1alpha1";

/// Why a message could not be decoded or was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The JSON does not match the message shape.
    #[error("invalid external-plugin message: {0}")]
    Json(#[from] serde_json::Error),
    /// The message carries an `apiVersion` other than [`API_VERSION`].
    #[error("unsupported external-plugin apiVersion {0:?}; expected \"v1alpha1\"")]
    ApiVersion(String),
}

/// The `command` of a request or response.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Command {
    /// A scaffolding subcommand (`init`, `create api`, `create webhook`, `edit`, `new service`).
    Scaffold(Subcommand),
    /// `flags`: report the flags of the subcommand named in `args` (e.g. `--init`).
    Flags,
    /// `metadata`: report help text for the subcommand named in `args`.
    Metadata,
    /// A command this version does not know, kept verbatim.
    Other(String),
}

impl Command {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Scaffold(s) => s.as_str(),
            Self::Flags => "flags",
            Self::Metadata => "metadata",
            Self::Other(s) => s,
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "flags" => Self::Flags,
            "metadata" => Self::Metadata,
            other => other
                .parse()
                .map_or_else(|_| Self::Other(other.to_owned()), Self::Scaffold),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Command {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self::parse(&String::deserialize(deserializer)?))
    }
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// What the CLI sends to an external plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginRequest {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// The plugin's arguments, e.g. `["--domain", "example.com"]`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// The command to run.
    pub command: Command,
    /// The project's files, `path → contents`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub universe: BTreeMap<String, String>,
    /// The keys of the resolved plugin chain, in order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub plugin_chain: Vec<String>,
    /// The PROJECT file as an object; absent before the first `init`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

impl PluginRequest {
    /// A request for `command` with no arguments and an empty universe.
    #[must_use]
    pub fn new(command: Command) -> Self {
        Self {
            api_version: API_VERSION.to_owned(),
            args: Vec::new(),
            command,
            universe: BTreeMap::new(),
            plugin_chain: Vec::new(),
            config: None,
        }
    }

    /// Decodes a request and checks its `apiVersion`.
    pub fn from_json(json: &str) -> Result<Self, WireError> {
        let req: Self = serde_json::from_str(json)?;
        check_version(&req.api_version)?;
        Ok(req)
    }
}

/// Help text in a `metadata` response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// What the subcommand does.
    #[serde(rename = "Description", alias = "description", default)]
    pub description: String,
    /// Example command lines.
    #[serde(rename = "Examples", alias = "examples", default)]
    pub examples: String,
}

impl From<Metadata> for SubcommandMetadata {
    fn from(m: Metadata) -> Self {
        Self {
            description: m.description,
            examples: m.examples,
        }
    }
}

impl From<SubcommandMetadata> for Metadata {
    fn from(m: SubcommandMetadata) -> Self {
        Self {
            description: m.description,
            examples: m.examples,
        }
    }
}

/// A flag in a `flags` response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// The name without dashes.
    #[serde(rename = "Name", alias = "name", default)]
    pub name: String,
    /// `string`, `bool`, `int` or `float`; anything else is a string.
    #[serde(rename = "Type", alias = "type", default)]
    pub flag_type: String,
    /// The default value, as text.
    #[serde(rename = "Default", alias = "default", default)]
    pub default: String,
    /// One line of help.
    #[serde(rename = "Usage", alias = "usage", default)]
    pub usage: String,
}

impl From<Flag> for FlagSpec {
    fn from(f: Flag) -> Self {
        let spec = FlagSpec::new(&f.name, FlagType::from_wire(&f.flag_type), &f.usage);
        if f.default.is_empty() {
            spec
        } else {
            spec.with_default(&f.default)
        }
    }
}

impl From<&FlagSpec> for Flag {
    fn from(s: &FlagSpec) -> Self {
        Self {
            name: s.name.clone(),
            flag_type: s.flag_type.as_str().to_owned(),
            default: s.default.clone().unwrap_or_default(),
            usage: s.help.clone(),
        }
    }
}

/// What an external plugin answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginResponse {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// The command answered.
    pub command: Command,
    /// Help text (for `metadata`).
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: Metadata,
    /// The project's files after the plugin ran.
    #[serde(default, deserialize_with = "null_as_default")]
    pub universe: BTreeMap<String, String>,
    /// Whether the plugin failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
    /// Why it failed.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub error_msgs: Vec<String>,
    /// The flags (for `flags`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub flags: Vec<Flag>,
}

impl PluginResponse {
    /// A successful, empty response to `command`.
    #[must_use]
    pub fn new(command: Command) -> Self {
        Self {
            api_version: API_VERSION.to_owned(),
            command,
            metadata: Metadata::default(),
            universe: BTreeMap::new(),
            error: false,
            error_msgs: Vec::new(),
            flags: Vec::new(),
        }
    }

    /// A failed response carrying `messages`.
    #[must_use]
    pub fn failure(command: Command, messages: Vec<String>) -> Self {
        Self {
            error: true,
            error_msgs: messages,
            ..Self::new(command)
        }
    }

    /// Decodes a response and checks its `apiVersion`.
    pub fn from_json(json: &str) -> Result<Self, WireError> {
        let res: Self = serde_json::from_str(json)?;
        check_version(&res.api_version)?;
        Ok(res)
    }
}

fn check_version(v: &str) -> Result<(), WireError> {
    if v == API_VERSION {
        Ok(())
    } else {
        Err(WireError::ApiVersion(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_matches_kubebuilder() {
        let json = r#"{"apiVersion":"v1alpha1","args":["--group","crew","--version","v1","--kind","Captain"],
            "command":"create api","universe":{},"pluginChain":["go.kubebuilder.io/v4"],
            "config":{"domain":"my.domain","version":"3","layout":["go.kubebuilder.io/v4"]}}"#;
        let req = PluginRequest::from_json(json).unwrap();
        assert_eq!(req.command, Command::Scaffold(Subcommand::CreateApi));
        assert_eq!(req.config.as_ref().unwrap()["domain"], "my.domain");
        let out = serde_json::to_string(&PluginRequest::new(Command::Flags)).unwrap();
        assert_eq!(
            out,
            r#"{"apiVersion":"v1alpha1","args":[],"command":"flags","universe":{}}"#
        );
        let nil = r#"{"apiVersion":"v1alpha1","args":null,"command":"delete api","universe":null}"#;
        let req = PluginRequest::from_json(nil).unwrap();
        assert_eq!(req.command, Command::Other("delete api".into()));
        assert!(req.args.is_empty() && req.universe.is_empty());
        assert!(PluginRequest::from_json(r#"{"apiVersion":"v2","command":"init"}"#).is_err());
    }

    #[test]
    fn response_accepts_both_spellings() {
        for json in [
            r#"{"apiVersion":"v1alpha1","command":"flags","metadata":{"description":"d","examples":"e"},
                "universe":null,"flags":[{"name":"domain","type":"string","default":"x","usage":"u"}]}"#,
            r#"{"apiVersion":"v1alpha1","command":"flags","metadata":{"Description":"d","Examples":"e"},
                "universe":{},"flags":[{"Name":"domain","Type":"string","Default":"x","Usage":"u"}]}"#,
        ] {
            let res = PluginResponse::from_json(json).unwrap();
            assert_eq!(
                res.metadata,
                Metadata {
                    description: "d".into(),
                    examples: "e".into()
                }
            );
            assert_eq!(res.flags[0].name, "domain");
            assert_eq!(res.flags[0].default, "x");
            let spec = FlagSpec::from(res.flags[0].clone());
            assert_eq!(spec.default.as_deref(), Some("x"));
        }
        let mut res = PluginResponse::new(Command::Flags);
        res.flags.push(Flag::from(&FlagSpec::new(
            "force",
            FlagType::Bool,
            "overwrite",
        )));
        assert_eq!(
            serde_json::to_string(&res).unwrap(),
            r#"{"apiVersion":"v1alpha1","command":"flags","metadata":{"Description":"","Examples":""},"universe":{},"flags":[{"Name":"force","Type":"bool","Default":"","Usage":"overwrite"}]}"#
        );
        let failed =
            PluginResponse::failure(Command::Scaffold(Subcommand::Init), vec!["boom".into()]);
        let json = serde_json::to_string(&failed).unwrap();
        assert!(
            json.contains(r#""error":true,"errorMsgs":["boom"]"#),
            "{json}"
        );
    }
}
