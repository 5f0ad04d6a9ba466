//! [`Watch`]: the ordered, exactly-once stream of events under a key prefix.
//!
//! A watch keeps a cursor: every event with a revision at or below it has been delivered (or
//! did not match the prefix). It alternates between two sources:
//!
//! - **replay**: while the cursor is below a target revision, it reads the log from SQLite in
//!   chunks (`revision > cursor AND revision <= target`), checking in the same snapshot that the
//!   cursor has not been compacted;
//! - **live**: the broadcast of group commits. The subscription is taken under the same lock
//!   under which the writer publishes, together with the revision published last, which becomes
//!   the replay target: so the broadcast holds every event above the target and replay every
//!   event up to it. Live events at or below the cursor are skipped, so nothing is delivered
//!   twice and nothing is missed at the switch-over.
//!
//! A watcher that falls behind the broadcast's buffer (`Lagged`) subscribes again and replays
//! from its cursor to the new target: it loses nothing, unless the log has been compacted past
//! its cursor in the meantime, in which case it yields [`Error::Compacted`] and ends.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::Stream;
use tokio::sync::broadcast;

use crate::error::Error;
use crate::shared::{Batch, Shared};
use crate::sql;
use crate::types::Event;

/// How many events one replay read takes from SQLite.
const REPLAY_CHUNK: usize = 512;

