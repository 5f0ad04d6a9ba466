//! mni-apiserver's integration tests, one binary (one link of the API server and kube on 2 cores,
//! not one per file): each module is a topic, most of them driving a real server over HTTP.

mod support;

mod admission_policy;
mod auth;
mod autoscaling;
mod batch;
mod bodies;
mod conformance;
mod fuzz;
mod gc;
mod kinds;
mod layers;
mod policy_kinds;
mod quota;
mod runtime;
mod watch;
mod webhooks;
