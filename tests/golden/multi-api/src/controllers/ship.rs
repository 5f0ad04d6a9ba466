// SPDX-License-Identifier: MIT

//! Reconciles `Ship`s.
//!
//! The `+mni:rbac` lines below declare what this controller may do; the kustomize plugin
//! derives `config/rbac/role.yaml` from them (and from every other controller's) on each
//! scaffold, so keep them accurate when the reconciler starts touching other kinds.
// +mni:rbac:groups=ships.example.com,resources=ships,verbs=get;list;watch;update;patch
// +mni:rbac:groups=ships.example.com,resources=ships/status,verbs=get;update;patch
// +mni:rbac:groups=ships.example.com,resources=ships/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::ships_v1::Ship;

/// Why a Ship reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum ShipError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Ships.
#[derive(Clone, Debug, Default)]
pub struct ShipReconciler;

impl Reconciler for ShipReconciler {
    type K = Ship;
    type Error = ShipError;

    fn name(&self) -> &str {
        "ship-controller"
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