/// A watch on a key prefix, from [`Store::watch`](crate::Store::watch).
///
/// Call [`Watch::next`] in a loop, or turn it into a [`Stream`] with [`Watch::into_stream`]. The
/// watch ends (`None`) when the store is closed or dropped, after every event committed before
/// that has been delivered, and after an error.
pub struct Watch {
    shared: Arc<Shared>,
    prefix: String,
    /// Every event at or below this revision has been queued or skipped.
    cursor: i64,
    /// Replay from SQLite until the cursor reaches this revision.
    target: i64,
    live: Option<broadcast::Receiver<Batch>>,
    pending: VecDeque<Event>,
    done: bool,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("prefix", &self.prefix)
            .field("cursor", &self.cursor)
            .field("target", &self.target)
            .field("pending", &self.pending.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Watch {
    /// Starts a watch of the events under `prefix` with revisions above `after_revision`.
    pub(crate) fn start(
        shared: Arc<Shared>,
        prefix: &str,
        after_revision: i64,
    ) -> Result<Self, Error> {
        let compacted = shared.compacted();
        if after_revision < compacted {
            return Err(Error::Compacted {
                requested: after_revision,
                compacted,
            });
        }
        let (live, target) = shared.subscribe()?;
        Ok(Self {
            shared,
            prefix: prefix.to_owned(),
            cursor: after_revision,
            target,
            live: Some(live),
            pending: VecDeque::new(),
            done: false,
        })
    }

    /// The prefix this watch covers.
    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The revision up to which the log has been read: every matching event at or below it has
    /// been returned by [`Watch::next`] or is about to be. Useful for progress notifications
    /// (Kubernetes bookmarks) once [`Watch::next`] has nothing pending.
    #[must_use]
    pub fn revision(&self) -> i64 {
        self.cursor
    }

    /// The next event, in revision order; `None` when the watch has ended. An error
    /// ([`Error::Compacted`] or a SQLite error during catch-up) is yielded once and ends the
    /// watch.
    ///
    /// Cancel safe: dropping the future before it completes loses no event.
    pub async fn next(&mut self) -> Option<Result<Event, Error>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            if self.cursor < self.target {
                if let Err(error) = self.replay() {
                    self.finish();
                    return Some(Err(error));
                }
                continue;
            }
            let Some(live) = self.live.as_mut() else {
                self.finish();
                return None;
            };
            match live.recv().await {
                Ok(batch) => self.accept(&batch),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(prefix = %self.prefix, cursor = self.cursor, missed,
                        "watch fell behind the live broadcast; catching up from the log");
                    match self.shared.subscribe() {
                        Ok((live, target)) => {
                            self.live = Some(live);
                            self.target = target;
                        }
                        // The store is closing: what is committed is still in the log.
                        Err(_) => {
                            self.live = None;
                            self.target = self.shared.revision();
                        }
                    }
                }
                Err(broadcast::error::RecvError::Closed) => {
                    self.live = None;
                    self.target = self.shared.revision();
                }
            }
        }
    }

    /// Turns the watch into a [`Stream`].
    pub fn into_stream(self) -> impl Stream<Item = Result<Event, Error>> + Send + 'static {
        futures::stream::unfold(self, |mut watch| async move {
            let item = watch.next().await?;
            Some((item, watch))
        })
    }

    /// Reads the next chunk of the log into `pending`.
    fn replay(&mut self) -> Result<(), Error> {
        let (events, scanned) = self.shared.with_reader(|conn| {
            sql::events_between(conn, &self.prefix, self.cursor, self.target, REPLAY_CHUNK)
        })?;
        self.pending.extend(events);
        self.cursor = scanned;
        Ok(())
    }

    /// Queues the new, matching events of a live batch.
    fn accept(&mut self, batch: &Batch) {
        for event in batch.iter() {
            if event.revision() <= self.cursor {
                continue;
            }
            self.cursor = event.revision();
            if event.kv.key.starts_with(&self.prefix) {
                self.pending.push_back(event.clone());
            }
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.live = None;
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures::StreamExt;

    use crate::{Error, EventKind, Store, StoreOptions};

    fn value(text: &str) -> Bytes {
        Bytes::from(text.to_owned())
    }

    #[tokio::test]
    async fn replays_history_then_goes_live_under_the_prefix() -> Result<(), Error> {
        let store = Store::in_memory()?;
        let a1 = store.create("/w/a", value("1")).await?;
        store.create("/other", value("x")).await?;
        let a2 = store.update("/w/a", value("2"), None).await?;
        let mut watch = store.watch("/w/", 0)?;
        assert_eq!(watch.prefix(), "/w/");

        let created = watch.next().await.expect("history")?;
        assert_eq!(
            (created.kind, created.kv.clone(), created.prev),
            (EventKind::Created, a1.clone(), None)
        );
        let updated = watch.next().await.expect("history")?;
        assert_eq!(
            (updated.kind, updated.kv, updated.prev),
            (EventKind::Updated, a2.clone(), Some(a1))
        );

        store.create("/other2", value("y")).await?;
        let deleted = store.delete("/w/a", None).await?;
        let event = watch.next().await.expect("live")?;
        assert_eq!(
            (event.kind, event.kv, event.prev),
            (EventKind::Deleted, deleted, Some(a2))
        );
        assert_eq!(watch.revision(), 5);
        Ok(())
    }

    #[tokio::test]
    async fn replayed_deletes_carry_the_last_value() -> Result<(), Error> {
        let store = Store::in_memory()?;
        store.create("/d", value("v")).await?;
        let deleted = store.delete("/d", None).await?;
        let mut watch = store.watch("/", 1)?;
        let event = watch.next().await.expect("history")?;
        assert_eq!(event.kind, EventKind::Deleted);
        assert_eq!(event.kv, deleted);
        assert_eq!(event.prev.map(|prev| prev.mod_revision), Some(1));
        Ok(())
    }

    #[tokio::test]
    async fn a_lagging_watcher_catches_up_from_the_log() -> Result<(), Error> {
        let store = Store::open_in_memory(StoreOptions::default().with_watch_buffer(1))?;
        let mut watch = store.watch("/", 0)?;
        for i in 0..1500 {
            // One write at a time: one group commit, one broadcast message, each.
            store.create(&format!("/k/{i:04}"), value("v")).await?;
        }
        for expected in 1..=1500 {
            let event = watch.next().await.expect("no event lost")?;
            assert_eq!(event.revision(), expected);
            assert_eq!(event.kv.key, format!("/k/{:04}", expected - 1));
        }
        store.create("/k/last", value("v")).await?;
        assert_eq!(watch.next().await.expect("live again")?.revision(), 1501);
        Ok(())
    }

    #[tokio::test]
    async fn a_watcher_lagging_past_compaction_gets_compacted_and_ends() -> Result<(), Error> {
        let store = Store::open_in_memory(StoreOptions::default().with_watch_buffer(1))?;
        let mut watch = store.watch("/", 0)?;
        for i in 0..5 {
            store.create(&format!("/k/{i}"), value("v")).await?;
        }
        store.compact(3).await?;
        match watch.next().await {
            Some(Err(Error::Compacted {
                requested: 0,
                compacted: 3,
            })) => {}
            other => panic!("expected a compaction error, got {other:?}"),
        }
        assert!(watch.next().await.is_none());
        Ok(())
    }

    #[tokio::test]
    async fn closing_the_store_ends_watches_after_the_committed_events() -> Result<(), Error> {
        let store = Store::in_memory()?;
        let watch = store.watch("/", store.current_revision())?;
        store.create("/a", value("1")).await?;
        store.create("/b", value("2")).await?;
        store.close().await;
        let revisions: Vec<i64> = watch
            .into_stream()
            .map(|event| event.map(|event| event.revision()))
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_, _>>()?;
        assert_eq!(revisions, [1, 2]);
        Ok(())
    }

    #[tokio::test]
    async fn a_watch_from_the_future_waits_for_it() -> Result<(), Error> {
        let store = Store::in_memory()?;
        let mut watch = store.watch("/", 2)?;
        for key in ["/a", "/b", "/c"] {
            store.create(key, value("v")).await?;
        }
        assert_eq!(watch.next().await.expect("live")?.kv.key, "/c");
        Ok(())
    }
}
