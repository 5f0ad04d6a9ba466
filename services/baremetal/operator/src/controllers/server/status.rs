// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! A Server's status from Metal3's own (the BareMetalHost's `status`), as pure functions.
//!
//! `state` is the host's provisioning state; the conditions follow from it:
//!
//! | Host | Ready | Progressing | Degraded |
//! |---|---|---|---|
//! | an `errorType` | False, the error type | False | True, the error type and message |
//! | `provisioned`, or `available` without an image, power as asked | True | False | False |
//! | `registering`, `inspecting`, `provisioning`, `deprovisioning`, …, or power not yet as asked | False | True | False |
//!
//! with reasons in CamelCase (`Provisioned`, `Inspecting`, `RegistrationError`, …). Before the
//! host exists the operator reports its own state: `PreflightPending` (Progressing) or a
//! [`Blocked`] reason (Degraded: an invalid spec, a missing Secret, a failed pre-flight).
//!
//! A reboot ([`reboot`]) is `status.reboot` (`Rebooting`, then `Completed` with the time
//! Metal3 had restored power, or `Refused` with why), and while it runs Ready is False and
//! Progressing True, both with the reason [`REBOOTING`] ([`show_reboot`]).

use k8s_openapi::jiff::Timestamp;
use mni_core::{ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY};
use mni_metal3::v1alpha1::{BareMetalHost, HardwareDetails, ProvisioningState};

use crate::api::metal_v1alpha1::Hardware;
use crate::api::metal_v1alpha1::HostError;
use crate::api::metal_v1alpha1::Nic;
use crate::api::metal_v1alpha1::REBOOT_REFUSED;
use crate::api::metal_v1alpha1::REBOOTED;
use crate::api::metal_v1alpha1::RebootRequest;
use crate::api::metal_v1alpha1::RebootStatus;
use crate::api::metal_v1alpha1::ServerStatus;
use crate::api::metal_v1alpha1::Storage;

use super::upstream::RebootProgress;

/// `Degraded` reason: the spec breaks a rule.
pub const INVALID_SPEC: &str = "InvalidSpec";

/// `Degraded` reason: the credentials Secret does not exist.
pub const CREDENTIALS_NOT_FOUND: &str = "CredentialsSecretNotFound";

/// `Degraded` reason: the credentials Secret lacks `username` or `password`.
pub const CREDENTIALS_INVALID: &str = "CredentialsSecretInvalid";

/// `Degraded` reason: the user-data Secret does not exist.
pub const USER_DATA_NOT_FOUND: &str = "UserDataSecretNotFound";

/// `Degraded` reason: another Server has the same BMC address.
pub const DUPLICATE_BMC: &str = "DuplicateBMCAddress";

/// `Degraded` reason: a BareMetalHost of the Server's name belongs to someone else.
pub const NAME_TAKEN: &str = "NameTaken";

/// `Progressing` reason: the server is being deprovisioned before it goes.
pub const DELETING: &str = "Deprovisioning";

/// `Ready`/`Progressing` reason (and `status.reboot.phase`) while Metal3 reboots the server.
pub const REBOOTING: &str = crate::api::metal_v1alpha1::REBOOTING;

/// Why the operator did not (or could not) hand the server to Metal3: `Degraded` with the
/// reason and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The reason (`InvalidSpec`, `BMCUnreachable`, …).
    pub reason: String,
    /// The message, naming the field.
    pub message: String,
}

impl Blocked {
    /// Blocked for `reason` with `message`.
    pub fn new(reason: &str, message: impl Into<String>) -> Self {
        Self {
            reason: reason.to_owned(),
            message: message.into(),
        }
    }
}

