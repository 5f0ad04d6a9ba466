//! Per-object exponential backoff for failed reconciles.
//!
//! This is controller-runtime's `ItemExponentialFailureRateLimiter`: the n-th consecutive
//! failure of one object waits `base * 2^(n-1)`, capped at `max`; a success forgets the object.
//! Other objects are not slowed down by one object's failures.

use std::{collections::HashMap, hash::Hash, sync::Mutex, time::Duration};

/// Failure counts per object and the delay they earn.
#[derive(Debug)]
pub struct ObjectBackoff<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T: Eq + Hash> ObjectBackoff<T> {
    /// controller-runtime's defaults: 5 ms doubling up to 1000 s.
    pub const DEFAULT_BASE: Duration = Duration::from_millis(5);
    /// The cap on one object's delay.
    pub const DEFAULT_MAX: Duration = Duration::from_secs(1000);

    /// A backoff starting at `base` and never exceeding `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Records one more failure of `key` and returns how long to wait before retrying it.
    pub fn next_delay(&self, key: T) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let count = failures.entry(key).or_insert(0);
        let exponent = *count;
        *count = count.saturating_add(1);
        // 2^31 * 5 ms is far past any sane cap; stop doubling there to avoid overflow.
        let factor = 2u32.saturating_pow(exponent.min(31));
        self.base.saturating_mul(factor).min(self.max)
    }

    /// Forgets `key`'s failures (after a success or when the object is gone).
    pub fn reset(&self, key: &T) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// How many consecutive failures `key` has now.
    pub fn failures(&self, key: &T) -> u32 {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied()
            .unwrap_or(0)
    }
}

impl<T: Eq + Hash> Default for ObjectBackoff<T> {
    fn default() -> Self {
        Self::new(Self::DEFAULT_BASE, Self::DEFAULT_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_per_object_caps_and_resets() {
        let b = ObjectBackoff::<&str>::default();
        let delays: Vec<_> = (0..4).map(|_| b.next_delay("a")).collect();
        assert_eq!(delays, [5, 10, 20, 40].map(Duration::from_millis).to_vec());
        assert_eq!(b.next_delay("b"), Duration::from_millis(5), "per object");
        for _ in 0..40 {
            b.next_delay("a");
        }
        assert_eq!(b.next_delay("a"), Duration::from_secs(1000));
        b.reset(&"a");
        assert_eq!(b.failures(&"a"), 0);
        assert_eq!(b.next_delay("a"), Duration::from_millis(5));
    }
}
