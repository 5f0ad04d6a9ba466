//! `init` and the operator-crate skeleton that `init` and `new service` share.

use mni_machinery::TemplateFile;
use mni_plugin::names::{self, NameError};
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, IfExists, PROJECT_FILE, SubcommandMetadata};

use super::RustV1;
use super::settings::{self, MniSource, Settings};
use super::target::Target;

/// The `init` flag that chooses between a root operator crate and a virtual workspace.
const ROOT_CRATE_FLAG: &str = "root-crate";

/// `init` in a directory that already has a PROJECT only adds missing files
/// ([`IfExists::Skip`]); in a new one an existing file is an error unless `--force`.
#[must_use]
pub fn reinit_policy(cx: &Context<'_>) -> IfExists {
    if cx.universe.contains(PROJECT_FILE) {
        IfExists::Skip
    } else {
        IfExists::Error
    }
}

pub(super) fn invalid(e: NameError) -> PluginError {
    PluginError::InvalidInput(e.to_string())
}

impl RustV1 {
    /// The project's settings (default when PROJECT has none).
    pub(super) fn settings(&self, cx: &Context<'_>) -> Result<Settings, PluginError> {
        Ok(cx.config.plugin_config(&self.key)?.unwrap_or_default())
    }

    /// Renders the skeleton of an operator crate at `target`: the root crate (with the
    /// workspace) when `target.service` is `None`, else a service's crate. With
    /// [`IfExists::Skip`] as `policy` (re-running `init` in an existing project) files that are
    /// already there are kept, so later commands' inserts survive; with [`IfExists::Error`] an
    /// existing file is an error unless `--force`.
    pub(super) fn scaffold_crate(
        &self,
        cx: &mut Context<'_>,
        target: &Target,
        policy: IfExists,
    ) -> Result<(), PluginError> {
        let settings = self.settings(cx)?;
        let data = mni_machinery::merge_data(&[
            settings.template_data(),
            target.template_data(),
            serde_json::json!({
                "project_name": cx.config.project_name.clone().unwrap_or_default(),
                "domain": cx.config.domain,
                "root_crate": true,
            }),
        ]);
        let dir = &target.dir;
        let mut files = vec![
            TemplateFile::new("src/main.rs", &format!("{dir}src/main.rs")),
            TemplateFile::new("src/lib.rs", &format!("{dir}src/lib.rs")),
            TemplateFile::new("src/api/mod.rs", &format!("{dir}src/api/mod.rs")),
            TemplateFile::new(
                "src/controllers/mod.rs",
                &format!("{dir}src/controllers/mod.rs"),
            ),
        ];
        if target.service.is_none() {
            files.extend([
                TemplateFile::new("Cargo.toml", "Cargo.toml"),
                // One Dockerfile builds every binary of the workspace (`--build-arg BINARY=`).
                TemplateFile::new("Dockerfile", "Dockerfile"),
                TemplateFile::new(".dockerignore", ".dockerignore").if_exists(IfExists::Skip),
                TemplateFile::new(".gitignore", ".gitignore").if_exists(IfExists::Skip),
                TemplateFile::new("README.md", "README.md").if_exists(IfExists::Skip),
            ]);
        } else {
            files.extend([
                TemplateFile::new("service/Cargo.toml", &format!("{dir}Cargo.toml")),
                TemplateFile::new("service/README.md", &format!("{dir}README.md")),
            ]);
        }
        let files: Vec<TemplateFile> = files
            .into_iter()
            .map(|f| {
                if f.if_exists == IfExists::Error {
                    f.if_exists(policy)
                } else {
                    f
                }
            })
            .collect();
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;
        Ok(())
    }

    /// Renders the root of a project without root crate: a virtual workspace `Cargo.toml`,
    /// the workspace's one `Dockerfile` (no default binary: `--build-arg BINARY=` names the
    /// crate), `.dockerignore` and `.gitignore`. The README comes with the service (`new service`
    /// writes it at the root when the service is laid out flat).
    fn scaffold_workspace(
        &self,
        cx: &mut Context<'_>,
        policy: IfExists,
    ) -> Result<(), PluginError> {
        let settings = self.settings(cx)?;
        let data = mni_machinery::merge_data(&[
            settings.template_data(),
            serde_json::json!({
                "project_name": cx.config.project_name.clone().unwrap_or_default(),
                "root_crate": false,
            }),
        ]);
        let files = [
            TemplateFile::new("Cargo.toml", "Cargo.toml").if_exists(policy),
            TemplateFile::new("Dockerfile", "Dockerfile").if_exists(policy),
            TemplateFile::new(".dockerignore", ".dockerignore").if_exists(IfExists::Skip),
            TemplateFile::new(".gitignore", ".gitignore").if_exists(IfExists::Skip),
        ];
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;
        Ok(())
    }

