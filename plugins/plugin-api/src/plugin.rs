//! The plugin traits: one per subcommand, and [`Plugin`] tying them to a key.
//!
//! Start with [`Plugin`]. A plugin implements the subcommand traits it supports ([`Init`],
//! [`CreateApi`], [`CreateWebhook`], [`Edit`], [`NewService`]) and returns them from the matching
//! `Plugin` method. Every subcommand gets a [`Context`]: the [`Universe`], the
//! [`ProjectConfig`] and the parsed [`FlagValues`], which it mutates. [`run`] dispatches a
//! [`Subcommand`] to a plugin.

use std::fmt;
use std::str::FromStr;

use crate::flags::{FlagSpec, FlagValues};
use crate::key::PluginKey;
use crate::project::{ProjectConfig, ProjectError};
use crate::universe::{Universe, UniverseError};

/// The scaffolding subcommands a plugin can implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subcommand {
    /// `init`: create a project.
    Init,
    /// `create api`: add a resource kind.
    CreateApi,
    /// `create webhook`: add webhooks for a kind.
    CreateWebhook,
    /// `edit`: change project-wide settings.
    Edit,
    /// `new service`: add a service operator (mNi's own subcommand).
    NewService,
}

impl Subcommand {
    /// Every subcommand, in help order.
    pub const ALL: [Self; 5] = [
        Self::Init,
        Self::NewService,
        Self::CreateApi,
        Self::CreateWebhook,
        Self::Edit,
    ];

    /// The command words, e.g. `create api`; also the external-plugin `command`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Init => "init",
            Self::CreateApi => "create api",
            Self::CreateWebhook => "create webhook",
            Self::Edit => "edit",
            Self::NewService => "new service",
        }
    }
}

impl fmt::Display for Subcommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Subcommand {
    type Err = PluginError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| PluginError::InvalidInput(format!("unknown subcommand {s:?}")))
    }
}

/// Help text for a subcommand, shown by `--help` (Kubebuilder's `SubcommandMetadata`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubcommandMetadata {
    /// What the subcommand does.
    pub description: String,
    /// Example command lines.
    pub examples: String,
}

/// Why a plugin failed. [`PluginError::InvalidInput`] means the user's input was wrong (the CLI
/// exits with 2); everything else is a failure (exit 1). Either way nothing is written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// Bad flags or arguments; the message names the argument and the fix.
    #[error("{0}")]
    InvalidInput(String),
    /// The plugin does not implement the subcommand.
    #[error("plugin {key} does not support `{subcommand}`")]
    Unsupported {
        /// The plugin.
        key: String,
        /// The subcommand.
        subcommand: Subcommand,
    },
    /// A Universe operation failed.
    #[error(transparent)]
    Universe(#[from] UniverseError),
    /// Reading or changing the project config failed.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// Anything else, with the plugin that failed.
    #[error("plugin {key}: {message}")]
    Failed {
        /// The plugin.
        key: String,
        /// What went wrong.
        message: String,
        /// The cause, if any.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl PluginError {
    /// Whether the CLI should report this as bad input (exit code 2).
    #[must_use]
    pub fn is_invalid_input(&self) -> bool {
        // A resource or service that already exists is the user's input clashing with the
        // project, like a file that exists without --force.
        matches!(
            self,
            Self::InvalidInput(_)
                | Self::Universe(UniverseError::AlreadyExists { .. })
                | Self::Project(
                    ProjectError::DuplicateResource(_) | ProjectError::DuplicateService(_)
                )
        )
    }
}

// ANCHOR: context (shown in book/src/writing-plugins.md)
/// What a subcommand works on.
#[derive(Debug)]
pub struct Context<'a> {
    /// The project's files, to read and write.
    pub universe: &'a mut Universe,
    /// The PROJECT file, to read and update.
    pub config: &'a mut ProjectConfig,
    /// The parsed flags of this subcommand.
    pub flags: &'a FlagValues,
    /// The resolved plugin chain, in order (external plugins receive it as `pluginChain`).
    pub chain: &'a [PluginKey],
}

