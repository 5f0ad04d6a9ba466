//! `mni-plugin-service`: the built-in `service.mni.dev/v1` plugin.
//!
//! `mni-scaffold new service NAME` with this plugin in the chain (the default bundle runs
//! `rust.mni.dev/v1`, `kustomize.mni.dev/v1`, then this one) turns the bare operator crate the
//! first two make into a complete mNi service:
//!
//! - the operator gets the service's custom resource (`Billing` for `billing`), whose spec is
//!   one installation — a frontend and a backend workload — and a controller that
//!   server-side-applies their Deployments, Services, RBAC, settings ConfigMap and
//!   NetworkPolicy and reports `Ready`/`Progressing`/`Degraded`; plus one domain kind
//!   (`BillingAccount`) with a skeleton controller;
//! - a `backend` crate: an axum HTTP API doing CRUD on the domain kind through the
//!   Kubernetes API;
//! - a `frontend` crate: a web UI served by a small Rust server that embeds its assets and
//!   proxies `/api` to the backend;
//! - their CRDs, samples, tests and a README (the workspace's one `Dockerfile` builds the
//!   images, `--build-arg BINARY=CRATE`).
//!
//! Start reading at [`v1`]: its module docs list every generated file. The templates are in
//! `templates/service/v1/` of the mNi repository.

pub mod v1;

pub use v1::{KEY, ServiceV1, Specialisation, SpecialisedService};
