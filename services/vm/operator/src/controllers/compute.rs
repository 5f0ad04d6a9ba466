// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Compute`s: each is one installation of the compute service.
//!
//! The runtime's workload engine ([`mni_operator::workload`]) does what every service does:
//! for a Compute `NAME` it server-side-applies, in its namespace and owned by it (so they are
//! garbage-collected with it), Deployments `NAME-frontend` and `NAME-backend` under the
//! restricted Pod Security profile, their Services, the backend's ServiceAccount with a Role
//! and RoleBinding (CRUD on Instances in the namespace, nothing else), its settings
//! ConfigMap `NAME-backend-settings` (a change rolls the backend), and a NetworkPolicy that
//! lets only the frontend reach the backend; it skips children already in place, prunes those
//! no longer wanted, and sets `Ready`/`Progressing`/`Degraded` from the Deployments.
//!
//! This file holds what is specific to the compute service: [`workloads`] says what a
//! Compute runs. Change it, or add your own steps to `reconcile`, where marked.
//!
//! What the controller needs for this (derived into `config/rbac/role.yaml`):
// +mni:rbac:groups=compute.mni.dev,resources=computes,verbs=get;list;watch
// +mni:rbac:groups=compute.mni.dev,resources=computes/status,verbs=get;update;patch
// +mni:rbac:groups=compute.mni.dev,resources=computes/finalizers,verbs=update
// +mni:rbac:groups=core,resources=configmaps;serviceaccounts;services,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=core,resources=pods,verbs=list
//! Kubernetes lets it grant the backend only permissions it holds itself:
// +mni:rbac:groups=compute.mni.dev,resources=instances,verbs=get;list;watch;create;update;patch;delete

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::PolicyRule;
use mni_operator::prelude::*;
use mni_operator::workload::{self, ServiceWorkloads, WorkloadError};

use crate::api::compute_v1alpha1::Compute;

/// The service's name: the `app.kubernetes.io/name` label of everything a Compute owns.
pub const SERVICE: &str = "compute";

/// The API group of Computes and Instances.
pub const GROUP: &str = "compute.mni.dev";

/// The resource the backend serves: Instances.
pub const DOMAIN_RESOURCE: &str = "instances";

/// The verbs the backend has on Instances: CRUD, and list/watch to serve lists.
pub const BACKEND_VERBS: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// What the backend may do: CRUD on Instances (in its own namespace, through a Role).
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
pub fn workloads(obj: &Compute) -> ServiceWorkloads {
    ServiceWorkloads::for_owner(obj, SERVICE)
        .with_frontend(obj.spec.frontend.clone())
        .with_backend(obj.spec.backend.clone())
        .with_settings(obj.spec.settings.clone())
        .with_backend_rules(backend_rules())
    // +mni:scaffold:workloads
}

/// Reconciles Computes. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct ComputeReconciler;

impl ComputeReconciler {
    /// How many Computes are reconciled at once (`src/main.rs` registers the controller with
    /// it): a reconcile mostly waits for the API server.
    pub const CONCURRENCY: u16 = 8;
}

impl Reconciler for ComputeReconciler {
    type K = Compute;
    type Error = WorkloadError;

    fn name(&self) -> &str {
        "compute-controller"
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
    use crate::api::compute_v1alpha1::ComputeSpec;

    #[test]
    fn the_backend_gets_crud_on_its_domain_kind_and_nothing_else() {
        let spec = ComputeSpec::default();
        let mut obj = Compute::new("sample", spec);
        obj.metadata.namespace = Some("shop".to_owned());
        let children = workloads(&obj).children().expect("valid");
        let role = children.role.expect("the backend has a Role");
        let rules = role.rules.unwrap_or_default();
        assert_eq!(rules, backend_rules());
        assert_eq!(rules[0].resources, Some(vec![DOMAIN_RESOURCE.to_owned()]));
    }
}
