// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Metal`s: each is one installation of the metal service.
//!
//! The runtime's workload engine ([`mni_operator::workload`]) does what every service does:
//! for a Metal `NAME` it server-side-applies, in its namespace and owned by it (so they are
//! garbage-collected with it), Deployments `NAME-frontend` and `NAME-backend` under the
//! restricted Pod Security profile, their Services, the backend's ServiceAccount with a Role
//! and RoleBinding (CRUD on Servers in the namespace, nothing else), its settings
//! ConfigMap `NAME-backend-settings` (a change rolls the backend), and a NetworkPolicy that
//! lets only the frontend reach the backend; it skips children already in place, prunes those
//! no longer wanted, and sets `Ready`/`Progressing`/`Degraded` from the Deployments.
//!
//! This file holds what is specific to the metal service: [`workloads`] says what a
//! Metal runs. Change it, or add your own steps to `reconcile`, where marked.
//!
//! What the controller needs for this (derived into `config/rbac/role.yaml`):
// +mni:rbac:groups=metal.mni.dev,resources=metals,verbs=get;list;watch
// +mni:rbac:groups=metal.mni.dev,resources=metals/status,verbs=get;update;patch
// +mni:rbac:groups=metal.mni.dev,resources=metals/finalizers,verbs=update
// +mni:rbac:groups=core,resources=configmaps;serviceaccounts;services,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=core,resources=pods,verbs=list
//! Kubernetes lets it grant the backend only permissions it holds itself:
// +mni:rbac:groups=metal.mni.dev,resources=servers,verbs=get;list;watch;create;update;patch;delete

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::PolicyRule;
use mni_operator::prelude::*;
use mni_operator::workload::{self, ServiceWorkloads, WorkloadError};

use crate::api::metal_v1alpha1::Metal;

/// The service's name: the `app.kubernetes.io/name` label of everything a Metal owns.
pub const SERVICE: &str = "metal";

/// The API group of Metals and Servers.
pub const GROUP: &str = "metal.mni.dev";

/// The resource the backend serves: Servers.
pub const DOMAIN_RESOURCE: &str = "servers";

/// The verbs the backend has on Servers: CRUD, and list/watch to serve lists.
pub const BACKEND_VERBS: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// What the backend may do: CRUD on Servers (in its own namespace, through a Role).
#[must_use]
pub fn backend_rules() -> Vec<PolicyRule> {
    vec![PolicyRule {
        api_groups: Some(vec![GROUP.to_owned()]),
        resources: Some(vec![DOMAIN_RESOURCE.to_owned()]),
        verbs: BACKEND_VERBS.iter().map(|v| (*v).to_owned()).collect(),
        ..Default::default()
    }]
}

/// What `obj` runs: its frontend and backend, the backend's settings and permissions.
pub fn workloads(obj: &Metal) -> ServiceWorkloads {
    ServiceWorkloads::for_owner(obj, SERVICE)
        .with_frontend(obj.spec.frontend.clone())
        .with_backend(obj.spec.backend.clone())
        .with_settings(obj.spec.settings.clone())
        .with_backend_rules(backend_rules())
    // +mni:scaffold:workloads
}

/// Reconciles Metals. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct MetalReconciler;

impl MetalReconciler {
    /// How many Metals are reconciled at once (`src/main.rs` registers the controller with
    /// it): a reconcile mostly waits for the API server.
    pub const CONCURRENCY: u16 = 8;
}

impl Reconciler for MetalReconciler {
    type K = Metal;
    type Error = WorkloadError;

    fn name(&self) -> &str {
        "metal-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        // TODO(user): steps of your own before the workloads are applied go here.
        workloads(&obj)
            .reconcile(ctx, &obj, obj.status.as_ref())
            .await
    }

    fn relations(&self) -> Relations<Self::K> {
        workload::relations()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::metal_v1alpha1::MetalSpec;

    #[test]
    fn the_backend_gets_crud_on_its_domain_kind_and_nothing_else() {
        let spec = MetalSpec::default();
        let mut obj = Metal::new("sample", spec);
        obj.metadata.namespace = Some("shop".to_owned());
        let children = workloads(&obj).children().expect("valid");
        let role = children.role.expect("the backend has a Role");
        let rules = role.rules.unwrap_or_default();
        assert_eq!(rules, backend_rules());
        assert_eq!(rules[0].resources, Some(vec![DOMAIN_RESOURCE.to_owned()]));
    }
}
