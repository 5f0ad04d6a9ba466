//! Shared test setup: `mni-dev up` as a child process.

#![allow(dead_code, unreachable_pub)]

pub mod dev;
