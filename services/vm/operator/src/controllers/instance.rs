// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Instance`s onto KubeVirt (`kubevirt.io/v1`, `cdi.kubevirt.io/v1beta1`).
//!
//! For each Instance the controller:
//!
//! 1. validates the spec with [`validate`]; when a rule is broken it reports `Degraded`
//!    (`InvalidSpec`, the message names the field) and touches nothing upstream;
//! 2. with a VPC subnet, reads the VPC service's `VirtualPrivateCloud` through its published
//!    API ([`network`]) and waits — `Progressing`, reason `WaitingForNetwork` — until the
//!    subnet is Ready; a subnet the VPC does not have or a fixed address outside it is
//!    `Degraded` (`SubnetNotFound`, `AddressInvalid`). While waiting it looks again every
//!    [`NETWORK_POLL`]; an attached instance re-reads its VPC every [`NETWORK_RECHECK`], so a
//!    subnet deleted under it is reported (`SubnetNotFound`) — the VPC service does not refuse
//!    the deletion, it does not know its consumers;
//! 3. reads the SSH keys from the Secret `spec.cloudInit.sshKeys` names (a missing Secret is
//!    `Degraded`, `SecretNotFound`, and looked for again every [`NETWORK_POLL`]), and applies
//!    the cloud-init Secret with the user data and keys;
//! 4. server-side applies the VirtualMachine [`upstream::virtual_machine`] builds, owned by
//!    the Instance (so deleting the Instance deletes the VM, its DataVolumes and its
//!    instance through the garbage collector), after checking that a VM of that name is not
//!    someone else's (`NameTaken`);
//! 5. restarts the running instance once per new `spec.restartRequestedAt`, as
//!    `virtctl restart` does (a `Stop` and a `Start` state change request on the VM);
//! 6. sets the status from KubeVirt's (see [`status`]).
//!
//! A spec change under a running instance is applied to the VM's template, and KubeVirt
//! reports `RestartRequired` until the instance restarts: the Instance shows the same
//! condition (nothing restarts by itself).
//!
//! What the controller needs (derived into `config/rbac/role.yaml`):
// +mni:rbac:groups=compute.mni.dev,resources=instances,verbs=get;list;watch;update;patch
// +mni:rbac:groups=compute.mni.dev,resources=instances/status,verbs=get;update;patch
// +mni:rbac:groups=kubevirt.io,resources=virtualmachines,verbs=get;list;watch;create;update;patch;delete
// +mni:rbac:groups=kubevirt.io,resources=virtualmachines/status,verbs=get;patch
// +mni:rbac:groups=kubevirt.io,resources=virtualmachineinstances,verbs=get;list;watch
// +mni:rbac:groups=cdi.kubevirt.io,resources=datavolumes,verbs=get;list;watch
// +mni:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +mni:rbac:groups=network.mni.dev,resources=virtualprivateclouds,verbs=get;list;watch

pub mod network;
pub mod status;
pub mod upstream;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use mni_kubevirt::cdi::DataVolume;
use mni_kubevirt::v1::{VirtualMachine, VirtualMachineInstance};
use mni_operator::{ContextError, prelude::*};
use serde_json::{Value, json};

use crate::api::compute_v1alpha1::validate::{message, validate};
use crate::api::compute_v1alpha1::{Instance, InstanceStatus};
use network::{Resolved, VirtualPrivateCloud};
use status::{Blocked, Observed};
use upstream::INSTANCE_LABEL;

/// How often an instance waiting for its network or its SSH-key Secret looks again.
pub const NETWORK_POLL: Duration = Duration::from_secs(2);

/// How often an instance in a VPC subnet re-reads its VirtualPrivateCloud.
pub const NETWORK_RECHECK: Duration = Duration::from_secs(30);

