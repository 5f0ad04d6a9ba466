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

use k8s_openapi::jiff::Timestamp;
use mni_core::{ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY};
use mni_metal3::v1alpha1::{BareMetalHost, HardwareDetails, ProvisioningState};

use crate::api::metal_v1alpha1::Hardware;
use crate::api::metal_v1alpha1::HostError;
use crate::api::metal_v1alpha1::Nic;
use crate::api::metal_v1alpha1::ServerStatus;
use crate::api::metal_v1alpha1::Storage;

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
