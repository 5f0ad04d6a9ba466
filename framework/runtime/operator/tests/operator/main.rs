//! Integration tests of the operator runtime against the embedded API server.
//!
//! One binary (linking kube and the API server once): reconcile and garbage collection,
//! backoff, leader election, shutdown, metrics and RBAC, and the workload engine, each in its
//! own module.

mod leader;
mod lifecycle;
mod rbac;
mod reconcile;
mod support;
mod workload;
