//! The reboot annotations of a provisioned host, pure: [`RebootRequest::of`] reads what the
//! annotations ask for, and [`next`] says what to send to the BMC given the power state it
//! reports. The IO (Redfish, removing the annotation) lives in `host.rs`.
//!
//! Metal3's semantics (BMO user guide, "Reboot annotation"):
//!
//! - `reboot.metal3.io` powers the host off and on again; the annotation is removed once power
//!   is restored;
//! - `reboot.metal3.io/{key}` (one per client) powers it off and **keeps it off** until every
//!   such annotation is removed; when both forms exist the suffixed one wins;
//! - the value may be `{"mode":"hard"}` or `{"mode":"soft"}`; empty, unparseable or without a
//!   mode is soft. Soft is a `GracefulShutdown` that falls back to `ForceOff` when the BMC
//!   refuses it or the host is still on after the soft power-off timeout, as Ironic does; hard
//!   is `ForceOff`. If any annotation asks for hard, hard it is.
//!
//! ```text
//! on ──GracefulShutdown/ForceOff──▶ powering off ──BMC says Off──▶ off ──On──▶ powering on
//!                 (soft timeout: ForceOff) │              (held while a                │
//!                                          ▼               suffixed one exists)  BMC says On
//!                                                                                      ▼
//!                                                               remove `reboot.metal3.io`
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use mni_redfish::{PowerState, ResetType};
use tokio::time::Instant;

/// The reboot annotation; `reboot.metal3.io/{key}` is its suffixed form.
pub(crate) const REBOOT_ANNOTATION: &str = "reboot.metal3.io";

/// How a reboot powers the host off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum RebootMode {
    /// `GracefulShutdown`, then `ForceOff` if that is refused or times out.
    #[default]
    Soft,
    /// `ForceOff`.
    Hard,
}

impl RebootMode {
    /// The mode of one annotation value, as baremetal-operator reads it: only
    /// `{"mode":"hard"}` is hard.
    fn of(value: &str) -> Self {
        #[derive(serde::Deserialize)]
        struct Arguments {
            #[serde(default)]
            mode: String,
        }
        match serde_json::from_str::<Arguments>(value) {
            Ok(a) if a.mode == "hard" => Self::Hard,
            _ => Self::Soft,
        }
    }
}

/// What a host's reboot annotations ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RebootRequest {
    /// `reboot.metal3.io` is there (removed once power is restored).
    pub(crate) plain: bool,
    /// Some `reboot.metal3.io/{key}` is there: the host stays off.
    pub(crate) held: bool,
    /// How to power off.
    pub(crate) mode: RebootMode,
}

impl RebootRequest {
    /// The request of `annotations`; `None` without reboot annotations.
    pub(crate) fn of(annotations: &BTreeMap<String, String>) -> Option<Self> {
        let plain = annotations.get(REBOOT_ANNOTATION);
        let suffixed: Vec<&String> = annotations
            .iter()
            .filter(|(k, _)| {
                k.strip_prefix(REBOOT_ANNOTATION)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|key| !key.is_empty())
            })
            .map(|(_, v)| v)
            .collect();
        if plain.is_none() && suffixed.is_empty() {
            return None;
        }
        // The suffixed form takes precedence; among several, hard wins.
        let values: Vec<&String> = if suffixed.is_empty() {
            plain.into_iter().collect()
        } else {
            suffixed.clone()
        };
        let mode = if values.iter().any(|v| RebootMode::of(v) == RebootMode::Hard) {
            RebootMode::Hard
        } else {
            RebootMode::Soft
        };
        Some(Self {
            plain: plain.is_some(),
            held: !suffixed.is_empty(),
            mode,
        })
    }
}

/// Where a reboot is, between reconciles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    /// `reset` (`GracefulShutdown` or `ForceOff`) was sent at `since`.
    PoweringOff {
        /// What was sent.
        reset: ResetType,
        /// When.
        since: Instant,
    },
    /// The BMC reported the host off.
    Off,
    /// `On` was sent at `since`.
    PoweringOn {
        /// When.
        since: Instant,
    },
}

/// The timeouts of a reboot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// How long a `GracefulShutdown` may take before `ForceOff`.
    pub(crate) soft_power_off: Duration,
    /// How long `ForceOff` or `On` may take before it is an error.
    pub(crate) power: Duration,
}

/// What to do next for a reboot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Send this `ComputerSystem.Reset`, then be in [`Phase`].
    Reset(ResetType),
    /// Nothing to send; look again later.
    Wait,
    /// The host is off and should be on; the off half of the reboot is done.
    Continue,
    /// Power is restored (or the host is to stay off, `online: false`): remove the plain
    /// annotation.
    Finish,
    /// The BMC did not do what it was told in time.
    Fail(String),
}

