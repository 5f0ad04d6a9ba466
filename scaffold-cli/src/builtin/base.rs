//! `base.mni.dev/v1`: the trivial built-in plugin that makes the scaffolding flow usable before
//! the real Rust, kustomize and service plugins exist.
//!
//! `init` fills the PROJECT fields (`domain`, `projectName`, and `owner`/`license` under
//! `plugins.base.mni.dev/v1`) and writes a `README.md` with an `apis` marker for later plugins.
//! `new service NAME` records the service in PROJECT and writes `services/NAME/README.md`. The CLI
//! itself renders PROJECT (with the chain as `layout`) into the same commit.

use mni_machinery::{TemplateError, TemplateFile, Templates};
use mni_plugin::names::{self, NameError};
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, IfExists, PluginKey, Service, SubcommandMetadata};
use serde::{Deserialize, Serialize};

/// The key of the base plugin.
pub const BASE_KEY: &str = "base.mni.dev/v1";

const LICENSES: &[(&str, &str)] = &[
    ("apache2", "Apache License, Version 2.0"),
    ("mit", "MIT License"),
    ("none", ""),
];

/// What `init` stores under `plugins.base.mni.dev/v1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct BaseConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    license: Option<String>,
}

/// The `base.mni.dev/v1` plugin: `init` fills PROJECT and writes README.md; `new service`
/// records the service and writes `services/NAME/README.md`.
pub struct Base {
    key: PluginKey,
    templates: Templates,
    service: BaseService,
}

/// The `new service` half of [`Base`].
struct BaseService {
    key: PluginKey,
    templates: Templates,
}

impl Base {
    /// The plugin, with its templates registered.
    ///
    /// # Panics
    ///
    /// Never on user input: only if the templates compiled into the binary do not parse, which
    /// the unit tests rule out.
    #[must_use]
    pub fn new() -> Self {
        let key: PluginKey = BASE_KEY.parse().expect("BASE_KEY is a valid key");
        Self {
            service: BaseService {
                key: key.clone(),
                templates: templates(),
            },
            key,
            templates: templates(),
        }
    }
}

/// The base plugin's templates, compiled into the binary.
fn templates() -> Templates {
    let mut templates = Templates::new();
    for (name, source) in [
        (
            "README.md",
            include_str!("../../templates/base/v1/README.md.hbs"),
        ),
        (
            "services/README.md",
            include_str!("../../templates/base/v1/services/README.md.hbs"),
        ),
    ] {
        templates
            .register(name, source)
            .expect("built-in templates parse");
    }
    templates
}

impl Default for Base {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Base").field("key", &self.key).finish()
    }
}

impl Plugin for Base {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn description(&self) -> String {
        "Writes PROJECT (domain, projectName, layout) and a README.md on init, and records \
         services on new service. A stand-in until the Rust and service plugins land."
            .to_owned()
    }

    fn init(&self) -> Option<&dyn Init> {
        Some(self)
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        Some(&self.service)
    }
}

fn invalid(e: NameError) -> PluginError {
    PluginError::InvalidInput(e.to_string())
}

/// A template failure; an existing file is the user's problem (`--force`), not the plugin's.
fn failed(key: &PluginKey, e: TemplateError) -> PluginError {
    if let TemplateError::Universe(e) = e {
        return PluginError::Universe(e);
    }
    PluginError::Failed {
        key: key.to_string(),
        message: e.to_string(),
        source: Some(Box::new(e)),
    }
}

impl Init for Base {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Initialize a project: PROJECT and README.md.".to_owned(),
            examples: "mni-scaffold init --domain mni.dev --owner \"ACME Inc.\"".to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        vec![
            FlagSpec::new("domain", FlagType::String, "domain API groups live under")
                .with_default("my.domain"),
            FlagSpec::new("project-name", FlagType::String, "project name"),
            FlagSpec::new("owner", FlagType::String, "copyright owner"),
            FlagSpec::new("license", FlagType::String, "apache2, mit or none"),
        ]
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let domain = cx.flags.string("domain").unwrap_or_default();
        names::validate_dns1123_subdomain("--domain", &domain).map_err(invalid)?;
        let name = cx.flags.string("project-name").unwrap_or_default();
        names::validate_dns1123_label("--project-name", &name).map_err(invalid)?;
        if let Some(license) = cx.flags.string("license")
            && !LICENSES.iter().any(|(l, _)| *l == license)
        {
            return Err(PluginError::InvalidInput(format!(
                "--license {license:?} is not a known license: use apache2, mit or none"
            )));
        }
        if !cx.config.domain.is_empty() && cx.config.domain != domain {
            return Err(PluginError::InvalidInput(format!(
                "--domain {domain:?} differs from the PROJECT domain {:?}: init does not change an existing project's domain",
                cx.config.domain
            )));
        }
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        self.validate(cx)?;
        let domain = cx.flags.string("domain").unwrap_or_default();
        let project_name = cx.flags.string("project-name").unwrap_or_default();
        cx.config.domain = domain.clone();
        cx.config.project_name = Some(project_name.clone());