// ANCHOR_END: context

macro_rules! subcommand_trait {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub trait $name: Send + Sync {
            /// Help text for `--help`.
            fn metadata(&self) -> SubcommandMetadata {
                SubcommandMetadata::default()
            }

            /// The flags this subcommand accepts.
            fn flags(&self) -> Vec<FlagSpec> {
                Vec::new()
            }

            /// Checks the input before any plugin in the chain runs; an error here is bad input.
            fn validate(&self, _cx: &Context<'_>) -> Result<(), PluginError> {
                Ok(())
            }

            /// Scaffolds: mutates the Universe and the config.
            fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError>;
        }
    };
}

subcommand_trait!(
    /// `init`: scaffold a new project.
    Init
);
subcommand_trait!(
    /// `create api`: scaffold a resource kind and, optionally, its controller.
    CreateApi
);
subcommand_trait!(
    /// `create webhook`: scaffold defaulting, validation or conversion webhooks.
    CreateWebhook
);
subcommand_trait!(
    /// `edit`: change project-wide settings.
    Edit
);
subcommand_trait!(
    /// `new service`: scaffold a service operator with its backend and frontend.
    NewService
);

// ANCHOR: plugin (shown in book/src/writing-plugins.md)
/// A scaffolding plugin: a key, the project versions it supports and its subcommands.
pub trait Plugin: Send + Sync {
    /// The plugin's key, e.g. `service.mni.dev/v1`.
    fn key(&self) -> &PluginKey;

    /// The PROJECT `version`s this plugin works with (e.g. `["3"]`).
    fn supported_project_versions(&self) -> Vec<String> {
        vec![crate::project::PROJECT_VERSION.to_owned()]
    }

    /// One paragraph for `plugins describe`.
    fn description(&self) -> String {
        String::new()
    }

    /// The `init` implementation, if any.
    fn init(&self) -> Option<&dyn Init> {
        None
    }

    /// The `create api` implementation, if any.
    fn create_api(&self) -> Option<&dyn CreateApi> {
        None
    }

    /// The `create webhook` implementation, if any.
    fn create_webhook(&self) -> Option<&dyn CreateWebhook> {
        None
    }

    /// The `edit` implementation, if any.
    fn edit(&self) -> Option<&dyn Edit> {
        None
    }

    /// The `new service` implementation, if any.
    fn new_service(&self) -> Option<&dyn NewService> {
        None
    }
}

// ANCHOR_END: plugin

/// A subcommand implementation seen through its common methods.
#[derive(Clone, Copy)]
pub enum SubcommandImpl<'a> {
    /// An `init`.
    Init(&'a dyn Init),
    /// A `create api`.
    CreateApi(&'a dyn CreateApi),
    /// A `create webhook`.
    CreateWebhook(&'a dyn CreateWebhook),
    /// An `edit`.
    Edit(&'a dyn Edit),
    /// A `new service`.
    NewService(&'a dyn NewService),
}

macro_rules! each_impl {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            SubcommandImpl::Init($s) => $body,
            SubcommandImpl::CreateApi($s) => $body,
            SubcommandImpl::CreateWebhook($s) => $body,
            SubcommandImpl::Edit($s) => $body,
            SubcommandImpl::NewService($s) => $body,
        }
    };
}

impl SubcommandImpl<'_> {
    /// Help text.
    #[must_use]
    pub fn metadata(&self) -> SubcommandMetadata {
        each_impl!(self, s => s.metadata())
    }

    /// Declared flags.
    #[must_use]
    pub fn flags(&self) -> Vec<FlagSpec> {
        each_impl!(self, s => s.flags())
    }

    /// Input validation.
    pub fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        each_impl!(self, s => s.validate(cx))
    }

    /// Scaffolding.
    pub fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        each_impl!(self, s => s.run(cx))
    }
}

