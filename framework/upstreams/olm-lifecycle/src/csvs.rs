//! ClusterServiceVersions (olm-operator): requirements, the install strategy, health and
//! replacement.
//!
//! Phases as OLM's: none → `Pending` (`RequirementsUnknown`); `Pending` checks the
//! OperatorGroup (none: `Failed`/`NoOperatorGroup`) and that every owned and required CRD
//! exists and is `Established` (`status.requirementStatus`; a missing one keeps the CSV
//! `Pending`/`RequirementsNotMet`, as OLM does), marks the CSV it `replaces` `Replacing`,
//! and goes `InstallReady`; `InstallReady` creates the ServiceAccounts, Roles and
//! RoleBindings (`permissions`), ClusterRoles and ClusterRoleBindings
//! (`clusterPermissions`) and Deployments (`install.spec.deployments`, updated in place when
//! a replaced CSV's Deployment has the name) and goes `Installing`; `Installing` waits for
//! every Deployment to be available — `Succeeded` — or fails with `InstallCheckFailed` /
//! `install timeout` after the install timeout since the last transition. A `Succeeded` CSV
//! that another CSV replaces goes `Replacing`, and is deleted when its replacement
//! succeeded. Namespaced objects are owned by the CSV (ownerReferences); all carry OLM's
//! `olm.owner`, `olm.owner.kind` and `olm.owner.namespace` labels. CSVs are not copied into
//! target namespaces (`olm.copiedFrom`).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject};
use serde_json::{Value, json};

use crate::controller::Context;
use crate::objects;

/// Runs the olm-operator role over every CSV.
pub(crate) async fn reconcile(ctx: &Context<'_>) -> Result<(), kube::Error> {
    for csv in &ctx.snapshot.csvs {
        let old = objects::status(csv);
        let mut status = old.clone();
        let namespace = csv.namespace().unwrap_or_default();
        let name = csv.name_any();
        let replacer = ctx.snapshot.csvs.iter().find(|c| {
            c.namespace().as_deref() == Some(&namespace)
                && c.data["spec"]["replaces"] == name.as_str()
        });
        match old["phase"].as_str().unwrap_or_default() {
            "" => set_phase(
                &mut status,
                "Pending",
                "RequirementsUnknown",
                "requirements not yet checked",
            ),
            "Pending" => pending(ctx, csv, &mut status).await?,
            "InstallReady" => match install(ctx, csv).await {
                Ok(()) => set_phase(
                    &mut status,
                    "Installing",
                    "InstallSucceeded",
                    "waiting for install components to report healthy",
                ),
                Err(error) => set_phase(
                    &mut status,
                    "Failed",
                    "InstallComponentFailed",
                    &format!("install strategy failed: {error}"),
                ),
            },
            "Installing" => match unhealthy(ctx, csv).await? {
                None => set_phase(
                    &mut status,
                    "Succeeded",
                    "InstallSucceeded",
                    "install strategy completed with no errors",
                ),
                Some(waiting) => {
                    let since = old["lastTransitionTime"].as_str().unwrap_or_default();
                    if objects::age(since) >= ctx.settings.install_timeout {
                        set_phase(
                            &mut status,
                            "Failed",
                            "InstallCheckFailed",
                            "install timeout",
                        );
                    } else {
                        status["reason"] = "InstallWaiting".into();
                        status["message"] = format!("installing: {waiting}").into();
                    }
                }
            },
            "Succeeded" => {
                if let Some(replacer) = replacer {
                    let message = format!("being replaced by csv: {}", replacer.name_any());
                    set_phase(&mut status, "Replacing", "BeingReplaced", &message);
                }
            }
            "Replacing" => {
                let done = replacer.is_some_and(|r| objects::status(r)["phase"] == "Succeeded");
                if done {
                    objects::api(ctx.client, &objects::csv(), &namespace)
                        .delete(&name, &DeleteParams::background())
                        .await?;
                    continue;
                }
            }
            _ => continue,
        }
        if objects::differs(&old, &status, &["lastUpdateTime"]) {
            status["lastUpdateTime"] = objects::now().into();
            objects::patch_status(ctx.client, &objects::csv(), csv, &status).await?;
        }
    }
    Ok(())
}

/// Sets the phase, recording the transition in `conditions` (OLM's phase history).
fn set_phase(status: &mut Value, phase: &str, reason: &str, message: &str) {
    let now = objects::now();
    if status["phase"] != phase {
        status["lastTransitionTime"] = now.clone().into();
    }
    status["phase"] = phase.into();
    status["reason"] = reason.into();
    status["message"] = message.into();
    let mut history: Vec<Value> = status["conditions"].as_array().cloned().unwrap_or_default();
    history.push(json!({
        "phase": phase, "reason": reason, "message": message,
        "lastTransitionTime": now, "lastUpdateTime": now,
    }));
    let keep = history.len().saturating_sub(20);
    status["conditions"] = history.split_off(keep).into();
}

