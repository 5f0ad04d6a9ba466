// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `Metal` custom resource (`metal.mni.dev/v1alpha1`, namespaced): one installation
//! of the metal service.
//!
//! Its spec says which frontend and backend to run, each a [`WorkloadSpec`] (image, replicas,
//! port, resources, env) with defaults; `MetalReconciler` turns it into Deployments,
//! Services, RBAC, a settings ConfigMap and a NetworkPolicy through the runtime's workload
//! engine, which reports in the status ([`ServiceStatus`]) whether they are available.

use std::collections::BTreeMap;

use kube::CustomResource;
use mni_core::{ServiceStatus, WorkloadSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The frontend image when the spec names none: what the workspace's `Dockerfile`
/// builds with `--build-arg BINARY=metal-frontend`.
pub const DEFAULT_FRONTEND_IMAGE: &str = "metal-frontend:latest";

/// The backend image when the spec names none: what the workspace's `Dockerfile`
/// builds with `--build-arg BINARY=metal-backend`.
pub const DEFAULT_BACKEND_IMAGE: &str = "metal-backend:latest";

/// One installation of the metal service: its web UI and its HTTP API.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "metal.mni.dev",
    version = "v1alpha1",
    kind = "Metal",
    plural = "metals",
    namespaced,
    status = "MetalStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"URL","type":"string","jsonPath":".status.url"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MetalSpec {
    /// The web UI: a static page served by the `metal-frontend` image, which proxies `/api`
    /// to the backend.
    #[serde(default = "default_frontend")]
    pub frontend: WorkloadSpec,
    /// The HTTP API: the `metal-backend` image, serving Servers.
    #[serde(default = "default_backend")]
    pub backend: WorkloadSpec,
    /// Settings of the backend, passed to it as environment variables from its ConfigMap;
    /// changing one rolls the backend. `LISTEN_ADDRESS` and `NAMESPACE` are set by the operator.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

impl Default for MetalSpec {
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

/// What the operator last observed about a Metal: conditions, replica counts and the
/// frontend's URL, as the runtime's workload engine reports them.
pub type MetalStatus = ServiceStatus;
