// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! API group `webapp.example.com`, version `v1`.

// +mni:fragment:kinds:guestbook
mod guestbook;
pub use guestbook::{Guestbook, GuestbookSpec, GuestbookStatus};
// +mni:fragment-end:kinds:guestbook
// +mni:scaffold:kinds