/// `Pending`: the OperatorGroup and the CRD requirements.
async fn pending(
    ctx: &Context<'_>,
    csv: &DynamicObject,
    status: &mut Value,
) -> Result<(), kube::Error> {
    let namespace = csv.namespace().unwrap_or_default();
    let groups = ctx
        .snapshot
        .operator_groups
        .iter()
        .filter(|g| g.namespace().as_deref() == Some(&namespace))
        .count();
    if groups == 0 {
        set_phase(
            status,
            "Failed",
            "NoOperatorGroup",
            "csv in namespace with no operatorgroups",
        );
        return Ok(());
    }
    if groups > 1 {
        set_phase(
            status,
            "Failed",
            "TooManyOperatorGroups",
            "csv created in namespace with multiple operatorgroups, can't pick one automatically",
        );
        return Ok(());
    }
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
    let mut requirements = Vec::new();
    let mut missing = Vec::new();
    let spec = &csv.data["spec"]["customresourcedefinitions"];
    for required in ["owned", "required"]
        .iter()
        .flat_map(|k| spec[*k].as_array().cloned().unwrap_or_default())
    {
        let name = required["name"].as_str().unwrap_or_default().to_string();
        let crd = crds.get_opt(&name).await?;
        let established = crd
            .as_ref()
            .and_then(|c| c.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
        let (state, message) = match (&crd, established) {
            (Some(_), true) => (
                "Present",
                "CRD is present and Established condition is true".to_string(),
            ),
            (Some(_), false) => (
                "PresentNotSatisfied",
                "CRD is present but not Established".to_string(),
            ),
            (None, _) => {
                missing.push(name.clone());
                (
                    "NotPresent",
                    format!(
                        "CRD {name} is not present: the bundle does not carry it and it is not installed"
                    ),
                )
            }
        };
        if state != "Present" && !missing.contains(&name) {
            missing.push(name.clone());
        }
        requirements.push(json!({
            "group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition",
            "name": name, "status": state, "message": message,
        }));
    }
    status["requirementStatus"] = requirements.into();
    if !missing.is_empty() {
        let message = format!(
            "one or more requirements couldn't be found: {}",
            missing.join(", ")
        );
        if status["reason"] != "RequirementsNotMet" || status["message"] != message.as_str() {
            set_phase(status, "Pending", "RequirementsNotMet", &message);
        }
        return Ok(());
    }
    if let Some(previous) = csv.data["spec"]["replaces"].as_str() {
        let previous = ctx
            .snapshot
            .csvs
            .iter()
            .find(|c| c.namespace().as_deref() == Some(&namespace) && c.name_any() == previous);
        if let Some(previous) = previous {
            let mut old_status = objects::status(previous);
            if old_status["phase"] == "Succeeded" {
                let message = format!("being replaced by csv: {}", csv.name_any());
                set_phase(&mut old_status, "Replacing", "BeingReplaced", &message);
                old_status["lastUpdateTime"] = objects::now().into();
                objects::patch_status(ctx.client, &objects::csv(), previous, &old_status).await?;
            }
        }
    }
    set_phase(
        status,
        "InstallReady",
        "AllRequirementsMet",
        "all requirements found, attempting install",
    );
    Ok(())
}

/// OLM's ownership labels.
fn owner_labels(csv: &DynamicObject) -> Value {
    json!({
        "olm.owner": csv.name_any(),
        "olm.owner.kind": "ClusterServiceVersion",
        "olm.owner.namespace": csv.namespace().unwrap_or_default(),
        "olm.managed": "true",
    })
}

/// The target namespaces of the namespace's OperatorGroup, as OLM's annotation writes them.
fn targets(ctx: &Context<'_>, namespace: &str) -> (String, String) {
    ctx.snapshot
        .operator_groups
        .iter()
        .find(|g| g.namespace().as_deref() == Some(namespace))
        .map(|g| {
            let value = serde_json::to_value(&g.data).unwrap_or_default();
            (
                g.name_any(),
                crate::catalogs::target_namespaces(&value).join(","),
            )
        })
        .unwrap_or_default()
}

/// `InstallReady`: creates what `spec.install.spec` describes.
async fn install(ctx: &Context<'_>, csv: &DynamicObject) -> Result<(), kube::Error> {
    let namespace = csv.namespace().unwrap_or_default();
    let name = csv.name_any();
    let strategy = &csv.data["spec"]["install"]["spec"];
    let owner = objects::owner_reference(csv, &objects::csv());
    let labels = owner_labels(csv);
    let namespaced_meta = |object_name: &str| json!({"name": object_name, "labels": labels, "ownerReferences": [owner]});
    let mut accounts: Vec<String> = Vec::new();
    for key in ["permissions", "clusterPermissions"] {
        for permission in strategy[key].as_array().into_iter().flatten() {
            if let Some(sa) = permission["serviceAccountName"].as_str() {
                accounts.push(sa.to_string());
            }
        }
    }
    for deployment in strategy["deployments"].as_array().into_iter().flatten() {
        if let Some(sa) = deployment["spec"]["template"]["spec"]["serviceAccountName"].as_str() {
            accounts.push(sa.to_string());
        }
    }
    accounts.sort();
    accounts.dedup();
    for sa in &accounts {
        let manifest =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": namespaced_meta(sa)});
        objects::apply(ctx.client, &manifest, &namespace).await?;
    }
    for (index, permission) in strategy["permissions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = format!("{name}-{index}");
        let sa = permission["serviceAccountName"]
            .as_str()
            .unwrap_or_default();
        objects::apply(
            ctx.client,
            &json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": namespaced_meta(&role), "rules": permission["rules"],
            }),
            &namespace,
        )
        .await?;
        objects::apply(
            ctx.client,
            &json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": namespaced_meta(&role),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
            }),
            &namespace,
        )
        .await?;
    }
    for (index, permission) in strategy["clusterPermissions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        // Cluster-scoped objects cannot be owned by a namespaced CSV: labels only, as OLM.
        let role = format!("{name}-{namespace}-{index}");
        let sa = permission["serviceAccountName"]
            .as_str()
            .unwrap_or_default();
        let metadata = json!({"name": role, "labels": labels});
        objects::apply(
            ctx.client,
            &json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": metadata, "rules": permission["rules"],
            }),
            &namespace,
        )
        .await?;
        objects::apply(ctx.client, &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": metadata,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
        }), &namespace).await?;
    }
    let (group, target) = targets(ctx, &namespace);
    for deployment in strategy["deployments"].as_array().into_iter().flatten() {
        let deployment_name = deployment["name"].as_str().unwrap_or_default();
        let mut metadata = namespaced_meta(deployment_name);
        if let Some(extra) = deployment["label"].as_object() {
            for (key, value) in extra {
                metadata["labels"][key] = value.clone();
            }
        }
        let mut spec = deployment["spec"].clone();
        let annotations = &mut spec["template"]["metadata"]["annotations"];
        annotations["olm.operatorGroup"] = group.clone().into();
        annotations["olm.operatorNamespace"] = namespace.clone().into();
        annotations["olm.targetNamespaces"] = target.clone().into();
        objects::apply(
            ctx.client,
            &json!({
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec,
            }),
            &namespace,
        )
        .await?;
    }
    Ok(())
}

