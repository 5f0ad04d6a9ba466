//! A revisioned key-value store in the manner of [kine](https://github.com/k3s-io/kine): every
//! write appends to a log in an embedded SQLite database under a cluster-wide, monotonic revision
//! that *is* the Kubernetes `resourceVersion`.
//!
//! - **Durable group commit**: one writer thread applies every queued write in one transaction
//!   and commits once (WAL, `synchronous=FULL`): a write returns only when it is on disk, and
//!   concurrent writers share the fsync.
//! - **Revisions never go back**: a reopened store continues the sequence, even after compaction.
//! - **Fast current reads**: `get` and `list` of the current state come from an in-memory index;
//!   lists at past revisions come from the log.
//! - **Watches**: ordered, exactly-once events from any revision not yet compacted, replayed
//!   from the log and then live, with no gap or duplicate at the switch-over; slow watchers catch
//!   up from the log instead of losing events.
//! - **Index terms**: opened with an [`Indexer`], the store also keeps which live keys carry
//!   which term (the API server: each label pair), so [`Store::list_term`] reads only the
//!   matching keys at the current revision.
//! - **Compaction** of superseded versions and tombstones, on demand or on a schedule.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mni_store::Error> {
//! use bytes::Bytes;
//! use mni_store::{ListOptions, Store};
//!
//! let store = Store::in_memory()?;
//! let created = store.create("/registry/pods/default/web", Bytes::from_static(b"{}")).await?;
//! let mut watch = store.watch("/registry/pods/", created.mod_revision)?;
//! let updated = store
//!     .update("/registry/pods/default/web", Bytes::from_static(b"{\"a\":1}"), Some(created.mod_revision))
//!     .await?;
//! let event = watch.next().await.expect("an event")?;
//! assert_eq!(event.kv, updated);
//! let list = store.list("/registry/pods/", &ListOptions::default())?;
//! assert_eq!(list.items, vec![updated]);
//! # Ok(())
//! # }
//! ```

mod error;
mod options;
mod shared;
mod sql;
mod store;
mod terms;
mod types;
mod watch;
mod writer;

pub use error::Error;
pub use options::StoreOptions;
pub use store::Store;
pub use terms::Indexer;
pub use types::{Event, EventKind, KeyValue, ListOptions, ListResult, Stats};
pub use watch::Watch;
