// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Deletes Kube-OVN objects whose VirtualPrivateCloud is gone.
//!
//! The finalizer of `VirtualPrivateCloudReconciler` normally cleans up; this sweeper covers
//! the rest — a finalizer removed by hand, a VirtualPrivateCloud deleted and recreated under
//! the same name (a new uid) while the operator was down. It reconciles every Kube-OVN `Vpc`
//! carrying this operator's owner labels — each one when the operator starts, then every
//! [`SWEEP`] — and when no VirtualPrivateCloud with that namespace, name and uid exists, it
//! deletes every Kube-OVN object labelled with that uid. The owner is looked up in the cache
//! and, before anything is deleted, confirmed missing by the API server.
//! Objects of other owners (no labels) are never touched.
//!
//! Register it with error reporting off: a Kube-OVN Vpc's status is Kube-OVN's.
// +mni:rbac:groups=network.mni.dev,resources=virtualprivateclouds,verbs=get;list;watch
// +mni:rbac:groups=kubeovn.io,resources=vpcs;subnets;vpc-nat-gateways;iptables-eips;iptables-snat-rules;iptables-dnat-rules,verbs=get;list;watch;delete

use std::sync::Arc;
use std::time::Duration;

use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use mni_kubeovn::v1 as ovn;
use mni_operator::prelude::*;

use super::virtual_private_cloud::upstream::{owner_of, vpc_name_of};
use super::virtual_private_cloud::{VirtualPrivateCloudError, delete_owned};
use crate::api::network_v1alpha1::VirtualPrivateCloud;

/// How soon an orphan whose objects are still being deleted is looked at again.
pub const RECHECK: Duration = Duration::from_secs(2);

/// How often a Kube-OVN Vpc with an owner is checked again (a cache read).
pub const SWEEP: Duration = Duration::from_secs(300);

/// Sweeps up Kube-OVN objects without a VirtualPrivateCloud. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct KubeOvnOrphanReconciler;

impl Reconciler for KubeOvnOrphanReconciler {
    type K = ovn::Vpc;
    type Error = VirtualPrivateCloudError;

    fn name(&self) -> &str {
        "kube-ovn-orphan-sweeper"
    }

    async fn reconcile(
        &self,
        vpc: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        let Some((namespace, name, uid)) = owner_of(&vpc.metadata) else {
            return Ok(Action::await_change());
        };
        let owner_ref = ObjectRef::<VirtualPrivateCloud>::new(&name).within(&namespace);
        let cached = ctx
            .store::<VirtualPrivateCloud>()
            .and_then(|store| store.get(&owner_ref));
        if cached.is_some_and(|o| o.uid().as_deref() == Some(uid.as_str())) {
            return Ok(Action::requeue(SWEEP));
        }
        let owner = Api::<VirtualPrivateCloud>::namespaced(ctx.client().clone(), &namespace)
            .get_opt(&name)
            .await
            .map_err(|source| VirtualPrivateCloudError::Upstream {
                action: "get the owner of",
                kind: "Vpc".to_owned(),
                name: vpc.name_any(),
                source,
            })?;
        if owner.is_some_and(|o| o.uid().as_deref() == Some(uid.as_str())) {
            return Ok(Action::requeue(SWEEP));
        }
        let found = delete_owned(ctx.client(), &uid).await?;
        if found > 0 {
            tracing::info!(%namespace, %name, %uid, found, "deleted the Kube-OVN objects of a VirtualPrivateCloud that is gone");
            return Ok(Action::requeue(RECHECK));
        }
        Ok(Action::await_change())
    }

    fn relations(&self) -> Relations<Self::K> {
        // A VirtualPrivateCloud that goes (or comes) may orphan (or adopt) its Kube-OVN Vpc.
        Relations::default().watches::<VirtualPrivateCloud, _>(|vpc| {
            let namespace = vpc.namespace().unwrap_or_default();
            Some(ObjectRef::new(&vpc_name_of(&namespace, &vpc.name_any())))
        })
    }
}
