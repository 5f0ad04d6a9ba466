// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Server`s onto Metal3 (`metal3.io/v1alpha1`).
//!
//! For each Server the controller:
//!
//! 1. validates the spec with [`validate`]; when a rule is broken it reports `Degraded`
//!    (`InvalidSpec`, the message names the field) and touches nothing upstream;
//! 2. refuses a BMC address another Server already has (`DuplicateBMCAddress`: two Servers
//!    driving one machine would fight over its power);
//! 3. reads the credentials Secret (`CredentialsSecretNotFound`,
//!    `CredentialsSecretInvalid` without `username` or `password`) and checks that the
//!    user-data Secret exists (`UserDataSecretNotFound`); while one is missing it looks again
//!    every [`SECRET_POLL`];
//! 4. pre-flights the BMC over Redfish ([`preflight`]: reachable, credentials taken, the
//!    system has the boot MAC) before Metal3 gets the host, and again whenever the address,
//!    the credentials or the MAC change; a failure is `Degraded` with the reason of the check
//!    that failed, and is retried every [`PREFLIGHT_RETRY`];
//! 5. server-side applies the BMC Secret and the BareMetalHost ([`upstream`]), owned by the
//!    Server, after checking that a host of that name is not someone else's (`NameTaken`);
//!    Metal3 registers, inspects, provisions the image and powers the server as the host says;
//! 6. hands a new reboot request (the Server's [`REBOOT_ANNOTATION`]) to Metal3 as the
//!    host's `reboot.metal3.io` ([`upstream::reboot_patch`]) if the server is provisioned, and
//!    follows it in `status.reboot` until Metal3 removes that annotation;
//! 7. sets the status from Metal3's ([`status`]).
//!
//! On delete the finalizer [`FINALIZER`] keeps the Server until its host is deprovisioned
//! and powered off (the image removed, `online: false`, Metal3 back at `available`), then
//! deletes the host and the BMC Secret — also when the operator was down while the Server
//! was deleted.
//!
//! What the controller needs (derived into `config/rbac/role.yaml`):
// +mni:rbac:groups=metal.mni.dev,resources=servers,verbs=get;list;watch;update;patch
// +mni:rbac:groups=metal.mni.dev,resources=servers/status,verbs=get;update;patch
// +mni:rbac:groups=metal.mni.dev,resources=servers/finalizers,verbs=update
// +mni:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;create;update;patch;delete
// +mni:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

pub mod preflight;
pub mod status;
pub mod upstream;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use mni_metal3::v1alpha1::{BareMetalHost, ErrorType, ProvisioningState};
use mni_operator::{ContextError, prelude::*};
use serde_json::{Value, json};

use crate::api::metal_v1alpha1::REBOOT_ANNOTATION;
use crate::api::metal_v1alpha1::REBOOT_REFUSED;
use crate::api::metal_v1alpha1::RebootRequest;
use crate::api::metal_v1alpha1::RebootStatus;
use crate::api::metal_v1alpha1::Server;
use crate::api::metal_v1alpha1::ServerStatus;
use crate::api::metal_v1alpha1::validate::message;
use crate::api::metal_v1alpha1::validate::parse_address;
use crate::api::metal_v1alpha1::validate::validate;
use preflight::Preflight;
use status::Blocked;
use upstream::SERVER_LABEL;

/// The finalizer that holds a Server until its host is deprovisioned, powered off and gone.
pub const FINALIZER: &str = "metal.mni.dev/deprovision";

/// How often a server waiting for a Secret looks again.
pub const SECRET_POLL: Duration = Duration::from_secs(5);

/// How long a cleanup waits for Metal3 to release a deleted host before it tries again.
pub const RELEASE_WAIT: Duration = Duration::from_secs(20);

/// How often a failed pre-flight is retried.
pub const PREFLIGHT_RETRY: Duration = Duration::from_secs(15);

/// Why a Server reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// Writing the status, an event or a child failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A request about another object failed.
    #[error("{action} {kind} {name:?}: {source}")]
    Api {
        /// What was being done (`get`, `delete`).
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
    /// A deleted server's host is not yet deprovisioned, powered off and gone.
    #[error("deprovisioning before deletion: {0}")]
    Deprovisioning(String),
}

/// Reconciles Servers. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct ServerReconciler;

impl Reconciler for ServerReconciler {
    type K = Server;
    type Error = ServerError;

    fn name(&self) -> &str {
        "server-controller"
    }

    fn finalizer(&self) -> Option<&str> {
        Some(FINALIZER)
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
            return finish(ctx, &obj, Err(&blocked), None, None, None).await;
        }
        if let Some(other) = duplicate_bmc(ctx, &obj) {
            let blocked = Blocked::new(
                status::DUPLICATE_BMC,
                format!(
                    "bmc.address: {} is already the BMC of Server {other}; one BMC drives one server",
                    obj.spec.bmc.address
                ),
            );
            return finish(ctx, &obj, Err(&blocked), None, None, Some(SECRET_POLL)).await;
        }

