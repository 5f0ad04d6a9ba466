//! InstallPlans (catalog-operator): built from a resolution, approved automatically or by
//! hand, then executed step by step.
//!
//! A plan lists, per bundle, its CRDs first, then its CSV, then its other manifests, each a
//! step with the manifest as JSON. `Automatic` plans start `Installing`; `Manual` ones wait
//! in `RequiresApproval` until `spec.approved: true`. Executing applies each step
//! server-side; a CRD step waits until the CRD is `Established` before later steps run. All
//! steps done: `Complete`; a step the API server refuses: `Failed` with its message.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::controller::{Catalogs, Context};
use crate::objects;
use crate::resolver::Pick;

/// Creates the InstallPlan for `picks` and writes its planned status.
pub(crate) async fn create(
    ctx: &Context<'_>,
    namespace: &str,
    picks: &[Pick],
    catalogs: &Catalogs,
    approval: &str,
    generation: i64,
    owners: &[&DynamicObject],
) -> Result<DynamicObject, kube::Error> {
    let mut steps = Vec::new();
    for pick in picks {
        let bundle = catalogs
            .get(&(pick.source_namespace.clone(), pick.source.clone()))
            .and_then(|l| l.catalog.as_ref())
            .and_then(|c| c.bundles.get(&pick.bundle));
        let Some(bundle) = bundle else { continue };
        let mut objects: Vec<&Value> = bundle.objects.iter().collect();
        objects.sort_by_key(|o| match o["kind"].as_str() {
            Some("CustomResourceDefinition") => 0,
            Some("ClusterServiceVersion") => 1,
            _ => 2,
        });
        for object in objects {
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            steps.push(json!({
                "resolving": pick.bundle,
                "resource": {
                    "group": group,
                    "version": version,
                    "kind": object["kind"],
                    "name": object["metadata"]["name"],
                    "manifest": object.to_string(),
                    "sourceName": pick.source,
                    "sourceNamespace": pick.source_namespace,
                },
                "status": "Unknown",
            }));
        }
    }
    let automatic = approval != "Manual";
    let plan: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "InstallPlan",
        "metadata": {
            "generateName": "install-",
            "namespace": namespace,
            // Owned by every Subscription it serves, as OLM's plans are.
            "ownerReferences": owners
                .iter()
                .map(|o| objects::owner_reference(o, &objects::subscription()))
                .collect::<Vec<_>>(),
        },
        "spec": {
            "clusterServiceVersionNames": picks.iter().map(|p| p.bundle.clone()).collect::<Vec<_>>(),
            "approval": if automatic { "Automatic" } else { "Manual" },
            "approved": automatic,
            "generation": generation,
        },
    }))
    .map_err(kube::Error::SerdeError)?;
    let created = objects::api(ctx.client, &objects::install_plan(), namespace)
        .create(&PostParams::default(), &plan)
        .await?;
    let mut sources: Vec<String> = picks.iter().map(|p| p.source.clone()).collect();
    sources.dedup();
    let status = json!({
        "phase": if automatic { "Installing" } else { "RequiresApproval" },
        "catalogSources": sources,
        "plan": steps,
        "startTime": objects::now(),
        "conditions": [{"type": "Resolved", "status": "True", "lastTransitionTime": objects::now()}],
    });
    objects::patch_status(ctx.client, &objects::install_plan(), &created, &status).await?;
    Ok(created)
}

/// Moves approved plans on and executes installing ones.
pub(crate) async fn reconcile(ctx: &Context<'_>) -> Result<(), kube::Error> {
    for plan in &ctx.snapshot.install_plans {
        let old = objects::status(plan);
        let approved = plan.data["spec"]["approved"].as_bool().unwrap_or(false);
        let mut status = old.clone();
        match old["phase"].as_str().unwrap_or_default() {
            "RequiresApproval" if approved => status["phase"] = "Installing".into(),
            "Installing" => execute(ctx, plan, &mut status).await?,
            _ => continue,
        }
        if status != old {
            objects::patch_status(ctx.client, &objects::install_plan(), plan, &status).await?;
        }
    }
    Ok(())
}

/// Applies the steps of `plan` in order, recording each step's status.
async fn execute(
    ctx: &Context<'_>,
    plan: &DynamicObject,
    status: &mut Value,
) -> Result<(), kube::Error> {
    let namespace = plan.namespace().unwrap_or_default();
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
    let count = status["plan"].as_array().map_or(0, Vec::len);
    for index in 0..count {
        let resource = status["plan"][index]["resource"].clone();
        let manifest: Value =
            match serde_json::from_str(resource["manifest"].as_str().unwrap_or_default()) {
                Ok(manifest) => manifest,
                Err(error) => {
                    fail(
                        status,
                        format!("step {index}: the manifest is not JSON: {error}"),
                    );
                    return Ok(());
                }
            };
        if let Err(error) = objects::apply(ctx.client, &manifest, &namespace).await {
            fail(
                status,
                format!(
                    "error creating {} {}: {error}",
                    resource["kind"].as_str().unwrap_or_default(),
                    resource["name"].as_str().unwrap_or_default()
                ),
            );
            return Ok(());
        }
        status["plan"][index]["status"] = "Created".into();
        if resource["kind"] == "CustomResourceDefinition" {
            let name = resource["name"].as_str().unwrap_or_default();
            let established = crds
                .get_opt(name)
                .await?
                .and_then(|c| c.status)
                .and_then(|s| s.conditions)
                .is_some_and(|c| {
                    c.iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                });
            if !established {
                // Later steps wait for the API; the CRD's watch event wakes the next pass.
                return Ok(());
            }
        }
    }
    status["phase"] = "Complete".into();
    status["conditions"] = json!([
        {"type": "Resolved", "status": "True"},
        {"type": "Installed", "status": "True", "lastTransitionTime": objects::now()},
    ]);
    Ok(())
}

fn fail(status: &mut Value, message: String) {
    status["phase"] = "Failed".into();
    status["message"] = message.clone().into();
    status["conditions"] = json!([
        {"type": "Resolved", "status": "True"},
        {"type": "Installed", "status": "False", "reason": "InstallComponentFailed", "message": message, "lastTransitionTime": objects::now()},
    ]);
}
