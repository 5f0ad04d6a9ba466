//! The one error type of the store.

use std::sync::Arc;

/// Everything that can go wrong in the store.
///
/// The error is cheap to clone: the SQLite and I/O causes are shared behind an [`Arc`], because
/// one failed group commit must be reported to every writer whose request was in it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A create found a live object under the key.
    #[error("key {key:?} already exists")]
    AlreadyExists {
        /// The key that was to be created.
        key: String,
    },

    /// An update or delete found no live object under the key.
    #[error("key {key:?} not found")]
    NotFound {
        /// The key that was to be changed.
        key: String,
    },

    /// An update or delete carried a precondition on the object's `mod_revision` that does not
    /// hold any more (optimistic concurrency: the Kubernetes "the object has been modified").
    #[error("conflict on key {key:?}: expected revision {expected}, found {actual}")]
    Conflict {
        /// The key of the object.
        key: String,
        /// The `mod_revision` the caller expected.
        expected: i64,
        /// The object's actual `mod_revision`.
        actual: i64,
    },

    /// A read or watch asked for a revision whose history has been compacted away.
    #[error("revision {requested} has been compacted (compacted revision is {compacted})")]
    Compacted {
        /// The revision the caller asked for.
        requested: i64,
        /// The store's compacted revision: the oldest revision that can still be read.
        compacted: i64,
    },

    /// A read asked for a revision newer than the newest committed one.
    #[error("revision {requested} is in the future (current revision is {current})")]
    FutureRevision {
        /// The revision the caller asked for.
        requested: i64,
        /// The store's current revision.
        current: i64,
    },

    /// A key was rejected before it reached the log (for example, it is empty).
    #[error("invalid key {key:?}: {reason}")]
    InvalidKey {
        /// The rejected key.
        key: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// A value is larger than [`StoreOptions::with_max_value_size`](crate::StoreOptions::with_max_value_size).
    #[error("value for key {key:?} is {size} bytes, more than the limit of {limit} bytes")]
    ValueTooLarge {
        /// The key the value was for.
        key: String,
        /// The size of the rejected value.
        size: usize,
        /// The configured limit.
        limit: usize,
    },

    /// The database file was written by an incompatible version of this crate.
    #[error("unsupported store schema version {found} (this build understands {supported})")]
    UnsupportedSchema {
        /// The version recorded in the file.
        found: i64,
        /// The version this build reads and writes.
        supported: i64,
    },

    /// The store has been closed (or its writer thread is gone); no more writes are accepted.
    #[error("the store is closed")]
    Closed,

    /// SQLite reported an error. When it happened during a group commit, the whole batch was
    /// rolled back and every writer in it receives this error.
    #[error("sqlite: {0}")]
    Sqlite(#[source] Arc<rusqlite::Error>),

    /// A filesystem operation (such as creating the database's directory) failed.
    #[error("i/o: {0}")]
    Io(#[source] Arc<std::io::Error>),
}

impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Self::Sqlite(Arc::new(error))
    }
}

impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Self::Io(Arc::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_key_and_revisions() {
        let conflict = Error::Conflict {
            key: "/a".into(),
            expected: 3,
            actual: 5,
        };
        assert_eq!(
            conflict.to_string(),
            "conflict on key \"/a\": expected revision 3, found 5"
        );
        let compacted = Error::Compacted {
            requested: 2,
            compacted: 9,
        };
        assert!(compacted.to_string().contains("revision 2"));
        assert!(compacted.to_string().contains("is 9"));
    }

    #[test]
    fn sqlite_errors_convert_and_clone() {
        let error: Error = rusqlite::Error::QueryReturnedNoRows.into();
        let copy = error.clone();
        assert!(matches!(copy, Error::Sqlite(_)));
        assert!(std::error::Error::source(&copy).is_some());
    }
}