        // The credentials, and the user data's Secret.
        let secrets = Api::<Secret>::namespaced(client.clone(), &namespace);
        let secret_name = &obj.spec.bmc.credentials_name;
        let Some(credentials) = get_opt(&secrets, secret_name, "Secret").await? else {
            let blocked = Blocked::new(
                status::CREDENTIALS_NOT_FOUND,
                format!(
                    "bmc.credentialsName: Secret {secret_name} does not exist in namespace {namespace}"
                ),
            );
            return finish(ctx, &obj, Err(&blocked), None, None, Some(SECRET_POLL)).await;
        };
        // `data`, or `stringData` where an API server has not folded it into `data` yet.
        let data = credentials.data.clone().unwrap_or_default();
        let strings = credentials.string_data.clone().unwrap_or_default();
        let field = |key: &str| {
            data.get(key)
                .map(|v| v.0.clone())
                .or_else(|| strings.get(key).map(|v| v.clone().into_bytes()))
                .filter(|v| !v.is_empty())
        };
        let (Some(username), Some(password)) = (field("username"), field("password")) else {
            let missing: Vec<&str> = ["username", "password"]
                .into_iter()
                .filter(|k| field(k).is_none())
                .collect();
            let blocked = Blocked::new(
                status::CREDENTIALS_INVALID,
                format!(
                    "bmc.credentialsName: Secret {secret_name} has no {}",
                    missing.join(" and no ")
                ),
            );
            return finish(ctx, &obj, Err(&blocked), None, None, Some(SECRET_POLL)).await;
        };
        if let Some(user_data) = &obj.spec.user_data
            && get_opt(&secrets, &user_data.name, "Secret")
                .await?
                .is_none()
        {
            let blocked = Blocked::new(
                status::USER_DATA_NOT_FOUND,
                format!(
                    "userData.name: Secret {} does not exist in namespace {namespace}",
                    user_data.name
                ),
            );
            return finish(ctx, &obj, Err(&blocked), None, None, Some(SECRET_POLL)).await;
        }

        // A BareMetalHost of this name that is not ours is left alone.
        let hosts = Api::<BareMetalHost>::namespaced(client.clone(), &namespace);
        let host_name = upstream::host_name(&name);
        let existing = get_opt(&hosts, &host_name, "BareMetalHost").await?;
        if let Some(existing) = &existing
            && !is_ours(&obj, &existing.metadata)
        {
            let blocked = Blocked::new(
                status::NAME_TAKEN,
                format!(
                    "metadata.name: a BareMetalHost {host_name} that is not this Server's exists; rename the Server"
                ),
            );
            return finish(ctx, &obj, Err(&blocked), None, None, None).await;
        }

        // The pre-flight, when what it checks changed since it last passed.
        let fingerprint = format!(
            "{}|{}|{}|{}",
            obj.spec.bmc.address,
            credentials
                .metadata
                .resource_version
                .clone()
                .unwrap_or_default(),
            obj.spec.boot_mac_address.to_ascii_lowercase(),
            obj.spec.bmc.disable_certificate_verification,
        );
        let passed = obj.status.as_ref().and_then(|s| s.preflight.as_ref());
        if passed != Some(&fingerprint)
            && let Ok(Some(address)) = parse_address(&obj.spec.bmc.address)
        {
            let preflight = Preflight {
                address: &address,
                username: &String::from_utf8_lossy(&username),
                password: &String::from_utf8_lossy(&password),
                verify_certificates: !obj.spec.bmc.disable_certificate_verification,
                boot_mac: &obj.spec.boot_mac_address,
            };
            if let Err(e) = preflight.run().await {
                let blocked = Blocked::new(e.reason, e.message);
                return finish(ctx, &obj, Err(&blocked), None, None, Some(PREFLIGHT_RETRY)).await;
            }
            let note = format!(
                "BMC {} answered, took the credentials and has the boot MAC",
                obj.spec.bmc.address
            );
            ctx.publish_event(
                &*obj,
                EventType::Normal,
                "PreflightPassed",
                "Preflight",
                Some(note),
            )
            .await?;
        }

