//! [`Bundle`]: several plugins offered under one key, run in order.
//!
//! Kubebuilder's `go/v4` is such a bundle (the Go plugin plus the kustomize plugin); mNi's
//! default chain can be one too. A bundle supports a subcommand when any member does; running it
//! runs each member that supports it, in order. Its flags are the members' flags (first
//! declaration of a name wins) and its supported project versions are those all members share.

use std::collections::BTreeSet;
use std::fmt;

use crate::flags::FlagSpec;
use crate::key::PluginKey;
use crate::plugin::{
    Context, CreateApi, CreateWebhook, Edit, Init, NewService, Plugin, PluginError, Subcommand,
    SubcommandImpl, SubcommandMetadata, subcommand,
};

/// Several plugins under one key. See the docs atop `src/bundle.rs`.
pub struct Bundle {
    key: PluginKey,
    description: String,
    plugins: Vec<Box<dyn Plugin>>,
}

impl Bundle {
    /// A bundle named `key` running `plugins` in order.
    #[must_use]
    pub fn new(key: PluginKey, plugins: Vec<Box<dyn Plugin>>) -> Self {
        Self {
            key,
            description: String::new(),
            plugins,
        }
    }

    /// Sets the description shown by `plugins describe`.
    #[must_use]
    pub fn with_description(mut self, description: &str) -> Self {
        self.description = description.to_owned();
        self
    }

    /// The member plugins, in order.
    #[must_use]
    pub fn plugins(&self) -> &[Box<dyn Plugin>] {
        &self.plugins
    }

    fn members(&self, sub: Subcommand) -> impl Iterator<Item = SubcommandImpl<'_>> {
        self.plugins
            .iter()
            .filter_map(move |p| subcommand(p.as_ref(), sub))
    }

    fn supports(&self, sub: Subcommand) -> bool {
        self.members(sub).next().is_some()
    }

    fn metadata_of(&self, sub: Subcommand) -> SubcommandMetadata {
        let metas: Vec<SubcommandMetadata> = self.members(sub).map(|s| s.metadata()).collect();
        let join = |f: fn(&SubcommandMetadata) -> &str| {
            metas
                .iter()
                .map(f)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        SubcommandMetadata {
            description: join(|m| &m.description),
            examples: join(|m| &m.examples),
        }
    }

    fn flags_of(&self, sub: Subcommand) -> Vec<FlagSpec> {
        let mut seen = BTreeSet::new();
        self.members(sub)
            .flat_map(|s| s.flags())
            .filter(|f| seen.insert(f.name.clone()))
            .collect()
    }

    fn validate_all(&self, sub: Subcommand, cx: &Context<'_>) -> Result<(), PluginError> {
        self.members(sub).try_for_each(|s| s.validate(cx))
    }

    fn run_all(&self, sub: Subcommand, cx: &mut Context<'_>) -> Result<(), PluginError> {
        self.members(sub).try_for_each(|s| s.run(cx))
    }
}

impl fmt::Debug for Bundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let members: Vec<String> = self.plugins.iter().map(|p| p.key().to_string()).collect();
        f.debug_struct("Bundle")
            .field("key", &self.key)
            .field("plugins", &members)
            .finish()
    }
}

macro_rules! bundle_subcommand {
    ($trait:ident, $variant:ident) => {
        impl $trait for Bundle {
            fn metadata(&self) -> SubcommandMetadata {
                self.metadata_of(Subcommand::$variant)
            }
            fn flags(&self) -> Vec<FlagSpec> {
                self.flags_of(Subcommand::$variant)
            }
            fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
                self.validate_all(Subcommand::$variant, cx)
            }
            fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
                self.run_all(Subcommand::$variant, cx)
            }
        }
    };
}

bundle_subcommand!(Init, Init);
bundle_subcommand!(CreateApi, CreateApi);
bundle_subcommand!(CreateWebhook, CreateWebhook);
bundle_subcommand!(Edit, Edit);
bundle_subcommand!(NewService, NewService);

impl Plugin for Bundle {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn supported_project_versions(&self) -> Vec<String> {
        let mut iter = self.plugins.iter().map(|p| p.supported_project_versions());
        let first = iter.next().unwrap_or_default();
        iter.fold(first, |acc, v| {
            acc.into_iter().filter(|x| v.contains(x)).collect()
        })
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn init(&self) -> Option<&dyn Init> {
        self.supports(Subcommand::Init).then_some(self as &dyn Init)
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        self.supports(Subcommand::CreateApi)
            .then_some(self as &dyn CreateApi)
    }

    fn create_webhook(&self) -> Option<&dyn CreateWebhook> {
        self.supports(Subcommand::CreateWebhook)
            .then_some(self as &dyn CreateWebhook)
    }

    fn edit(&self) -> Option<&dyn Edit> {
        self.supports(Subcommand::Edit).then_some(self as &dyn Edit)
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        self.supports(Subcommand::NewService)
            .then_some(self as &dyn NewService)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{FlagType, FlagValues};
    use crate::plugin::run;
    use crate::project::ProjectConfig;
    use crate::universe::{IfExists, Universe};

    struct Writer {
        key: PluginKey,
        file: &'static str,
        versions: Vec<String>,
    }

    impl Init for Writer {
        fn metadata(&self) -> SubcommandMetadata {
            SubcommandMetadata {
                description: format!("writes {}", self.file),
                examples: String::new(),
            }
        }
        fn flags(&self) -> Vec<FlagSpec> {
            vec![FlagSpec::new("domain", FlagType::String, self.file)]
        }
        fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
            cx.universe
                .write(self.file, self.key.to_string(), IfExists::Error)?;
            Ok(())
        }
    }

    impl Plugin for Writer {
        fn key(&self) -> &PluginKey {
            &self.key
        }
        fn supported_project_versions(&self) -> Vec<String> {
            self.versions.clone()
        }
        fn init(&self) -> Option<&dyn Init> {
            Some(self)
        }
    }

    fn writer(key: &str, file: &'static str, versions: &[&str]) -> Box<dyn Plugin> {
        Box::new(Writer {
            key: key.parse().unwrap(),
            file,
            versions: versions.iter().map(|v| (*v).to_owned()).collect(),
        })
    }

    #[test]
    fn runs_members_in_order() {
        let bundle = Bundle::new(
            "default.mni.dev/v1".parse().unwrap(),
            vec![
                writer("a/v1", "a.txt", &["3", "4"]),
                writer("b/v1", "b.txt", &["3"]),
            ],
        );
        assert!(bundle.edit().is_none());
        assert_eq!(bundle.supported_project_versions(), ["3"]);
        let init = bundle.init().unwrap();
        assert_eq!(init.metadata().description, "writes a.txt\n\nwrites b.txt");
        assert_eq!(init.flags().len(), 1);
        assert_eq!(init.flags()[0].help, "a.txt");

        let (mut universe, mut config, flags) =
            (Universe::new(), ProjectConfig::default(), FlagValues::new());
        let mut cx = Context {
            universe: &mut universe,
            config: &mut config,
            flags: &flags,
            chain: &[],
        };
        run(&bundle, Subcommand::Init, &mut cx).unwrap();
        assert_eq!(universe.get("a.txt"), Some("a/v1"));
        assert_eq!(universe.get("b.txt"), Some("b/v1"));
        assert!(format!("{bundle:?}").contains("a/v1"));
    }
}