/// The status of a Server: `current` updated for `generation` from the `host` Metal3
/// reports, or from why the operator is `blocked`; `online` is the power asked for.
#[must_use]
pub fn desired(
    current: Option<&ServerStatus>,
    blocked: Option<&Blocked>,
    host: Option<&BareMetalHost>,
    online: bool,
    generation: Option<i64>,
    now: Timestamp,
) -> ServerStatus {
    let mut status = current.cloned().unwrap_or_default();
    status.observed_generation = generation;
    let mut list = status.conditions.clone();
    let mut set = |t: &str, s: ConditionStatus, reason: &str, message: &str| {
        list.set(t, s, reason, message, generation, now);
    };
    use ConditionStatus::{False, True};

    if let Some(blocked) = blocked {
        status.state = Some("invalid".to_owned());
        set(READY, False, &blocked.reason, &blocked.message);
        set(PROGRESSING, False, &blocked.reason, &blocked.message);
        set(DEGRADED, True, &blocked.reason, &blocked.message);
        status.conditions = list;
        return status;
    }
    let Some(host) = host else {
        status.state = Some("pre-flight".to_owned());
        let message = "the BMC passed its pre-flight; handing the server to Metal3";
        set(READY, False, "PreflightPassed", message);
        set(PROGRESSING, True, "PreflightPassed", message);
        set(DEGRADED, False, "PreflightPassed", "");
        status.conditions = list;
        return status;
    };
    let hs = host.status.clone().unwrap_or_default();
    status.bare_metal_host = host.metadata.name.clone();
    status.state = Some(hs.provisioning.state.clone()).filter(|s| !s.is_empty());
    status.operational_status = serde_json::to_value(hs.operational_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|s| !s.is_empty());
    if host.status.is_some() {
        status.power = Some(if hs.powered_on { "On" } else { "Off" }.to_owned());
    }
    status.hardware = hs.hardware.as_ref().map(hardware);
    status.provisioned_image = hs.provisioning.image.as_ref().map(|i| i.url.clone());
    status.error = hs.error_type.map(|t| HostError {
        type_: t.as_str().to_owned(),
        message: hs.error_message.clone(),
    });

    let state = hs.state();
    let state_reason = camel(&hs.provisioning.state);
    let wants_image = host.spec.image.is_some();
    if let Some(error) = &status.error {
        let reason = camel(&error.type_);
        set(READY, False, &reason, &error.message);
        set(PROGRESSING, False, &reason, &error.message);
        set(DEGRADED, True, &reason, &error.message);
    } else {
        let settled = match state {
            Some(ProvisioningState::Provisioned | ProvisioningState::ExternallyProvisioned) => {
                wants_image || host.spec.externally_provisioned == Some(true)
            }
            Some(ProvisioningState::Available) => !wants_image,
            _ => false,
        };
        let power_as_asked = host.status.is_some() && hs.powered_on == online;
        if settled && power_as_asked {
            let message = format!(
                "the server is {} and powered {}",
                hs.provisioning.state,
                if online { "on" } else { "off" }
            );
            set(READY, True, &state_reason, &message);
            set(PROGRESSING, False, &state_reason, "");
            set(DEGRADED, False, &state_reason, "");
        } else {
            let message = if settled {
                format!(
                    "powering {} through the BMC",
                    if online { "on" } else { "off" }
                )
            } else if state_reason.is_empty() {
                "Metal3 has not registered the host yet".to_owned()
            } else {
                format!("Metal3 reports {}", hs.provisioning.state)
            };
            let reason = if settled {
                if online { "PoweringOn" } else { "PoweringOff" }.to_owned()
            } else if state_reason.is_empty() {
                "Registering".to_owned()
            } else {
                state_reason.clone()
            };
            set(READY, False, &reason, &message);
            set(PROGRESSING, True, &reason, &message);
            set(DEGRADED, False, &reason, "");
        }
    }
    status.conditions = list;
    status
}

