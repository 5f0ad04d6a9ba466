//! The BareMetalHost provisioning state machine, pure: given a registered host's state and
//! spec, [`next_step`] says what baremetal-operator would do next, and [`after`] where a
//! completed step leads. The IO (Redfish, Kubernetes) lives in `host.rs`.
//!
//! ```text
//! registering ─▶ inspecting ─▶ available ─▶ provisioning ─▶ provisioned
//!      │                          ▲  │                            │
//!      └─▶ externally provisioned │  └──── spec.image removed ◀───┘ ─▶ deprovisioning
//!                                 └───────────────────────────────────────┘
//! deletion: provisioning/provisioned ─▶ deprovisioning ─▶ powering off before delete
//!           any other registered state ─▶ powering off before delete ─▶ deleting
//! ```

use crate::v1alpha1::{Image, ProvisioningState};

/// The facts about a host the state machine needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostView<'a> {
    /// The current state (registration done).
    pub(crate) state: ProvisioningState,
    /// Whether the host has a deletion timestamp.
    pub(crate) deleting: bool,
    /// `spec.externallyProvisioned`.
    pub(crate) externally_provisioned: bool,
    /// The `inspect.metal3.io: disabled` annotation.
    pub(crate) inspection_disabled: bool,
    /// `spec.image`.
    pub(crate) image: Option<&'a Image>,
    /// `status.provisioning.image`: what is (being) provisioned.
    pub(crate) provisioned_image: Option<&'a Image>,
}

/// What to do next with a registered host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Move to this state; nothing to do on the BMC.
    Enter(ProvisioningState),
    /// Read the inventory over Redfish; then [`after`].
    Inspect,
    /// Boot the host into the image; then [`after`].
    Provision,
    /// Eject media and power off; then [`after`].
    Deprovision,
    /// Power off before the host goes; then [`after`].
    PowerOffBeforeDelete,
    /// Keep the power as `spec.online` says.
    ManagePower,
    /// Delete the HardwareData and remove the finalizer.
    Release,
    /// Nothing (detached hosts).
    Idle,
}

/// The next step for a registered host.
pub(crate) fn next_step(host: &HostView<'_>) -> Step {
    use ProvisioningState as S;
    if host.deleting {
        return match host.state {
            S::Provisioning | S::Provisioned => Step::Enter(S::Deprovisioning),
            S::Deprovisioning => Step::Deprovision,
            S::PoweringOffBeforeDelete => Step::PowerOffBeforeDelete,
            S::Deleting | S::None | S::Unmanaged | S::Detached => Step::Release,
            S::Registering
            | S::Inspecting
            | S::Preparing
            | S::Available
            | S::ExternallyProvisioned => Step::Enter(S::PoweringOffBeforeDelete),
        };
    }
    match host.state {
        S::None | S::Unmanaged => Step::Enter(S::Registering),
        S::Registering if host.externally_provisioned => Step::Enter(S::ExternallyProvisioned),
        S::Registering => Step::Enter(S::Inspecting),
        S::Inspecting if host.inspection_disabled => Step::Enter(S::Available),
        S::Inspecting => Step::Inspect,
        S::Preparing | S::PoweringOffBeforeDelete | S::Deleting => Step::Enter(S::Available),
        S::Available if host.externally_provisioned => Step::Enter(S::ExternallyProvisioned),
        S::Available if host.image.is_some() => Step::Enter(S::Provisioning),
        S::Available => Step::ManagePower,
        S::Provisioning if host.image.is_none() => Step::Enter(S::Deprovisioning),
        S::Provisioning => Step::Provision,
        S::Provisioned if needs_deprovisioning(host) => Step::Enter(S::Deprovisioning),
        S::Provisioned => Step::ManagePower,
        S::ExternallyProvisioned if !host.externally_provisioned => Step::Enter(S::Inspecting),
        S::ExternallyProvisioned => Step::ManagePower,
        S::Deprovisioning => Step::Deprovision,
        S::Detached => Step::Idle,
    }
}

/// Where a completed [`Step::Inspect`], [`Step::Provision`], [`Step::Deprovision`] or
/// [`Step::PowerOffBeforeDelete`] leads.
pub(crate) fn after(step: Step, deleting: bool) -> Option<ProvisioningState> {
    use ProvisioningState as S;
    match step {
        Step::Inspect => Some(S::Available),
        Step::Provision => Some(S::Provisioned),
        Step::Deprovision if deleting => Some(S::PoweringOffBeforeDelete),
        Step::Deprovision => Some(S::Available),
        Step::PowerOffBeforeDelete => Some(S::Deleting),
        Step::Enter(state) => Some(state),
        Step::ManagePower | Step::Release | Step::Idle => None,
    }
}

/// Metal3 deprovisions a provisioned host whose image was removed or changed.
fn needs_deprovisioning(host: &HostView<'_>) -> bool {
    match (host.image, host.provisioned_image) {
        (None, _) => true,
        (Some(wanted), Some(done)) => wanted.url != done.url,
        (Some(_), None) => false,
    }
}

