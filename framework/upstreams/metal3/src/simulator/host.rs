//! One reconcile of one BareMetalHost: finalizer, BMC details and credentials, registration
//! over Redfish, then one step of the state machine (`machine.rs`) — inspection, provisioning,
//! deprovisioning, power — and a status write of only what changed.
//!
//! Power actions are asynchronous on real BMCs (and in sushy-emulator), so nothing here waits
//! for one: a reset is sent, remembered in [`Progress`], and a later reconcile reads the power
//! state back and moves on when the BMC reports it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use mni_redfish::{BmcAddress, BootOverride, ComputerSystem, InsertMedia, PowerState, ResetType};
use tokio::time::Instant;

use super::FIELD_MANAGER;
use super::hardware::hardware_details;
use super::machine::{HostView, Step, after, merge_diff, next_step};
use super::reboot::{self, REBOOT_ANNOTATION, RebootRequest};
use crate::v1alpha1::{
    BareMetalHost, BareMetalHostStatus, CredentialsStatus, ErrorType, HOST_FINALIZER, HardwareData,
    HardwareDataSpec, ImageFormat, OperationMetric, OperationalStatus, ProvisioningState,
    SecretReference,
};

/// The annotation that detaches a host from the provisioner.
pub(crate) const DETACHED_ANNOTATION: &str = "baremetalhost.metal3.io/detached";

/// The annotation that, set to `disabled`, skips inspection.
pub(crate) const INSPECT_ANNOTATION: &str = "inspect.metal3.io";

/// The timings of the simulator.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// How often a host waiting for its BMC is looked at again.
    pub(crate) power_poll: Duration,
    /// How often a settled host's power state is read back.
    pub(crate) resync: Duration,
    /// How long a power action may take before it is an error.
    pub(crate) power_timeout: Duration,
    /// The timeout of each Redfish request.
    pub(crate) bmc_timeout: Duration,
    /// How long a soft power-off (`GracefulShutdown`) of a reboot may take before `ForceOff`.
    pub(crate) soft_power_off_timeout: Duration,
}

/// What the simulator remembers of a host between reconciles: the BMC actions it sent and
/// has not yet seen take effect. Lost on restart, which only repeats an action.
#[derive(Debug, Clone, Default)]
pub(crate) struct Progress {
    provision: Option<ProvisionProgress>,
    power: Option<(bool, Instant)>,
    ejected: bool,
    reboot: Option<reboot::Phase>,
}

#[derive(Debug, Clone)]
struct ProvisionProgress {
    url: String,
    booting: bool,
    since: Instant,
}

/// The result of one reconcile.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// When to look at the host again regardless of changes.
    pub(crate) requeue: Option<Duration>,
    /// What to remember.
    pub(crate) progress: Progress,
}

/// Connected Redfish clients, by BMC and credentials.
pub(crate) type ClientCache = Arc<Mutex<HashMap<String, mni_redfish::Client>>>;

/// What one reconcile needs.
#[derive(Clone)]
pub(crate) struct Context {
    pub(crate) client: kube::Client,
    pub(crate) bmcs: ClientCache,
    pub(crate) settings: Settings,
}

/// A connected BMC and the host's system on it.
struct Target {
    bmc: mni_redfish::Client,
    address: BmcAddress,
    system: ComputerSystem,
}

/// How a BMC step went.
enum Poll {
    Done,
    Waiting,
}

fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    }
}

