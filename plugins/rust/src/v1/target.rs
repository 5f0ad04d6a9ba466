//! [`Target`]: the operator crate a subcommand writes into — the project's root crate, or a
//! service's operator crate chosen with `--service NAME`, found where PROJECT records it
//! (`services[].crates.operator`).

use mni_plugin::names;
use mni_plugin::{PluginError, PluginKey, ProjectConfig};

use super::KEY;
use super::layout::ServiceLayout;
use super::settings::Settings;

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
    /// The root crate, named after the project. An error when the project has none
    /// (`init --root-crate=false`): then a subcommand must name a service with `--service`.
    pub fn root(config: &ProjectConfig) -> Result<Self, PluginError> {
        let name = config.project_name.clone().unwrap_or_default();
        if name.is_empty() {
            return Err(PluginError::InvalidInput(
                "PROJECT has no projectName: run `mni-scaffold init` first".to_owned(),
            ));
        }
        let key: PluginKey = KEY.parse().expect("KEY is a valid plugin key");
        let settings: Settings = config.plugin_config(&key)?.unwrap_or_default();
        if !settings.has_root_crate() {
            return Err(PluginError::InvalidInput(format!(
                "this project has no root crate (PROJECT: plugins.{KEY}.rootCrate is false): \
                 give --service NAME ({})",
                known_services(config)
            )));
        }
        Ok(Self::new(String::new(), &name, None))
    }

    /// The operator crate of a new service `name` laid out as `layout` (`operator/` or
    /// `services/NAME/operator/`, package `NAME-operator`).
    #[must_use]
    pub fn for_new_service(name: &str, layout: ServiceLayout) -> Self {
        Self::new(
            format!("{}{OPERATOR_CRATE}/", layout.service_dir(name)),
            &format!("{name}-{OPERATOR_CRATE}"),
            Some(name.to_owned()),
        )
    }

    /// The crate `--service` names (the root crate when it is absent or empty), at the
    /// directory PROJECT records for it.
    pub fn resolve(config: &ProjectConfig, service: Option<&str>) -> Result<Self, PluginError> {
        let Some(name) = service.filter(|s| !s.is_empty()) else {
            return Self::root(config);
        };
        let Some(found) = config.service(name) else {
            return Err(PluginError::InvalidInput(format!(
                "--service {name:?} is not a service of this project ({})",
                known_services(config)
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

    /// The directory holding the service's crates, with a trailing `/`: the parent of this
    /// crate's (`services/NAME/` nested, empty when flat or for the root crate). A service's
    /// backend and frontend sit beside its operator.
    #[must_use]
    pub fn service_dir(&self) -> String {
        match self.dir.trim_end_matches('/').rsplit_once('/') {
            Some((parent, _)) => format!("{parent}/"),
            None => String::new(),
        }
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

/// The project's services, as an error message lists them.
fn known_services(config: &ProjectConfig) -> String {
    let known: Vec<&str> = config.services.iter().map(|s| s.name.as_str()).collect();
    if known.is_empty() {
        "services: none; add one with `mni-scaffold new service NAME`".to_owned()
    } else {
        format!("services: {}", known.join(", "))
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
        let new = Target::for_new_service("billing", ServiceLayout::Nested);
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
        assert_eq!(new.service_dir(), "services/billing/");
        let flat = Target::for_new_service("net", ServiceLayout::Flat);
        assert_eq!(
            (flat.dir.as_str(), flat.service_dir()),
            ("operator/", String::new())
        );
        assert_eq!(root.service_dir(), "");
    }

    #[test]
    fn a_project_without_root_crate_needs_service() {
        let mut config = ProjectConfig::new("example.com");
        config.project_name = Some("demo".into());
        let settings = Settings {
            root_crate: Some(false),
            ..Settings::default()
        };
        config
            .set_plugin_config(&KEY.parse().unwrap(), &settings)
            .unwrap();
        let err = Target::resolve(&config, None).unwrap_err();
        assert!(err.to_string().contains("give --service NAME"), "{err}");
    }
}
