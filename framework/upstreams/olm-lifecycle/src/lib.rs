//! `mni-olm-lifecycle`: the Operator Lifecycle Manager's catalog-operator and olm-operator
//! roles for mNi's API server, on OLM's own `operators.coreos.com` CRDs loaded unchanged.
//!
//! `mni-dev up --olm` runs it. Start with [`Lifecycle`] (the controller set and its
//! builder), then read the modules in the order a Subscription flows through them:
//! `catalogs` (CatalogSources from file-based catalogs — a ConfigMap with
//! `sourceType: configmap`, or a directory named by the [`CATALOG_DIR_ANNOTATION`] — and
//! OperatorGroups), `subscriptions` and `resolver` (channel heads, upgrade edges,
//! dependencies as Subscriptions, `ResolutionFailed`), `installplans` (approval, steps) and
//! `csvs` (requirements, ServiceAccounts, RBAC, Deployments, health, replacement).
//! `catalog` holds the minimal FBC model, private so it can be swapped for shared types.
//!
//! Not modelled: gRPC catalogs and bundle images (bundles travel as `olm.bundle.object`
//! properties), copied CSVs in target namespaces, OperatorConditions, webhooks and
//! APIServices of CSVs, install modes, SAT-based conflict search.
//!
//! **Architecture Invariant:** only OLM's CRDs and the Kubernetes API are used: a user's
//! CatalogSource, OperatorGroup and Subscription YAML is upstream's.

mod catalog;
mod catalogs;
mod controller;
mod crds;
mod csvs;
mod installplans;
mod objects;
mod resolver;
mod subscriptions;

pub use catalogs::CATALOG_DIR_ANNOTATION;
pub use controller::{DEFAULT_INSTALL_TIMEOUT, DEFAULT_POLL_INTERVAL, Error, Lifecycle};
pub use crds::{Error as CrdError, crds};
pub use objects::FIELD_MANAGER;

/// The dynamic resources of OLM's kinds, for clients that write them (`mni-dev up --with`).
pub mod resources {
    pub use crate::objects::{catalog_source, csv, install_plan, operator_group, subscription};
}
