//! Installing CRDs (built from `mni-core` types) and what the server then enforces.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{CustomResource, CustomResourceExt};
use mni_core::{Condition, ConditionStatus, Conditions, READY, WorkloadSpec, reasons};
use mni_testkit::{TestEnv, wait_for_condition};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

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

fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

#[tokio::test]
async fn install_waits_until_established_and_the_schema_is_enforced() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    env.install::<Billing>().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client());
    assert!(established(&crds.get(Billing::crd_name()).await?));
    // Installing again is harmless.
    env.install_crds(&[Billing::crd()]).await?;

    let billings: Api<Billing> = Api::namespaced(env.client(), "default");
    let created = billings
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "example.mni.dev/v1", "kind": "Billing",
                "metadata": {"name": "acme"},
                "spec": {"frontend": {"image": "ghcr.io/acme/web:1.0"},
                         "backend": {"image": "ghcr.io/acme/api:1.0", "replicas": 3}},
            }))?,
        )
        .await?;
    // The schema's defaults were filled in by the server.
    assert_eq!(created.spec.frontend.replicas, 1);
    assert_eq!(created.spec.frontend.port, 8080);
    assert_eq!(created.spec.backend.replicas, 3);

    // ... and its constraints enforced.
    for (field, bad) in [
        ("image", json!("Not An Image")),
        ("replicas", json!(101)),
        ("port", json!(0)),
    ] {
        let mut spec = json!({"image": "nginx"});
        spec[field] = bad;
        let object = json!({
            "apiVersion": "example.mni.dev/v1", "kind": "Billing",
            "metadata": {"name": format!("bad-{field}")},
            "spec": {"frontend": spec, "backend": {"image": "nginx"}},
        });
        match billings
            .create(&PostParams::default(), &serde_json::from_value(object)?)
            .await
        {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{field}: {status:?}");
                assert!(
                    status.message.contains(&format!("spec.frontend.{field}")),
                    "{field}: {}",
                    status.message
                );
            }
            other => panic!("{field}: expected 422, got {other:?}"),
        }
    }

    // Conditions set with mni-core are accepted by the schema and awaited by the kit.
    let mut conditions = Vec::new();
    conditions.set(
        READY,
        ConditionStatus::True,
        reasons::RECONCILED,
        "frontend and backend available",
        created.metadata.generation,
        Timestamp::now(),
    );
    let status = json!({"status": {"conditions": conditions}});
    billings
        .patch_status("acme", &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    let ready =
        wait_for_condition(&billings, "acme", READY, "True", Duration::from_secs(5)).await?;
    let stored = ready.status.expect("status").conditions;
    assert!(stored.is_true(READY));
    assert_eq!(
        stored.find(READY).map(|c| c.observed_generation),
        Some(Some(1))
    );

    // An invalid reason is rejected by the CRD schema.
    let bad = json!({"status": {"conditions": [{"type": "Ready", "status": "True",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "not camel", "message": ""}]}});
    let rejected = billings
        .patch_status("acme", &PatchParams::default(), &Patch::Merge(&bad))
        .await;
    assert!(
        matches!(&rejected, Err(kube::Error::Api(s)) if s.code == 422),
        "{rejected:?}"
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn the_builder_installs_crds_before_start_returns() -> anyhow::Result<()> {
    let env = TestEnv::builder().with_crd::<Billing>().start().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client());
    assert!(established(&crds.get(Billing::crd_name()).await?));
    env.shutdown().await;

    let mut nameless = Billing::crd();
    nameless.metadata.name = None;
    let err = TestEnv::builder()
        .with_crds([nameless])
        .start()
        .await
        .expect_err("a CRD without a name");
    assert!(err.to_string().contains("metadata.name"), "{err}");
    Ok(())
}