        let mut stored: BaseConfig = cx.config.plugin_config(&self.key)?.unwrap_or_default();
        if let Some(owner) = cx.flags.string("owner") {
            stored.owner = Some(owner);
        }
        if let Some(license) = cx.flags.string("license") {
            stored.license = Some(license);
        }
        if stored != BaseConfig::default() {
            cx.config.set_plugin_config(&self.key, &stored)?;
        }
        let license_name = LICENSES
            .iter()
            .find(|(l, _)| Some(*l) == stored.license.as_deref())
            .map_or("", |(_, n)| n);
        let data = serde_json::json!({
            "project_name": project_name,
            "domain": domain,
            "owner": stored.owner.unwrap_or_default(),
            "license_name": license_name,
        });
        let files = [TemplateFile::new("README.md", "README.md").if_exists(IfExists::Skip)];
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| failed(&self.key, e))?;
        Ok(())
    }
}

impl NewService for BaseService {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Record a service in PROJECT and write services/NAME/README.md."
                .to_owned(),
            examples: "mni-scaffold new service billing".to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        vec![FlagSpec::new("name", FlagType::String, "the service name")]
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let name = cx.flags.string("name").unwrap_or_default();
        names::validate_service_name("NAME", &name).map_err(invalid)?;
        if cx.config.service(&name).is_some() {
            return Err(PluginError::InvalidInput(format!(
                "NAME {name:?} is already a service of this project (see PROJECT); choose a new name"
            )));
        }
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        self.validate(cx)?;
        let name = cx.flags.string("name").unwrap_or_default();
        let dir = format!("services/{name}");
        cx.config.add_service(Service {
            crates: [("operator".to_owned(), dir.clone())].into(),
            name: name.clone(),
            plugin: self.key.clone(),
        })?;
        let project_name = cx.config.project_name.clone().unwrap_or_default();
        let data = serde_json::json!({ "name": name, "project_name": project_name });
        let files = [TemplateFile::new(
            "services/README.md",
            &format!("{dir}/README.md"),
        )];
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| failed(&self.key, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::{FlagValue, FlagValues, ProjectConfig, Subcommand, Universe};

    fn flags(pairs: &[(&str, &str)]) -> FlagValues {
        let mut v = FlagValues::new();
        for (k, val) in pairs {
            v.set(k, FlagValue::String((*val).to_owned()));
        }
        v
    }

    #[test]
    fn init_and_new_service() {
        let base = Base::new();
        let mut universe = Universe::new();
        let mut config = ProjectConfig::default();
        let f = flags(&[
            ("domain", "acme.io"),
            ("project-name", "demo"),
            ("owner", "ACME"),
            ("license", "mit"),
        ]);
        let chain = [base.key().clone()];
        let mut cx = Context {
            universe: &mut universe,
            config: &mut config,
            flags: &f,
            chain: &chain,
        };
        mni_plugin::run(&base, Subcommand::Init, &mut cx).unwrap();
        let readme = universe.get("README.md").unwrap();
        assert!(readme.starts_with("# demo\n"), "{readme}");
        assert!(readme.contains("Copyright ACME.") && readme.contains("MIT License"));
        assert!(
            readme.ends_with("<!-- +mni:scaffold:apis -->\n"),
            "{readme}"
        );
        assert_eq!(config.domain, "acme.io");

        let f = flags(&[("name", "billing")]);
        let mut cx = Context {
            universe: &mut universe,
            config: &mut config,
            flags: &f,
            chain: &chain,
        };
        mni_plugin::run(&base, Subcommand::NewService, &mut cx).unwrap();
        assert!(universe.contains("services/billing/README.md"));
        let mut cx = Context {
            universe: &mut universe,
            config: &mut config,
            flags: &f,
            chain: &chain,
        };
        let err = mni_plugin::run(&base, Subcommand::NewService, &mut cx).unwrap_err();
        assert!(err.is_invalid_input(), "{err}");
    }
}
