//! [`StoreOptions`]: how a store is opened.

use std::time::Duration;

use crate::terms::Indexer;

/// Options for [`Store::open`](crate::Store::open) and
/// [`Store::open_in_memory`](crate::Store::open_in_memory), built with `with_*` methods from
/// [`StoreOptions::default`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    pub(crate) fsync: bool,
    pub(crate) max_batch: usize,
    pub(crate) watch_buffer: usize,
    pub(crate) max_value_size: usize,
    pub(crate) busy_timeout: Duration,
    pub(crate) indexer: Option<Indexer>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            fsync: true,
            max_batch: 1024,
            watch_buffer: 1024,
            max_value_size: 8 * 1024 * 1024,
            busy_timeout: Duration::from_secs(5),
            indexer: None,
        }
    }
}

impl StoreOptions {
    /// Indexes every written value by the terms `indexer` computes, for
    /// [`Store::list_term`](crate::Store::list_term). Without one, the store keeps no terms.
    #[must_use]
    pub fn with_indexer(mut self, indexer: Indexer) -> Self {
        self.indexer = Some(indexer);
        self
    }

    /// Whether every commit is fsync'd before writes are acknowledged (`synchronous=FULL`, the
    /// default). With `false` (`synchronous=NORMAL`) the log stays consistent after a crash, but
    /// the last acknowledged writes may be lost on power failure. Ignored in memory.
    #[must_use]
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// The most writes one group commit carries (default 1024; at least 1).
    #[must_use]
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.max_batch = max_batch.max(1);
        self
    }

    /// How many group commits the live watch broadcast buffers for slow watchers (default 1024; at
    /// least 1). A watcher that falls further behind re-reads the log from SQLite, so this only
    /// trades memory for catch-up reads.
    #[must_use]
    pub fn with_watch_buffer(mut self, watch_buffer: usize) -> Self {
        self.watch_buffer = watch_buffer.max(1);
        self
    }

    /// The largest value accepted, in bytes (default 8 MiB).
    #[must_use]
    pub fn with_max_value_size(mut self, max_value_size: usize) -> Self {
        self.max_value_size = max_value_size;
        self
    }

    /// How long SQLite waits for a lock held by another connection (default 5 s).
    #[must_use]
    pub fn with_busy_timeout(mut self, busy_timeout: Duration) -> Self {
        self.busy_timeout = busy_timeout;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_durable_and_builders_clamp() {
        let options = StoreOptions::default();
        assert!(options.fsync);
        let options = options
            .with_fsync(false)
            .with_max_batch(0)
            .with_watch_buffer(0);
        assert!(!options.fsync);
        assert_eq!(options.max_batch, 1);
        assert_eq!(options.watch_buffer, 1);
        let options = options
            .with_max_value_size(10)
            .with_busy_timeout(Duration::from_millis(1));
        assert_eq!(options.max_value_size, 10);
        assert_eq!(options.busy_timeout, Duration::from_millis(1));
    }
}
