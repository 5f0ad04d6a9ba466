//! [`WorkloadSpec`]: what a service asks for its frontend and its backend.
//!
//! A service's custom resource embeds one `WorkloadSpec` per workload (`spec.frontend`,
//! `spec.backend`). The type carries its own validation and defaults into the CRD schema
//! (`pattern` for the image, `minimum`/`maximum` for replicas and port, `default` for both), so
//! the API server rejects bad specs and fills in defaults before an operator sees the object;
//! the same defaults apply when Rust code deserializes a spec that lacks them. Turning a spec
//! into a Deployment is the operator's job (`mni-operator`'s workload engine), not this crate's.
//!
//! [`ServiceStatus`] is the other half: what the workload engine reports in a service's status
//! (conditions, `observedGeneration`, replica counts of both workloads, the frontend's URL).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements, Toleration};

use crate::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The pattern of an OCI image reference (`[registry[:port]/]path[:tag][@digest]`), after the
/// grammar of `github.com/distribution/reference`: lowercase path components, tags of up to
/// 128 characters, digests as `algorithm:hex`. IPv6 registry addresses are not accepted.
pub const IMAGE_PATTERN: &str = concat!(
    r"^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])",
    r"(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?",
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*",
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?",
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$",
);

/// The number of replicas when the spec does not say.
pub const DEFAULT_REPLICAS: i32 = 1;

/// The most replicas a workload may ask for.
pub const MAX_REPLICAS: i32 = 100;

/// The container port when the spec does not say.
pub const DEFAULT_PORT: i32 = 8080;

/// The workload of one part of a service (its frontend or its backend): which image to run,
/// how many replicas, on which port, with which resources and environment, on which nodes.
///
/// ```
/// use mni_core::WorkloadSpec;
///
/// let spec: WorkloadSpec = serde_json::from_str(r#"{"image": "ghcr.io/acme/billing:1.2.0"}"#)?;
/// assert_eq!((spec.replicas, spec.port), (1, 8080)); // the defaults
/// assert_eq!(spec, WorkloadSpec::new("ghcr.io/acme/billing:1.2.0"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// The rustdoc above has an example; the CRD (and `kubectl explain`) gets plain prose.
#[schemars(
    description = "The workload of one part of a service: the image to run, how many replicas, on which port, with which resources and environment, on which nodes."
)]
pub struct WorkloadSpec {
    /// The container image, an OCI reference such as `ghcr.io/acme/billing:1.2.0` or
    /// `registry.local:5000/billing@sha256:…`.
    #[schemars(regex(pattern = IMAGE_PATTERN), length(min = 1, max = 1024))]
    pub image: String,
    /// How many pods to run (0 to 100, default 1).
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0, max = MAX_REPLICAS))]
    pub replicas: i32,
    /// The port the container listens on and the Service exposes (default 8080).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
    /// CPU and memory requests and limits of the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Environment variables of the container, merged by name under server-side apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub env: Vec<EnvVar>,
    /// Labels a node must have for the pods to be scheduled on it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Taints the pods tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

impl WorkloadSpec {
    /// A spec for `image` with every other field at its default.
    pub fn new(image: impl Into<String>) -> Self {
        WorkloadSpec {
            image: image.into(),
            replicas: DEFAULT_REPLICAS,
            port: DEFAULT_PORT,
            resources: None,
            env: Vec::new(),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
        }
    }
}

/// What the operator last observed about one installation of a service: the status of a
/// service's custom resource, written by `mni-operator`'s workload engine.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// `Ready` (both workloads available), `Progressing` (a rollout is under way) and
    /// `Degraded` (a workload fails; the message names it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Replica counts of the frontend Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend: Option<WorkloadStatus>,
    /// Replica counts of the backend Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<WorkloadStatus>,
    /// Where the web UI is served inside the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Replica counts of one workload's Deployment.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadStatus {
    /// Pods the Deployment asks for.
    pub replicas: i32,
    /// Pods whose readiness probe passes.
    pub ready_replicas: i32,
    /// Pods that are ready and running the current pod template.
    pub updated_replicas: i32,
}

fn default_replicas() -> i32 {
    DEFAULT_REPLICAS
}

fn default_port() -> i32 {
    DEFAULT_PORT
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_pattern_accepts_oci_references_and_rejects_the_rest() {
        let re = regex::Regex::new(IMAGE_PATTERN).expect("pattern compiles");
        let digest = format!("sha256:{}", "a".repeat(64));
        for ok in [
            "nginx".to_string(),
            "nginx:1.27".into(),
            "library/nginx:1.27-alpine".into(),
            "ghcr.io/mni-cloud/billing-backend:v0.1.0".into(),
            "localhost:5000/app".into(),
            "registry.example.com:443/team/app__x/y.z:Tag_1.0".into(),
            format!("quay.io/acme/app@{digest}"),
            format!("quay.io/acme/app:1.0@{digest}"),
        ] {
            assert!(re.is_match(&ok), "{ok} should be accepted");
        }
        for bad in [
            "",
            "Nginx",
            "nginx:",
            "nginx:-tag",
            "-nginx",
            "nginx/",
            "ghcr.io//app",
            "app@sha256:abc",
            "my image",
            "app:tag with space",
        ] {
            assert!(!re.is_match(bad), "{bad} should be rejected");
        }
    }

    #[test]
    fn defaults_apply_when_deserializing() {
        let spec: WorkloadSpec =
            serde_json::from_value(json!({"image": "nginx"})).expect("deserialize");
        assert_eq!(spec, WorkloadSpec::new("nginx"));
        assert_eq!(spec.replicas, DEFAULT_REPLICAS);
        assert_eq!(spec.port, DEFAULT_PORT);
        assert!(serde_json::from_value::<WorkloadSpec>(json!({"replicas": 2})).is_err());
    }

    #[test]
    fn json_is_camel_case_and_omits_empty_fields() {
        let mut spec = WorkloadSpec::new("nginx");
        assert_eq!(
            serde_json::to_value(&spec).expect("json"),
            json!({"image": "nginx", "replicas": 1, "port": 8080})
        );
        spec.node_selector.insert("disk".into(), "ssd".into());
        spec.env.push(EnvVar {
            name: "MODE".into(),
            value: Some("prod".into()),
            ..EnvVar::default()
        });
        let value = serde_json::to_value(&spec).expect("json");
        assert_eq!(value["nodeSelector"], json!({"disk": "ssd"}));
        assert_eq!(value["env"], json!([{"name": "MODE", "value": "prod"}]));
        let back: WorkloadSpec = serde_json::from_value(value).expect("round trip");
        assert_eq!(back, spec);
    }
}
