//! [`ServiceLayout`]: where `new service NAME` puts a service's crates.
//!
//! - `flat`: at the project root, `operator/`, `backend/` and `frontend/`, for a project that
//!   *is* one service: its root is a virtual workspace (`init --root-crate=false`, the default
//!   of `vpc.mni.dev/v1`) and it has no service yet;
//! - `nested`: under `services/NAME/`, for every other service: the second service of a flat
//!   project, and every service of a project whose root is an operator crate.
//!
//! `new service --layout flat|nested` chooses; without the flag the rule above does (flat
//! exactly when flat is possible). What was chosen is recorded in PROJECT, each crate's
//! directory under `services[].crates`, and every plugin reads the directories from there
//! ([`Target::resolve`](super::Target::resolve)), so both layouts, and projects made before
//! the flag existed (all nested), are built on alike.

use mni_plugin::{PluginError, ProjectConfig};

use super::settings::Settings;

/// The `new service` flag that chooses the layout.
pub const LAYOUT_FLAG: &str = "layout";

/// Where a service's crates go. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceLayout {
    /// `operator/`, `backend/`, `frontend/` at the project root.
    Flat,
    /// `services/NAME/operator/`, `services/NAME/backend/`, `services/NAME/frontend/`.
    Nested,
}

impl ServiceLayout {
    /// The layout of the next service of a project: `--layout` (`flag`) if given, else flat
    /// when the project has neither a root crate nor a service, else nested. Errors name
    /// `--layout` and say what to do instead.
    pub fn choose(
        config: &ProjectConfig,
        settings: &Settings,
        flag: Option<&str>,
    ) -> Result<Self, PluginError> {
        let flat_possible = !settings.has_root_crate() && config.services.is_empty();
        let layout = match flag.filter(|f| !f.is_empty()) {
            None => {
                return Ok(if flat_possible {
                    Self::Flat
                } else {
                    Self::Nested
                });
            }
            Some("flat") => Self::Flat,
            Some("nested") => Self::Nested,
            Some(other) => {
                return Err(PluginError::InvalidInput(format!(
                    "--{LAYOUT_FLAG} {other:?} is not a layout: use flat (the crates at the \
                     project root: operator/, backend/, frontend/) or nested (under \
                     services/NAME/)"
                )));
            }
        };
        if layout == Self::Flat && settings.has_root_crate() {
            return Err(PluginError::InvalidInput(format!(
                "--{LAYOUT_FLAG} flat puts the service's crates at the project root, but this \
                 project's root is an operator crate: use --{LAYOUT_FLAG} nested, or start a \
                 one-service project with `mni-scaffold init --root-crate=false`"
            )));
        }
        if layout == Self::Flat && !config.services.is_empty() {
            let names: Vec<&str> = config.services.iter().map(|s| s.name.as_str()).collect();
            return Err(PluginError::InvalidInput(format!(
                "--{LAYOUT_FLAG} flat is for a project's only service, but this project has \
                 services already ({}): use --{LAYOUT_FLAG} nested",
                names.join(", ")
            )));
        }
        Ok(layout)
    }

    /// The directory holding service `name`'s crates, relative to the project root, with a
    /// trailing `/` (empty for [`Flat`](Self::Flat)).
    #[must_use]
    pub fn service_dir(self, name: &str) -> String {
        match self {
            Self::Flat => String::new(),
            Self::Nested => format!("services/{name}/"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::Service;

    fn check(root_crate: bool, services: &[&str], flag: Option<&str>, expected: &str) {
        let mut config = ProjectConfig::new("example.com");
        for name in services {
            config
                .add_service(Service {
                    crates: Default::default(),
                    name: (*name).to_owned(),
                    plugin: "rust.mni.dev/v1".parse().unwrap(),
                })
                .unwrap();
        }
        let settings = Settings {
            root_crate: (!root_crate).then_some(false),
            ..Settings::default()
        };
        let got = match ServiceLayout::choose(&config, &settings, flag) {
            Ok(layout) => format!("{layout:?}"),
            Err(e) => e.to_string(),
        };
        assert!(got.contains(expected), "{flag:?}: {got}");
    }

    #[test]
    fn flat_exactly_for_the_only_service_of_a_virtual_workspace() {
        check(false, &[], None, "Flat");
        check(false, &["a"], None, "Nested");
        check(true, &[], None, "Nested");
        check(false, &[], Some("nested"), "Nested");
        check(false, &[], Some("flat"), "Flat");
        check(true, &[], Some("flat"), "--layout flat puts");
        check(false, &["a", "b"], Some("flat"), "services already (a, b)");
        check(
            false,
            &[],
            Some("deep"),
            "--layout \"deep\" is not a layout",
        );
        assert_eq!(ServiceLayout::Flat.service_dir("net"), "");
        assert_eq!(ServiceLayout::Nested.service_dir("net"), "services/net/");
    }
}
