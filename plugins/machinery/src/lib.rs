//! `mni-machinery`: the scaffolding engine behind `mni-scaffold`.
//!
//! A scaffold runs in this order, and so does this crate's API:
//!
//! 1. [`load_universe`] reads the project into a [`Universe`](mni_plugin::Universe), leaving out
//!    `.git/`, `target/` and git-ignored files (and first rolls back an interrupted commit).
//! 2. Plugins render files with [`Templates`] (Handlebars, strict mode, name helpers) and edit
//!    existing files only at scaffold markers with [`Insert`]/[`insert`] — idempotently.
//! 3. [`validate`] checks the result: paths stay inside the project, Rust and YAML parse.
//! 4. [`plan()`] compares it with the disk; `--dry-run` prints [`Plan::report`] and
//!    [`Plan::diff`]; otherwise [`Plan::apply`] (or [`commit`], which does 3–4) writes it
//!    atomically: all files or none (see the `commit` module docs for the exact guarantee).
//!
//! Community templates take a side road into step 2: [`Generate`] instantiates a local
//! cargo-generate template into files that are written into the Universe like rendered ones.
//!
//! **Architecture invariant:** this crate is the only place where scaffolding touches the file
//! system; `mni-plugin` stays pure.

mod commit;
mod generate;
mod gitignore;
mod load;
mod marker;
mod plan;
mod rust;
mod template;
mod validate;

pub use commit::{CommitError, STATE_DIR, commit, recover};
pub use generate::{Generate, GenerateError, Generated};
pub use gitignore::{Gitignore, GitignoreError};
pub use load::{LoadError, Loaded, load_universe};
pub use marker::{Insert, InsertOutcome, MarkerError, ensure_marker, insert, insert_into};
pub use plan::{Action, Change, CommitReport, Plan, PlanError, plan};
pub use rust::{RustError, check as check_rust, format_fragment, rustfmt_difference};
pub use template::{TemplateError, TemplateFile, Templates, merge_data};
pub use validate::{ValidationError, validate};
