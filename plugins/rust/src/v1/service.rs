//! `new service NAME`: an operator crate under `services/NAME/operator/`, added to the
//! workspace at the root Cargo.toml's `members` marker and recorded in PROJECT.

use mni_machinery::{Insert, insert};
use mni_plugin::names;
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, IfExists, Service, SubcommandMetadata};

use super::RustV1;
use super::init::invalid;
use super::target::{OPERATOR_CRATE, Target};

impl NewService for RustV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Add a service: an operator crate at services/NAME/operator (package \
                          NAME-operator), a member of the workspace, recorded in PROJECT."
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
        if cx.config.project_name.as_deref() == Some(&format!("{name}-{OPERATOR_CRATE}")) {
            return Err(PluginError::InvalidInput(format!(
                "NAME {name:?} would name its crate {name}-{OPERATOR_CRATE}, the project's root crate; choose another name"
            )));
        }
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        NewService::validate(self, cx)?;
        let name = cx.flags.string("name").unwrap_or_default();
        let target = Target::for_new_service(&name);
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
