//! The built-in plugins: one list, in one place.
//!
//! [`builtins`] returns every plugin compiled into `mni-scaffold`; [`default_chain`] is the chain
//! used when neither `--plugins` nor a PROJECT `layout` says otherwise. To add a built-in plugin
//! (e.g. the Rust, kustomize or service plugins), construct it in [`builtins`] and, if new
//! projects should use it by default, add its key to [`DEFAULT_CHAIN`]. Nothing else in the CLI
//! needs to change.

mod base;

use mni_plugin::{Plugin, PluginKey};

pub use base::{BASE_KEY, Base};

/// The keys of the default chain, in order.
pub const DEFAULT_CHAIN: &[&str] = &[BASE_KEY];

/// Every built-in plugin.
#[must_use]
pub fn builtins() -> Vec<Box<dyn Plugin>> {
    vec![Box::new(Base::new())]
}

/// The default chain, as keys.
#[must_use]
pub fn default_chain() -> Vec<PluginKey> {
    DEFAULT_CHAIN
        .iter()
        .filter_map(|k| k.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_chain_is_built_in() {
        let keys: Vec<PluginKey> = builtins().iter().map(|p| p.key().clone()).collect();
        assert_eq!(default_chain().len(), DEFAULT_CHAIN.len());
        assert!(default_chain().iter().all(|k| keys.contains(k)));
    }
}