/// The reboot status of `request`, given what the status said (`current`), how far Metal3
/// got (`progress`) and the host's provisioning state; and whether to hand the request to
/// Metal3 now. A request is handed over once, and only for a provisioned server (else it is
/// `Refused`, naming the state); a finished one stays as it is.
#[must_use]
pub fn reboot(
    current: Option<&RebootStatus>,
    request: &RebootRequest,
    progress: RebootProgress,
    state: Option<&str>,
    now: Timestamp,
) -> (RebootStatus, bool) {
    let same = current.filter(|c| c.id == request.id);
    if let Some(done) = same.filter(|c| c.phase == REBOOTED || c.phase == REBOOT_REFUSED) {
        return (done.clone(), false);
    }
    let started_at = same
        .and_then(|c| c.started_at.clone())
        .unwrap_or_else(|| now.to_string());
    let mut status = RebootStatus {
        id: request.id.clone(),
        mode: request.mode,
        phase: REBOOTING.to_owned(),
        started_at: Some(started_at),
        completed_at: None,
        message: None,
    };
    match progress {
        RebootProgress::Rebooting => (status, false),
        RebootProgress::Done => {
            status.phase = REBOOTED.to_owned();
            status.completed_at = Some(now.to_string());
            (status, false)
        }
        RebootProgress::NotStarted => {
            if matches!(state, Some("provisioned" | "externally provisioned")) {
                status.started_at = Some(now.to_string());
                (status, true)
            } else {
                status.phase = REBOOT_REFUSED.to_owned();
                status.started_at = None;
                status.message = Some(format!(
                    "state: the server is {}; only a provisioned server can be rebooted",
                    state.unwrap_or("not registered with Metal3 yet")
                ));
                (status, false)
            }
        }
    }
}

/// While `status.reboot` is `Rebooting` (and Metal3 reports no error): Ready False and
/// Progressing True, reason [`REBOOTING`].
pub fn show_reboot(status: &mut ServerStatus, generation: Option<i64>, now: Timestamp) {
    let Some(reboot) = status.reboot.as_ref().filter(|r| r.phase == REBOOTING) else {
        return;
    };
    if status.error.is_some() {
        return;
    }
    let message = format!(
        "Metal3 is powering the server off and on again (reboot {}, {})",
        reboot.id,
        reboot.mode.map_or("soft, then hard", |m| m.as_str())
    );
    status.conditions.set(
        READY,
        ConditionStatus::False,
        REBOOTING,
        &message,
        generation,
        now,
    );
    status.conditions.set(
        PROGRESSING,
        ConditionStatus::True,
        REBOOTING,
        &message,
        generation,
        now,
    );
}

/// The status while a deleted server is deprovisioned and powered off.
#[must_use]
pub fn deleting(
    current: Option<&ServerStatus>,
    host: Option<&BareMetalHost>,
    generation: Option<i64>,
    now: Timestamp,
) -> ServerStatus {
    let mut status = desired(current, None, host, false, generation, now);
    let message = "deleted: deprovisioning and powering off before the host is removed";
    let mut list = status.conditions.clone();
    list.set(
        READY,
        ConditionStatus::False,
        DELETING,
        message,
        generation,
        now,
    );
    list.set(
        PROGRESSING,
        ConditionStatus::True,
        DELETING,
        message,
        generation,
        now,
    );
    status.conditions = list;
    status
}

