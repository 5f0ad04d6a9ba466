//! The writer thread and its group commit.
//!
//! All writes go through one OS thread that owns the SQLite write connection. It blocks for the
//! first queued request, then takes every request already queued behind it (up to
//! `max_batch`), applies them in one `IMMEDIATE` transaction (each successful write gets the next
//! revision), commits once — one fsync for the whole batch — and only then updates the in-memory
//! index, broadcasts the events and answers every waiter. A write is therefore acknowledged only
//! when it is durable, and concurrent writers share fsyncs.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use rusqlite::{Connection, TransactionBehavior, params};
use tokio::sync::oneshot;

use crate::error::Error;
use crate::shared::Shared;
use crate::sql;
use crate::types::{Event, EventKind, KeyValue};

/// One write.
#[derive(Debug)]
pub(crate) enum Op {
    /// Create a key that must not exist.
    Create { key: String, value: Bytes },
    /// Replace the value of a key that must exist (with the given `mod_revision`, if any).
    Update {
        key: String,
        value: Bytes,
        expected: Option<i64>,
    },
    /// Delete a key that must exist (with the given `mod_revision`, if any).
    Delete { key: String, expected: Option<i64> },
}

impl Op {
    fn key(&self) -> &str {
        match self {
            Op::Create { key, .. } | Op::Update { key, .. } | Op::Delete { key, .. } => key,
        }
    }
}

/// A request to the writer thread.
pub(crate) enum Request {
    /// Apply a write and answer with the resulting key-value pair.
    Write {
        op: Op,
        reply: oneshot::Sender<Result<KeyValue, Error>>,
    },
    /// Compact up to a revision and answer with the number of rows removed.
    Compact {
        revision: i64,
        reply: oneshot::Sender<Result<u64, Error>>,
    },
    /// Finish the queued requests before this one, end the broadcast and exit.
    Shutdown { reply: Option<oneshot::Sender<()>> },
}

/// Starts the writer thread.
pub(crate) fn spawn(
    conn: Arc<Mutex<Connection>>,
    shared: Arc<Shared>,
    requests: mpsc::Receiver<Request>,
    max_batch: usize,
) -> Result<JoinHandle<()>, Error> {
    let revision = shared.revision();
    let writer = Writer {
        conn,
        shared,
        requests,
        max_batch,
        revision,
    };
    Ok(std::thread::Builder::new()
        .name("mni-store-writer".into())
        .spawn(move || writer.run())?)
}

struct Writer {
    conn: Arc<Mutex<Connection>>,
    shared: Arc<Shared>,
    requests: mpsc::Receiver<Request>,
    max_batch: usize,
    /// The newest committed revision.
    revision: i64,
}

/// A write waiting for its batch to commit.
struct Pending {
    op: Op,
    reply: oneshot::Sender<Result<KeyValue, Error>>,
}

impl Writer {
    fn run(mut self) {
        let mut writes = Vec::with_capacity(self.max_batch);
        while let Ok(first) = self.requests.recv() {
            let mut control = sort(first, &mut writes);
            while control.is_none() && writes.len() < self.max_batch {
                match self.requests.try_recv() {
                    Ok(request) => control = sort(request, &mut writes),
                    Err(_) => break,
                }
            }
            if !writes.is_empty() {
                self.commit(std::mem::take(&mut writes));
            }
            match control {
                None => {}
                Some(Control::Compact { revision, reply }) => {
                    let _ = reply.send(self.compact(revision));
                }
                Some(Control::Shutdown { reply }) => {
                    self.shared.close_events();
                    if let Some(reply) = reply {
                        let _ = reply.send(());
                    }
                    tracing::debug!(revision = self.revision, "store writer shut down");
                    return;
                }
            }
        }
        self.shared.close_events();
        tracing::debug!(
            revision = self.revision,
            "store writer exits: store dropped"
        );
    }

    /// Applies a batch in one transaction and answers every waiter.
    fn commit(&mut self, batch: Vec<Pending>) {
        let (ops, replies): (Vec<Op>, Vec<_>) = batch
            .into_iter()
            .map(|pending| (pending.op, pending.reply))
            .unzip();
        let outcome = {
            let mut conn = self
                .conn
                .lock()
                .expect("store writer connection lock poisoned");
            self.apply(&mut conn, &ops)
        };
        match outcome {
            Ok((results, events)) => {
                if let Some(last) = events.last() {
                    self.revision = last.revision();
                }
                self.shared.publish(events, 1);
                for (reply, result) in replies.into_iter().zip(results) {
                    let _ = reply.send(result);
                }
            }
            Err(error) => {
                tracing::error!(%error, writes = ops.len(), "store group commit failed");
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
        }
    }

    /// Runs the batch's writes in one transaction. On success, returns each write's result and
    /// the events of the successful ones; on a SQLite error everything is rolled back.
    #[allow(clippy::type_complexity)]
    fn apply(
        &self,
        conn: &mut Connection,
        ops: &[Op],
    ) -> Result<(Vec<Result<KeyValue, Error>>, Vec<Event>), Error> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut results = Vec::with_capacity(ops.len());
        let mut events = Vec::with_capacity(ops.len());
        {
            let mut insert = tx.prepare_cached(sql::INSERT)?;
            // Keys written earlier in this batch: their state is not in the index yet.
            let mut overlay: HashMap<&str, Option<KeyValue>> = HashMap::new();
            let mut revision = self.revision;
            for op in ops {
                let current = match overlay.get(op.key()) {
                    Some(current) => current.clone(),
                    None => self.shared.state().index.get(op.key()).cloned(),
                };
                let event = match decide(op, current, revision + 1) {
                    Ok(event) => event,
                    Err(error) => {
                        results.push(Err(error));
                        continue;
                    }
                };
                let deleted = event.kind == EventKind::Deleted;
                let value: &[u8] = if deleted { &[] } else { &event.kv.value };
                let prev_revision = event.prev.as_ref().map_or(0, |prev| prev.mod_revision);
                insert.execute(params![
                    event.kv.mod_revision,
                    event.kv.key,
                    value,
                    event.kv.create_revision,
                    prev_revision,
                    deleted,
                ])?;
                revision = event.kv.mod_revision;
                overlay.insert(op.key(), (!deleted).then(|| event.kv.clone()));
                results.push(Ok(event.kv.clone()));
                events.push(event);
            }
        }
        tx.commit()?;
        Ok((results, events))
    }