/// `None` when every Deployment of the CSV is available and rolled out; else what is waited for.
async fn unhealthy(ctx: &Context<'_>, csv: &DynamicObject) -> Result<Option<String>, kube::Error> {
    let namespace = csv.namespace().unwrap_or_default();
    let api: Api<Deployment> = Api::namespaced(ctx.client.clone(), &namespace);
    for deployment in csv.data["spec"]["install"]["spec"]["deployments"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = deployment["name"].as_str().unwrap_or_default();
        let Some(current) = api.get_opt(name).await? else {
            return Ok(Some(format!("deployment {name} not found")));
        };
        let wanted = current.spec.replicas.unwrap_or(1);
        let status = current.status.clone().unwrap_or_default();
        let rolled = status.observed_generation.unwrap_or(0)
            >= current.metadata.generation.unwrap_or(0)
            && status.updated_replicas.unwrap_or(0) >= wanted
            && status.available_replicas.unwrap_or(0) >= wanted
            && status.replicas.unwrap_or(0) <= wanted;
        if !rolled {
            return Ok(Some(format!(
                "waiting for deployment {name} to become ready: {} of {wanted} updated replicas are available",
                status.available_replicas.unwrap_or(0)
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_keep_a_history_and_transition_times() {
        let mut status = json!({});
        set_phase(
            &mut status,
            "Pending",
            "RequirementsUnknown",
            "requirements not yet checked",
        );
        let first = status["lastTransitionTime"].clone();
        set_phase(&mut status, "Pending", "RequirementsNotMet", "missing");
        assert_eq!(status["lastTransitionTime"], first);
        assert_eq!(status["conditions"].as_array().map(Vec::len), Some(2));
        for _ in 0..30 {
            set_phase(&mut status, "Installing", "InstallSucceeded", "waiting");
        }
        assert_eq!(status["conditions"].as_array().map(Vec::len), Some(20));
    }
}
