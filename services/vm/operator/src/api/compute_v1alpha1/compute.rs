// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `Compute` custom resource (`compute.mni.dev/v1alpha1`, namespaced): one installation
//! of the compute service.
//!
//! Its spec says which frontend and backend to run, each a [`WorkloadSpec`] (image, replicas,
//! port, resources, env) with defaults; `ComputeReconciler` turns it into Deployments,
//! Services, RBAC, a settings ConfigMap and a NetworkPolicy through the runtime's workload
//! engine, which reports in the status ([`ServiceStatus`]) whether they are available.

use std::collections::BTreeMap;

use kube::CustomResource;
use mni_core::{ServiceStatus, WorkloadSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The frontend image when the spec names none: what the workspace's `Dockerfile`
/// builds with `--build-arg BINARY=compute-frontend`.
pub const DEFAULT_FRONTEND_IMAGE: &str = "compute-frontend:latest";

/// The backend image when the spec names none: what the workspace's `Dockerfile`
/// builds with `--build-arg BINARY=compute-backend`.
pub const DEFAULT_BACKEND_IMAGE: &str = "compute-backend:latest";

/// One installation of the compute service: its web UI and its HTTP API.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "compute.mni.dev",
    version = "v1alpha1",
    kind = "Compute",
    plural = "computes",
    namespaced,
    status = "ComputeStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"URL","type":"string","jsonPath":".status.url"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ComputeSpec {
    /// The web UI: a static page served by the `compute-frontend` image, which proxies `/api`
    /// to the backend.
    #[serde(default = "default_frontend")]
    pub frontend: WorkloadSpec,
    /// The HTTP API: the `compute-backend` image, serving Instances.
    #[serde(default = "default_backend")]
    pub backend: WorkloadSpec,
    /// Settings of the backend, passed to it as environment variables from its ConfigMap;
    /// changing one rolls the backend. `LISTEN_ADDRESS` and `NAMESPACE` are set by the operator.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

impl Default for ComputeSpec {
    fn default() -> Self {
        Self {
            frontend: default_frontend(),
            backend: default_backend(),
            settings: BTreeMap::new(),
        }
    }
}

fn default_frontend() -> WorkloadSpec {
    WorkloadSpec::new(DEFAULT_FRONTEND_IMAGE)
}

fn default_backend() -> WorkloadSpec {
    WorkloadSpec::new(DEFAULT_BACKEND_IMAGE)
}

/// What the operator last observed about a Compute: conditions, replica counts and the
/// frontend's URL, as the runtime's workload engine reports them.
pub type ComputeStatus = ServiceStatus;
