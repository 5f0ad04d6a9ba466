// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `mni_platform`: the API types and controllers of the `mni-platform` operator.
//!
//! The operator turns cluster-scoped `Tenant`s ([`api::platform_v1alpha1::Tenant`]) into
//! namespaces with a ResourceQuota, a LimitRange, a default-deny NetworkPolicy and RoleBindings
//! for the tenant's groups, nested as Cozystack nests tenants. Start with
//! [`controllers::tenant`]: its `plan` module decides what a tenant needs (or why it is
//! refused), its `desired` module builds the objects. `src/main.rs` registers the controller
//! with a `mni_operator::Manager`; the tests under `tests/` run it against an in-process
//! control plane, with real ServiceAccount tokens for the isolation checks.
//!
//! Beside the operator, the platform's front page: [`registry`] reads which mNi services are
//! installed from OLM's ClusterServiceVersions, [`console`] serves the page listing tenants
//! and services with links to each service's UI (the `mni-console` binary).

pub mod api;
pub mod console;
pub mod controllers;
pub mod registry;