/// Reconciles one host.
pub(crate) async fn reconcile(
    ctx: &Context,
    host: &BareMetalHost,
    secret: Option<&Secret>,
    progress: Progress,
) -> Result<Outcome, kube::Error> {
    let namespace = host.namespace().unwrap_or_default();
    let api: Api<BareMetalHost> = Api::namespaced(ctx.client.clone(), &namespace);
    let deleting = host.metadata.deletion_timestamp.is_some();
    let finalizers = host.finalizers().to_vec();
    let has_finalizer = finalizers.iter().any(|f| f == HOST_FINALIZER);
    if !has_finalizer {
        if !deleting {
            let mut with = finalizers;
            with.push(HOST_FINALIZER.into());
            let patch = serde_json::json!({"metadata": {
                "finalizers": with,
                "resourceVersion": host.resource_version(),
            }});
            api.patch(&host.name_any(), &params(), &Patch::Merge(&patch))
                .await?;
            return Ok(Outcome {
                requeue: Some(Duration::ZERO),
                progress,
            });
        }
        return Ok(Outcome::default());
    }
    let old = host.status.clone().unwrap_or_default();
    let mut run = Run {
        ctx,
        host,
        status: old.clone(),
        progress,
        deleting,
    };
    let requeue = match run.drive(secret).await? {
        Some(requeue) => requeue,
        None => {
            // Released: the host is going away.
            return Ok(Outcome::default());
        }
    };
    let Run {
        mut status,
        progress,
        ..
    } = run;
    if status != old || host.status.is_none() {
        status.last_updated = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        let old_json = serde_json::to_value(&old).map_err(kube::Error::SerdeError)?;
        let new_json = serde_json::to_value(&status).map_err(kube::Error::SerdeError)?;
        let diff = if host.status.is_none() {
            Some(new_json)
        } else {
            merge_diff(&old_json, &new_json)
        };
        if let Some(diff) = diff {
            api.patch_status(
                &host.name_any(),
                &params(),
                &Patch::Merge(&serde_json::json!({ "status": diff })),
            )
            .await?;
        }
    }
    Ok(Outcome { requeue, progress })
}

/// One reconcile in progress.
struct Run<'a> {
    ctx: &'a Context,
    host: &'a BareMetalHost,
    status: BareMetalHostStatus,
    progress: Progress,
    deleting: bool,
}

