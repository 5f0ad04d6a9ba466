// SPDX-License-Identifier: MIT

//! Reconciles `Harbor`s.
//!
//! The `+mni:rbac` lines below declare what this controller may do; the kustomize plugin
//! derives `config/rbac/role.yaml` from them (and from every other controller's) on each
//! scaffold, so keep them accurate when the reconciler starts touching other kinds.
// +mni:rbac:groups=ships.example.com,resources=harbors,verbs=get;list;watch;update;patch
// +mni:rbac:groups=ships.example.com,resources=harbors/status,verbs=get;update;patch
// +mni:rbac:groups=ships.example.com,resources=harbors/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::ships_v1::Harbor;

/// Why a Harbor reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum HarborError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Harbors.
#[derive(Clone, Debug, Default)]
pub struct HarborReconciler;

impl Reconciler for HarborReconciler {
    type K = Harbor;
    type Error = HarborError;

    fn name(&self) -> &str {
        "harbor-controller"
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
