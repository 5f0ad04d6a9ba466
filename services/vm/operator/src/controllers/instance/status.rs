// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! An Instance's status from KubeVirt's own status, as pure functions.
//!
//! `phase` is the VirtualMachine's `printableStatus`; the conditions follow from it:
//!
//! | printableStatus | Ready | Progressing | Degraded |
//! |---|---|---|---|
//! | `Running` (and the VM ready) | True | False | False |
//! | `Stopped` | False, `Stopped` | False | False |
//! | `Provisioning`, `Starting`, `Stopping`, `WaitingForVolumeBinding`, `Migrating`, … | False | True | False |
//! | `ErrorUnschedulable`, `ErrImagePull`, `ImagePullBackOff`, `DataVolumeError`, `CrashLoopBackOff`, `ErrorPvcNotFound` | False | False | True |
//!
//! each with the printableStatus as the reason and KubeVirt's message (an address conflict
//! on the VM's `Ready` condition is `Degraded` too, with Kube-OVN's reason). Before the VM
//! exists the operator reports its own state: `WaitingForNetwork` (Progressing) or a
//! [`Blocked`] reason (Degraded). `RestartRequired` mirrors KubeVirt's condition of that name:
//! the spec changed under a running instance, and a restart applies it.

use k8s_openapi::jiff::Timestamp;
use mni_core::{ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY};
use mni_kubevirt::cdi::{DataVolume, DataVolumePhase};
use mni_kubevirt::v1::{PrintableStatus, VirtualMachine, VirtualMachineInstance};

use crate::api::compute_v1alpha1::{InstanceInterface, InstanceStatus};

/// The condition saying a spec change waits for a restart.
pub const RESTART_REQUIRED: &str = "RestartRequired";

/// `Progressing` reason: the VPC or its subnet is not ready yet.
pub const WAITING_FOR_NETWORK: &str = "WaitingForNetwork";

/// `Degraded` reason: the spec breaks a rule.
pub const INVALID_SPEC: &str = "InvalidSpec";

/// `Degraded` reason: the SSH-key Secret does not exist.
pub const SECRET_NOT_FOUND: &str = "SecretNotFound";

/// `Degraded` reason: the user data and the SSH keys cannot be combined.
pub const CLOUD_INIT_INVALID: &str = "CloudInitInvalid";

/// `Degraded` reason: a VirtualMachine of the Instance's name belongs to someone else.
pub const NAME_TAKEN: &str = "NameTaken";

/// The VM's reasons (on its `Ready` condition) that an address cannot be had.
const ADDRESS_REASONS: &[&str] = &[
    "IPConflict",
    "IPOutOfRange",
    "IPExcluded",
    "InvalidIPAddress",
    "NoAvailableAddress",
    "SubnetNotFound",
];

/// The VM's `Ready` reasons that say nothing beyond its printableStatus.
const QUIET_REASONS: &[&str] = &["VMINotExists", "GuestNotRunning"];

/// Why the operator did not (or could not) apply the VirtualMachine: `Degraded` with the
/// reason and the message, or `Progressing` for [`WAITING_FOR_NETWORK`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The reason (`InvalidSpec`, `WaitingForNetwork`, `SubnetNotFound`, …).
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

/// What KubeVirt reports about an Instance's objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct Observed<'a> {
    /// The VirtualMachine.
    pub vm: Option<&'a VirtualMachine>,
    /// Its running instance.
    pub vmi: Option<&'a VirtualMachineInstance>,
    /// The boot DataVolume, when the boot disk is imported.
    pub boot: Option<&'a DataVolume>,
}

