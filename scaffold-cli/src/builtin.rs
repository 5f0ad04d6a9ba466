//! The built-in plugins: one list, in one place.
//!
//! [`builtins`] returns every plugin compiled into `mni-scaffold`: `rust.mni.dev/v1` (the
//! operator crates), `kustomize.mni.dev/v1` (their manifests), `service.mni.dev/v1` (a service's
//! CRD, controllers, backend and frontend), `vpc.mni.dev/v1` (the VPC service on Kube-OVN, a
//! whole chain by itself), `vm.mni.dev/v1` (the VM service on KubeVirt, likewise), `baremetal.mni.dev/v1` (the
//! bare-metal service on Metal3, likewise) and the bundle `rust-operator.mni.dev/v1` running
//! the three in that order, which is the [`default_chain`] when neither `--plugins` nor a
//! PROJECT `layout` says otherwise — like Kubebuilder's `go/v4` bundling its Go and kustomize
//! plugins. To add a built-in plugin, construct it in [`builtins`] and, if new
//! projects should use it by default, change [`DEFAULT_CHAIN`]. Nothing else in the CLI needs to
//! change.

use mni_plugin::{Bundle, Plugin, PluginKey};
use mni_plugin_baremetal::BaremetalV1;
use mni_plugin_kustomize::KustomizeV1;
use mni_plugin_rust::RustV1;
use mni_plugin_service::ServiceV1;
use mni_plugin_vm::VmV1;
use mni_plugin_vpc::VpcV1;

/// The key of the default bundle: the Rust plugin, the kustomize plugin, then the service
/// plugin.
pub const RUST_OPERATOR_KEY: &str = "rust-operator.mni.dev/v1";

/// The keys of the default chain, in order.
pub const DEFAULT_CHAIN: &[&str] = &[RUST_OPERATOR_KEY];

/// Every built-in plugin.
///
/// # Panics
///
/// Never: the keys are constants checked by the unit tests.
#[must_use]
pub fn builtins() -> Vec<Box<dyn Plugin>> {
    let bundle = Bundle::new(
        RUST_OPERATOR_KEY.parse().expect("a valid key"),
        vec![
            Box::new(RustV1::new()),
            Box::new(KustomizeV1::new()),
            Box::new(ServiceV1::new()),
        ],
    )
    .with_description(
        "The default chain: rust.mni.dev/v1 (a Rust operator on the mNi runtime), \
         kustomize.mni.dev/v1 (its manifests, with RBAC derived from its controllers), then \
         service.mni.dev/v1 (for `new service`: the service CRD and controller, a domain kind, \
         a backend and a frontend).",
    );
    vec![
        Box::new(bundle),
        Box::new(RustV1::new()),
        Box::new(KustomizeV1::new()),
        Box::new(ServiceV1::new()),
        Box::new(VpcV1::new()),
        Box::new(VmV1::new()),
        Box::new(BaremetalV1::new()),
    ]
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
