//! `mni-core`: the API types every mNi service shares, without IO.
//!
//! A service's custom resource is built from these pieces: a [`WorkloadSpec`] for each of its
//! workloads (frontend, backend) in the spec, and a list of [`Condition`]s in the status. Both
//! derive `serde` and `schemars::JsonSchema`, so `kube::CustomResource` turns them into a CRD
//! schema with the constraints and defaults the API server enforces.
//!
//! Start with [`Conditions`], the trait that keeps `status.conditions` with Kubernetes
//! semantics, and [`WorkloadSpec`]:
//!
//! ```
//! use mni_core::{ConditionStatus, Conditions, READY, WorkloadSpec, reasons};
//! use k8s_openapi::jiff::Timestamp;
//!
//! let backend = WorkloadSpec::new("ghcr.io/acme/billing-backend:1.0.0");
//! assert_eq!(backend.replicas, 1);
//!
//! let mut conditions = Vec::new();
//! conditions.set(READY, ConditionStatus::True, reasons::RECONCILED, "", Some(1), Timestamp::now());
//! assert!(conditions.is_true(READY));
//! ```
//!
//! Code map: `condition` ([`Condition`], [`Conditions`], the standard types and
//! [`reasons`]), `workload` ([`WorkloadSpec`]).
//!
//! **Architecture Invariant:** `mni-core` does no IO and depends on no client: it is types,
//! their serde and schema, and pure helpers. The runtime that uses them is `mni-operator`;
//! the test environment is `mni-testkit`.

mod condition;
mod workload;

pub use condition::{
    Condition, ConditionError, ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY,
    REASON_PATTERN, TYPE_PATTERN, is_valid_reason, is_valid_type, reasons,
};
/// DNS-1123 names and CIDRs, checked as everywhere else in mNi (the `mni-formats` crate):
/// services validate their own fields with it.
pub use mni_formats as formats;
pub use workload::{
    DEFAULT_PORT, DEFAULT_REPLICAS, IMAGE_PATTERN, MAX_REPLICAS, ServiceStatus, WorkloadSpec,
    WorkloadStatus,
};

#[cfg(test)]
mod tests {
    //! The types as operators use them: inside a `kube::CustomResource`, whose CRD schema must
    //! carry the constraints and defaults.

    use super::*;
    use kube::{CustomResource, CustomResourceExt};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    /// A service as a generated operator declares it.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "example.mni.dev",
        version = "v1",
        kind = "Billing",
        namespaced,
        status = "BillingStatus"
    )]
    struct BillingSpec {
        frontend: WorkloadSpec,
        backend: WorkloadSpec,
    }

    #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
    struct BillingStatus {
        #[serde(default)]
        conditions: Vec<Condition>,
    }

    fn schema() -> Value {
        let crd = serde_json::to_value(Billing::crd()).expect("crd json");
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
    }

    #[test]
    fn crd_schema_carries_workload_constraints_and_defaults() {
        let schema = schema();
        let backend = &schema["properties"]["spec"]["properties"]["backend"];
        assert_eq!(backend["required"], json!(["image"]));
        let p = &backend["properties"];
        assert_eq!(p["image"]["pattern"], IMAGE_PATTERN);
        assert_eq!(p["image"]["type"], "string");
        // JSONSchemaProps keeps bounds as f64, so they read `0.0` in the CRD.
        let bounds = |v: &Value| (v["minimum"].as_f64(), v["maximum"].as_f64());
        assert_eq!(
            bounds(&p["replicas"]),
            (Some(0.0), Some(f64::from(MAX_REPLICAS)))
        );
        assert_eq!(p["replicas"]["default"], DEFAULT_REPLICAS);
        assert_eq!(bounds(&p["port"]), (Some(1.0), Some(65535.0)));
        assert_eq!(p["port"]["default"], DEFAULT_PORT);
        assert_eq!(p["env"]["x-kubernetes-list-type"], "map");
        assert_eq!(p["env"]["x-kubernetes-list-map-keys"], json!(["name"]));
        assert_eq!(p["env"]["items"]["required"], json!(["name"]));
        assert_eq!(p["nodeSelector"]["additionalProperties"]["type"], "string");
        assert_eq!(p["tolerations"]["type"], "array");
        assert!(p["resources"]["properties"]["limits"].is_object(), "{p:#}");
        // Descriptions are prose for `kubectl explain`, without rustdoc examples or links.
        assert!(
            !backend["description"].to_string().contains("```"),
            "{backend:#}"
        );
        // Structural schemas have no $ref left.
        assert!(!schema.to_string().contains("$ref"), "{schema:#}");
    }

    #[test]
    fn crd_schema_carries_condition_constraints() {
        let schema = schema();
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        let item = &conditions["items"];
        let mut required: Vec<&str> = item["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        required.sort_unstable();
        assert_eq!(
            required,
            ["lastTransitionTime", "message", "reason", "status", "type"]
        );
        let p = &item["properties"];
        assert_eq!(p["status"]["enum"], json!(["True", "False", "Unknown"]));
        assert_eq!(p["reason"]["pattern"], REASON_PATTERN);
        assert_eq!(p["type"]["pattern"], TYPE_PATTERN);
        assert_eq!(p["lastTransitionTime"]["format"], "date-time");
        assert_eq!(p["observedGeneration"]["minimum"].as_f64(), Some(0.0));
        assert_eq!(p["observedGeneration"]["format"], "int64");
        assert!(
            !item.to_string().contains("[`"),
            "no rustdoc links: {item:#}"
        );
    }
}
