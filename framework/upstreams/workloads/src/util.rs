//! Small shared helpers: template hashes, label selectors, owner references, durations,
//! int-or-percent values, pod readiness and the failure-injection annotations.
//!
//! Everything here is pure (no API calls) so the controllers stay short and testable.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::{FAIL_ANNOTATION, READY_DELAY_ANNOTATION, RUN_DURATION_ANNOTATION};

/// Errors of the pure helpers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// A duration annotation could not be read.
    #[error("invalid duration {0:?} (expected e.g. \"500ms\", \"2s\", \"1m30s\")")]
    Duration(String),
}

/// The alphabet kube uses for generated names and hashes (no vowels, no look-alikes).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The current time, truncated to whole seconds as Kubernetes stores it.
pub(crate) fn now() -> Timestamp {
    let t = Timestamp::now();
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// Adds a std duration to a timestamp, saturating at the far future.
pub(crate) fn add(t: Timestamp, d: Duration) -> Timestamp {
    let span = jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
    t.checked_add(span).unwrap_or(Timestamp::MAX)
}

/// Seconds elapsed from `from` to `to` (zero if `to` is earlier).
pub(crate) fn elapsed(from: Timestamp, to: Timestamp) -> Duration {
    Duration::try_from(to.duration_since(from)).unwrap_or(Duration::ZERO)
}

/// 32-bit FNV-1a, the hash behind kube's `pod-template-hash`.
fn fnv32a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// kube's `rand.SafeEncodeString`: maps each byte onto the vowel-free alphabet.
fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

/// A stable hash of a pod template (and collision count), encoded like kube's
/// `pod-template-hash` / `controller-revision-hash` values (up to 10 characters).
pub(crate) fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut bytes = serde_json::to_vec(template).unwrap_or_default();
    // No collisions yet (`None`, as before the first status, or 0) hash alike.
    if let Some(c) = collision_count.filter(|c| *c != 0) {
        bytes.extend_from_slice(&c.to_le_bytes());
    }
    safe_encode(&fnv32a(&bytes).to_string())
}

/// A fake 64-hex-digit digest derived from `seed` (image IDs and container IDs).
pub(crate) fn fake_digest(seed: &str) -> String {
    (0u8..8)
        .map(|i| {
            let mut b = seed.as_bytes().to_vec();
            b.push(i);
            format!("{:08x}", fnv32a(&b))
        })
        .collect()
}

/// Whether a selector selects nothing useful (kube's controllers ignore such workloads).
pub(crate) fn selector_is_empty(sel: &LabelSelector) -> bool {
    sel.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && sel.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

/// The controller owner reference of an object, if any.
pub(crate) fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
}

/// Whether `meta` is controlled by the object with `uid`.
pub(crate) fn controlled_by(meta: &ObjectMeta, uid: &str) -> bool {
    controller_of(meta).is_some_and(|r| r.uid == uid)
}

/// A controller owner reference as kube's controllers write them.
pub(crate) fn owner_ref(api_version: &str, kind: &str, meta: &ObjectMeta) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Parses `500ms`, `2s`, `1m30s`, `1h`; a bare number means seconds.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, Error> {
    let bad = || Error::Duration(s.to_string());
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).map_err(|_| bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let value: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += Duration::try_from_secs_f64(value * scale).map_err(|_| bad())?;
    }
    if s.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

/// kube's `GetScaledValueFromIntOrPercent`: an absolute number, or a percentage of `total`
/// rounded up or down.
pub(crate) fn scaled_value(v: Option<&IntOrString>, default: &str, total: i32, up: bool) -> i32 {
    let percent = |s: &str| -> Option<i32> {
        let n: i64 = s.strip_suffix('%')?.trim().parse().ok()?;
        let scaled = i64::from(total) * n;
        let r = if up {
            (scaled + 99).div_euclid(100)
        } else {
            scaled.div_euclid(100)
        };
        i32::try_from(r).ok()
    };
    match v {
        Some(IntOrString::Int(n)) => *n,
        Some(IntOrString::String(s)) => percent(s).or_else(|| s.parse().ok()).unwrap_or(0),
        None => percent(default).unwrap_or(0),
    }
}

