//! [`Store`]: the handle through which everything is read and written.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;

use crate::error::Error;
use crate::options::StoreOptions;
use crate::shared::Shared;
use crate::sql;
use crate::types::{KeyValue, ListOptions, ListResult, Stats};
use crate::watch::Watch;
use crate::writer::{self, Op, Request};

/// How many revisions one compaction transaction covers at most, so that a large compaction
/// does not hold up writes for long: writes queued meanwhile commit between the steps.
const COMPACT_STEP: i64 = 10_000;

/// A revisioned key-value store: an append-only log in SQLite, plus an in-memory index of the
/// current state. Cheap to clone (all clones share one store); `Send + Sync`.
///
/// Writes are `async`: they are queued to the writer thread and return once committed (and, for
/// a file-backed store, fsync'd). Reads of the current state are synchronous and served from
/// memory; reads of past revisions go to SQLite.
///
/// Dropping the last clone finishes the queued writes and stops the writer thread (waiting for
/// it); [`Store::close`] does the same without waiting for every clone to go.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    requests: mpsc::Sender<Request>,
    writer: Mutex<Option<JoinHandle<()>>>,
    max_value_size: usize,
    path: Option<PathBuf>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = self.requests.send(Request::Shutdown { reply: None });
        let handle = self
            .writer
            .lock()
            .expect("store writer handle lock poisoned")
            .take();
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            tracing::error!("store writer thread panicked");
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .field("revision", &self.current_revision())
            .field("compacted_revision", &self.compacted_revision())
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (or creates) the store in the SQLite database file at `path`, creating its directory
    /// if needed, and loads the current state into memory.
    ///
    /// The store assumes it is the only writer of the file: open each file once, and share the
    /// [`Store`] by cloning it.
    pub fn open(path: &Path, options: StoreOptions) -> Result<Self, Error> {
        let conn = sql::open_file(path, &options)?;
        let loaded = sql::load(&conn)?;
        let reader = Arc::new(Mutex::new(sql::open_reader(path, &options)?));
        tracing::debug!(path = %path.display(), revision = loaded.revision,
            keys = loaded.index.len(), "store opened");
        Self::start(
            Arc::new(Mutex::new(conn)),
            reader,
            loaded,
            options,
            Some(path.to_owned()),
        )
    }

    /// Opens an empty store in memory, with default options: the same semantics as a file, minus
    /// durability. For tests.
    pub fn in_memory() -> Result<Self, Error> {
        Self::open_in_memory(StoreOptions::default())
    }

    /// Opens an empty store in memory with the given options.
    pub fn open_in_memory(options: StoreOptions) -> Result<Self, Error> {
        let conn = sql::open_memory()?;
        let loaded = sql::load(&conn)?;
        let conn = Arc::new(Mutex::new(conn));
        Self::start(conn.clone(), conn, loaded, options, None)
    }

    fn start(
        conn: Arc<Mutex<rusqlite::Connection>>,
        reader: Arc<Mutex<rusqlite::Connection>>,
        loaded: sql::Loaded,
        options: StoreOptions,
        path: Option<PathBuf>,
    ) -> Result<Self, Error> {
        let shared = Arc::new(Shared::new(
            loaded.index,
            loaded.revision,
            loaded.compacted,
            options.watch_buffer,
            reader,
            options.indexer.clone(),
        ));
        let (requests, receiver) = mpsc::channel();
        let handle = writer::spawn(conn, shared.clone(), receiver, options.max_batch)?;
        Ok(Self {
            inner: Arc::new(Inner {
                shared,
                requests,
                writer: Mutex::new(Some(handle)),
                max_value_size: options.max_value_size,
                path,
            }),
        })
    }

    /// The database file, or `None` in memory.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// The newest committed revision (0 for an empty store).
    #[must_use]
    pub fn current_revision(&self) -> i64 {
        self.inner.shared.revision()
    }

    /// The compacted revision: reads and watches from below it fail with [`Error::Compacted`].
    #[must_use]
    pub fn compacted_revision(&self) -> i64 {
        self.inner.shared.compacted()
    }

    /// Counters: revisions, live keys, writes and group commits since open.
    #[must_use]
    pub fn stats(&self) -> Stats {
        let (writes, commits) = self.inner.shared.counters();
        let state = self.inner.shared.state();
        Stats {
            revision: state.revision,
            compacted_revision: self.compacted_revision(),
            keys: state.index.len(),
            writes,
            commits,
        }
    }

    /// The current version of `key`, if it exists. Served from memory.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<KeyValue> {
        self.inner.shared.state().index.get(key).cloned()
    }

    /// The live keys starting with `prefix`, sorted by key, at the current revision (from memory)
    /// or at a past one (from SQLite); see [`ListOptions`].
    pub fn list(&self, prefix: &str, options: &ListOptions) -> Result<ListResult, Error> {
        let state = self.inner.shared.state();
        let current = state.revision;
        let limit = options.limit.filter(|limit| *limit > 0);
        let revision = match options.revision {
            None => current,
            Some(requested) if requested > current => {
                return Err(Error::FutureRevision { requested, current });
            }
            Some(requested) => requested,
        };
        if revision == current {
            let lower = match options.start_after.as_deref() {
                Some(after) if after >= prefix => Bound::Excluded(after),
                _ => Bound::Included(prefix),
            };
            let items = state
                .index
                .range::<str, _>((lower, Bound::Unbounded))
                .map(|(_, kv)| kv)
                .take_while(|kv| kv.key.starts_with(prefix));
            return Ok(page(items.cloned(), limit, revision));
        }
        drop(state);
        let compacted = self.compacted_revision();
        if revision < compacted {
            return Err(Error::Compacted {
                requested: revision,
                compacted,
            });
        }
        let items = self.inner.shared.with_reader(|conn| {
            sql::list_at(conn, prefix, options.start_after.as_deref(), revision)
        })?;
        Ok(page(items.into_iter(), limit, revision))
    }

    /// Like [`Store::list`], but only the keys whose value has index term `term` (see
    /// [`Indexer`](crate::Indexer)): the cost is that of the matches, not of the prefix.
    /// Answers only at the current revision (no `options.revision`, or the current one):
    /// `Ok(None)` otherwise, and when the store has no indexer — then list and filter.
    pub fn list_term(
        &self,
        prefix: &str,
        term: &str,
        options: &ListOptions,
    ) -> Result<Option<ListResult>, Error> {
        if self.inner.shared.indexer().is_none() {
            return Ok(None);
        }
        let state = self.inner.shared.state();
        let revision = state.revision;
        if options.revision.is_some_and(|r| r != revision) {
            return Ok(None);
        }
        let items = state
            .terms
            .keys(term, prefix, options.start_after.as_deref())
            .filter_map(|k| state.index.get(&**k))
            .cloned();
        Ok(Some(page(
            items,
            options.limit.filter(|l| *l > 0),
            revision,
        )))
    }

    /// How many live keys have index term `term` (0 without an indexer): to pick the most
    /// selective of several terms before [`Store::list_term`].
    pub fn term_count(&self, term: &str) -> usize {
        self.inner.shared.state().terms.count(term)
    }

    /// Creates `key`, which must not exist; fails with [`Error::AlreadyExists`] otherwise.
    /// Returns the new key-value pair (its `mod_revision` is the write's revision).
    pub async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, Error> {
        self.check(key, Some(&value))?;
        self.write(Op::Create {
            key: key.to_owned(),
            value,
        })
        .await
    }

    /// Replaces the value of `key`, which must exist ([`Error::NotFound`]). With `expected`, the
    /// current `mod_revision` must equal it ([`Error::Conflict`] otherwise).
    pub async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Option<i64>,
    ) -> Result<KeyValue, Error> {
        self.check(key, Some(&value))?;
        self.write(Op::Update {
            key: key.to_owned(),
            value,
            expected,
        })
        .await
    }

    /// Deletes `key`, which must exist ([`Error::NotFound`]); with `expected`, only if its
    /// `mod_revision` equals it ([`Error::Conflict`] otherwise). Returns the deleted value with
    /// the deletion's revision as `mod_revision`.
    pub async fn delete(&self, key: &str, expected: Option<i64>) -> Result<KeyValue, Error> {
        self.check(key, None)?;
        self.write(Op::Delete {
            key: key.to_owned(),
            expected,
        })
        .await
    }

    /// Watches the keys starting with `prefix`: every event with a revision above
    /// `after_revision`, in revision order and exactly once — first replayed from the log, then
    /// live. Fails with [`Error::Compacted`] if `after_revision` is below the compacted revision.
    ///
    /// To watch from "now", pass [`Store::current_revision`]. The prefix is a plain string
    /// prefix: to watch one key, filter the events of its prefix.
    pub fn watch(&self, prefix: &str, after_revision: i64) -> Result<Watch, Error> {
        Watch::start(self.inner.shared.clone(), prefix, after_revision)
    }

    /// Compacts the log up to `revision`: removes every tombstone and every superseded version at
    /// or below it (the newest live version of each key always stays), so that the state at any
    /// revision from `revision` on can still be read. Returns the number of log rows removed; 0
    /// if `revision` is not above the compacted revision. Fails with [`Error::FutureRevision`]
    /// beyond the current revision.
    pub async fn compact(&self, revision: i64) -> Result<u64, Error> {
        let current = self.current_revision();
        if revision > current {
            return Err(Error::FutureRevision {
                requested: revision,
                current,
            });
        }
        let mut removed = 0;
        let mut from = self.compacted_revision();
        while from < revision {
            let step = revision.min(from.saturating_add(COMPACT_STEP));
            let (reply, answer) = oneshot::channel();
            self.send(Request::Compact {
                revision: step,
                reply,
            })?;
            removed += answer.await.map_err(|_| Error::Closed)??;
            from = step;
        }
        Ok(removed)
    }

    /// Spawns a tokio task that, every `interval`, compacts the log up to `retain` revisions
    /// below the current one. The task ends when the store is closed or dropped (it does not keep
    /// the store alive). Must be called inside a tokio runtime.
    pub fn spawn_compactor(&self, interval: Duration, retain: i64) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        let retain = retain.max(0);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                let store = Store { inner };
                if store.inner.shared.is_closed() {
                    return;
                }
                let target = store.current_revision().saturating_sub(retain);
                if target <= store.compacted_revision() {
                    continue;
                }
                match store.compact(target).await {
                    Ok(removed) => tracing::debug!(target, removed, "periodic compaction"),
                    Err(Error::Closed) => return,
                    Err(error) => tracing::warn!(%error, target, "periodic compaction failed"),
                }
            }
        })
    }

    /// Stops accepting writes, waits until every write queued before has been committed, and
    /// ends the watches (after they deliver what was committed). Reads keep working. Idempotent.
    pub async fn close(&self) {
        let (reply, done) = oneshot::channel();
        if self.send(Request::Shutdown { reply: Some(reply) }).is_ok() {
            // An error means the writer had already stopped.
            let _ = done.await;
        }
    }

    fn check(&self, key: &str, value: Option<&Bytes>) -> Result<(), Error> {
        if key.is_empty() {
            return Err(Error::InvalidKey {
                key: key.to_owned(),
                reason: "keys must not be empty",
            });
        }
        let limit = self.inner.max_value_size;
        match value {
            Some(value) if value.len() > limit => Err(Error::ValueTooLarge {
                key: key.to_owned(),
                size: value.len(),
                limit,
            }),
            _ => Ok(()),
        }
    }

    fn send(&self, request: Request) -> Result<(), Error> {
        self.inner.requests.send(request).map_err(|_| Error::Closed)
    }

    async fn write(&self, op: Op) -> Result<KeyValue, Error> {
        let (reply, answer) = oneshot::channel();
        self.send(Request::Write { op, reply })?;
        answer.await.map_err(|_| Error::Closed)?
    }
}

