// SPDX-License-Identifier: MIT

//! Reconciles `LedgerAccount`s, the objects the ledger backend creates.
//!
//! A skeleton: it accepts every LedgerAccount and reports `Ready=True`. Fill in what a
//! LedgerAccount means for your service (create an account upstream, apply owned children
//! with `ctx.apply_owned`, …) and keep the `+mni:rbac` lines below accurate: the kustomize
//! plugin derives `config/rbac/role.yaml` from them.
// +mni:rbac:groups=ledger.example.com,resources=ledgeraccounts,verbs=get;list;watch;update;patch
// +mni:rbac:groups=ledger.example.com,resources=ledgeraccounts/status,verbs=get;update;patch
// +mni:rbac:groups=ledger.example.com,resources=ledgeraccounts/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::ledger_v1alpha1::LedgerAccount;

/// Why a LedgerAccount reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum LedgerAccountError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles LedgerAccounts.
#[derive(Clone, Debug, Default)]
pub struct LedgerAccountReconciler;

impl Reconciler for LedgerAccountReconciler {
    type K = LedgerAccount;
    type Error = LedgerAccountError;

    fn name(&self) -> &str {
        "ledger-account-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        // TODO(user): make the world match `obj.spec`.
        let message = format!("{} is ready", obj.spec.display_name);
        ctx.set_condition(
            &obj,
            READY,
            ConditionStatus::True,
            reasons::RECONCILED,
            &message,
        )
        .await?;
        Ok(Action::await_change())
    }
}
