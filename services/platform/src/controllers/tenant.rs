// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Tenant`s.
//!
//! The `+mni:rbac` lines below declare what this controller may do; the kustomize plugin
//! derives `config/rbac/role.yaml` from them (and from every other controller's) on each
//! scaffold, so keep them accurate when the reconciler starts touching other kinds.
// +mni:rbac:groups=platform.mni.dev,resources=tenants,verbs=get;list;watch;update;patch
// +mni:rbac:groups=platform.mni.dev,resources=tenants/status,verbs=get;update;patch
// +mni:rbac:groups=platform.mni.dev,resources=tenants/finalizers,verbs=update

use std::sync::Arc;

use mni_operator::{ContextError, prelude::*};

use crate::api::platform_v1alpha1::Tenant;

/// Why a Tenant reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum TenantError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Tenants.
#[derive(Clone, Debug, Default)]
pub struct TenantReconciler;

impl Reconciler for TenantReconciler {
    type K = Tenant;
    type Error = TenantError;

    fn name(&self) -> &str {
        "tenant-controller"
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
