//! The state shared by the store handle, the writer thread and watchers: the in-memory index of
//! the current state, the live event broadcast, the read connection and the counters.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

use rusqlite::Connection;
use tokio::sync::broadcast;

use crate::error::Error;
use crate::terms::{Indexer, Terms};
use crate::types::{Event, EventKind, KeyValue};

/// The events of one group commit, in revision order, as broadcast to live watchers.
pub(crate) type Batch = Arc<[Event]>;

/// The current state. The writer thread is its only mutator; it updates the index, the revision
/// and broadcasts the batch under one write lock, so that a watcher subscribing under the read
/// lock sees every batch newer than the revision it reads there, and none older.
pub(crate) struct State {
    /// The newest version of every live key.
    pub(crate) index: BTreeMap<String, KeyValue>,
    /// The newest committed revision.
    pub(crate) revision: i64,
    /// The index terms of every live key (empty without an indexer).
    pub(crate) terms: Terms,
    /// The live broadcast; `None` once the writer has shut down.
    pub(crate) events: Option<broadcast::Sender<Batch>>,
}

/// Shared by the store handle, the writer thread and every watcher.
pub(crate) struct Shared {
    state: RwLock<State>,
    reader: Arc<Mutex<Connection>>,
    revision: AtomicI64,
    compacted: AtomicI64,
    writes: AtomicU64,
    commits: AtomicU64,
    indexer: Option<Indexer>,
}

impl Shared {
    /// Wraps a loaded state. `reader` serves historical reads; in memory it is the writer's own
    /// connection.
    pub(crate) fn new(
        index: BTreeMap<String, KeyValue>,
        revision: i64,
        compacted: i64,
        watch_buffer: usize,
        reader: Arc<Mutex<Connection>>,
        indexer: Option<Indexer>,
    ) -> Self {
        let (events, _) = broadcast::channel(watch_buffer);
        let mut terms = Terms::default();
        if let Some(indexer) = &indexer {
            for (key, kv) in &index {
                terms.set(key, indexer.terms(key, &kv.value));
            }
        }
        Self {
            state: RwLock::new(State {
                index,
                revision,
                terms,
                events: Some(events),
            }),
            reader,
            revision: AtomicI64::new(revision),
            compacted: AtomicI64::new(compacted),
            writes: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            indexer,
        }
    }

    /// Read access to the current state.
    pub(crate) fn state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().expect("store state lock poisoned")
    }

    /// The indexer, if the store was opened with one.
    pub(crate) fn indexer(&self) -> Option<&Indexer> {
        self.indexer.as_ref()
    }

    /// The newest committed revision.
    pub(crate) fn revision(&self) -> i64 {
        self.revision.load(Ordering::Acquire)
    }

    /// The compacted revision.
    pub(crate) fn compacted(&self) -> i64 {
        self.compacted.load(Ordering::Acquire)
    }

    /// Writes and commits since open.
    pub(crate) fn counters(&self) -> (u64, u64) {
        (
            self.writes.load(Ordering::Relaxed),
            self.commits.load(Ordering::Relaxed),
        )
    }

    /// Subscribes to the live broadcast and returns the revision from which on it delivers every
    /// batch: each batch with revisions above it, and none at or below it.
    pub(crate) fn subscribe(&self) -> Result<(broadcast::Receiver<Batch>, i64), Error> {
        let state = self.state();
        let events = state.events.as_ref().ok_or(Error::Closed)?;
        Ok((events.subscribe(), state.revision))
    }

    /// Runs `read` with the read connection.
    pub(crate) fn with_reader<T>(
        &self,
        read: impl FnOnce(&mut Connection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut conn = self.reader.lock().expect("store reader lock poisoned");
        read(&mut conn)
    }

    /// Applies the events of a committed group commit to the index, advances the revision and
    /// broadcasts them. Called by the writer thread only, after the commit.
    pub(crate) fn publish(&self, events: Vec<Event>, commits: u64) {
        let Some(last) = events.last().map(Event::revision) else {
            return;
        };
        let writes = events.len() as u64;
        // Terms are computed before taking the lock, so readers wait only for the swap.
        let terms: Vec<Option<Vec<String>>> = events
            .iter()
            .map(|e| match (&self.indexer, e.kind) {
                (Some(indexer), EventKind::Created | EventKind::Updated) => {
                    Some(indexer.terms(&e.kv.key, &e.kv.value))
                }
                _ => None,
            })
            .collect();
        let batch: Batch = events.into();
        let mut state = self.state.write().expect("store state lock poisoned");
        for (event, terms) in batch.iter().zip(terms) {
            match event.kind {
                EventKind::Deleted => {
                    state.index.remove(&event.kv.key);
                    state.terms.remove(&event.kv.key);
                }
                EventKind::Created | EventKind::Updated => {
                    state.index.insert(event.kv.key.clone(), event.kv.clone());
                    if let Some(terms) = terms {
                        state.terms.set(&event.kv.key, terms);
                    }
                }
            }
        }
        state.revision = last;
        self.revision.store(last, Ordering::Release);
        if let Some(sender) = &state.events {
            // An error only means that nobody is watching.
            let _ = sender.send(batch);
        }
        drop(state);
        self.writes.fetch_add(writes, Ordering::Relaxed);
        self.commits.fetch_add(commits, Ordering::Relaxed);
    }

    /// Records a committed compaction.
    pub(crate) fn set_compacted(&self, revision: i64) {
        self.compacted.fetch_max(revision, Ordering::AcqRel);
    }

    /// Whether the writer has shut down.
    pub(crate) fn is_closed(&self) -> bool {
        self.state().events.is_none()
    }

    /// Ends the live broadcast: watchers drain what they have and then end.
    pub(crate) fn close_events(&self) {
        self.state
            .write()
            .expect("store state lock poisoned")
            .events = None;
    }
}