/// The status of an Instance: `current` (its status now) updated for `generation` from what
/// is `observed`, or from why the operator is `blocked`. Sizes and `restartedAt` are passed
/// through.
#[must_use]
pub fn desired(
    current: Option<&InstanceStatus>,
    blocked: Option<&Blocked>,
    observed: Observed<'_>,
    generation: Option<i64>,
    now: Timestamp,
) -> InstanceStatus {
    let mut status = current.cloned().unwrap_or_default();
    status.observed_generation = generation;
    let mut list = status.conditions.clone();
    let mut set = |t: &str, s: ConditionStatus, reason: &str, message: &str| {
        list.set(t, s, reason, message, generation, now);
    };
    use ConditionStatus::{False, True};

    if let Some(blocked) = blocked {
        let waiting = blocked.reason == WAITING_FOR_NETWORK;
        status.phase = Some(
            if waiting {
                WAITING_FOR_NETWORK
            } else {
                "Invalid"
            }
            .to_owned(),
        );
        set(READY, False, &blocked.reason, &blocked.message);
        set(
            PROGRESSING,
            if waiting { True } else { False },
            &blocked.reason,
            &blocked.message,
        );
        set(
            DEGRADED,
            if waiting { False } else { True },
            &blocked.reason,
            &blocked.message,
        );
        list.retain(|c| c.type_ != RESTART_REQUIRED);
        status.conditions = list;
        return status;
    }

    let vm_status = observed
        .vm
        .and_then(|vm| vm.status.clone())
        .unwrap_or_default();
    let printable = vm_status.printable_status;
    let vm_ready = mni_kubevirt::v1::find_condition(&vm_status.conditions, mni_kubevirt::v1::READY);
    let ready_reason = vm_ready.and_then(|c| c.reason.clone()).unwrap_or_default();
    let ready_message = vm_ready.and_then(|c| c.message.clone()).unwrap_or_default();

    let vmi_status = observed
        .vmi
        .and_then(|v| v.status.clone())
        .unwrap_or_default();
    status.node_name = vmi_status.node_name.clone().filter(|n| !n.is_empty());
    status.interfaces = vmi_status
        .interfaces
        .iter()
        .map(|i| InstanceInterface {
            name: i.name.clone().unwrap_or_default(),
            ip_address: i.ip_address.clone(),
            ip_addresses: i.ip_addresses.clone(),
            mac: i.mac.clone(),
        })
        .collect();
    status.ip_address = status.interfaces.iter().find_map(|i| i.ip_address.clone());
    status.boot_disk_progress = observed.boot.and_then(|dv| {
        let s = dv.status.as_ref()?;
        (s.phase != Some(DataVolumePhase::Succeeded))
            .then(|| s.progress.clone())
            .flatten()
    });

    let phase = match printable {
        Some(p) => format!("{p:?}"),
        None if observed.vm.is_some() => "Pending".to_owned(),
        None => "Provisioning".to_owned(),
    };
    let address_problem = ADDRESS_REASONS.contains(&ready_reason.as_str());
    let dv_message = observed
        .boot
        .and_then(|dv| dv.status.as_ref())
        .and_then(|s| {
            mni_kubevirt::cdi::find_condition(&s.conditions, mni_kubevirt::cdi::RUNNING)
                .and_then(|c| c.message.clone())
        })
        .unwrap_or_default();
    match printable {
        Some(PrintableStatus::Running) if vm_status.ready => {
            set(READY, True, "Running", "the instance is running");
            set(PROGRESSING, False, "Running", "");
            set(DEGRADED, False, "Running", "");
        }
        Some(PrintableStatus::Stopped) => {
            set(READY, False, "Stopped", "the instance is stopped");
            set(PROGRESSING, False, "Stopped", "");
            set(DEGRADED, False, "Stopped", "");
        }
        Some(
            p @ (PrintableStatus::ErrorUnschedulable
            | PrintableStatus::ErrImagePull
            | PrintableStatus::ImagePullBackOff
            | PrintableStatus::DataVolumeError
            | PrintableStatus::CrashLoopBackOff
            | PrintableStatus::ErrorPvcNotFound),
        ) => {
            let reason = format!("{p:?}");
            let message = degraded_message(p, &ready_message, &dv_message, &vm_status.conditions);
            set(READY, False, &reason, &message);
            set(PROGRESSING, False, &reason, &message);
            set(DEGRADED, True, &reason, &message);
        }
        _ if address_problem => {
            let message = format!("network.vpc.ip: {ready_message}");
            set(READY, False, &ready_reason, &message);
            set(PROGRESSING, False, &ready_reason, &message);
            set(DEGRADED, True, &ready_reason, &message);
        }
        _ => {
            let message = match &status.boot_disk_progress {
                Some(progress) if printable == Some(PrintableStatus::Provisioning) => {
                    format!("importing the boot disk: {progress}")
                }
                _ if !ready_reason.is_empty()
                    && !QUIET_REASONS.contains(&ready_reason.as_str()) =>
                {
                    format!("KubeVirt reports {phase}: {ready_reason}: {ready_message}")
                }
                _ => format!("KubeVirt reports {phase}"),
            };
            set(READY, False, &phase, &message);
            set(PROGRESSING, True, &phase, &message);
            set(DEGRADED, False, &phase, "");
        }
    }
    let restart = mni_kubevirt::v1::find_condition(&vm_status.conditions, RESTART_REQUIRED)
        .filter(|c| c.status == mni_kubevirt::v1::STATUS_TRUE);
    if let Some(c) = restart {
        let message = format!(
            "the spec changed under the running instance; restart it to apply the change ({})",
            c.message.clone().unwrap_or_default()
        );
        set(RESTART_REQUIRED, True, "SpecChanged", &message);
    } else {
        list.retain(|c| c.type_ != RESTART_REQUIRED);
    }
    status.phase = Some(phase);
    status.conditions = list;
    status
}