/// A JSON merge patch (RFC 7386) that turns `old` into `new`: changed keys, `null` for removed
/// ones; `None` when they are equal.
pub(crate) fn merge_diff(
    old: &serde_json::Value,
    new: &serde_json::Value,
) -> Option<serde_json::Value> {
    use serde_json::Value;
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            let mut patch = serde_json::Map::new();
            for (key, value) in new {
                match old.get(key) {
                    Some(before) => {
                        if let Some(diff) = merge_diff(before, value) {
                            patch.insert(key.clone(), diff);
                        }
                    }
                    None => {
                        patch.insert(key.clone(), value.clone());
                    }
                }
            }
            for key in old.keys() {
                if !new.contains_key(key) {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (old, new) if old == new => None,
        (_, new) => Some(new.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProvisioningState as S;
    use serde_json::json;

    fn image(url: &str) -> Image {
        Image {
            url: url.into(),
            ..Image::default()
        }
    }

    fn view<'a>(state: S, image: Option<&'a Image>, done: Option<&'a Image>) -> HostView<'a> {
        HostView {
            state,
            deleting: false,
            externally_provisioned: false,
            inspection_disabled: false,
            image,
            provisioned_image: done,
        }
    }

    /// Walks a host through its life by applying steps as the simulator does, with every BMC
    /// step succeeding.
    fn walk(mut host: HostView<'_>, steps: usize) -> Vec<S> {
        let mut seen = vec![host.state];
        for _ in 0..steps {
            let step = next_step(&host);
            let Some(next) = after(step, host.deleting) else {
                break;
            };
            host.state = next;
            seen.push(next);
        }
        seen
    }

    #[test]
    fn a_host_with_an_image_is_registered_inspected_and_provisioned() {
        let img = image("http://h/a.qcow2");
        let host = view(S::Registering, Some(&img), None);
        assert_eq!(
            walk(host, 10),
            [
                S::Registering,
                S::Inspecting,
                S::Available,
                S::Provisioning,
                S::Provisioned
            ]
        );
        let img = image("http://h/a.qcow2");
        assert_eq!(
            next_step(&view(S::Provisioned, Some(&img), Some(&img))),
            Step::ManagePower
        );
    }

    #[test]
    fn inspection_can_be_disabled_by_annotation() {
        let mut host = view(S::Inspecting, None, None);
        assert_eq!(next_step(&host), Step::Inspect);
        host.inspection_disabled = true;
        assert_eq!(next_step(&host), Step::Enter(S::Available));
    }

    #[test]
    fn removing_or_changing_the_image_deprovisions() {
        let a = image("http://h/a.qcow2");
        let b = image("http://h/b.qcow2");
        assert_eq!(
            walk(view(S::Provisioned, None, Some(&a)), 10),
            [S::Provisioned, S::Deprovisioning, S::Available]
        );
        assert_eq!(
            next_step(&view(S::Provisioned, Some(&b), Some(&a))),
            Step::Enter(S::Deprovisioning)
        );
        assert_eq!(
            next_step(&view(S::Provisioning, None, Some(&a))),
            Step::Enter(S::Deprovisioning)
        );
        assert_eq!(
            next_step(&view(S::Available, None, None)),
            Step::ManagePower
        );
    }

    #[test]
    fn externally_provisioned_hosts_skip_inspection_and_provisioning() {
        let img = image("http://h/a.qcow2");
        let mut host = view(S::Registering, Some(&img), None);
        host.externally_provisioned = true;
        assert_eq!(walk(host, 1), [S::Registering, S::ExternallyProvisioned]);
        host.state = S::ExternallyProvisioned;
        assert_eq!(next_step(&host), Step::ManagePower);
        host.externally_provisioned = false;
        assert_eq!(next_step(&host), Step::Enter(S::Inspecting));
    }

    #[test]
    fn deletion_deprovisions_then_powers_off_then_releases() {
        let img = image("http://h/a.qcow2");
        let mut host = view(S::Provisioned, Some(&img), Some(&img));
        host.deleting = true;
        assert_eq!(
            walk(host, 10),
            [
                S::Provisioned,
                S::Deprovisioning,
                S::PoweringOffBeforeDelete,
                S::Deleting
            ]
        );
        host.state = S::Deleting;
        assert_eq!(next_step(&host), Step::Release);
        for state in [S::Available, S::Inspecting, S::ExternallyProvisioned] {
            host.state = state;
            assert_eq!(next_step(&host), Step::Enter(S::PoweringOffBeforeDelete));
        }
        host.state = S::Unmanaged;
        assert_eq!(next_step(&host), Step::Release);
    }

    #[test]
    fn merge_diff_nulls_removed_keys_and_skips_equal_values() {
        let old = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1]});
        let new = json!({"a": 1, "b": {"c": 2}, "e": [1, 2], "f": "x"});
        assert_eq!(
            merge_diff(&old, &new),
            Some(json!({"b": {"d": null}, "e": [1, 2], "f": "x"}))
        );
        assert_eq!(merge_diff(&old, &old), None);
    }
}
