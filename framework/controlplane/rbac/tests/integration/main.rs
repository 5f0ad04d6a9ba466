//! The RBAC authorizer's integration tests, one binary.

mod common;

mod authorize;
mod bootstrap;
mod messages;
mod robustness;