/// The next action of a reboot that `request` asks for, in `phase`, with the BMC reporting
/// `power`; the phase to be in afterwards. `online` is `spec.online`.
pub(crate) fn next(
    request: RebootRequest,
    phase: Option<&Phase>,
    power: Option<&PowerState>,
    online: bool,
    timeouts: Timeouts,
    now: Instant,
) -> (Action, Option<Phase>) {
    let is = |s: PowerState| power == Some(&s);
    match phase {
        None if is(PowerState::Off) => (Action::Continue, Some(Phase::Off)),
        None if is(PowerState::On) => {
            let reset = match request.mode {
                RebootMode::Soft => ResetType::GracefulShutdown,
                RebootMode::Hard => ResetType::ForceOff,
            };
            (
                Action::Reset(reset.clone()),
                Some(Phase::PoweringOff { reset, since: now }),
            )
        }
        // Powering on or off by itself, or unknown: wait until it settles.
        None => (Action::Wait, None),
        Some(Phase::PoweringOff { .. }) if is(PowerState::Off) => {
            (Action::Continue, Some(Phase::Off))
        }
        Some(Phase::PoweringOff { reset, since })
            if *reset == ResetType::GracefulShutdown
                && now.duration_since(*since) > timeouts.soft_power_off =>
        {
            // Ironic: a soft power-off that does not complete in time becomes a hard one.
            (
                Action::Reset(ResetType::ForceOff),
                Some(Phase::PoweringOff {
                    reset: ResetType::ForceOff,
                    since: now,
                }),
            )
        }
        Some(Phase::PoweringOff { since, .. }) if now.duration_since(*since) > timeouts.power => (
            Action::Fail(format!(
                "Timed out after {:?} waiting for power state off while rebooting",
                timeouts.power
            )),
            None,
        ),
        Some(p @ Phase::PoweringOff { .. }) => (Action::Wait, Some(p.clone())),
        Some(Phase::Off) if request.held => (Action::Wait, Some(Phase::Off)),
        Some(Phase::Off) if !online => (Action::Finish, None),
        Some(Phase::Off) if is(PowerState::On) => (Action::Finish, None),
        Some(Phase::Off) => (
            Action::Reset(ResetType::On),
            Some(Phase::PoweringOn { since: now }),
        ),
        Some(Phase::PoweringOn { .. }) if is(PowerState::On) => (Action::Finish, None),
        Some(Phase::PoweringOn { since }) if now.duration_since(*since) > timeouts.power => (
            Action::Fail(format!(
                "Timed out after {:?} waiting for power state on while rebooting",
                timeouts.power
            )),
            Some(Phase::Off),
        ),
        Some(p @ Phase::PoweringOn { .. }) => (Action::Wait, Some(p.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        soft_power_off: Duration::from_secs(60),
        power: Duration::from_secs(120),
    };

    fn request(annotations: &[(&str, &str)]) -> Option<RebootRequest> {
        let map = annotations
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        RebootRequest::of(&map)
    }

    fn check(annotations: &[(&str, &str)], expected: Option<(bool, bool, RebootMode)>) {
        let got = request(annotations).map(|r| (r.plain, r.held, r.mode));
        assert_eq!(got, expected, "{annotations:?}");
    }

    #[test]
    fn annotations_give_the_request_and_its_mode() {
        use RebootMode::{Hard, Soft};
        check(&[], None);
        check(&[("inspect.metal3.io", "disabled")], None);
        check(&[("reboot.metal3.io.other", "")], None);
        check(&[("reboot.metal3.io/", "")], None);
        check(&[("reboot.metal3.io", "")], Some((true, false, Soft)));
        check(
            &[("reboot.metal3.io", r#"{"mode":"hard"}"#)],
            Some((true, false, Hard)),
        );
        check(
            &[("reboot.metal3.io", r#"{"mode":"soft"}"#)],
            Some((true, false, Soft)),
        );
        check(
            &[("reboot.metal3.io", "not json")],
            Some((true, false, Soft)),
        );
        check(&[("reboot.metal3.io", "{}")], Some((true, false, Soft)));
        check(&[("reboot.metal3.io/a", "")], Some((false, true, Soft)));
        // Several clients: any hard wins.
        check(
            &[
                ("reboot.metal3.io/a", r#"{"mode":"soft"}"#),
                ("reboot.metal3.io/b", r#"{"mode":"hard"}"#),
            ],
            Some((false, true, Hard)),
        );
        // Both forms: the suffixed one takes precedence.
        check(
            &[
                ("reboot.metal3.io", r#"{"mode":"hard"}"#),
                ("reboot.metal3.io/a", r#"{"mode":"soft"}"#),
            ],
            Some((true, true, Soft)),
        );
    }

    fn plain(mode: RebootMode) -> RebootRequest {
        RebootRequest {
            plain: true,
            held: false,
            mode,
        }
    }

    /// Runs a reboot against a BMC that applies every reset at once, returning the resets.
    fn run(request: RebootRequest, mut power: PowerState, online: bool) -> Vec<String> {
        let now = Instant::now();
        let mut phase = None;
        let mut sent = Vec::new();
        for _ in 0..10 {
            let (action, next_phase) =
                next(request, phase.as_ref(), Some(&power), online, TIMEOUTS, now);
            phase = next_phase;
            match action {
                Action::Reset(reset) => {
                    power = if reset == ResetType::On {
                        PowerState::On
                    } else {
                        PowerState::Off
                    };
                    sent.push(reset.to_string());
                }
                Action::Continue => {}
                Action::Finish => {
                    sent.push("finish".into());
                    return sent;
                }
                Action::Wait => {
                    sent.push("wait".into());
                    return sent;
                }
                Action::Fail(message) => panic!("{message}"),
            }
        }
        sent
    }

    #[test]
    fn a_reboot_powers_off_then_on_then_finishes() {
        assert_eq!(
            run(plain(RebootMode::Soft), PowerState::On, true),
            ["GracefulShutdown", "On", "finish"]
        );
        assert_eq!(
            run(plain(RebootMode::Hard), PowerState::On, true),
            ["ForceOff", "On", "finish"]
        );
        // Already off: only on.
        assert_eq!(
            run(plain(RebootMode::Hard), PowerState::Off, true),
            ["On", "finish"]
        );
        // online: false: the host stays off, the annotation goes.
        assert_eq!(
            run(plain(RebootMode::Hard), PowerState::On, false),
            ["ForceOff", "finish"]
        );
    }

    #[test]
    fn a_suffixed_annotation_holds_the_host_off() {
        let held = RebootRequest {
            plain: true,
            held: true,
            mode: RebootMode::Hard,
        };
        assert_eq!(run(held, PowerState::On, true), ["ForceOff", "wait"]);
    }

    #[test]
    fn the_power_state_is_observed_not_assumed() {
        let now = Instant::now();
        let request = plain(RebootMode::Hard);
        let on = Some(&PowerState::On);
        let (action, phase) = next(request, None, on, true, TIMEOUTS, now);
        assert_eq!(action, Action::Reset(ResetType::ForceOff));
        // The BMC still says on: wait, do not send again.
        let later = now + Duration::from_secs(5);
        let (action, phase) = next(request, phase.as_ref(), on, true, TIMEOUTS, later);
        assert_eq!(action, Action::Wait);
        let (action, phase) = next(
            request,
            phase.as_ref(),
            Some(&PowerState::Off),
            true,
            TIMEOUTS,
            later,
        );
        assert_eq!(
            (action, phase.clone()),
            (Action::Continue, Some(Phase::Off))
        );
        let (action, phase) = next(
            request,
            phase.as_ref(),
            Some(&PowerState::Off),
            true,
            TIMEOUTS,
            later,
        );
        assert_eq!(action, Action::Reset(ResetType::On));
        // Still off after On was sent: wait; then on: finish.
        let (action, phase) = next(
            request,
            phase.as_ref(),
            Some(&PowerState::Off),
            true,
            TIMEOUTS,
            later,
        );
        assert_eq!(action, Action::Wait);
        let (action, phase) = next(request, phase.as_ref(), on, true, TIMEOUTS, later);
        assert_eq!((action, phase), (Action::Finish, None));
        // A host powering on or off by itself is waited for.
        let (action, _) = next(
            request,
            None,
            Some(&PowerState::PoweringOn),
            true,
            TIMEOUTS,
            now,
        );
        assert_eq!(action, Action::Wait);
    }

    #[test]
    fn a_soft_power_off_that_times_out_becomes_hard_and_a_hard_one_fails() {
        let now = Instant::now();
        let request = plain(RebootMode::Soft);
        let on = Some(&PowerState::On);
        let (_, phase) = next(request, None, on, true, TIMEOUTS, now);
        let later = now + TIMEOUTS.soft_power_off + Duration::from_secs(1);
        let (action, phase) = next(request, phase.as_ref(), on, true, TIMEOUTS, later);
        assert_eq!(action, Action::Reset(ResetType::ForceOff));
        let much_later = later + TIMEOUTS.power + Duration::from_secs(1);
        let (action, phase) = next(request, phase.as_ref(), on, true, TIMEOUTS, much_later);
        assert!(matches!(action, Action::Fail(m) if m.contains("power state off")));
        assert_eq!(phase, None);
        // Powering on that times out fails, and On is sent again next time.
        let (action, phase) = next(
            request,
            Some(&Phase::PoweringOn { since: now }),
            Some(&PowerState::Off),
            true,
            TIMEOUTS,
            now + TIMEOUTS.power + Duration::from_secs(1),
        );
        assert!(matches!(action, Action::Fail(m) if m.contains("power state on")));
        assert_eq!(phase, Some(Phase::Off));
    }
}