/// Why an Instance reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstanceError {
    /// Writing the status, an event or a child failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A request about another object failed.
    #[error("{action} {kind} {name:?}: {source}")]
    Api {
        /// What was being done (`get`, `delete`, `patch status of`).
        action: &'static str,
        /// The kind.
        kind: &'static str,
        /// The object's name.
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The status could not be turned into JSON.
    #[error("serialize the status: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reconciles Instances. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct InstanceReconciler;

impl Reconciler for InstanceReconciler {
    type K = Instance;
    type Error = InstanceError;

    fn name(&self) -> &str {
        "instance-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        let client = ctx.client();

        let errors = validate(&obj.spec);
        if !errors.is_empty() {
            let blocked = Blocked::new(status::INVALID_SPEC, message(&errors));
            return finish(ctx, &obj, Some(&blocked), Observed::default(), None).await;
        }

        // The network: the pod network, or a VPC subnet once it is Ready.
        let attachment = obj.spec.network.as_ref().and_then(|n| n.vpc.as_ref());
        let mut logical_switch = None;
        if let Some(attachment) = attachment {
            let vpcs = Api::<VirtualPrivateCloud>::namespaced(client.clone(), &namespace);
            let vpc = get_opt(&vpcs, &attachment.name, "VirtualPrivateCloud").await?;
            match network::resolve(vpc.as_ref(), attachment) {
                Resolved::Ready { logical_switch: ls } => logical_switch = Some(ls),
                Resolved::Waiting(message) => {
                    let blocked = Blocked::new(status::WAITING_FOR_NETWORK, message);
                    return finish(
                        ctx,
                        &obj,
                        Some(&blocked),
                        Observed::default(),
                        Some(NETWORK_POLL),
                    )
                    .await;
                }
                Resolved::Invalid(reason, message) => {
                    let blocked = Blocked::new(reason, message);
                    return finish(
                        ctx,
                        &obj,
                        Some(&blocked),
                        Observed::default(),
                        Some(NETWORK_RECHECK),
                    )
                    .await;
                }
            }
        }

        // Cloud-init: the user data and the SSH keys of the Secret.
        let cloud_init = obj.spec.cloud_init.as_ref();
        let key_secret = cloud_init
            .and_then(|c| c.ssh_keys.as_ref())
            .map(|s| s.name.clone());
        let mut keys = Vec::new();
        if let Some(secret_name) = &key_secret {
            let secrets = Api::<Secret>::namespaced(client.clone(), &namespace);
            match get_opt(&secrets, secret_name, "Secret").await? {
                Some(secret) => keys = upstream::ssh_keys(&secret),
                None => {
                    let blocked = Blocked::new(
                        status::SECRET_NOT_FOUND,
                        format!(
                            "cloudInit.sshKeys: Secret {secret_name} does not exist in namespace {namespace}"
                        ),
                    );
                    return finish(
                        ctx,
                        &obj,
                        Some(&blocked),
                        Observed::default(),
                        Some(NETWORK_POLL),
                    )
                    .await;
                }
            }
        }
        let user_data = match upstream::user_data(cloud_init, key_secret.as_deref(), &keys) {
            Ok(data) => data,
            Err(e) => {
                let blocked = Blocked::new(status::CLOUD_INIT_INVALID, e.to_string());
                return finish(ctx, &obj, Some(&blocked), Observed::default(), None).await;
            }
        };

        // A VirtualMachine of this name that is not ours is left alone.
        let vms = Api::<VirtualMachine>::namespaced(client.clone(), &namespace);
        if let Some(existing) = get_opt(&vms, &name, "VirtualMachine").await?
            && !existing
                .owner_references()
                .iter()
                .any(|r| r.controller == Some(true) && Some(&r.uid) == obj.metadata.uid.as_ref())
        {
            let blocked = Blocked::new(
                status::NAME_TAKEN,
                format!(
                    "metadata.name: a VirtualMachine {name} that is not this Instance's exists; rename the Instance"
                ),
            );
            return finish(ctx, &obj, Some(&blocked), Observed::default(), None).await;
        }

        match &user_data {
            Some(data) => {
                ctx.apply_owned(&*obj, upstream::cloud_init_secret(&obj, data))
                    .await?;
            }
            None => {
                // A Secret left from earlier user data goes (the cache says whether there is one).
                let secret = upstream::cloud_init_secret_name(&name);
                let cached = ctx
                    .store::<Secret>()
                    .is_some_and(|s| s.get(&ObjectRef::new(&secret).within(&namespace)).is_some());
                if cached {
                    delete_secret(client, &namespace, &secret).await?;
                }
            }
        }
        let vm = upstream::virtual_machine(&obj, logical_switch.as_deref(), user_data.is_some());
        let vm = ctx.apply_owned(&*obj, vm).await?;

        let vmi = ctx
            .store::<VirtualMachineInstance>()
            .and_then(|s| s.get(&ObjectRef::new(&name).within(&namespace)));
        let boot_name = upstream::boot_volume_name(&name);
        let boot = obj.spec.boot_disk.http.as_ref().and_then(|_| {
            ctx.store::<DataVolume>()
                .and_then(|s| s.get(&ObjectRef::new(&boot_name).within(&namespace)))
        });

        // A restart asked for with a new restartRequestedAt: stop, then start, as virtctl does.
        let asked = obj.spec.restart_requested_at.clone();
        let done = obj.status.as_ref().and_then(|s| s.restarted_at.clone());
        if let Some(asked) = asked.filter(|a| Some(a) != done.as_ref())
            && let Some(vmi) = &vmi
        {
            restart(ctx, &vms, &obj, vmi, &asked).await?;
        }
        let observed = Observed {
            vm: Some(&vm),
            vmi: vmi.as_deref(),
            boot: boot.as_deref(),
        };
        let requeue = attachment.map(|_| NETWORK_RECHECK);
        finish(ctx, &obj, None, observed, requeue).await
    }

    fn relations(&self) -> Relations<Self::K> {
        Relations::default()
            .owns::<VirtualMachine>()
            .owns::<Secret>()
            .watches::<VirtualMachineInstance, _>(|o| instance_ref(&o.metadata))
            .watches::<DataVolume, _>(|o| instance_ref(&o.metadata))
    }
}

/// Restarts the running instance `vmi` of `obj`, as `virtctl restart` does: a `Stop` of this
/// instance and a `Start` state change request on the VM.
async fn restart(
    ctx: &Context<Instance>,
    vms: &Api<VirtualMachine>,
    obj: &Instance,
    vmi: &VirtualMachineInstance,
    asked: &str,
) -> Result<(), InstanceError> {
    let name = obj.name_any();
    let patch = json!({ "status": { "stateChangeRequests": [
        { "action": "Stop", "uid": vmi.metadata.uid },
        { "action": "Start" },
    ] } });
    vms.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| InstanceError::Api {
            action: "patch status of",
            kind: "VirtualMachine",
            name: name.clone(),
            source,
        })?;
    let note = format!("restart requested at {asked}");
    ctx.publish_event(obj, EventType::Normal, "Restarting", "Restart", Some(note))
        .await?;
    Ok(())
}