impl Run<'_> {
    fn now() -> Time {
        Time(k8s_openapi::jiff::Timestamp::now())
    }

    fn state(&self) -> ProvisioningState {
        self.status.state().unwrap_or(ProvisioningState::None)
    }

    /// Runs the reconcile; `Ok(None)` when the host was released.
    async fn drive(
        &mut self,
        secret: Option<&Secret>,
    ) -> Result<Option<Option<Duration>>, kube::Error> {
        use ProvisioningState as S;
        let settings = self.ctx.settings;
        let bmc = self
            .host
            .spec
            .bmc
            .clone()
            .filter(|b| !b.address.trim().is_empty() && !b.credentials_name.is_empty());
        let Some(bmc) = bmc else {
            if self.deleting {
                self.release().await?;
                return Ok(None);
            }
            // Metal3: a host without BMC details is `unmanaged` and `discovered`.
            self.enter(S::Unmanaged);
            self.status.operational_status = OperationalStatus::Discovered;
            self.status.error_type = None;
            self.status.error_message.clear();
            return Ok(Some(None));
        };
        if matches!(self.state(), S::None | S::Unmanaged) {
            self.enter(S::Registering);
            self.status.provisioning.id = self.host.uid().unwrap_or_default();
            self.history(|h| &mut h.register).start = Some(Self::now());
        }
        // Detached (`baremetalhost.metal3.io/detached`): the BMC is left alone, and a deleted
        // host goes without deprovisioning, as baremetal-operator does.
        if self.host.annotations().contains_key(DETACHED_ANNOTATION) || self.state() == S::Detached
        {
            if self.deleting {
                self.release().await?;
                return Ok(None);
            }
            self.status.operational_status = OperationalStatus::Detached;
            return Ok(Some(None));
        }
        if self.status.operational_status == OperationalStatus::Detached {
            self.status.operational_status = OperationalStatus::Ok;
        }
        let registered = self.status.good_credentials.is_some();
        if self.deleting && (!registered || self.state() == S::Deleting) {
            self.release().await?;
            return Ok(None);
        }
        // Metal3 records the credentials it tries, and those that worked.
        let credentials = CredentialsStatus {
            credentials: Some(SecretReference {
                name: Some(bmc.credentials_name.clone()),
                namespace: self.host.namespace(),
            }),
            credentials_version: secret.and_then(|s| s.metadata.resource_version.clone()),
        };
        if secret.is_some() {
            self.status.tried_credentials = Some(credentials.clone());
        }
        let target = match self.connect(&bmc, secret).await {
            Ok(target) => target,
            Err(message) => {
                let kind = if matches!(self.state(), S::Provisioned | S::ExternallyProvisioned) {
                    ErrorType::ProvisionedRegistration
                } else {
                    ErrorType::Registration
                };
                return Ok(Some(Some(self.fail(kind, message))));
            }
        };
        if matches!(
            self.status.error_type,
            Some(ErrorType::Registration | ErrorType::ProvisionedRegistration)
        ) {
            self.clear_error();
        }
        self.status.good_credentials = Some(credentials);
        if self.status.operational_status == OperationalStatus::Unset {
            self.status.operational_status = OperationalStatus::Ok;
        }
        let power = target.system.power_state.clone();
        self.status.powered_on = power == Some(PowerState::On);

        let view = HostView {
            state: self.state(),
            deleting: self.deleting,
            externally_provisioned: self.host.spec.externally_provisioned == Some(true),
            inspection_disabled: self
                .host
                .annotations()
                .get(INSPECT_ANNOTATION)
                .is_some_and(|v| v == "disabled"),
            image: self.host.spec.image.as_ref(),
            provisioned_image: self.status.provisioning.image.as_ref(),
        };
        let step = next_step(&view);
        let result = match step {
            Step::Enter(_) => {
                if self.state() == S::Registering {
                    self.history(|h| &mut h.register).end = Some(Self::now());
                }
                Ok(Poll::Done)
            }
            Step::Inspect => self.inspect(&target).await,
            Step::Provision => self.provision(&target, power.as_ref()).await,
            Step::Deprovision => {
                if target.address.bmc_type().uses_virtual_media() && !self.progress.ejected {
                    // Nothing inserted is fine; a BMC without virtual media too.
                    let _ = target.bmc.eject_media(&target.system.odata_id, "Cd").await;
                    self.progress.ejected = true;
                }
                self.ensure_power(&target, false, power.as_ref()).await
            }
            Step::PowerOffBeforeDelete => self.ensure_power(&target, false, power.as_ref()).await,
            Step::ManagePower => {
                let request = RebootRequest::of(self.host.annotations())
                    .filter(|_| matches!(self.state(), S::Provisioned | S::ExternallyProvisioned));
                let result = match request {
                    Some(request) => self.reboot(&target, request, power.as_ref()).await?,
                    None => {
                        // No (more) reboot annotations: whatever a reboot left, `online` rules.
                        self.progress.reboot = None;
                        self.ensure_power(&target, self.host.spec.online, power.as_ref())
                            .await
                    }
                };
                if let Ok(Poll::Done) = result {
                    if self.status.error_type == Some(ErrorType::PowerManagement) {
                        self.clear_error();
                    }
                    return Ok(Some(Some(settings.resync)));
                }
                result
            }
            Step::Release => {
                self.release().await?;
                return Ok(None);
            }
            Step::Idle => return Ok(Some(None)),
        };
        let kind = match step {
            Step::Inspect => ErrorType::Inspection,
            Step::Provision | Step::Deprovision => ErrorType::Provisioning,
            _ => ErrorType::PowerManagement,
        };
        match result {
            Ok(Poll::Done) => {
                if let Some(next) = after(step, self.deleting) {
                    if step == Step::Provision {
                        self.status.provisioning.image = self.host.spec.image.clone();
                        self.status.provisioning.root_device_hints =
                            self.host.spec.root_device_hints.clone();
                    }
                    self.clear_error();
                    self.enter(next);
                }
                Ok(Some(Some(Duration::ZERO)))
            }
            Ok(Poll::Waiting) => Ok(Some(Some(settings.power_poll))),
            Err(message) => Ok(Some(Some(self.fail(kind, message)))),
        }
    }

    /// Moves to `state`, recording the operation history as baremetal-operator does, and
    /// forgets the actions of the state left.
    fn enter(&mut self, state: ProvisioningState) {
        use ProvisioningState as S;
        let from = self.state();
        if from == state {
            return;
        }
        let now = Some(Self::now());
        match state {
            S::Inspecting => {
                *self.history(|h| &mut h.inspect) = OperationMetric {
                    start: now.clone(),
                    end: None,
                };
            }
            S::Provisioning => {
                *self.history(|h| &mut h.provision) = OperationMetric {
                    start: now.clone(),
                    end: None,
                };
            }
            S::Deprovisioning => {
                *self.history(|h| &mut h.deprovision) = OperationMetric {
                    start: now.clone(),
                    end: None,
                };
            }
            _ => {}
        }
        match from {
            S::Inspecting => self.history(|h| &mut h.inspect).end = now.clone(),
            S::Provisioning if state == S::Provisioned => {
                self.history(|h| &mut h.provision).end = now.clone();
            }
            S::Deprovisioning => {
                self.history(|h| &mut h.deprovision).end = now.clone();
                self.status.provisioning.image = None;
                self.status.provisioning.root_device_hints = None;
            }
            _ => {}
        }
        self.status.provisioning.state = state.as_str().to_owned();
        self.progress = Progress::default();
    }

    fn history(
        &mut self,
        pick: impl FnOnce(&mut crate::v1alpha1::OperationHistory) -> &mut Option<OperationMetric>,
    ) -> &mut OperationMetric {
        let history = self.status.operation_history.get_or_insert_default();
        pick(history).get_or_insert_default()
    }

    /// Records an error as baremetal-operator's `SetErrorMessage` does, and says when to try
    /// again (doubling with each failure in a row, at most a minute).
    fn fail(&mut self, kind: ErrorType, message: String) -> Duration {
        tracing::debug!(host = %self.host.name_any(), %kind, %message, "metal3 simulator: host error");
        self.status.operational_status = OperationalStatus::Error;
        self.status.error_type = Some(kind);
        self.status.error_message = message;
        self.status.error_count += 1;
        let exponent = u32::try_from(self.status.error_count.clamp(1, 7) - 1).unwrap_or(6);
        (self.ctx.settings.power_poll * 2u32.pow(exponent)).min(Duration::from_secs(60))
    }

    fn clear_error(&mut self) {
        self.status.operational_status = OperationalStatus::Ok;
        self.status.error_type = None;
        self.status.error_message.clear();
        self.status.error_count = 0;
    }

    /// Parses the address, reads the credentials and connects; the error is the message
    /// Metal3 would show.
    async fn connect(
        &mut self,
        bmc: &crate::v1alpha1::Bmc,
        secret: Option<&Secret>,
    ) -> Result<Target, String> {
        let address = BmcAddress::parse(&bmc.address).map_err(|e| match e {
            mni_redfish::AddressError::NotRedfish { .. } => format!(
                "{e} (the mNi Metal3 simulator drives only Redfish BMCs; a real Metal3 \
                 would use its {} driver)",
                bmc.address.split("://").next().unwrap_or("ipmi")
            ),
            other => other.to_string(),
        })?;
        let namespace = self.host.namespace().unwrap_or_default();
        let secret = secret.ok_or_else(|| {
            format!(
                "failed to read BMC credentials: Secret {:?} not found in namespace {namespace:?}",
                bmc.credentials_name
            )
        })?;
        let value = |key: &str| -> Result<String, String> {
            let from_data = secret
                .data
                .as_ref()
                .and_then(|d| d.get(key))
                .map(|v| String::from_utf8_lossy(&v.0).into_owned());
            let from_string = secret
                .string_data
                .as_ref()
                .and_then(|d| d.get(key))
                .cloned();
            from_data
                .or(from_string)
                .map(|v| v.trim_end_matches('\n').to_owned())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("Missing BMC connection detail '{key}' in credentials"))
        };
        let (username, password) = (value("username")?, value("password")?);
        let verify = bmc.disable_certificate_verification != Some(true);
        let key = format!(
            "{}|{}|{username}|{password}|{verify}",
            address.base_url(),
            bmc.address
        );
        let node = self.host.uid().unwrap_or_default();
        let failed = |e: mni_redfish::Error| {
            format!(
                "Failed to get power state for node {node}. Error: Redfish exception occurred. \
                 Error: {e}"
            )
        };
        let cached = self.ctx.bmcs.lock().expect("lock").get(&key).cloned();
        let client = match cached {
            Some(client) => client,
            None => {
                let client = mni_redfish::Client::for_address(&address)
                    .credentials(username, password)
                    .verify_certificates(verify)
                    .timeout(self.ctx.settings.bmc_timeout)
                    .connect()
                    .await
                    .map_err(failed)?;
                self.ctx
                    .bmcs
                    .lock()
                    .expect("lock")
                    .insert(key.clone(), client.clone());
                client
            }
        };
        match client.default_system().await {
            Ok(system) => Ok(Target {
                bmc: client,
                address,
                system,
            }),
            Err(e) => {
                self.ctx.bmcs.lock().expect("lock").remove(&key);
                Err(failed(e))
            }
        }
    }

    /// Reads the inventory into `status.hardware` and the host's HardwareData.
    async fn inspect(&mut self, target: &Target) -> Result<Poll, String> {
        let inventory = target
            .bmc
            .inventory(&target.system.odata_id)
            .await
            .map_err(|e| format!("Failed to inspect hardware. Reason: {e}"))?;
        let hardware = hardware_details(
            &inventory,
            target.system.bios_version.as_deref(),
            self.host.spec.boot_mac_address.as_deref(),
        );
        self.write_hardware_data(&hardware)
            .await
            .map_err(|e| format!("Failed to save HardwareData: {e}"))?;
        self.status.hardware = Some(hardware);
        Ok(Poll::Done)
    }

    async fn write_hardware_data(
        &self,
        hardware: &crate::v1alpha1::HardwareDetails,
    ) -> Result<(), kube::Error> {
        let namespace = self.host.namespace().unwrap_or_default();
        let name = self.host.name_any();
        let api: Api<HardwareData> = Api::namespaced(self.ctx.client.clone(), &namespace);
        let spec = HardwareDataSpec {
            hardware: Some(hardware.clone()),
        };
        match api.get_opt(&name).await? {
            Some(existing) if existing.spec == spec => Ok(()),
            Some(existing) => {
                let old = serde_json::to_value(&existing.spec).map_err(kube::Error::SerdeError)?;
                let new = serde_json::to_value(&spec).map_err(kube::Error::SerdeError)?;
                if let Some(diff) = merge_diff(&old, &new) {
                    api.patch(
                        &name,
                        &params(),
                        &Patch::Merge(&serde_json::json!({"spec": diff})),
                    )
                    .await?;
                }
                Ok(())
            }
            None => {
                let mut data = HardwareData::new(&name, spec);
                data.metadata.namespace = Some(namespace);
                data.metadata.owner_references = Some(vec![OwnerReference {
                    api_version: BareMetalHost::api_version(&()).into_owned(),
                    kind: BareMetalHost::kind(&()).into_owned(),
                    name: name.clone(),
                    uid: self.host.uid().unwrap_or_default(),
                    controller: Some(true),
                    block_owner_deletion: None,
                }]);
                let params = PostParams {
                    field_manager: Some(FIELD_MANAGER.into()),
                    ..PostParams::default()
                };
                match api.create(&params, &data).await {
                    Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                    other => other.map(|_| ()),
                }
            }
        }
    }

    /// Boots the host into its image: power off if on, then the boot device (virtual media
    /// with the image for `*-virtualmedia` BMCs, else a one-time PXE boot), then power on;
    /// done when the BMC reports the host on.
    async fn provision(
        &mut self,
        target: &Target,
        power: Option<&PowerState>,
    ) -> Result<Poll, String> {
        let Some(image) = self.host.spec.image.clone() else {
            return Ok(Poll::Waiting);
        };
        let timeout = self.ctx.settings.power_timeout;
        let system = target.system.odata_id.clone();
        let current = self
            .progress
            .provision
            .clone()
            .filter(|p| p.url == image.url);
        let on = power == Some(&PowerState::On);
        let off = power == Some(&PowerState::Off);
        match current {
            Some(p) if p.booting && on => {
                let vm = target.address.bmc_type().uses_virtual_media();
                if vm && image.format != Some(ImageFormat::LiveIso) {
                    // The image is on disk now; the ISO is not needed any more.
                    target
                        .bmc
                        .eject_media(&system, "Cd")
                        .await
                        .map_err(|e| format!("Failed to eject virtual media: {e}"))?;
                }
                self.progress.provision = None;
                Ok(Poll::Done)
            }
            Some(p) if p.since.elapsed() > timeout => {
                self.progress.provision = None;
                Err(format!(
                    "Timed out after {timeout:?} waiting for the host to power {} while deploying {}",
                    if p.booting { "on" } else { "off" },
                    image.url
                ))
            }
            Some(p) if p.booting || !off => Ok(Poll::Waiting),
            None if on => {
                target
                    .bmc
                    .reset(&system, ResetType::ForceOff)
                    .await
                    .map_err(|e| format!("Failed to power off the host before deploying: {e}"))?;
                self.progress.provision = Some(ProvisionProgress {
                    url: image.url,
                    booting: false,
                    since: Instant::now(),
                });
                Ok(Poll::Waiting)
            }
            None if !off => Ok(Poll::Waiting),
            _ => {
                if target.address.bmc_type().uses_virtual_media() {
                    target
                        .bmc
                        .insert_media(&system, "Cd", &InsertMedia::image(&image.url))
                        .await
                        .map_err(|e| {
                            format!("Failed to insert virtual media {}: {e}", image.url)
                        })?;
                    target
                        .bmc
                        .set_boot_override(&system, &BootOverride::once("Cd"))
                        .await
                        .map_err(|e| format!("Failed to set the boot device: {e}"))?;
                } else {
                    target
                        .bmc
                        .set_boot_override(&system, &BootOverride::once("Pxe"))
                        .await
                        .map_err(|e| format!("Failed to set the boot device: {e}"))?;
                }
                target
                    .bmc
                    .reset(&system, ResetType::On)
                    .await
                    .map_err(|e| format!("Failed to power on the host to deploy: {e}"))?;
                self.progress.provision = Some(ProvisionProgress {
                    url: image.url,
                    booting: true,
                    since: Instant::now(),
                });
                Ok(Poll::Waiting)
            }
        }
    }

    /// Brings the power to `on`: done when the BMC reports it, else a reset is sent (once per
    /// power timeout) and the host waits.
    async fn ensure_power(
        &mut self,
        target: &Target,
        on: bool,
        power: Option<&PowerState>,
    ) -> Result<Poll, String> {
        let wanted = if on { PowerState::On } else { PowerState::Off };
        if power == Some(&wanted) {
            self.progress.power = None;
            return Ok(Poll::Done);
        }
        let timeout = self.ctx.settings.power_timeout;
        match self.progress.power {
            Some((sent, since)) if sent == on && since.elapsed() <= timeout => {
                return Ok(Poll::Waiting);
            }
            Some((sent, _)) if sent == on => {
                self.progress.power = None;
                return Err(format!(
                    "Timed out after {timeout:?} waiting for power state {wanted} (last seen: {})",
                    power.map_or_else(|| "unknown".to_owned(), ToString::to_string)
                ));
            }
            _ => {}
        }
        if matches!(
            power,
            Some(PowerState::PoweringOn | PowerState::PoweringOff)
        ) {
            return Ok(Poll::Waiting);
        }
        let reset = if on {
            ResetType::On
        } else {
            ResetType::ForceOff
        };
        target
            .bmc
            .reset(&target.system.odata_id, reset)
            .await
            .map_err(|e| {
                format!(
                    "Failed to power {} the host: {e}",
                    if on { "on" } else { "off" }
                )
            })?;
        self.progress.power = Some((on, Instant::now()));
        Ok(Poll::Waiting)
    }

    /// One step of the reboot `request` asks for (see `reboot.rs`): sends what
    /// [`reboot::next`] says, falling back from a refused `GracefulShutdown` to `ForceOff` as
    /// Ironic does, and removes `reboot.metal3.io` once power is restored. Done while a
    /// suffixed annotation holds the host off, and when the reboot is over.
    async fn reboot(
        &mut self,
        target: &Target,
        request: RebootRequest,
        power: Option<&PowerState>,
    ) -> Result<Result<Poll, String>, kube::Error> {
        let timeouts = reboot::Timeouts {
            soft_power_off: self.ctx.settings.soft_power_off_timeout,
            power: self.ctx.settings.power_timeout,
        };
        let online = self.host.spec.online;
        // At most: observed off, then On sent.
        for _ in 0..3 {
            let phase = self.progress.reboot.take();
            let (action, next) = reboot::next(
                request,
                phase.as_ref(),
                power,
                online,
                timeouts,
                Instant::now(),
            );
            self.progress.reboot = next;
            match action {
                reboot::Action::Continue => continue,
                reboot::Action::Wait if self.progress.reboot == Some(reboot::Phase::Off) => {
                    return Ok(Ok(Poll::Done));
                }
                reboot::Action::Wait => return Ok(Ok(Poll::Waiting)),
                reboot::Action::Fail(message) => return Ok(Err(message)),
                reboot::Action::Reset(reset) => {
                    let system = &target.system.odata_id;
                    let sent = target.bmc.reset(system, reset.clone()).await;
                    return Ok(match (sent, reset) {
                        (Ok(()), _) => Ok(Poll::Waiting),
                        (Err(error), ResetType::GracefulShutdown) => {
                            tracing::debug!(host = %self.host.name_any(), %error,
                                "metal3 simulator: soft power off refused; powering off hard");
                            match target.bmc.reset(system, ResetType::ForceOff).await {
                                Ok(()) => {
                                    self.progress.reboot = Some(reboot::Phase::PoweringOff {
                                        reset: ResetType::ForceOff,
                                        since: Instant::now(),
                                    });
                                    Ok(Poll::Waiting)
                                }
                                Err(e) => {
                                    self.progress.reboot = None;
                                    Err(format!("Failed to power off the host to reboot it: {e}"))
                                }
                            }
                        }
                        (Err(e), ResetType::On) => {
                            self.progress.reboot = Some(reboot::Phase::Off);
                            Err(format!("Failed to power on the host after a reboot: {e}"))
                        }
                        (Err(e), _) => {
                            self.progress.reboot = None;
                            Err(format!("Failed to power off the host to reboot it: {e}"))
                        }
                    });
                }
                reboot::Action::Finish => {
                    if request.plain {
                        self.remove_reboot_annotation().await?;
                    }
                    return Ok(Ok(Poll::Done));
                }
            }
        }
        Ok(Ok(Poll::Waiting))
    }

    /// Removes `reboot.metal3.io` if it still has the value this reboot was for, so a new
    /// request written meanwhile (another value) is not lost: the host is read again and the
    /// removal is conditional on that read's `resourceVersion` (a conflict makes the reconcile
    /// start over).
    async fn remove_reboot_annotation(&self) -> Result<(), kube::Error> {
        let Some(value) = self.host.annotations().get(REBOOT_ANNOTATION) else {
            return Ok(());
        };
        let namespace = self.host.namespace().unwrap_or_default();
        let api: Api<BareMetalHost> = Api::namespaced(self.ctx.client.clone(), &namespace);
        let Some(current) = api.get_opt(&self.host.name_any()).await? else {
            return Ok(());
        };
        if current.annotations().get(REBOOT_ANNOTATION) != Some(value) {
            return Ok(());
        }
        let patch = serde_json::json!({"metadata": {
            "annotations": { REBOOT_ANNOTATION: null },
            "resourceVersion": current.resource_version(),
        }});
        api.patch(&self.host.name_any(), &params(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    /// Deletes the HardwareData and removes the finalizer.
    async fn release(&self) -> Result<(), kube::Error> {
        let namespace = self.host.namespace().unwrap_or_default();
        let name = self.host.name_any();
        let data: Api<HardwareData> = Api::namespaced(self.ctx.client.clone(), &namespace);
        match data.delete(&name, &DeleteParams::background()).await {
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            other => {
                other?;
            }
        }
        let remaining: Vec<String> = self
            .host
            .finalizers()
            .iter()
            .filter(|f| *f != HOST_FINALIZER)
            .cloned()
            .collect();
        let patch = serde_json::json!({"metadata": {
            "finalizers": remaining,
            "resourceVersion": self.host.resource_version(),
        }});
        let api: Api<BareMetalHost> = Api::namespaced(self.ctx.client.clone(), &namespace);
        match api.patch(&name, &params(), &Patch::Merge(&patch)).await {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            other => other.map(|_| ()),
        }
    }
}
