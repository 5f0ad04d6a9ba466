//! Everything that speaks SQL: the schema, opening connections, loading the current state, reading
//! history (lists at past revisions, watch replay) and compaction.
//!
//! The log is one table, `kv`, with one row per write:
//!
//! | column            | meaning                                                         |
//! |-------------------|-----------------------------------------------------------------|
//! | `revision`        | `INTEGER PRIMARY KEY AUTOINCREMENT`: the write's revision        |
//! | `key`             | the key                                                         |
//! | `value`           | the value (empty for a tombstone)                               |
//! | `create_revision` | the revision that created this incarnation of the key           |
//! | `prev_revision`   | the revision of the version this write replaced (0 for a create) |
//! | `deleted`         | 1 for a tombstone                                               |
//!
//! `AUTOINCREMENT` keeps the high-water mark in `sqlite_sequence`, so a revision is never reused,
//! even after compaction removes the newest rows (tombstones). The `meta` table records the
//! schema version and the compacted revision.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};

use crate::error::Error;
use crate::options::StoreOptions;
use crate::types::{Event, EventKind, KeyValue, prefix_end};

/// The schema version this build reads and writes.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kv (
    revision        INTEGER PRIMARY KEY AUTOINCREMENT,
    key             TEXT    NOT NULL,
    value           BLOB    NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision   INTEGER NOT NULL,
    deleted         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS kv_key_revision ON kv (key, revision);
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', 1);
INSERT OR IGNORE INTO meta (name, value) VALUES ('compacted_revision', 0);
";

/// Appends one row to the log.
pub(crate) const INSERT: &str = "INSERT INTO kv (revision, key, value, create_revision, \
     prev_revision, deleted) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// Opens the writer connection to a database file, creating the file and schema if needed.
pub(crate) fn open_file(path: &Path, options: &StoreOptions) -> Result<Connection, Error> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)?;
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(options.busy_timeout)?;
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(%mode, "SQLite refused the WAL journal mode; continuing in this mode");
    }
    let synchronous = if options.fsync { "FULL" } else { "NORMAL" };
    conn.pragma_update(None, "synchronous", synchronous)?;
    init_schema(&conn)?;
    Ok(conn)
}

/// Opens a second, query-only connection to the same file for historical reads, which WAL lets
/// run concurrently with the writer.
pub(crate) fn open_reader(path: &Path, options: &StoreOptions) -> Result<Connection, Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(options.busy_timeout)?;
    conn.pragma_update(None, "query_only", true)?;
    Ok(conn)
}

/// Opens a private in-memory database with the schema.
pub(crate) fn open_memory() -> Result<Connection, Error> {
    let conn = Connection::open_in_memory()?;
    init_schema(&conn)?;
    Ok(conn)
}