/// `provisioned` → `Provisioned`, `registration error` → `RegistrationError`.
fn camel(words: &str) -> String {
    words
        .split([' ', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// The hardware summary of Metal3's `status.hardware`.
#[must_use]
pub fn hardware(details: &HardwareDetails) -> Hardware {
    let vendor = details.system_vendor.as_ref();
    let cpu = details.cpu.as_ref();
    Hardware {
        manufacturer: vendor.and_then(|v| v.manufacturer.clone()),
        model: vendor.and_then(|v| v.product_name.clone()),
        serial_number: vendor.and_then(|v| v.serial_number.clone()),
        cpu_model: cpu.and_then(|c| c.model.clone()),
        cpu_arch: cpu.and_then(|c| c.arch.clone()),
        cpus: cpu.and_then(|c| c.count),
        memory: details.ram_mebibytes.map(|mib| {
            if mib % 1024 == 0 {
                format!("{}Gi", mib / 1024)
            } else {
                format!("{mib}Mi")
            }
        }),
        nics: details
            .nics
            .iter()
            .map(|n| Nic {
                name: n.name.clone(),
                mac: n.mac.clone(),
            })
            .collect(),
        storage: details
            .storage
            .iter()
            .map(|s| Storage {
                name: s.name.clone(),
                size_bytes: s.size_bytes,
                model: s.model.clone(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_metal3::v1alpha1::{BareMetalHostSpec, BareMetalHostStatus, ErrorType};

    fn host(state: &str, powered_on: bool, error: Option<ErrorType>) -> BareMetalHost {
        let mut host = BareMetalHost::new("s", BareMetalHostSpec::default());
        let mut status = BareMetalHostStatus {
            powered_on,
            error_type: error,
            error_message: error.map(|_| "BMC refused".to_owned()).unwrap_or_default(),
            ..BareMetalHostStatus::default()
        };
        status.provisioning.state = state.to_owned();
        host.status = Some(status);
        host
    }

    fn condition(status: &ServerStatus, t: &str) -> (String, String) {
        let c = status.conditions.iter().find(|c| c.type_ == t).expect(t);
        (format!("{:?}", c.status), c.reason.clone())
    }

    #[test]
    fn a_reboot_is_handed_over_once_shown_and_completed() {
        use crate::api::metal_v1alpha1::RebootMode;
        let now = Timestamp::now();
        let request = RebootRequest {
            id: "r1".to_owned(),
            mode: Some(RebootMode::Hard),
        };
        let provisioned = Some("provisioned");
        let (started, hand_over) =
            reboot(None, &request, RebootProgress::NotStarted, provisioned, now);
        assert!(hand_over);
        assert_eq!(started.phase, REBOOTING);
        let (running, hand_over) = reboot(
            Some(&started),
            &request,
            RebootProgress::Rebooting,
            provisioned,
            now,
        );
        assert!(!hand_over);
        assert_eq!(running, started);
        let mut status = desired(
            None,
            None,
            Some(&host("provisioned", false, None)),
            true,
            Some(1),
            now,
        );
        status.reboot = Some(running.clone());
        show_reboot(&mut status, Some(1), now);
        assert_eq!(
            condition(&status, PROGRESSING),
            ("True".to_owned(), REBOOTING.to_owned())
        );
        let (done, _) = reboot(
            Some(&running),
            &request,
            RebootProgress::Done,
            provisioned,
            now,
        );
        assert_eq!(done.phase, REBOOTED);
        assert!(done.completed_at.is_some());
        assert_eq!(done.started_at, running.started_at);
        // Finished stays finished, even once the host forgot it.
        let (again, hand_over) = reboot(
            Some(&done),
            &request,
            RebootProgress::NotStarted,
            provisioned,
            now,
        );
        assert_eq!((again, hand_over), (done, false));
        // Not provisioned: refused, naming the state.
        let (refused, hand_over) = reboot(
            None,
            &request,
            RebootProgress::NotStarted,
            Some("available"),
            now,
        );
        assert!(!hand_over);
        assert_eq!(refused.phase, REBOOT_REFUSED);
        assert!(
            refused
                .message
                .unwrap()
                .contains("state: the server is available")
        );
    }

    #[test]
    fn conditions_follow_metal3() {
        let now = Timestamp::now();
        let ready = desired(
            None,
            None,
            Some(&host("available", false, None)),
            false,
            Some(1),
            now,
        );
        assert_eq!(
            condition(&ready, READY),
            ("True".to_owned(), "Available".to_owned())
        );
        assert_eq!(ready.power.as_deref(), Some("Off"));
        let powering = desired(
            None,
            None,
            Some(&host("available", false, None)),
            true,
            Some(1),
            now,
        );
        assert_eq!(
            condition(&powering, PROGRESSING),
            ("True".to_owned(), "PoweringOn".to_owned())
        );
        let inspecting = desired(
            None,
            None,
            Some(&host("inspecting", false, None)),
            false,
            Some(1),
            now,
        );
        assert_eq!(condition(&inspecting, PROGRESSING).1, "Inspecting");
        let failed = desired(
            None,
            None,
            Some(&host("registering", false, Some(ErrorType::Registration))),
            false,
            Some(1),
            now,
        );
        assert_eq!(
            condition(&failed, DEGRADED),
            ("True".to_owned(), "RegistrationError".to_owned())
        );
        assert_eq!(failed.error.unwrap().message, "BMC refused");
        let blocked = Blocked::new(INVALID_SPEC, "bootMACAddress: x is not a MAC address");
        let invalid = desired(None, Some(&blocked), None, false, Some(1), now);
        assert_eq!(
            condition(&invalid, DEGRADED),
            ("True".to_owned(), INVALID_SPEC.to_owned())
        );
    }
}
