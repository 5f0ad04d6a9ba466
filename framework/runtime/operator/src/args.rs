//! The command line every generated operator accepts, and its `crd` subcommand.
//!
//! [`OperatorArgs`] carries kubebuilder's familiar flags and is meant to be flattened into the
//! operator's own `clap` parser; [`OperatorCommand::Crd`] with [`write_crds`] prints the
//! operator's CustomResourceDefinitions for `kubectl apply -f -`.

use std::{
    fmt,
    io::Write,
    net::{SocketAddr, ToSocketAddrs},
    str::FromStr,
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Errors of the command-line helpers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArgsError {
    /// A bind address is neither `0`, `:PORT` nor `HOST:PORT`.
    #[error(
        "invalid bind address {input:?}: expected \"0\" (disabled), \":PORT\" or \"HOST:PORT\""
    )]
    BindAddress {
        /// What was given.
        input: String,
    },
    /// Writing the CRDs failed.
    #[error("write CRDs: {0}")]
    Write(#[source] std::io::Error),
    /// A CRD could not be rendered as YAML.
    #[error("render CRD {name} as YAML: {source}")]
    Yaml {
        /// The CRD's name.
        name: String,
        /// The serializer error.
        #[source]
        source: serde_yaml::Error,
    },
}

/// A listen address in kubebuilder's notation: `:8080` (all interfaces), `host:port`, or `0`
/// (disabled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindAddress(Option<SocketAddr>);

impl BindAddress {
    /// The socket address, or `None` when disabled.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        self.0
    }
}

impl FromStr for BindAddress {
    type Err = ArgsError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = || ArgsError::BindAddress {
            input: input.to_string(),
        };
        let trimmed = input.trim();
        if trimmed == "0" {
            return Ok(Self(None));
        }
        let full = match trimmed.strip_prefix(':') {
            Some(port) => format!("0.0.0.0:{port}"),
            None => trimmed.to_string(),
        };
        let addr = full
            .to_socket_addrs()
            .map_err(|_| err())?
            .next()
            .ok_or_else(err)?;
        Ok(Self(Some(addr)))
    }
}

impl fmt::Display for BindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("0"),
            Some(addr) => write!(f, "{addr}"),
        }
    }
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The flags of a generated operator, named as kubebuilder's.
///
/// ```
/// use clap::Parser;
/// use mni_operator::OperatorArgs;
///
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     operator: OperatorArgs,
/// }
///
/// let cli = Cli::parse_from(["op", "--leader-elect", "--metrics-bind-address", "0"]);
/// assert!(cli.operator.leader_elect);
/// assert_eq!(cli.operator.metrics_bind_address.socket_addr(), None);
/// ```
#[derive(Clone, Debug, clap::Args)]
pub struct OperatorArgs {
    /// The address the metrics endpoint binds to (":8080", "127.0.0.1:8080", or "0" to disable).
    #[arg(long, default_value = ":8080", value_parser = parse_bind_address)]
    pub metrics_bind_address: BindAddress,
    /// The address the health probe endpoints bind to ("0" to disable).
    #[arg(long, default_value = ":8081", value_parser = parse_bind_address)]
    pub health_probe_bind_address: BindAddress,
    /// Enable leader election, ensuring there is only one active controller manager.
    #[arg(long)]
    pub leader_elect: bool,
    /// The namespace of the leader election Lease (default: the operator's own namespace).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,
    /// Watch only this namespace (default: all namespaces).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Log format; filter with RUST_LOG (default "info").
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

fn parse_bind_address(input: &str) -> Result<BindAddress, ArgsError> {
    input.parse()
}

/// Subcommands every generated operator has besides running.
#[derive(Clone, Debug, clap::Subcommand)]
#[non_exhaustive]
pub enum OperatorCommand {
    /// Print the operator's CustomResourceDefinitions as YAML.
    Crd,
}

/// Writes `crds` as a YAML stream (documents separated by `---`).
pub fn write_crds(crds: &[CustomResourceDefinition], mut out: impl Write) -> Result<(), ArgsError> {
    for (i, crd) in crds.iter().enumerate() {
        let yaml = serde_yaml::to_string(crd).map_err(|source| ArgsError::Yaml {
            name: crd.metadata.name.clone().unwrap_or_default(),
            source,
        })?;
        if i > 0 {
            out.write_all(b"---\n").map_err(ArgsError::Write)?;
        }
        out.write_all(yaml.as_bytes()).map_err(ArgsError::Write)?;
    }
    out.flush().map_err(ArgsError::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Option<&str>) {
        let parsed = input.parse::<BindAddress>().map(|b| b.socket_addr());
        match expected {
            Some("disabled") => assert_eq!(parsed.unwrap(), None, "{input}"),
            Some(addr) => assert_eq!(parsed.unwrap(), Some(addr.parse().unwrap()), "{input}"),
            None => assert!(parsed.is_err(), "{input} should be rejected"),
        }
    }

    #[test]
    fn bind_addresses_like_kubebuilder() {
        check(":8080", Some("0.0.0.0:8080"));
        check("127.0.0.1:9090", Some("127.0.0.1:9090"));
        check("[::1]:1", Some("[::1]:1"));
        check("0", Some("disabled"));
        check("8080", None);
        check(":http", None);
    }

    #[test]
    fn crds_are_a_yaml_stream() {
        let crd = |name: &str| CustomResourceDefinition {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut out = Vec::new();
        write_crds(&[crd("a.x.io"), crd("b.x.io")], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("---\n").count(), 1);
        assert!(text.contains("name: a.x.io") && text.contains("name: b.x.io"));
    }
}