/// Cuts a page of at most `limit` items from sorted items.
fn page(
    mut items: impl Iterator<Item = KeyValue>,
    limit: Option<usize>,
    revision: i64,
) -> ListResult {
    let page: Vec<KeyValue> = match limit {
        Some(limit) => items.by_ref().take(limit).collect(),
        None => items.by_ref().collect(),
    };
    let remaining = items.count();
    ListResult {
        items: page,
        revision,
        more: remaining > 0,
        remaining,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Bytes {
        Bytes::from(text.to_owned())
    }

    #[test]
    fn handles_cross_threads_and_tasks() {
        fn send_sync<T: Send + Sync + 'static>() {}
        fn send<T: Send + 'static>() {}
        send_sync::<Store>();
        send_sync::<Error>();
        send::<Watch>();
    }

    #[tokio::test]
    async fn create_get_update_delete_and_their_errors() -> Result<(), Error> {
        let store = Store::in_memory()?;
        assert_eq!(store.current_revision(), 0);
        let created = store.create("/a", value("1")).await?;
        assert_eq!((created.create_revision, created.mod_revision), (1, 1));
        assert_eq!(store.get("/a"), Some(created.clone()));
        assert!(
            matches!(store.create("/a", value("x")).await, Err(Error::AlreadyExists { key }) if key == "/a")
        );

        match store.update("/a", value("2"), Some(7)).await {
            Err(Error::Conflict {
                key,
                expected: 7,
                actual: 1,
            }) => assert_eq!(key, "/a"),
            other => panic!("expected a conflict, got {other:?}"),
        }
        let updated = store.update("/a", value("2"), Some(1)).await?;
        assert_eq!((updated.create_revision, updated.mod_revision), (1, 2));
        let updated = store.update("/a", value("3"), None).await?;
        assert_eq!(updated.mod_revision, 3);
        assert_eq!(store.get("/a").map(|kv| kv.value), Some(value("3")));
        assert!(matches!(
            store.update("/b", value("1"), None).await,
            Err(Error::NotFound { .. })
        ));

        assert!(matches!(
            store.delete("/a", Some(2)).await,
            Err(Error::Conflict {
                expected: 2,
                actual: 3,
                ..
            })
        ));
        let deleted = store.delete("/a", Some(3)).await?;
        assert_eq!(deleted.value, value("3"));
        assert_eq!((deleted.create_revision, deleted.mod_revision), (1, 4));
        assert_eq!(store.get("/a"), None);
        assert!(matches!(
            store.delete("/a", None).await,
            Err(Error::NotFound { .. })
        ));

        let again = store.create("/a", value("new")).await?;
        assert_eq!((again.create_revision, again.mod_revision), (5, 5));
        assert!(matches!(
            store.create("", value("x")).await,
            Err(Error::InvalidKey { .. })
        ));
        Ok(())
    }

    #[tokio::test]
    async fn rejects_large_values_before_they_reach_the_log() -> Result<(), Error> {
        let store = Store::open_in_memory(StoreOptions::default().with_max_value_size(4))?;
        let result = store.create("/a", value("12345")).await;
        assert!(matches!(
            result,
            Err(Error::ValueTooLarge {
                size: 5,
                limit: 4,
                ..
            })
        ));
        assert_eq!(store.create("/a", value("1234")).await?.mod_revision, 1);
        Ok(())
    }

    #[tokio::test]
    async fn revisions_strictly_increase_and_failed_writes_take_none() -> Result<(), Error> {
        let store = Store::in_memory()?;
        let mut last = 0;
        for i in 0..20 {
            let key = format!("/k/{}", i % 5);
            let kv = match store.create(&key, value("v")).await {
                Ok(kv) => kv,
                Err(Error::AlreadyExists { .. }) => store.update(&key, value("w"), None).await?,
                Err(other) => return Err(other),
            };
            assert_eq!(kv.mod_revision, last + 1, "revisions are consecutive");
            last = kv.mod_revision;
        }
        assert_eq!(store.current_revision(), 20);
        let stats = store.stats();
        assert_eq!((stats.revision, stats.keys, stats.writes), (20, 5, 20));
        assert!(stats.commits >= 1 && stats.commits <= stats.writes);
        Ok(())
    }

    #[tokio::test]
    async fn compaction_of_many_revisions_runs_in_steps() -> Result<(), Error> {
        let store = Store::in_memory()?;
        store.create("/k", value("0")).await?;
        let writes =
            (0..COMPACT_STEP + 50).map(|i| store.update("/k", value(&i.to_string()), None));
        futures::future::try_join_all(writes).await?;
        let current = store.current_revision();
        assert_eq!(
            store.compact(current).await?,
            u64::try_from(current - 1).unwrap_or(0)
        );
        assert_eq!(store.get("/k").map(|kv| kv.mod_revision), Some(current));
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_compactor_follows_the_current_revision() -> Result<(), Error> {
        let store = Store::in_memory()?;
        for i in 0..10 {
            store.create(&format!("/k/{i}"), value("v")).await?;
        }
        let compactor = store.spawn_compactor(Duration::from_millis(10), 3);
        for _ in 0..3000 {
            if store.compacted_revision() == 7 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(store.compacted_revision(), 7);
        store.close().await;
        tokio::time::timeout(Duration::from_secs(60), compactor)
            .await
            .expect("the compactor ends after close")
            .expect("the compactor does not panic");
        Ok(())
    }

    #[tokio::test]
    async fn close_finishes_writes_and_keeps_reads() -> Result<(), Error> {
        let store = Store::in_memory()?;
        let clone = store.clone();
        let pending = tokio::spawn(async move { clone.create("/a", value("1")).await });
        let created = pending.await.expect("the write task completes")?;
        store.close().await;
        store.close().await;
        assert!(matches!(
            store.create("/b", value("2")).await,
            Err(Error::Closed)
        ));
        assert!(matches!(store.watch("/", 0), Err(Error::Closed)));
        assert_eq!(store.get("/a"), Some(created));
        assert_eq!(
            store
                .list("/", &ListOptions::default().with_revision(0))?
                .items
                .len(),
            0
        );
        Ok(())
    }
}

#[cfg(test)]
mod term_tests {
    use super::*;
    use crate::Indexer;

    /// Terms: the words of the value.
    fn words() -> StoreOptions {
        StoreOptions::default().with_indexer(Indexer::new(|_, v| {
            String::from_utf8_lossy(v)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        }))
    }

    fn keys(list: &ListResult) -> Vec<&str> {
        list.items.iter().map(|kv| kv.key.as_str()).collect()
    }

    #[tokio::test]
    async fn list_term_follows_writes_and_survives_reopen() -> Result<(), Error> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.db");
        let store = Store::open(&path, words())?;
        for (k, v) in [
            ("/r/a", "red big"),
            ("/r/b", "red"),
            ("/r/c", "blue"),
            ("/s/a", "red"),
        ] {
            store.create(k, Bytes::from(v)).await?;
        }
        let all = ListOptions::default();
        let red = store.list_term("/r/", "red", &all)?.expect("indexed");
        assert_eq!(keys(&red), ["/r/a", "/r/b"]);
        assert_eq!(store.term_count("red"), 3);
        // Updates move keys between terms; deletes drop them.
        store.update("/r/b", Bytes::from("blue"), None).await?;
        store.delete("/r/a", None).await?;
        let red = store.list_term("/r/", "red", &all)?.expect("indexed");
        assert!(red.items.is_empty());
        let blue = store.list_term("/r/", "blue", &all)?.expect("indexed");
        assert_eq!(keys(&blue), ["/r/b", "/r/c"]);
        // Pages: limit and start_after, with what remains.
        let first = store
            .list_term("/r/", "blue", &ListOptions::default().with_limit(1))?
            .expect("indexed");
        assert_eq!(
            (keys(&first), first.more, first.remaining),
            (vec!["/r/b"], true, 1)
        );
        let next = store
            .list_term(
                "/r/",
                "blue",
                &ListOptions::default()
                    .with_revision(first.revision)
                    .with_start_after("/r/b"),
            )?
            .expect("current revision");
        assert_eq!(keys(&next), ["/r/c"]);
        // A past revision is not answered from the index.
        let past = ListOptions::default().with_revision(first.revision - 1);
        assert!(store.list_term("/r/", "blue", &past)?.is_none());
        store.close().await;
        // Reopened, the terms are rebuilt from the loaded state.
        let store = Store::open(&path, words())?;
        let blue = store.list_term("/r/", "blue", &all)?.expect("indexed");
        assert_eq!(keys(&blue), ["/r/b", "/r/c"]);
        store.close().await;
        // Without an indexer, there is no index to answer from.
        let plain = Store::open(&path, StoreOptions::default())?;
        assert!(plain.list_term("/r/", "blue", &all)?.is_none());
        assert_eq!(plain.term_count("blue"), 0);
        plain.close().await;
        Ok(())
    }
}
