//! `mni-plugin-kustomize`: the built-in `kustomize.mni.dev/v1` plugin.
//!
//! It writes an operator crate's `config/` tree — `crd`, `rbac`, `manager`, `default`,
//! `samples`, `network-policy`, `prometheus` — the way Kubebuilder's kustomize plugin does, and
//! derives `config/rbac/role.yaml` from the `+mni:rbac` lines the crate's Rust sources declare
//! (see [`v1::rbac`]), so the operator gets exactly the permissions its controllers ask for and
//! never a wildcard. It runs after `rust.mni.dev/v1` in the default bundle and writes into the
//! same crates.

pub mod v1;

pub use v1::{KEY, KustomizeV1};
