//! Every plugin the CLI can run, built-in and external, under one lookup.
//!
//! Start with [`Registry::discover`]: it takes the [built-ins](crate::builtin) and the external
//! plugins found on disk (a built-in wins over an external plugin with the same key, with a
//! warning). [`Registry::resolver`] feeds their keys to `mni-plugin`'s `ChainResolver`;
//! [`Registry::get`] returns a [`PluginRef`] to run; [`Registry::list`] and
//! [`Registry::describe`] back `plugins list` and `plugins describe`.

use std::fmt::Write as _;
use std::path::Path;

use mni_plugin::{
    ChainResolver, FlagSpec, Plugin, PluginKey, ResolveError, Subcommand, SubcommandMetadata,
};

use crate::builtin;
use crate::external::{self, ExternalError, ExternalPlugin, Runner};

/// Why a plugin could not be listed or described.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The key matches no plugin, or several.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// An external plugin failed to answer `metadata` or `flags`.
    #[error(transparent)]
    External(#[from] ExternalError),
}

/// A plugin to run: compiled in, or an executable.
#[derive(Clone, Copy)]
pub enum PluginRef<'a> {
    /// A built-in plugin, run in-process.
    BuiltIn(&'a dyn Plugin),
    /// An external plugin, run as a process.
    External(&'a ExternalPlugin),
}

impl std::fmt::Debug for PluginRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BuiltIn(p) => write!(f, "BuiltIn({})", p.key()),
            Self::External(p) => write!(f, "External({})", p.key),
        }
    }
}

impl PluginRef<'_> {
    /// Whether the plugin implements `sub`. External plugins are asked at run time, as
    /// Kubebuilder does, so they count as supporting every subcommand.
    #[must_use]
    pub fn supports(&self, sub: Subcommand) -> bool {
        match self {
            Self::BuiltIn(p) => mni_plugin::subcommand(*p, sub).is_some(),
            Self::External(_) => true,
        }
    }
}

/// Built-in and external plugins under one lookup; a built-in shadows an external plugin with
/// the same key, unless the key is one the user asked installed plugins to replace
/// (`MNI_REPLACE_BUILTINS`): then the external plugin takes the built-in's place.
pub struct Registry {
    builtins: Vec<Box<dyn Plugin>>,
    externals: Vec<ExternalPlugin>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("keys", &self.keys())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// The built-ins plus the external plugins under `plugins_dir` (if any); an installed
    /// plugin whose key is in `replace` is run instead of the built-in of that key.
    #[must_use]
    pub fn discover(plugins_dir: Option<&Path>, replace: &[PluginKey]) -> Self {
        let (externals, warnings) = plugins_dir.map(external::discover).unwrap_or_default();
        let builtins = builtin::builtins()
            .into_iter()
            .filter(|b| !(replace.contains(b.key()) && externals.iter().any(|e| &e.key == b.key())))
            .collect();
        Self::new(builtins, externals, warnings)
    }

    /// A registry over the given plugins.
    #[must_use]
    pub fn new(
        builtins: Vec<Box<dyn Plugin>>,
        externals: Vec<ExternalPlugin>,
        mut warnings: Vec<String>,
    ) -> Self {
        let externals = externals
            .into_iter()
            .filter(|e| {
                let shadowed = builtins.iter().any(|b| b.key() == &e.key);
                if shadowed {
                    warnings.push(format!(
                        "ignoring external plugin {}: {} is built in",
                        e.path.display(),
                        e.key
                    ));
                }
                !shadowed
            })
            .collect();
        Self {
            builtins,
            externals,
            warnings,
        }
    }

    /// The external plugins (those a built-in shadows left out).
    #[must_use]
    pub fn externals(&self) -> &[ExternalPlugin] {
        &self.externals
    }

    /// Problems found while discovering external plugins.
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every key, built-ins first.
    #[must_use]
    pub fn keys(&self) -> Vec<PluginKey> {
        self.builtins
            .iter()
            .map(|p| p.key().clone())
            .chain(self.externals.iter().map(|e| e.key.clone()))
            .collect()
    }

    /// A chain resolver over every key, with the built-in default chain.
    #[must_use]
    pub fn resolver(&self) -> ChainResolver {
        ChainResolver::new(self.keys()).with_default(&builtin::default_chain())
    }