/// The Instance an object's [`INSTANCE_LABEL`] names.
fn instance_ref(meta: &kube::api::ObjectMeta) -> Option<ObjectRef<Instance>> {
    let name = meta.labels.as_ref()?.get(INSTANCE_LABEL)?;
    Some(ObjectRef::new(name).within(meta.namespace.as_deref()?))
}

/// Writes the status and says when to look again.
async fn finish(
    ctx: &Context<Instance>,
    obj: &Instance,
    blocked: Option<&Blocked>,
    observed: Observed<'_>,
    requeue: Option<Duration>,
) -> Result<Action, InstanceError> {
    let mut desired = status::desired(
        obj.status.as_ref(),
        blocked,
        observed,
        obj.metadata.generation,
        Timestamp::now(),
    );
    if blocked.is_none() {
        let (cores, memory) = upstream::size(obj);
        desired.cores = Some(cores);
        desired.memory = Some(memory);
        desired.virtual_machine = Some(obj.name_any());
        if obj.spec.restart_requested_at.is_some() {
            desired.restarted_at = obj.spec.restart_requested_at.clone();
        }
    }
    write_status(ctx, obj, &desired).await?;
    Ok(requeue.map_or_else(Action::await_change, Action::requeue))
}

/// Writes `desired` unless the status says exactly that already.
async fn write_status(
    ctx: &Context<Instance>,
    obj: &Instance,
    desired: &InstanceStatus,
) -> Result<(), InstanceError> {
    if obj.status.as_ref() == Some(desired) {
        return Ok(());
    }
    let mut status = serde_json::to_value(desired)?;
    // A merge patch keeps what it does not mention: name what is gone.
    for key in [
        "phase",
        "ipAddress",
        "interfaces",
        "nodeName",
        "cores",
        "memory",
        "bootDiskProgress",
        "virtualMachine",
        "restartedAt",
    ] {
        if let Some(map) = status.as_object_mut() {
            map.entry(key).or_insert(Value::Null);
        }
    }
    ctx.patch_status(obj, &json!({ "status": status })).await?;
    Ok(())
}

async fn get_opt<T>(
    api: &Api<T>,
    name: &str,
    kind: &'static str,
) -> Result<Option<T>, InstanceError>
where
    T: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.get_opt(name)
        .await
        .map_err(|source| InstanceError::Api {
            action: "get",
            kind,
            name: name.to_owned(),
            source,
        })
}

async fn delete_secret(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<(), InstanceError> {
    let api = Api::<Secret>::namespaced(client.clone(), namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(InstanceError::Api {
            action: "delete",
            kind: "Secret",
            name: name.to_owned(),
            source,
        }),
    }
}
