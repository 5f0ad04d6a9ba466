// SPDX-License-Identifier: MIT

//! Reconciles `Entry`s.
//!
//! The `+mni:rbac` lines below declare what this controller may do; the kustomize plugin
//! derives `config/rbac/role.yaml` from them (and from every other controller's) on each
//! scaffold, so keep them accurate when the reconciler starts touching other kinds.
// +mni:rbac:groups=ledger.example.com,resources=entries,verbs=get;list;watch;update;patch
// +mni:rbac:groups=ledger.example.com,resources=entries/status,verbs=get;update;patch
// +mni:rbac:groups=ledger.example.com,resources=entries/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::ledger_v1beta1::Entry;

/// Why a Entry reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Entrys.
#[derive(Clone, Debug, Default)]
pub struct EntryReconciler;

impl Reconciler for EntryReconciler {
    type K = Entry;
    type Error = EntryError;

    fn name(&self) -> &str {
        "entry-controller"
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
