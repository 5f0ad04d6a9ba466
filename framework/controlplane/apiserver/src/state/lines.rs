//! The watch fan-out: each event's watch line, encoded once and shared among watchers.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

/// How many events' encoded lines [`LineCache`] keeps.
const LINE_CACHE_EVENTS: usize = 4096;

/// One cached line: which object, in which served version and output, and its bytes.
struct CachedLine {
    key: String,
    api_version: String,
    metadata: bool,
    line: Bytes,
}

/// The watch lines of recent events, encoded once and shared by every watcher without a
/// selector that serves the same event in the same version and output: the first such watcher
/// parses and encodes, the others copy the `Bytes` handle. Keyed by the event's revision (each
/// write has its own), the oldest revisions are dropped first.
#[derive(Default)]
pub(crate) struct LineCache {
    lines: Mutex<BTreeMap<i64, Vec<CachedLine>>>,
}

impl std::fmt::Debug for LineCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineCache").finish_non_exhaustive()
    }
}

impl LineCache {
    pub(crate) fn get(
        &self,
        rev: i64,
        key: &str,
        api_version: &str,
        metadata: bool,
    ) -> Option<Bytes> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        lines.get(&rev)?.iter().find_map(|c| {
            (c.key == key && c.api_version == api_version && c.metadata == metadata)
                .then(|| c.line.clone())
        })
    }

    pub(crate) fn insert(
        &self,
        rev: i64,
        key: &str,
        api_version: String,
        metadata: bool,
        line: Bytes,
    ) {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = lines.entry(rev).or_default();
        if !entries
            .iter()
            .any(|c| c.key == key && c.api_version == api_version && c.metadata == metadata)
        {
            entries.push(CachedLine {
                key: key.to_owned(),
                api_version,
                metadata,
                line,
            });
        }
        while lines.len() > LINE_CACHE_EVENTS {
            lines.pop_first();
        }
    }
}