impl fmt::Debug for SubcommandImpl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::Init(_) => Subcommand::Init,
            Self::CreateApi(_) => Subcommand::CreateApi,
            Self::CreateWebhook(_) => Subcommand::CreateWebhook,
            Self::Edit(_) => Subcommand::Edit,
            Self::NewService(_) => Subcommand::NewService,
        };
        write!(f, "SubcommandImpl({name})")
    }
}

/// The implementation of `subcommand` in `plugin`, if it has one.
#[must_use]
pub fn subcommand(plugin: &dyn Plugin, subcommand: Subcommand) -> Option<SubcommandImpl<'_>> {
    match subcommand {
        Subcommand::Init => plugin.init().map(SubcommandImpl::Init),
        Subcommand::CreateApi => plugin.create_api().map(SubcommandImpl::CreateApi),
        Subcommand::CreateWebhook => plugin.create_webhook().map(SubcommandImpl::CreateWebhook),
        Subcommand::Edit => plugin.edit().map(SubcommandImpl::Edit),
        Subcommand::NewService => plugin.new_service().map(SubcommandImpl::NewService),
    }
}

/// Runs `sub` of `plugin` over `cx`, failing with [`PluginError::Unsupported`] when the plugin
/// does not implement it.
pub fn run(plugin: &dyn Plugin, sub: Subcommand, cx: &mut Context<'_>) -> Result<(), PluginError> {
    subcommand(plugin, sub)
        .ok_or_else(|| PluginError::Unsupported {
            key: plugin.key().to_string(),
            subcommand: sub,
        })?
        .run(cx)
}

#[cfg(test)]
mod tests {

    #[test]
    fn duplicates_in_the_project_are_bad_input() {
        assert!(
            PluginError::Project(ProjectError::DuplicateResource("g/v, Kind=K".into()))
                .is_invalid_input()
        );
        assert!(
            PluginError::Project(ProjectError::DuplicateService("billing".into()))
                .is_invalid_input()
        );
        assert!(
            !PluginError::Failed {
                key: "k".into(),
                message: "m".into(),
                source: None
            }
            .is_invalid_input()
        );
    }

    use super::*;
    use crate::universe::IfExists;

    struct Hello(PluginKey);

    impl Init for Hello {
        fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
            let name = cx.flags.string("name").unwrap_or_default();
            cx.universe
                .write("hello.txt", format!("hello {name}\n"), IfExists::Error)?;
            cx.config.domain = "example.com".to_owned();
            Ok(())
        }
    }

    impl Plugin for Hello {
        fn key(&self) -> &PluginKey {
            &self.0
        }
        fn init(&self) -> Option<&dyn Init> {
            Some(self)
        }
    }

    #[test]
    fn dispatches_subcommands() {
        let plugin = Hello("hello/v1".parse().unwrap());
        let mut universe = Universe::new();
        let mut config = ProjectConfig::default();
        let flags = FlagValues::new().with("name", crate::flags::FlagValue::String("mni".into()));
        let mut cx = Context {
            universe: &mut universe,
            config: &mut config,
            flags: &flags,
            chain: &[],
        };
        run(&plugin, Subcommand::Init, &mut cx).unwrap();
        let err = run(&plugin, Subcommand::Edit, &mut cx).unwrap_err();
        assert_eq!(err.to_string(), "plugin hello/v1 does not support `edit`");
        assert_eq!(universe.get("hello.txt"), Some("hello mni\n"));
        assert_eq!(config.domain, "example.com");
        assert_eq!(plugin.supported_project_versions(), ["3"]);
    }

    #[test]
    fn subcommand_names_round_trip() {
        for sub in Subcommand::ALL {
            assert_eq!(sub.as_str().parse::<Subcommand>().unwrap(), sub);
        }
        assert!(
            "create thing"
                .parse::<Subcommand>()
                .unwrap_err()
                .is_invalid_input()
        );
    }
}
