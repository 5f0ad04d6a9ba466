//! The one error type of the test kit, [`Error`].
//!
//! Every message names the object or identity involved, so a failing test says what it was
//! waiting for and what it last saw.

use std::time::Duration;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of [`TestEnv`](crate::TestEnv) and the wait and event helpers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The in-process API server did not start.
    #[error("starting the in-process API server: {0}")]
    Start(#[source] mni_apiserver::Error),
    /// The real kube-apiserver named by `MNI_TESTKIT_KUBE_APISERVER` did not start.
    #[error("starting the reference kube-apiserver: {0}")]
    Reference(#[source] crate::reference::ReferenceError),
    /// A kube-rs client could not be built for an identity.
    #[error("building a client for {identity}: {source}")]
    Client {
        /// Who the client authenticates as.
        identity: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A request to the API server failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done, e.g. `applying Role ns/name`.
        action: String,
        /// The cause.
        #[source]
        source: kube::Error,
    },
    /// A watch failed (for example 403 when the client may not `list`/`watch` the kind).
    #[error("watching {object}: {source}")]
    Watch {
        /// The object or objects watched, e.g. `Deployment default/web`.
        object: String,
        /// The cause.
        #[source]
        source: kube::runtime::watcher::Error,
    },
    /// The object did not reach the awaited state in time.
    #[error("timed out after {timeout:?} waiting for {object} {waiting_for}; {last_seen}")]
    Timeout {
        /// The object, e.g. `Deployment default/web`.
        object: String,
        /// What was awaited, e.g. `to have condition Available=True`.
        waiting_for: String,
        /// How long was waited.
        timeout: Duration,
        /// What was seen last: not found, or the last `status`.
        last_seen: String,
    },
    /// No event with the expected reason was recorded for the object in time.
    #[error(
        "no event with reason {reason:?} for {object} within {timeout:?}; reasons seen: {seen:?}"
    )]
    EventNotFound {
        /// The object the event should be about.
        object: String,
        /// The expected reason.
        reason: String,
        /// How long was waited.
        timeout: Duration,
        /// The reasons of the events that were recorded for the object.
        seen: Vec<String>,
    },
    /// An object is not controlled by the owner a test expected.
    #[error("{object} is not controlled by {owner}; its owner references: {owner_references:?}")]
    NotControlled {
        /// The object, e.g. `Deployment web`.
        object: String,
        /// The expected controller, e.g. `Ledger sample (uid …)`.
        owner: String,
        /// The owner references the object has.
        owner_references: Vec<String>,
    },
    /// An argument cannot be used; the message names it and says why.
    #[error("{0}")]
    Invalid(String),
}