        ctx.apply_owned(&*obj, upstream::bmc_secret(&obj, &username, &password))
            .await?;
        let host = ctx
            .apply_owned(&*obj, upstream::bare_metal_host(&obj))
            .await?;
        let (host, reboot) = reboot(&hosts, &obj, host).await?;
        finish(ctx, &obj, Ok(&fingerprint), Some(&host), reboot, None).await
    }

    async fn cleanup(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        let client = ctx.client();
        let hosts = Api::<BareMetalHost>::namespaced(client.clone(), &namespace);
        let host_name = upstream::host_name(&name);
        let host = get_opt(&hosts, &host_name, "BareMetalHost")
            .await?
            .filter(|h| is_ours(&obj, &h.metadata));
        let Some(host) = host else {
            delete(
                client,
                &namespace,
                &upstream::bmc_secret_name(&name),
                "Secret",
            )
            .await?;
            return Ok(Action::await_change());
        };
        let desired = status::deleting(
            obj.status.as_ref(),
            Some(&host),
            obj.metadata.generation,
            Timestamp::now(),
        );
        write_status(ctx, &obj, &desired).await?;
        if host.metadata.deletion_timestamp.is_some() {
            return wait_gone(client, &hosts, &namespace, &name).await;
        }

        // First deprovision and power off: no image, offline.
        if host.spec.image.is_some() || host.spec.online {
            let mut down = upstream::bare_metal_host(&obj);
            down.spec.image = None;
            down.spec.online = false;
            ctx.apply_owned(&*obj, down).await?;
            return Err(ServerError::Deprovisioning(format!(
                "asked Metal3 to deprovision and power off BareMetalHost {host_name}"
            )));
        }
        let hs = host.status.clone().unwrap_or_default();
        let registration_failed = matches!(
            hs.error_type,
            Some(ErrorType::Registration | ErrorType::ProvisionedRegistration)
        );
        let busy = matches!(
            hs.state(),
            Some(
                ProvisioningState::Provisioning
                    | ProvisioningState::Provisioned
                    | ProvisioningState::Deprovisioning
                    | ProvisioningState::Registering
                    | ProvisioningState::Inspecting
                    | ProvisioningState::Preparing
            )
        );
        if !registration_failed && (busy || hs.powered_on) {
            return Err(ServerError::Deprovisioning(format!(
                "BareMetalHost {host_name} is {} and powered {}",
                hs.provisioning.state,
                if hs.powered_on { "on" } else { "off" }
            )));
        }
        // Then the host goes (Metal3 detaches it from the provisioner), and the BMC Secret.
        delete(client, &namespace, &host_name, "BareMetalHost").await?;
        wait_gone(client, &hosts, &namespace, &name).await
    }

    fn relations(&self) -> Relations<Self::K> {
        Relations::default()
            .owns::<BareMetalHost>()
            .owns::<Secret>()
    }
}

/// The reboot the Server's [`REBOOT_ANNOTATION`] asks for, handed to Metal3 on `host` if it
/// is new and the server is provisioned; the host as it is now and the reboot status (`None`:
/// no request, the status keeps what it says).
async fn reboot(
    hosts: &Api<BareMetalHost>,
    obj: &Server,
    host: BareMetalHost,
) -> Result<(BareMetalHost, Option<RebootStatus>), ServerError> {
    let Some(value) = obj.annotations().get(REBOOT_ANNOTATION) else {
        return Ok((host, None));
    };
    let current = obj.status.as_ref().and_then(|s| s.reboot.as_ref());
    let request: RebootRequest = match serde_json::from_str(value) {
        Ok(request) => request,
        Err(e) => {
            let refused = RebootStatus {
                phase: REBOOT_REFUSED.to_owned(),
                message: Some(format!(
                    "metadata.annotations[{REBOOT_ANNOTATION}]: not a reboot request ({e}); \
                     expected a JSON object with an id and an optional mode, soft or hard"
                )),
                ..RebootStatus::default()
            };
            return Ok((host, Some(refused)));
        }
    };
    let progress = upstream::reboot_progress(&host, &request.id);
    let state = host
        .status
        .as_ref()
        .map(|s| s.provisioning.state.as_str())
        .filter(|s| !s.is_empty());
    let (status, hand_over) = status::reboot(current, &request, progress, state, Timestamp::now());
    if !hand_over {
        return Ok((host, Some(status)));
    }
    let name = host.name_any();
    let host = hosts
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&upstream::reboot_patch(&request)),
        )
        .await
        .map_err(|source| ServerError::Api {
            action: "patch",
            kind: "BareMetalHost",
            name,
            source,
        })?;
    Ok((host, Some(status)))
}

