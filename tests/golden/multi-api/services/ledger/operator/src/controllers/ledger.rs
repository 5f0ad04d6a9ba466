// SPDX-License-Identifier: MIT

//! Reconciles `Ledger`s: each is one installation of the ledger service.
//!
//! For a Ledger `NAME` the controller server-side-applies, in its namespace and owned by it
//! (so they are garbage-collected with it), the objects [`children`] builds:
//!
//! - ServiceAccount `NAME-backend`, with a Role and a RoleBinding that let the backend do CRUD
//!   on LedgerAccounts in the namespace, and nothing else;
//! - ConfigMap `NAME-backend-settings`, the backend's environment; its checksum is an
//!   annotation of the backend's pod template, so a change rolls the backend;
//! - Deployments `NAME-frontend` and `NAME-backend` under the restricted Pod Security profile,
//!   with liveness (`/healthz`) and readiness (`/readyz`) probes;
//! - Services `NAME-frontend` and `NAME-backend`;
//! - NetworkPolicy `NAME-backend`: only the frontend's pods may reach the backend's.
//!
//! Children that are already in place are not applied again (see [`apply`]), so reconciling a
//! converged Ledger sends nothing to the API server. The controller watches every kind it
//! owns and sets the status from the Deployments (see [`status`]): `Ready` once both are
//! available, `Progressing` while one rolls out, `Degraded` naming a workload that fails. While
//! a workload waits for its pods, the Ledger is looked at again every few seconds: the pods
//! that tell why a workload fails are read then, not watched.
//!
//! What the controller needs for this (derived into `config/rbac/role.yaml`):
// +mni:rbac:groups=ledger.example.com,resources=ledgers,verbs=get;list;watch
// +mni:rbac:groups=ledger.example.com,resources=ledgers/status,verbs=get;update;patch
// +mni:rbac:groups=ledger.example.com,resources=ledgers/finalizers,verbs=update
// +mni:rbac:groups=core,resources=configmaps;serviceaccounts;services,verbs=get;list;watch;create;patch
// +mni:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +mni:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch
// +mni:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch
// +mni:rbac:groups=core,resources=pods,verbs=list
//! Kubernetes lets it grant the backend only permissions it holds itself:
// +mni:rbac:groups=ledger.example.com,resources=ledgeraccounts,verbs=get;list;watch;create;update;patch;delete

pub mod apply;
pub mod children;
pub mod status;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::{
    apps::v1 as apps, core::v1 as corev1, networking::v1 as networking, rbac::v1 as rbac,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use mni_operator::{ContextError, prelude::*};

use crate::api::ledger_v1alpha1::Ledger;
use apply::apply;
use children::{Children, Workload};
use status::Observed;

/// How soon a Ledger whose workload waits for its pods is looked at again.
pub const RECHECK: Duration = Duration::from_secs(5);

/// Why a Ledger reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// Applying a child or writing the status failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// Reading the pods of a workload that is not available failed.
    #[error("list the pods of Deployment {deployment:?}: {source}")]
    Pods {
        /// The Deployment.
        deployment: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The status could not be turned into JSON.
    #[error("serialize the status: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reconciles Ledgers. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct LedgerReconciler;

impl LedgerReconciler {
    /// How many Ledgers are reconciled at once (`src/main.rs` registers the controller with
    /// it): a reconcile mostly waits for the API server.
    pub const CONCURRENCY: u16 = 8;
}

impl Reconciler for LedgerReconciler {
    type K = Ledger;
    type Error = LedgerError;

    fn name(&self) -> &str {
        "ledger-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        if obj.metadata.deletion_timestamp.is_some() {
            // The garbage collector deletes the children; applying them again would only
            // hold up a foreground deletion.
            return Ok(Action::await_change());
        }
        let children = match Children::new(&obj) {
            Ok(children) => children,
            Err(invalid) => {
                ctx.set_condition(
                    &obj,
                    READY,
                    ConditionStatus::False,
                    reasons::INVALID_SPEC,
                    &invalid.to_string(),
                )
                .await?;
                return Ok(Action::await_change());
            }
        };
        // The supporting objects do not depend on one another: one round trip applies them
        // all. The Deployments follow, so that their pods find the ServiceAccount.
        tokio::try_join!(
            apply(ctx, &obj, children.service_account),
            apply(ctx, &obj, children.role),
            apply(ctx, &obj, children.role_binding),
            apply(ctx, &obj, children.settings),
            apply(ctx, &obj, children.frontend_service),
            apply(ctx, &obj, children.backend_service),
            apply(ctx, &obj, children.network_policy),
        )?;
        let (frontend_deployment, backend_deployment) = tokio::try_join!(
            apply(ctx, &obj, children.frontend),
            apply(ctx, &obj, children.backend),
        )?;

        let frontend = observe(ctx, Workload::Frontend, &frontend_deployment).await?;
        let backend = observe(ctx, Workload::Backend, &backend_deployment).await?;
        let current = obj.status.as_ref();
        let desired = status::desired(
            current,
            obj.metadata.generation,
            &frontend,
            &backend,
            &children::url(&obj),
            Timestamp::now(),
        );
        if current != Some(&desired) {
            let patch = serde_json::json!({ "status": serde_json::to_value(&desired)? });
            ctx.patch_status(&obj, &patch).await?;
        }
        // Deployments report their progress through their status, which wakes this
        // controller; pods that wait (and may crash) are read again after a while.
        let deployments = [&frontend_deployment, &backend_deployment];
        if deployments.into_iter().any(status::waits_for_pods) {
            Ok(Action::requeue(RECHECK))
        } else {
            Ok(Action::await_change())
        }
    }

    fn relations(&self) -> Relations<Self::K> {
        Relations::default()
            .owns::<apps::Deployment>()
            .owns::<corev1::Service>()
            .owns::<corev1::ConfigMap>()
            .owns::<corev1::ServiceAccount>()
            .owns::<rbac::Role>()
            .owns::<rbac::RoleBinding>()
            .owns::<networking::NetworkPolicy>()
    }
}

/// Sums up `deployment`; when it waits for its pods, they say whether it fails.
async fn observe(
    ctx: &Context<Ledger>,
    workload: Workload,
    deployment: &apps::Deployment,
) -> Result<Observed, LedgerError> {
    if !status::waits_for_pods(deployment) {
        return Ok(status::observe(workload, deployment, None));
    }
    let name = deployment.name_any();
    let selector = deployment
        .spec
        .selector
        .match_labels
        .as_ref()
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let pods: Api<corev1::Pod> = Api::namespaced(
        ctx.client().clone(),
        deployment.namespace().as_deref().unwrap_or("default"),
    );
    let list = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| LedgerError::Pods {
            deployment: name,
            source,
        })?;
    let failure = list.items.iter().find_map(status::pod_failure);
    Ok(status::observe(workload, deployment, failure))
}
