//! Subscriptions (catalog-operator): resolve, subscribe to dependencies, create InstallPlans,
//! and report `state`, `currentCSV`, `installedCSV` and `ResolutionFailed`.
//!
//! A Subscription whose InstallPlan is still pending waits. Otherwise it is resolved
//! (`resolver`): nothing newer gives `AtLatestKnown`; a failure gives a
//! `ResolutionFailed` condition and nothing is created; a resolution creates a Subscription
//! per dependency (named `{package}-{channel}-{source}-{sourceNamespace}`, as OLM names
//! them) and one InstallPlan for the bundles whose CSVs are not there yet, referenced from
//! every Subscription it serves, with `state: UpgradePending`.

use kube::ResourceExt;
use kube::api::{DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::catalog::Gvk;
use crate::controller::{Catalogs, Context};
use crate::objects;
use crate::resolver::{self, Installed, Pick, Request};

/// Resolves every Subscription.
pub(crate) async fn reconcile(ctx: &Context<'_>, catalogs: &Catalogs) -> Result<(), kube::Error> {
    let sources = crate::catalogs::sources(catalogs);
    for sub in &ctx.snapshot.subscriptions {
        let namespace = sub.namespace().unwrap_or_default();
        let spec = sub.data.get("spec").cloned().unwrap_or(Value::Null);
        let old = objects::status(sub);
        let mut status = old.clone();
        // A pending InstallPlan: wait for it.
        if let Some(plan_name) = old["installPlanRef"]["name"].as_str() {
            let plan = ctx.snapshot.install_plans.iter().find(|p| {
                p.namespace().as_deref() == Some(&namespace) && p.name_any() == plan_name
            });
            let phase = plan
                .map(|p| {
                    objects::status(p)["phase"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .unwrap_or_default();
            match phase.as_str() {
                "Complete" => {
                    if status["installedCSV"] != status["currentCSV"] {
                        status["installedCSV"] = status["currentCSV"].clone();
                    }
                    set_condition(&mut status, "InstallPlanPending", None);
                }
                "Failed" => {
                    status["state"] = "UpgradeFailed".into();
                    set_condition(
                        &mut status,
                        "InstallPlanFailed",
                        Some(("InstallComponentFailed", plan_message(plan))),
                    );
                    write(ctx, sub, &old, status).await?;
                    continue;
                }
                _ if plan.is_some() => {
                    status["state"] = "UpgradePending".into();
                    set_condition(
                        &mut status,
                        "InstallPlanPending",
                        Some((phase.as_str(), String::new())),
                    );
                    write(ctx, sub, &old, status).await?;
                    continue;
                }
                _ => {}
            }
        }
        let request = Request {
            package: spec["name"].as_str().unwrap_or_default().into(),
            channel: spec["channel"].as_str().map(str::to_string),
            source: spec["source"].as_str().unwrap_or_default().into(),
            source_namespace: spec["sourceNamespace"].as_str().unwrap_or_default().into(),
            starting_csv: spec["startingCSV"].as_str().map(str::to_string),
            installed_csv: status["installedCSV"].as_str().map(str::to_string),
        };
        let installed = installed(ctx, &namespace);
        match resolver::resolve(&request, &sources, &installed) {
            Err(error) => {
                set_condition(
                    &mut status,
                    "ResolutionFailed",
                    Some(("ConstraintsNotSatisfiable", error.to_string())),
                );
            }
            Ok(None) => {
                set_condition(&mut status, "ResolutionFailed", None);
                status["state"] = "AtLatestKnown".into();
                status["currentCSV"] = status["installedCSV"].clone();
            }
            Ok(Some(resolution)) => {
                set_condition(&mut status, "ResolutionFailed", None);
                let target = &resolution.target.bundle;
                if request.installed_csv.is_none() && csv_exists(ctx, &namespace, target) {
                    // Installed already (as another Subscription's dependency): adopt it.
                    status["currentCSV"] = target.as_str().into();
                    status["installedCSV"] = target.as_str().into();
                    status["state"] = "AtLatestKnown".into();
                } else {
                    let approval = spec["installPlanApproval"].as_str().unwrap_or("Automatic");
                    let generation = old["installPlanGeneration"].as_i64().unwrap_or(0) + 1;
                    let mut picks = vec![resolution.target.clone()];
                    let mut dependency_subs = Vec::new();
                    for dependency in &resolution.dependencies {
                        picks.push(dependency.clone());
                        dependency_subs
                            .push(subscribe(ctx, &namespace, dependency, approval).await?);
                    }
                    picks.retain(|p| !csv_exists(ctx, &namespace, &p.bundle));
                    let mut owners = vec![sub];
                    owners.extend(dependency_subs.iter());
                    let plan = crate::installplans::create(
                        ctx, &namespace, &picks, catalogs, approval, generation, &owners,
                    )
                    .await?;
                    let reference = json!({
                        "apiVersion": "operators.coreos.com/v1alpha1",
                        "kind": "InstallPlan",
                        "name": plan.name_any(),
                        "namespace": namespace,
                        "resourceVersion": plan.resource_version(),
                        "uid": plan.uid(),
                    });
                    for (dependency_sub, pick) in
                        dependency_subs.iter().zip(&resolution.dependencies)
                    {
                        let old = objects::status(dependency_sub);
                        let mut status = old.clone();
                        pending(&mut status, &reference, &pick.bundle, generation);
                        write(ctx, dependency_sub, &old, status).await?;
                    }
                    pending(&mut status, &reference, target, generation);
                }
            }
        }
        write(ctx, sub, &old, status).await?;
    }
    Ok(())
}

/// Points a Subscription's status at a new InstallPlan.
fn pending(status: &mut Value, reference: &Value, csv: &str, generation: i64) {
    status["installPlanRef"] = reference.clone();
    status["installplan"] = json!({
        "apiVersion": reference["apiVersion"],
        "kind": "InstallPlan",
        "name": reference["name"],
        "uuid": reference["uid"],
    });
    status["installPlanGeneration"] = generation.into();
    status["currentCSV"] = csv.into();
    status["state"] = "UpgradePending".into();
}

fn plan_message(plan: Option<&DynamicObject>) -> String {
    plan.map(|p| {
        objects::status(p)["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    })
    .unwrap_or_default()
}

/// Sets (`Some((reason, message))`, status `True`) or removes a condition.
fn set_condition(status: &mut Value, type_: &str, set: Option<(&str, String)>) {
    let mut conditions: Vec<Value> = status["conditions"].as_array().cloned().unwrap_or_default();
    let existing = conditions.iter().position(|c| c["type"] == type_);
    match (set, existing) {
        (None, Some(index)) => {
            conditions.remove(index);
        }
        (None, None) => {}
        (Some((reason, message)), index) => {
            let mut condition =
                json!({"type": type_, "status": "True", "reason": reason, "message": message});
            match index {
                Some(index) => {
                    let old = &conditions[index];
                    condition["lastTransitionTime"] = old["lastTransitionTime"].clone();
                    conditions[index] = condition;
                }
                None => {
                    condition["lastTransitionTime"] = objects::now().into();
                    conditions.push(condition);
                }
            }
        }
    }
    if conditions.is_empty() {
        if let Some(object) = status.as_object_mut() {
            object.remove("conditions");
        }
    } else {
        status["conditions"] = conditions.into();
    }
}

/// Writes a Subscription's status when it changed.
async fn write(
    ctx: &Context<'_>,
    sub: &DynamicObject,
    old: &Value,
    mut status: Value,
) -> Result<(), kube::Error> {
    if objects::differs(old, &status, &["lastUpdated"]) || old["lastUpdated"].is_null() {
        status["lastUpdated"] = objects::now().into();
        objects::patch_status(ctx.client, &objects::subscription(), sub, &status).await?;
    }
    Ok(())
}

fn csv_exists(ctx: &Context<'_>, namespace: &str, name: &str) -> bool {
    ctx.snapshot
        .csvs
        .iter()
        .any(|c| c.namespace().as_deref() == Some(namespace) && c.name_any() == name)
}

/// The APIs a CSV owns.
pub(crate) fn owned_gvks(csv: &DynamicObject) -> Vec<Gvk> {
    csv.data["spec"]["customresourcedefinitions"]["owned"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|owned| Gvk {
            group: owned["name"]
                .as_str()
                .and_then(|n| n.split_once('.'))
                .map(|(_, g)| g.to_string())
                .unwrap_or_default(),
            version: owned["version"].as_str().unwrap_or_default().into(),
            kind: owned["kind"].as_str().unwrap_or_default().into(),
        })
        .collect()
}

/// What is installed in `namespace`: its CSVs, with the package a Subscription names.
fn installed(ctx: &Context<'_>, namespace: &str) -> Vec<Installed> {
    ctx.snapshot
        .csvs
        .iter()
        .filter(|c| c.namespace().as_deref() == Some(namespace))
        .map(|csv| {
            let package = ctx.snapshot.subscriptions.iter().find_map(|s| {
                let status = objects::status(s);
                let name = csv.name_any();
                (s.namespace().as_deref() == Some(namespace)
                    && (status["installedCSV"] == name.as_str()
                        || status["currentCSV"] == name.as_str()))
                .then(|| {
                    s.data["spec"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
            });
            Installed {
                package,
                version: csv.data["spec"]["version"]
                    .as_str()
                    .and_then(|v| semver::Version::parse(v).ok()),
                provides: owned_gvks(csv),
            }
        })
        .collect()
}

/// Creates (or finds) the Subscription for a dependency.
async fn subscribe(
    ctx: &Context<'_>,
    namespace: &str,
    pick: &Pick,
    approval: &str,
) -> Result<DynamicObject, kube::Error> {
    let api = objects::api(ctx.client, &objects::subscription(), namespace);
    if let Some(existing) = ctx.snapshot.subscriptions.iter().find(|s| {
        s.namespace().as_deref() == Some(namespace)
            && s.data["spec"]["name"] == pick.package.as_str()
    }) {
        return Ok(existing.clone());
    }
    let name = format!(
        "{}-{}-{}-{}",
        pick.package, pick.channel, pick.source, pick.source_namespace
    );
    let sub: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "name": pick.package,
            "channel": pick.channel,
            "source": pick.source,
            "sourceNamespace": pick.source_namespace,
            "installPlanApproval": approval,
        },
    }))
    .map_err(kube::Error::SerdeError)?;
    match api.create(&PostParams::default(), &sub).await {
        Ok(created) => Ok(created),
        Err(kube::Error::Api(status)) if status.code == 409 => api.get(&name).await,
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_set_kept_and_removed() {
        let mut status = json!({});
        set_condition(
            &mut status,
            "ResolutionFailed",
            Some(("ConstraintsNotSatisfiable", "no".into())),
        );
        assert_eq!(status["conditions"][0]["status"], "True");
        let first = status["conditions"][0]["lastTransitionTime"].clone();
        set_condition(
            &mut status,
            "ResolutionFailed",
            Some(("ConstraintsNotSatisfiable", "still".into())),
        );
        assert_eq!(status["conditions"][0]["lastTransitionTime"], first);
        assert_eq!(status["conditions"][0]["message"], "still");
        set_condition(&mut status, "ResolutionFailed", None);
        assert!(status.get("conditions").is_none());
    }
}
