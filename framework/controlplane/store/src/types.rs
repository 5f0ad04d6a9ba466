//! The values the store hands out: key-value pairs, watch events, list requests and results.

use bytes::Bytes;

/// One version of one key: the opaque value and the revisions that describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key, for example `/registry/apps/deployments/default/web`.
    pub key: String,
    /// The opaque value (for the API server, a JSON document).
    pub value: Bytes,
    /// The revision at which the key was created (for the current incarnation of the key: a key
    /// that is deleted and created again gets a new `create_revision`).
    pub create_revision: i64,
    /// The revision of the write that produced this version: the Kubernetes `resourceVersion`.
    /// For the value returned by a delete, the revision of the deletion.
    pub mod_revision: i64,
}

/// What a watch [`Event`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The key did not exist (or was deleted) and now has a value.
    Created,
    /// The key's value was replaced.
    Updated,
    /// The key was deleted.
    Deleted,
}

/// One committed write, as delivered to watchers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The key-value pair after the write. For [`EventKind::Deleted`], the last value the key had,
    /// with the deletion's revision in `mod_revision`.
    pub kv: KeyValue,
    /// The version the write replaced; `None` for [`EventKind::Created`].
    pub prev: Option<KeyValue>,
}

impl Event {
    /// The revision of the write (the same as `self.kv.mod_revision`).
    #[must_use]
    pub fn revision(&self) -> i64 {
        self.kv.mod_revision
    }
}

/// How to list keys: at which revision, and which page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// `None` lists the current state. `Some(r)` lists the state as of revision `r`: it fails with
    /// [`Error::Compacted`](crate::Error::Compacted) when `r` is older than the compacted
    /// revision, and with [`Error::FutureRevision`](crate::Error::FutureRevision) when `r` is newer
    /// than the current revision.
    pub revision: Option<i64>,
    /// Only keys strictly greater than this one (for paging: the last key of the previous page).
    pub start_after: Option<String>,
    /// At most this many items; `None` or `Some(0)` means no limit.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// List at the given revision instead of the current one.
    #[must_use]
    pub fn with_revision(mut self, revision: i64) -> Self {
        self.revision = Some(revision);
        self
    }

    /// Start after the given key (exclusive).
    #[must_use]
    pub fn with_start_after(mut self, key: impl Into<String>) -> Self {
        self.start_after = Some(key.into());
        self
    }

    /// Return at most `limit` items (0 means no limit).
    #[must_use]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListResult {
    /// The live key-value pairs, sorted by key.
    pub items: Vec<KeyValue>,
    /// The revision the list reflects. To fetch the next page consistently, pass it as
    /// [`ListOptions::revision`] together with the last key as [`ListOptions::start_after`].
    pub revision: i64,
    /// Whether more items follow this page.
    pub more: bool,
    /// How many items follow this page (the Kubernetes `remainingItemCount`).
    pub remaining: usize,
}

/// A snapshot of the store's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// The latest committed revision.
    pub revision: i64,
    /// The compacted revision.
    pub compacted_revision: i64,
    /// The number of live keys.
    pub keys: usize,
    /// Writes committed since the store was opened.
    pub writes: u64,
    /// SQLite transactions (group commits) that carried those writes.
    pub commits: u64,
}

/// The smallest string greater than every string that starts with `prefix`, or `None` when there
/// is none (the empty prefix, or a prefix made only of `char::MAX`). Keys compare as UTF-8 bytes,
/// which is the order of code points, both in Rust and in SQLite's `BINARY` collation.
pub(crate) fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match u32::from(last) + 1 {
            0xD800 => Some('\u{E000}'),
            code => char::from_u32(code),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_is_the_first_string_past_the_prefix() {
        assert_eq!(prefix_end(""), None);
        assert_eq!(
            prefix_end("/registry/pods/").as_deref(),
            Some("/registry/pods0")
        );
        assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{10FFFF}"), None);
        let end = prefix_end("/a/").unwrap_or_default();
        for key in ["/a/", "/a/b", "/a/\u{10FFFF}\u{10FFFF}"] {
            assert!(key < end.as_str(), "{key:?} must sort before {end:?}");
        }
        assert!("/a0" >= end.as_str());
    }

    #[test]
    fn list_options_builders() {
        let options = ListOptions::default()
            .with_revision(7)
            .with_start_after("/k")
            .with_limit(2);
        assert_eq!(options.revision, Some(7));
        assert_eq!(options.start_after.as_deref(), Some("/k"));
        assert_eq!(options.limit, Some(2));
    }
}