    /// Compacts up to `revision` in its own transaction.
    fn compact(&mut self, revision: i64) -> Result<u64, Error> {
        let previous = self.shared.compacted();
        if revision <= previous {
            return Ok(0);
        }
        if revision > self.revision {
            return Err(Error::FutureRevision {
                requested: revision,
                current: self.revision,
            });
        }
        let removed = {
            let mut conn = self
                .conn
                .lock()
                .expect("store writer connection lock poisoned");
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let removed = sql::compact(&tx, previous, revision)?;
            tx.commit()?;
            removed
        };
        self.shared.set_compacted(revision);
        tracing::debug!(revision, removed, "store compacted");
        Ok(removed)
    }
}

/// A request that ends a batch: it runs after the writes queued before it.
enum Control {
    Compact {
        revision: i64,
        reply: oneshot::Sender<Result<u64, Error>>,
    },
    Shutdown {
        reply: Option<oneshot::Sender<()>>,
    },
}

/// Adds a write to the batch, or returns the control request that ends it.
fn sort(request: Request, writes: &mut Vec<Pending>) -> Option<Control> {
    match request {
        Request::Write { op, reply } => {
            writes.push(Pending { op, reply });
            None
        }
        Request::Compact { revision, reply } => Some(Control::Compact { revision, reply }),
        Request::Shutdown { reply } => Some(Control::Shutdown { reply }),
    }
}

/// Decides what a write does to the key's current version, as the write with `revision`.
fn decide(op: &Op, current: Option<KeyValue>, revision: i64) -> Result<Event, Error> {
    let check = |current: &KeyValue, expected: Option<i64>| match expected {
        Some(expected) if expected != current.mod_revision => Err(Error::Conflict {
            key: current.key.clone(),
            expected,
            actual: current.mod_revision,
        }),
        _ => Ok(()),
    };
    match (op, current) {
        (Op::Create { key, value }, None) => Ok(Event {
            kind: EventKind::Created,
            kv: KeyValue {
                key: key.clone(),
                value: value.clone(),
                create_revision: revision,
                mod_revision: revision,
            },
            prev: None,
        }),
        (Op::Create { key, .. }, Some(_)) => Err(Error::AlreadyExists { key: key.clone() }),
        (Op::Update { key, .. } | Op::Delete { key, .. }, None) => {
            Err(Error::NotFound { key: key.clone() })
        }
        (
            Op::Update {
                value, expected, ..
            },
            Some(current),
        ) => {
            check(&current, *expected)?;
            Ok(Event {
                kind: EventKind::Updated,
                kv: KeyValue {
                    key: current.key.clone(),
                    value: value.clone(),
                    create_revision: current.create_revision,
                    mod_revision: revision,
                },
                prev: Some(current),
            })
        }
        (Op::Delete { expected, .. }, Some(current)) => {
            check(&current, *expected)?;
            Ok(Event {
                kind: EventKind::Deleted,
                kv: KeyValue {
                    mod_revision: revision,
                    ..current.clone()
                },
                prev: Some(current),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, value: &'static str, create: i64, modified: i64) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Bytes::from_static(value.as_bytes()),
            create_revision: create,
            mod_revision: modified,
        }
    }

    #[test]
    fn decide_create_update_delete() {
        let create = Op::Create {
            key: "/a".into(),
            value: Bytes::from_static(b"1"),
        };
        let event = decide(&create, None, 4).expect("create on absent key");
        assert_eq!(event.kind, EventKind::Created);
        assert_eq!(event.kv, kv("/a", "1", 4, 4));
        assert!(matches!(
            decide(&create, Some(kv("/a", "1", 4, 4)), 5),
            Err(Error::AlreadyExists { .. })
        ));

        let update = Op::Update {
            key: "/a".into(),
            value: Bytes::from_static(b"2"),
            expected: Some(4),
        };
        let event = decide(&update, Some(kv("/a", "1", 4, 4)), 7).expect("update");
        assert_eq!(event.kv, kv("/a", "2", 4, 7));
        assert_eq!(event.prev, Some(kv("/a", "1", 4, 4)));
        match decide(&update, Some(kv("/a", "1", 4, 6)), 7) {
            Err(Error::Conflict {
                expected: 4,
                actual: 6,
                ..
            }) => {}
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert!(matches!(
            decide(&update, None, 7),
            Err(Error::NotFound { .. })
        ));

        let delete = Op::Delete {
            key: "/a".into(),
            expected: None,
        };
        let event = decide(&delete, Some(kv("/a", "2", 4, 7)), 9).expect("delete");
        assert_eq!(event.kind, EventKind::Deleted);
        assert_eq!(event.kv, kv("/a", "2", 4, 9));
        assert!(matches!(
            decide(&delete, None, 9),
            Err(Error::NotFound { .. })
        ));
    }
}
