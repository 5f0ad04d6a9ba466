//! What every book-chapter test shares: the `$ ` commands of a chapter's console blocks
//! ([`console_steps`]) and a [`Session`] that runs them as one bash script.
//!
//! A chapter starts servers in the background (`mni-dev up … &`, an operator, a backend). The
//! session runs the script in a process group of its own, stops it at a deadline, and once the
//! script has ended stops what is left of the group — first with SIGTERM, then, after a grace
//! period, with SIGKILL — so that no process of a chapter outlives its test or keeps its output
//! pipes open. What had to be killed is reported ([`Outcome::stragglers`]): a server that does
//! not stop on SIGTERM within the grace period is a bug of its own.

mod group;
mod session;
mod steps;

pub use session::{Error, Outcome, Session};
pub use steps::{Step, console_steps};
