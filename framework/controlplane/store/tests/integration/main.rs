//! The store's integration tests, one binary.

mod durability;
mod list_and_compaction;
mod watch_consistency;