    /// `--root-crate`, or this plugin's default for it.
    fn root_crate_flag(&self, cx: &Context<'_>) -> bool {
        if cx.flags.get(ROOT_CRATE_FLAG).is_some() {
            cx.flags.bool(ROOT_CRATE_FLAG)
        } else {
            self.root_crate
        }
    }
}

impl Init for RustV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Initialize a Cargo workspace whose root crate is an operator on the mNi \
                          runtime: Cargo.toml, src/main.rs with scaffold markers, src/api, \
                          src/controllers, Dockerfile, .gitignore and README.md. With \
                          --root-crate=false the root is a virtual workspace for a project that \
                          is one service: `new service` then puts its crates at the root."
                .to_owned(),
            examples: "mni-scaffold init --domain example.com --owner \"ACME Inc.\" --license \
                       apache2\n\
                       mni-scaffold init --domain example.com --root-crate=false   # one service"
                .to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        vec![
            FlagSpec::new("domain", FlagType::String, "domain API groups live under")
                .with_default("my.domain"),
            FlagSpec::new(
                "project-name",
                FlagType::String,
                "project (and root crate) name; default: the directory name",
            ),
            FlagSpec::new(
                "owner",
                FlagType::String,
                "copyright owner for license headers",
            ),
            FlagSpec::new("license", FlagType::String, "apache2, mit or none")
                .with_default("apache2"),
            FlagSpec::new(
                "mni-path",
                FlagType::String,
                "use the mNi crates of this checkout (absolute, or relative to the project); \
                 default: the checkout mni-scaffold was built from",
            ),
            FlagSpec::new(
                "mni-version",
                FlagType::String,
                "use this released version of the mNi crates",
            ),
            FlagSpec::new(
                "mni-git",
                FlagType::String,
                "use the mNi crates from this git URL",
            ),
            FlagSpec::new(
                ROOT_CRATE_FLAG,
                FlagType::Bool,
                "make the root an operator crate (true) or a virtual workspace for a \
                 one-service project (false), whose first `new service` lays its crates out \
                 at the root",
            )
            .with_default(if self.root_crate { "true" } else { "false" }),
        ]
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let domain = cx.flags.string("domain").unwrap_or_default();
        names::validate_dns1123_subdomain("--domain", &domain).map_err(invalid)?;
        let name = cx.flags.string("project-name").unwrap_or_default();
        names::validate_service_name("--project-name", &name).map_err(invalid)?;
        settings::validate_flags(cx.flags)?;
        if !cx.config.domain.is_empty() && cx.config.domain != domain {
            return Err(PluginError::InvalidInput(format!(
                "--domain {domain:?} differs from the PROJECT domain {:?}: init does not change an existing project's domain",
                cx.config.domain
            )));
        }
        let root_crate = self.root_crate_flag(cx);
        if cx.universe.contains(PROJECT_FILE) && self.settings(cx)?.has_root_crate() != root_crate {
            return Err(PluginError::InvalidInput(format!(
                "--{ROOT_CRATE_FLAG}={root_crate} differs from the project's: init does not add \
                 or remove an existing project's root crate"
            )));
        }
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        Init::validate(self, cx)?;
        let policy = reinit_policy(cx);
        cx.config.domain = cx.flags.string("domain").unwrap_or_default();
        cx.config.project_name = cx.flags.string("project-name");
        let mut settings = self.settings(cx)?;
        if let Some(owner) = cx.flags.string("owner") {
            settings.owner = Some(owner);
        }
        settings.license = Some(
            cx.flags
                .string("license")
                .or(settings.license)
                .unwrap_or_else(|| "apache2".to_owned()),
        );
        if let Some(source) = MniSource::from_flags(cx.flags)? {
            settings.mni = Some(source);
        }
        let root_crate = self.root_crate_flag(cx);
        settings.root_crate = (!root_crate).then_some(false);
        cx.config.set_plugin_config(&self.key, &settings)?;
        if !root_crate {
            return self.scaffold_workspace(cx, policy);
        }
        let target = Target::root(cx.config)?;
        self.scaffold_crate(cx, &target, policy)
    }
}