fn init_schema(conn: &Connection) -> Result<(), Error> {
    conn.execute_batch(SCHEMA)?;
    let found: i64 = conn.query_row(
        "SELECT value FROM meta WHERE name = 'schema_version'",
        [],
        |row| row.get(0),
    )?;
    if found != SCHEMA_VERSION {
        return Err(Error::UnsupportedSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// What [`load`] finds in a database.
pub(crate) struct Loaded {
    /// The live keys at the newest revision.
    pub(crate) index: BTreeMap<String, KeyValue>,
    /// The newest revision ever assigned (0 for a new database).
    pub(crate) revision: i64,
    /// The compacted revision.
    pub(crate) compacted: i64,
}

/// Loads the current state: the newest version of every live key, and the revision counters.
pub(crate) fn load(conn: &Connection) -> Result<Loaded, Error> {
    let sequence: Option<i64> = conn
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'kv'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    let newest: Option<i64> =
        conn.query_row("SELECT MAX(revision) FROM kv", [], |row| row.get(0))?;
    let revision = sequence.unwrap_or(0).max(newest.unwrap_or(0));
    let compacted = compacted_revision(conn)?;
    let mut index = BTreeMap::new();
    let mut stmt = conn.prepare(
        "SELECT kv.key, kv.value, kv.create_revision, kv.revision FROM kv \
         JOIN (SELECT key, MAX(revision) AS revision FROM kv GROUP BY key) AS newest \
           ON kv.revision = newest.revision \
         WHERE kv.deleted = 0",
    )?;
    let rows = stmt.query_map([], key_value)?;
    for kv in rows {
        let kv = kv?;
        index.insert(kv.key.clone(), kv);
    }
    Ok(Loaded {
        index,
        revision,
        compacted,
    })
}

/// The compacted revision recorded in `meta`.
pub(crate) fn compacted_revision(conn: &Connection) -> Result<i64, Error> {
    Ok(conn.query_row(
        "SELECT value FROM meta WHERE name = 'compacted_revision'",
        [],
        |row| row.get(0),
    )?)
}

/// Maps `key, value, create_revision, mod_revision` columns.
fn key_value(row: &Row<'_>) -> rusqlite::Result<KeyValue> {
    Ok(KeyValue {
        key: row.get(0)?,
        value: Bytes::from(row.get::<_, Vec<u8>>(1)?),
        create_revision: row.get(2)?,
        mod_revision: row.get(3)?,
    })
}

/// Runs `read` inside one read transaction (one consistent snapshot), after checking that
/// `revision` has not been compacted in that snapshot.
fn at_snapshot<T>(
    conn: &mut Connection,
    revision: i64,
    read: impl FnOnce(&Connection) -> Result<T, Error>,
) -> Result<T, Error> {
    let tx = conn.transaction()?;
    let compacted = compacted_revision(&tx)?;
    if revision < compacted {
        return Err(Error::Compacted {
            requested: revision,
            compacted,
        });
    }
    let result = read(&tx)?;
    tx.commit()?;
    Ok(result)
}

/// The live keys under `prefix` (and after `start_after`) as of `revision`, sorted by key.
pub(crate) fn list_at(
    conn: &mut Connection,
    prefix: &str,
    start_after: Option<&str>,
    revision: i64,
) -> Result<Vec<KeyValue>, Error> {
    let end = prefix_end(prefix);
    let lower = match start_after {
        Some(after) if after >= prefix => (after, ">"),
        _ => (prefix, ">="),
    };
    let upper = if end.is_some() {
        "AND key < ?3"
    } else {
        "AND ?3 IS NULL"
    };
    let sql = format!(
        "SELECT kv.key, kv.value, kv.create_revision, kv.revision FROM kv \
         JOIN (SELECT key, MAX(revision) AS revision FROM kv \
               WHERE key {op} ?1 {upper} AND revision <= ?2 GROUP BY key) AS newest \
           ON kv.revision = newest.revision \
         WHERE kv.deleted = 0 ORDER BY kv.key",
        op = lower.1,
    );
    at_snapshot(conn, revision, |tx| {
        let mut stmt = tx.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![lower.0, revision, end], key_value)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    })
}

/// Up to `limit` events under `prefix` with revisions in `(after, until]`, in revision order,
/// and the revision up to which the log has been scanned (`until` unless the limit was reached).
pub(crate) fn events_between(
    conn: &mut Connection,
    prefix: &str,
    after: i64,
    until: i64,
    limit: usize,
) -> Result<(Vec<Event>, i64), Error> {
    let end = prefix_end(prefix);
    // The unary `+` keeps SQLite on the primary key (a revision range scan that can stop at the
    // limit) instead of the key index.
    let upper = if end.is_some() {
        "AND +e.key < ?4"
    } else {
        "AND ?4 IS NULL"
    };
    let sql = format!(
        "SELECT e.revision, e.key, e.value, e.create_revision, e.prev_revision, e.deleted, \
                p.value, p.create_revision \
         FROM kv AS e LEFT JOIN kv AS p ON p.revision = e.prev_revision AND e.prev_revision > 0 \
         WHERE e.revision > ?1 AND e.revision <= ?2 AND +e.key >= ?3 {upper} \
         ORDER BY e.revision LIMIT ?5"
    );
    let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
    at_snapshot(conn, after, |tx| {
        let mut stmt = tx.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![after, until, prefix, end, limit_sql], event)?;
        let events = rows.collect::<Result<Vec<_>, _>>()?;
        let scanned = match events.last() {
            Some(last) if events.len() >= limit => last.revision(),
            _ => until,
        };
        Ok((events, scanned))
    })
}

/// Maps a row of the [`events_between`] query.
fn event(row: &Row<'_>) -> rusqlite::Result<Event> {
    let revision: i64 = row.get(0)?;
    let key: String = row.get(1)?;
    let value = Bytes::from(row.get::<_, Vec<u8>>(2)?);
    let create_revision: i64 = row.get(3)?;
    let prev_revision: i64 = row.get(4)?;
    let deleted: bool = row.get(5)?;
    let prev_value: Option<Vec<u8>> = row.get(6)?;
    let prev_create: Option<i64> = row.get(7)?;
    let prev = match (prev_value, prev_create) {
        (Some(value), Some(create_revision)) if prev_revision > 0 => Some(KeyValue {
            key: key.clone(),
            value: Bytes::from(value),
            create_revision,
            mod_revision: prev_revision,
        }),
        _ => None,
    };
    let kind = if deleted {
        EventKind::Deleted
    } else if prev_revision > 0 {
        EventKind::Updated
    } else {
        EventKind::Created
    };
    let value = match (&prev, kind) {
        (Some(prev), EventKind::Deleted) => prev.value.clone(),
        _ => value,
    };
    Ok(Event {
        kind,
        kv: KeyValue {
            key,
            value,
            create_revision,
            mod_revision: revision,
        },
        prev,
    })
}

/// Removes, among the rows at or below `revision`, every tombstone and every version superseded
/// by a newer version at or below `revision`; then records `revision` as the compacted revision.
/// Runs in the caller's transaction. Returns the number of rows removed.
///
/// Rows that survived the previous compaction (at `previous`) are the newest version of their key
/// as of `previous`, and live; only keys written in `(previous, revision]` can have become
/// superseded since, which keeps each compaction proportional to the writes it covers.
pub(crate) fn compact(conn: &Connection, previous: i64, revision: i64) -> Result<u64, Error> {
    let removed = conn.execute(
        "DELETE FROM kv WHERE revision <= ?2 \
           AND key IN (SELECT key FROM kv WHERE revision > ?1 AND revision <= ?2) \
           AND (deleted = 1 OR EXISTS (SELECT 1 FROM kv AS newer WHERE newer.key = kv.key \
                AND newer.revision > kv.revision AND newer.revision <= ?2))",
        params![previous, revision],
    )?;
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE name = 'compacted_revision'",
        params![revision],
    )?;
    Ok(u64::try_from(removed).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_opened_in_wal_mode_with_full_sync() -> Result<(), Error> {
        let dir = tempfile::tempdir()?;
        let conn = open_file(&dir.path().join("s.db"), &StoreOptions::default())?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
        assert_eq!(mode.to_ascii_lowercase(), "wal");
        let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
        assert_eq!(synchronous, 2, "synchronous=FULL");
        let relaxed = open_file(
            &dir.path().join("r.db"),
            &StoreOptions::default().with_fsync(false),
        )?;
        let synchronous: i64 = relaxed.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
        assert_eq!(synchronous, 1, "synchronous=NORMAL");
        Ok(())
    }

    #[test]
    fn an_unknown_schema_version_is_refused() -> Result<(), Error> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.db");
        let conn = open_file(&path, &StoreOptions::default())?;
        conn.execute(
            "UPDATE meta SET value = 99 WHERE name = 'schema_version'",
            [],
        )?;
        drop(conn);
        match open_file(&path, &StoreOptions::default()) {
            Err(Error::UnsupportedSchema {
                found: 99,
                supported: 1,
            }) => Ok(()),
            other => panic!("expected a schema error, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn events_between_reports_how_far_it_scanned() -> Result<(), Error> {
        let mut conn = open_memory()?;
        for revision in 1..=5_i64 {
            let key = if revision % 2 == 0 { "/even" } else { "/odd" };
            let prev = if revision > 2 { revision - 2 } else { 0 };
            conn.execute(
                INSERT,
                params![
                    revision,
                    key,
                    b"v".as_slice(),
                    1 + (revision + 1) % 2,
                    prev,
                    false
                ],
            )?;
        }
        let (events, scanned) = events_between(&mut conn, "/odd", 0, 5, 2)?;
        assert_eq!(
            events.iter().map(Event::revision).collect::<Vec<_>>(),
            [1, 3]
        );
        assert_eq!(scanned, 3, "the limit was reached at revision 3");
        let (events, scanned) = events_between(&mut conn, "/odd", 3, 4, 2)?;
        assert!(events.is_empty());
        assert_eq!(scanned, 4);
        let (events, _) = events_between(&mut conn, "", 3, 5, 10)?;
        assert_eq!(
            events.iter().map(|event| event.kind).collect::<Vec<_>>(),
            [EventKind::Updated; 2]
        );
        Ok(())
    }
}