fn degraded_message(
    printable: PrintableStatus,
    ready_message: &str,
    dv_message: &str,
    conditions: &[mni_kubevirt::v1::Condition],
) -> String {
    let scheduled = mni_kubevirt::v1::find_condition(conditions, mni_kubevirt::v1::POD_SCHEDULED)
        .and_then(|c| c.message.clone())
        .unwrap_or_default();
    let detail = match printable {
        PrintableStatus::DataVolumeError if !dv_message.is_empty() => dv_message,
        PrintableStatus::ErrorUnschedulable if !scheduled.is_empty() => scheduled.as_str(),
        _ => ready_message,
    };
    let field = match printable {
        PrintableStatus::ErrImagePull | PrintableStatus::ImagePullBackOff => "bootDisk.image",
        PrintableStatus::DataVolumeError => "bootDisk.http",
        PrintableStatus::ErrorUnschedulable => "instanceType",
        _ => "spec",
    };
    if detail.is_empty() {
        format!("{field}: KubeVirt reports {printable:?}")
    } else {
        format!("{field}: KubeVirt reports {printable:?}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm(json: serde_json::Value) -> VirtualMachine {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": { "name": "web-1" },
            "spec": { "template": { "spec": { "domain": { "devices": {} } } } },
            "status": json,
        }))
        .expect("a VirtualMachine")
    }

    fn reason(status: &InstanceStatus, t: &str) -> (String, String) {
        let c = status.conditions.find(t).expect("condition");
        (c.status.as_str().to_owned(), c.reason.clone())
    }

    #[test]
    fn running_is_ready() {
        let vm = vm(serde_json::json!({ "printableStatus": "Running", "ready": true }));
        let observed = Observed {
            vm: Some(&vm),
            ..Observed::default()
        };
        let s = desired(None, None, observed, Some(2), Timestamp::now());
        assert_eq!(s.phase.as_deref(), Some("Running"));
        assert_eq!(reason(&s, READY), ("True".to_owned(), "Running".to_owned()));
        assert_eq!(s.observed_generation, Some(2));
    }

    #[test]
    fn errors_are_degraded_with_kubevirts_reason() {
        let vm = vm(serde_json::json!({
            "printableStatus": "ErrorUnschedulable",
            "conditions": [{ "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                             "message": "0/1 nodes are available: Insufficient cpu" }],
        }));
        let observed = Observed {
            vm: Some(&vm),
            ..Observed::default()
        };
        let s = desired(None, None, observed, Some(1), Timestamp::now());
        assert_eq!(
            reason(&s, DEGRADED),
            ("True".to_owned(), "ErrorUnschedulable".to_owned())
        );
        let message = &s.conditions.find(DEGRADED).expect("degraded").message;
        assert!(
            message.starts_with("instanceType: KubeVirt reports ErrorUnschedulable: 0/1 nodes"),
            "{message}"
        );
    }

    #[test]
    fn waiting_for_the_network_is_progressing() {
        let blocked = Blocked::new(WAITING_FOR_NETWORK, "network.vpc.subnet: not Ready yet");
        let s = desired(
            None,
            Some(&blocked),
            Observed::default(),
            Some(1),
            Timestamp::now(),
        );
        assert_eq!(s.phase.as_deref(), Some(WAITING_FOR_NETWORK));
        assert_eq!(
            reason(&s, PROGRESSING),
            ("True".to_owned(), WAITING_FOR_NETWORK.to_owned())
        );
        assert_eq!(
            reason(&s, DEGRADED),
            ("False".to_owned(), WAITING_FOR_NETWORK.to_owned())
        );
    }

    #[test]
    fn a_spec_change_under_a_running_vm_requires_a_restart() {
        let vm = vm(serde_json::json!({
            "printableStatus": "Running", "ready": true,
            "conditions": [{ "type": "RestartRequired", "status": "True",
                             "message": "a non-live-updatable field was changed in the template spec" }],
        }));
        let observed = Observed {
            vm: Some(&vm),
            ..Observed::default()
        };
        let s = desired(None, None, observed, Some(3), Timestamp::now());
        assert_eq!(
            reason(&s, RESTART_REQUIRED),
            ("True".to_owned(), "SpecChanged".to_owned())
        );
        assert!(s.conditions.is_true(READY));
    }
}
