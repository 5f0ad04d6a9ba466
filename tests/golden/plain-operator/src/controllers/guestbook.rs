// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Guestbook`s.
//!
//! The `+mni:rbac` lines below declare what this controller may do; the kustomize plugin
//! derives `config/rbac/role.yaml` from them (and from every other controller's) on each
//! scaffold, so keep them accurate when the reconciler starts touching other kinds.
// +mni:rbac:groups=webapp.example.com,resources=guestbooks,verbs=get;list;watch;update;patch
// +mni:rbac:groups=webapp.example.com,resources=guestbooks/status,verbs=get;update;patch
// +mni:rbac:groups=webapp.example.com,resources=guestbooks/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::webapp_v1::Guestbook;

/// Why a Guestbook reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum GuestbookError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Guestbooks.
#[derive(Clone, Debug, Default)]
pub struct GuestbookReconciler;

impl Reconciler for GuestbookReconciler {
    type K = Guestbook;
    type Error = GuestbookError;

    fn name(&self) -> &str {
        "guestbook-controller"
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