    /// The plugin with exactly this key.
    #[must_use]
    pub fn get(&self, key: &PluginKey) -> Option<PluginRef<'_>> {
        self.builtins
            .iter()
            .find(|p| p.key() == key)
            .map(|p| PluginRef::BuiltIn(p.as_ref()))
            .or_else(|| {
                self.externals
                    .iter()
                    .find(|e| &e.key == key)
                    .map(PluginRef::External)
            })
    }

    /// The `plugins list` table.
    #[must_use]
    pub fn list(&self) -> String {
        let default = builtin::default_chain();
        let mut rows = vec![(
            "KEY".to_owned(),
            "KIND".to_owned(),
            "SUBCOMMANDS / PATH".to_owned(),
        )];
        for p in &self.builtins {
            let subs: Vec<&str> = Subcommand::ALL
                .into_iter()
                .filter(|s| mni_plugin::subcommand(p.as_ref(), *s).is_some())
                .map(Subcommand::as_str)
                .collect();
            let mark = if default.contains(p.key()) {
                " (default)"
            } else {
                ""
            };
            rows.push((
                format!("{}{mark}", p.key()),
                "built-in".to_owned(),
                subs.join(", "),
            ));
        }
        for e in &self.externals {
            rows.push((
                e.key.to_string(),
                "external".to_owned(),
                e.path.display().to_string(),
            ));
        }
        let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        let mut out = String::new();
        for (key, kind, rest) in rows {
            let _ = writeln!(out, "{key:<width$}  {kind:<8}  {rest}");
        }
        out
    }

    /// The `plugins describe` text for `query` (a key or short name). External plugins are
    /// asked for `metadata` and `flags` of each subcommand, running in `cwd`.
    pub fn describe(
        &self,
        query: &str,
        runner: &Runner,
        cwd: &Path,
    ) -> Result<String, RegistryError> {
        let key = ChainResolver::new(self.keys()).resolve_one(query)?;
        let mut out = String::new();
        match self.get(&key) {
            Some(PluginRef::BuiltIn(p)) => {
                let _ = writeln!(out, "{key} (built-in)");
                if !p.description().is_empty() {
                    let _ = writeln!(out, "  {}", p.description());
                }
                let _ = writeln!(
                    out,
                    "  project versions: {}",
                    p.supported_project_versions().join(", ")
                );
                for sub in Subcommand::ALL {
                    if let Some(s) = mni_plugin::subcommand(p, sub) {
                        section(&mut out, sub, &s.metadata(), &s.flags());
                    }
                }
            }
            Some(PluginRef::External(e)) => {
                let _ = writeln!(out, "{key} (external: {})", e.path.display());
                if let (Some(sha), Some(source)) = (&e.sha256, &e.source) {
                    let _ = writeln!(out, "  installed from a catalog: {source}, sha256 {sha}");
                }
                for sub in Subcommand::ALL {
                    let (metadata, flags) = e.describe(runner, cwd, sub)?;
                    if metadata != SubcommandMetadata::default() || !flags.is_empty() {
                        section(&mut out, sub, &metadata, &flags);
                    }
                }
            }
            None => {}
        }
        Ok(out)
    }
}

fn section(out: &mut String, sub: Subcommand, metadata: &SubcommandMetadata, flags: &[FlagSpec]) {
    let _ = writeln!(out, "\n{sub}");
    for line in metadata.description.lines() {
        let _ = writeln!(out, "  {line}");
    }
    if !metadata.examples.is_empty() {
        let _ = writeln!(out, "  examples:");
        for line in metadata.examples.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    if !flags.is_empty() {
        let _ = writeln!(out, "  flags:");
        for f in flags {
            let default = f
                .default
                .as_ref()
                .map(|d| format!(" (default {d:?})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    --{} {}{default}  {}",
                f.name,
                f.flag_type.as_str(),
                f.help
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_describes_built_ins() {
        let registry = Registry::discover(None, &[]);
        let list = registry.list();
        assert!(
            list.lines().nth(1).is_some_and(|l| l.starts_with(
                "rust-operator.mni.dev/v1 (default)  built-in  init, new service, create api"
            )),
            "{list}"
        );
        let runner = Runner::new(
            [],
            external::Limits {
                timeout: std::time::Duration::from_secs(1),
                max_output: 1024,
            },
        );
        let text = registry.describe("rust", &runner, Path::new(".")).unwrap();
        assert!(text.starts_with("rust.mni.dev/v1 (built-in)\n"), "{text}");
        assert!(
            text.contains("--domain string (default \"my.domain\")"),
            "{text}"
        );
        let err = registry
            .describe("nope", &runner, Path::new("."))
            .unwrap_err();
        assert!(
            err.to_string().contains("no plugin matches \"nope\""),
            "{err}"
        );
    }

    #[test]
    fn an_installed_plugin_replaces_a_built_in_only_when_asked() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let version = dir.path().join("vpc.mni.dev/v1");
        std::fs::create_dir_all(&version).unwrap();
        let bin = version.join("vpc.mni.dev");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let vpc: PluginKey = "vpc.mni.dev/v1".parse().unwrap();
        let vm: PluginKey = "vm.mni.dev/v1".parse().unwrap();

        let shadowed = Registry::discover(Some(dir.path()), &[]);
        assert!(shadowed.externals().is_empty());
        assert!(
            shadowed
                .warnings()
                .iter()
                .any(|w| w.contains("vpc.mni.dev/v1 is built in")),
            "{:?}",
            shadowed.warnings()
        );

        let replaced = Registry::discover(Some(dir.path()), &[vpc.clone(), vm.clone()]);
        assert_eq!(replaced.externals().len(), 1);
        assert_eq!(replaced.externals()[0].key, vpc);
        assert!(replaced.warnings().is_empty(), "{:?}", replaced.warnings());
        // Asked to replace a built-in no installed plugin has: the built-in stays.
        assert!(replaced.keys().contains(&vm));
        assert_eq!(replaced.keys().iter().filter(|k| **k == vpc).count(), 1);
    }
}
