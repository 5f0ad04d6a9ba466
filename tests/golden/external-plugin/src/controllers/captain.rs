// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Captain`s.
//!
//! The `+mni:rbac` lines below declare what this controller may do; the kustomize plugin
//! derives `config/rbac/role.yaml` from them (and from every other controller's) on each
//! scaffold, so keep them accurate when the reconciler starts touching other kinds.
// +mni:rbac:groups=crew.example.com,resources=captains,verbs=get;list;watch;update;patch
// +mni:rbac:groups=crew.example.com,resources=captains/status,verbs=get;update;patch
// +mni:rbac:groups=crew.example.com,resources=captains/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::crew_v1::Captain;

/// Why a Captain reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptainError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Captains.
#[derive(Clone, Debug, Default)]
pub struct CaptainReconciler;

impl Reconciler for CaptainReconciler {
    type K = Captain;
    type Error = CaptainError;

    fn name(&self) -> &str {
        "captain-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        // TODO(user): make the world match `obj.spec`, e.g. with `ctx.apply_owned(&obj, child)`
        // for each child object (and `relations()` below to watch them).
        let message = obj.spec.message.as_deref().unwrap_or("reconciled");
        ctx.set_condition(
            &obj,
            READY,
            ConditionStatus::True,
            reasons::RECONCILED,
            message,
        )
        .await?;
        Ok(Action::await_change())
    }
}