/// Waits up to [`RELEASE_WAIT`] for Metal3 to release the deleted host of Server `name`
/// (it powers the host off and removes its finalizer), then deletes the BMC Secret: `Ok` once
/// both are gone, so the Server's finalizer goes.
async fn wait_gone(
    client: &kube::Client,
    hosts: &Api<BareMetalHost>,
    namespace: &str,
    name: &str,
) -> Result<Action, ServerError> {
    let host_name = upstream::host_name(name);
    let deadline = tokio::time::Instant::now() + RELEASE_WAIT;
    while get_opt(hosts, &host_name, "BareMetalHost").await?.is_some() {
        if tokio::time::Instant::now() >= deadline {
            return Err(ServerError::Deprovisioning(format!(
                "Metal3 is removing BareMetalHost {host_name}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    delete(
        client,
        namespace,
        &upstream::bmc_secret_name(name),
        "Secret",
    )
    .await?;
    Ok(Action::await_change())
}

/// Another Server (in any namespace) created before `obj` with the same BMC address, as
/// `NAMESPACE/NAME`.
fn duplicate_bmc(ctx: &Context<Server>, obj: &Server) -> Option<String> {
    let store = ctx.store::<Server>()?;
    let address = obj.spec.bmc.address.trim().to_ascii_lowercase();
    let key = |s: &Server| {
        (
            s.metadata.creation_timestamp.clone(),
            s.namespace(),
            s.name_any(),
        )
    };
    store
        .state()
        .into_iter()
        .filter(|s| s.metadata.uid != obj.metadata.uid)
        .filter(|s| s.spec.bmc.address.trim().to_ascii_lowercase() == address)
        .filter(|s| key(s) < key(obj))
        .min_by_key(|s| key(s))
        .map(|s| format!("{}/{}", s.namespace().unwrap_or_default(), s.name_any()))
}

/// Whether the object of `meta` is controlled by `obj` (or labelled for it, before its owner
/// reference was set).
fn is_ours(obj: &Server, meta: &kube::api::ObjectMeta) -> bool {
    let owned = meta
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && Some(&r.uid) == obj.metadata.uid.as_ref());
    let labelled = meta
        .labels
        .as_ref()
        .and_then(|l| l.get(SERVER_LABEL))
        .is_some_and(|n| *n == obj.name_any())
        && meta.owner_references.as_ref().is_none_or(Vec::is_empty);
    owned || labelled
}

/// Writes the status and says when to look again: `Err` with why the operator is blocked,
/// or `Ok` with the pre-flight that passed and the host Metal3 has; `reboot` replaces
/// `status.reboot` when it is `Some`.
async fn finish(
    ctx: &Context<Server>,
    obj: &Server,
    outcome: Result<&String, &Blocked>,
    host: Option<&BareMetalHost>,
    reboot: Option<RebootStatus>,
    requeue: Option<Duration>,
) -> Result<Action, ServerError> {
    let now = Timestamp::now();
    let mut desired = status::desired(
        obj.status.as_ref(),
        outcome.err(),
        host,
        obj.spec.online,
        obj.metadata.generation,
        now,
    );
    if let Ok(fingerprint) = outcome {
        desired.preflight = Some(fingerprint.clone());
    }
    if let Some(reboot) = reboot {
        desired.reboot = Some(reboot);
    }
    status::show_reboot(&mut desired, obj.metadata.generation, now);
    write_status(ctx, obj, &desired).await?;
    Ok(requeue.map_or_else(Action::await_change, Action::requeue))
}

/// Writes `desired` unless the status says exactly that already.
async fn write_status(
    ctx: &Context<Server>,
    obj: &Server,
    desired: &ServerStatus,
) -> Result<(), ServerError> {
    if obj.status.as_ref() == Some(desired) {
        return Ok(());
    }
    let mut status = serde_json::to_value(desired)?;
    // A merge patch keeps what it does not mention: name what is gone.
    for key in [
        "state",
        "power",
        "operationalStatus",
        "hardware",
        "error",
        "provisionedImage",
        "bareMetalHost",
        "preflight",
    ] {
        if let Some(map) = status.as_object_mut() {
            map.entry(key).or_insert(Value::Null);
        }
    }
    ctx.patch_status(obj, &json!({ "status": status })).await?;
    Ok(())
}

async fn get_opt<T>(api: &Api<T>, name: &str, kind: &'static str) -> Result<Option<T>, ServerError>
where
    T: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.get_opt(name).await.map_err(|source| ServerError::Api {
        action: "get",
        kind,
        name: name.to_owned(),
        source,
    })
}

async fn delete(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    kind: &'static str,
) -> Result<(), ServerError> {
    let result = if kind == "Secret" {
        Api::<Secret>::namespaced(client.clone(), namespace)
            .delete(name, &DeleteParams::default())
            .await
            .map(|_| ())
    } else {
        Api::<BareMetalHost>::namespaced(client.clone(), namespace)
            .delete(name, &DeleteParams::default())
            .await
            .map(|_| ())
    };
    match result {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(ServerError::Api {
            action: "delete",
            kind,
            name: name.to_owned(),
            source,
        }),
    }
}
