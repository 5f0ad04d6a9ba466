//! The workload simulator's integration tests, one binary: Deployments, Jobs, PodDisruptionBudgets,
//! storage and the rest driven through a real API server.

mod common;

mod batch;
mod deployments;
mod policy;
mod storage;
mod workloads;
