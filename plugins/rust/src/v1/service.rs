//! `new service NAME`: an operator crate, at `operator/` or `services/NAME/operator/` as
//! [`ServiceLayout`] decides (`--layout flat|nested`), added to the workspace at the root
//! Cargo.toml's `members` marker and recorded in PROJECT, where the other plugins of the chain
//! find it.

use mni_machinery::{Insert, insert};
use mni_plugin::names;
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, IfExists, Service, SubcommandMetadata};

use super::RustV1;
use super::init::invalid;
use super::layout::{LAYOUT_FLAG, ServiceLayout};
use super::target::{OPERATOR_CRATE, Target};

impl RustV1 {
    /// The layout `--layout` and the project choose for the new service.
    fn layout(&self, cx: &Context<'_>) -> Result<ServiceLayout, PluginError> {
        let flag = cx.flags.string(LAYOUT_FLAG);
        ServiceLayout::choose(cx.config, &self.settings(cx)?, flag.as_deref())
    }
}

impl NewService for RustV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Add a service: an operator crate (package NAME-operator), a member of \
                          the workspace, recorded in PROJECT. It goes to operator/ when the \
                          service is the only one of a project without root crate (init \
                          --root-crate=false), else to services/NAME/operator; --layout \
                          flat|nested chooses."
                .to_owned(),
            examples: "mni-scaffold new service billing\n\
                       mni-scaffold new service billing --layout nested"
                .to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        vec![
            FlagSpec::new("name", FlagType::String, "the service name"),
            FlagSpec::new(
                LAYOUT_FLAG,
                FlagType::String,
                "flat: the service's crates at the project root (operator/, backend/, \
                 frontend/), for the only service of a project made with --root-crate=false; \
                 nested: under services/NAME/; default: flat when possible",
            ),
        ]
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let name = cx.flags.string("name").unwrap_or_default();
        names::validate_service_name("NAME", &name).map_err(invalid)?;
        if cx.config.service(&name).is_some() {
            return Err(PluginError::InvalidInput(format!(
                "NAME {name:?} is already a service of this project (see PROJECT); choose a new name"
            )));
        }
        if self.settings(cx)?.has_root_crate()
            && cx.config.project_name.as_deref() == Some(&format!("{name}-{OPERATOR_CRATE}"))
        {
            return Err(PluginError::InvalidInput(format!(
                "NAME {name:?} would name its crate {name}-{OPERATOR_CRATE}, the project's root crate; choose another name"
            )));
        }
        self.layout(cx)?;
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        NewService::validate(self, cx)?;
        let name = cx.flags.string("name").unwrap_or_default();
        let target = Target::for_new_service(&name, self.layout(cx)?);
        let dir = target.dir.trim_end_matches('/').to_owned();
        cx.config.add_service(Service {
            crates: [(OPERATOR_CRATE.to_owned(), dir.clone())].into(),
            name: name.clone(),
            plugin: self.key.clone(),
        })?;
        self.scaffold_crate(cx, &target, IfExists::Error)?;
        let member = Insert::new("members", &name, &format!("\"{dir}\","));
        insert(cx.universe, "Cargo.toml", &member).map_err(|e| e.into_plugin_error(&self.key))?;
        Ok(())
    }
}