/// How a pod should behave, from the failure-injection annotations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Behaviour {
    /// Containers crash-loop and never become ready.
    pub(crate) fail: bool,
    /// Containers become ready this long after the pod started.
    pub(crate) ready_delay: Duration,
    /// Containers of a pod that does not restart `Always` exit this long after the pod
    /// started (with 0, or 1 when `fail`); `None`: they run until deleted.
    pub(crate) run_for: Option<Duration>,
}

impl Behaviour {
    /// Folds in one object's annotations: any `fail: "true"` fails; the first ready-delay
    /// found (pod first, then its owners) wins.
    pub(crate) fn absorb(
        &mut self,
        annotations: Option<&BTreeMap<String, String>>,
        delay_set: &mut bool,
    ) {
        let Some(a) = annotations else { return };
        if self.run_for.is_none()
            && let Some(v) = a.get(RUN_DURATION_ANNOTATION)
        {
            match parse_duration(v) {
                Ok(d) => self.run_for = Some(d),
                Err(e) => tracing::debug!(error = %e, "ignoring {RUN_DURATION_ANNOTATION}"),
            }
        }
        if a.get(FAIL_ANNOTATION)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        {
            self.fail = true;
        }
        if !*delay_set && let Some(v) = a.get(READY_DELAY_ANNOTATION) {
            match parse_duration(v) {
                Ok(d) => {
                    self.ready_delay = d;
                    *delay_set = true;
                }
                Err(e) => tracing::debug!(error = %e, "ignoring {READY_DELAY_ANNOTATION}"),
            }
        }
    }
}

/// The pod's `Ready` condition: whether it is True and since when.
pub(crate) fn pod_ready(pod: &Pod) -> Option<Option<Timestamp>> {
    pod.status
        .as_ref()?
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready" && c.status == "True")
        .map(|c| c.last_transition_time.as_ref().map(|t| t.0))
}

/// Whether the pod is ready.
pub(crate) fn is_ready(pod: &Pod) -> bool {
    pod_ready(pod).is_some()
}

/// Whether the pod has been ready for `min_ready` seconds at `now`; when it is ready but
/// not yet available, `wake` receives the time it becomes available.
pub(crate) fn is_available(
    pod: &Pod,
    min_ready: i32,
    now: Timestamp,
    wake: &mut Option<Timestamp>,
) -> bool {
    match pod_ready(pod) {
        None => false,
        Some(_) if min_ready <= 0 => true,
        Some(None) => false,
        Some(Some(since)) => {
            let at = add(
                since,
                Duration::from_secs(u64::try_from(min_ready).unwrap_or(0)),
            );
            if at <= now {
                true
            } else {
                *wake = Some(wake.map_or(at, |w| w.min(at)));
                false
            }
        }
    }
}

/// Whether the pod counts as an active replica (not finished, not being deleted).
pub(crate) fn is_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none() && !matches!(phase, Some("Succeeded" | "Failed"))
}

/// Earliest of two optional wake-up times.
pub(crate) fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A non-zero count, or `None` (kube's `omitempty` on int32 status fields).
pub(crate) fn nz(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

/// Counts as i32, saturating.
pub(crate) fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s").ok(), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_duration("500ms").ok(),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_duration("1m30s").ok(), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("3").ok(), Some(Duration::from_secs(3)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn percentages_round_like_kube() {
        let p = IntOrString::String("25%".into());
        assert_eq!(scaled_value(Some(&p), "25%", 3, true), 1);
        assert_eq!(scaled_value(Some(&p), "25%", 3, false), 0);
        assert_eq!(scaled_value(None, "25%", 10, false), 2);
        assert_eq!(
            scaled_value(Some(&IntOrString::Int(2)), "25%", 10, false),
            2
        );
    }

    #[test]
    fn hashes_are_stable_and_safe() {
        let t = PodTemplateSpec::default();
        let h = template_hash(&t, None);
        assert_eq!(h, template_hash(&t, None));
        assert_ne!(h, template_hash(&t, Some(1)));
        assert!(h.bytes().all(|b| ALPHANUMS.contains(&b)));
        assert_eq!(fake_digest("x").len(), 64);
    }

    #[test]
    fn empty_selectors() {
        assert!(selector_is_empty(&LabelSelector::default()));
    }
}
