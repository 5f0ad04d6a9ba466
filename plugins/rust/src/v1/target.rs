//! [`Target`]: the operator crate a subcommand writes into — the project's root crate, or a
//! service's operator crate chosen with `--service NAME`.

use mni_plugin::names;
use mni_plugin::{PluginError, ProjectConfig};

/// The role under which a service records its operator crate in PROJECT (`services[].crates`).
pub const OPERATOR_CRATE: &str = "operator";

/// An operator crate of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The crate's directory relative to the project root, with a trailing `/` (empty for the
    /// root crate).
    pub dir: String,
    /// The package name, e.g. `billing-operator`.
    pub crate_name: String,
    /// The package name as a Rust identifier, e.g. `billing_operator`.
    pub crate_ident: String,
    /// The service, when the crate belongs to one.
    pub service: Option<String>,
}

impl Target {
    /// The root crate, named after the project.
    pub fn root(config: &ProjectConfig) -> Result<Self, PluginError> {
        let name = config.project_name.clone().unwrap_or_default();
        if name.is_empty() {
            return Err(PluginError::InvalidInput(
                "PROJECT has no projectName: run `mni-scaffold init` first".to_owned(),
            ));
        }
        Ok(Self::new(String::new(), &name, None))
    }

    /// The operator crate of a new service `name` (`services/NAME/operator/`, package
    /// `NAME-operator`).
    #[must_use]
    pub fn for_new_service(name: &str) -> Self {
        Self::new(
            format!("services/{name}/{OPERATOR_CRATE}/"),
            &format!("{name}-{OPERATOR_CRATE}"),
            Some(name.to_owned()),
        )
    }

    /// The crate `--service` names (the root crate when it is absent or empty).
    pub fn resolve(config: &ProjectConfig, service: Option<&str>) -> Result<Self, PluginError> {
        let Some(name) = service.filter(|s| !s.is_empty()) else {
            return Self::root(config);
        };
        let Some(found) = config.service(name) else {
            let known: Vec<&str> = config.services.iter().map(|s| s.name.as_str()).collect();
            return Err(PluginError::InvalidInput(format!(
                "--service {name:?} is not a service of this project (services: {})",
                if known.is_empty() {
                    "none; add one with `mni-scaffold new service NAME`".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        };
        let Some(dir) = found.crates.get(OPERATOR_CRATE) else {
            return Err(PluginError::InvalidInput(format!(
                "--service {name:?} has no `{OPERATOR_CRATE}` crate in PROJECT (services[].crates)"
            )));
        };
        let dir = format!("{}/", dir.trim_end_matches('/'));
        Ok(Self::new(
            dir,
            &format!("{name}-{OPERATOR_CRATE}"),
            Some(name.to_owned()),
        ))
    }

    fn new(dir: String, crate_name: &str, service: Option<String>) -> Self {
        Self {
            dir,
            crate_ident: names::to_snake_case(crate_name),
            crate_name: crate_name.to_owned(),
            service,
        }
    }

    /// The template data naming this crate: `dir`, `crate_name`, `crate_ident`, `name`.
    #[must_use]
    pub fn template_data(&self) -> serde_json::Value {
        serde_json::json!({
            "dir": self.dir,
            "crate_name": self.crate_name,
            "crate_ident": self.crate_ident,
            "name": self.service.clone().unwrap_or_else(|| self.crate_name.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::Service;

    #[test]
    fn resolves_root_and_services() {
        let mut config = ProjectConfig::new("example.com");
        assert!(Target::root(&config).unwrap_err().is_invalid_input());
        config.project_name = Some("demo".into());
        let root = Target::resolve(&config, None).unwrap();
        assert_eq!((root.dir.as_str(), root.crate_ident.as_str()), ("", "demo"));

        let err = Target::resolve(&config, Some("billing")).unwrap_err();
        assert!(err.to_string().contains("services: none"), "{err}");
        let new = Target::for_new_service("billing");
        config
            .add_service(Service {
                crates: [(
                    "operator".to_owned(),
                    "services/billing/operator".to_owned(),
                )]
                .into(),
                name: "billing".into(),
                plugin: "rust.mni.dev/v1".parse().unwrap(),
            })
            .unwrap();
        assert_eq!(Target::resolve(&config, Some("billing")).unwrap(), new);
        assert_eq!(new.crate_ident, "billing_operator");
        assert_eq!(new.dir, "services/billing/operator/");
    }
}
