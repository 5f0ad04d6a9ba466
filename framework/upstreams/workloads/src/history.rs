//! Revision history for StatefulSets and DaemonSets, as kube-controller-manager keeps it:
//! one `apps/v1` ControllerRevision per pod template, named `<owner>-<hash>`, controlled by
//! its owner, labelled with the template's labels and `controller.kubernetes.io/hash`, whose
//! `data` is the strategic merge patch that puts the template back
//! (`{"spec": {"template": {…, "$patch": "replace"}}}`) and whose `revision` grows with each
//! change. Returning to an older template (`kubectl rollout undo`) renumbers its revision as
//! the newest; revisions beyond `revisionHistoryLimit` that no pod runs are deleted, oldest
//! first.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kube::Api;
use kube::api::ListParams;
use serde_json::json;

use crate::ops::{self, Outcome};
use crate::util;

/// The label with a revision's hash.
const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// The owner whose history is kept.
pub(crate) struct Owner<'a> {
    /// `StatefulSet` or `DaemonSet`.
    pub(crate) kind: &'a str,
    /// The owner's metadata (name, namespace, uid).
    pub(crate) meta: &'a ObjectMeta,
    /// The pod template of this revision.
    pub(crate) template: &'a PodTemplateSpec,
    /// `spec.revisionHistoryLimit` (10 when unset).
    pub(crate) history_limit: Option<i32>,
}

/// The patch a revision stores: the template, replacing whatever is there.
fn patch_of(template: &PodTemplateSpec) -> Result<serde_json::Value, ops::Error> {
    let mut t = serde_json::to_value(template)?;
    if let Some(o) = t.as_object_mut() {
        o.insert("$patch".into(), json!("replace"));
    }
    Ok(json!({"spec": {"template": t}}))
}

/// Makes sure the revision `name` (hash `hash`) exists and is the newest, and trims the
/// history. `in_use` are the revision names (or hashes) pods and the status still refer to.
pub(crate) async fn record(
    client: &kube::Client,
    owner: &Owner<'_>,
    name: &str,
    hash: &str,
    in_use: &BTreeSet<String>,
    out: &mut Outcome,
) -> Result<(), ops::Error> {
    let (Some(ns), Some(uid)) = (owner.meta.namespace.as_deref(), owner.meta.uid.as_deref()) else {
        return Ok(());
    };
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), ns);
    let listed = match api.list(&ListParams::default()).await {
        Ok(l) => l.items,
        Err(e) => {
            out.failed("controllerrevisions", &e);
            return Ok(());
        }
    };
    let mut mine: Vec<ControllerRevision> = listed
        .into_iter()
        .filter(|r| util::controlled_by(&r.metadata, uid))
        .collect();
    mine.sort_by_key(|r| r.revision.unwrap_or(0));
    let newest = mine.last().and_then(|r| r.revision).unwrap_or(0);
    match mine
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(name))
    {
        Some(existing) if existing.revision.unwrap_or(0) != newest => {
            // Back to an older template: it becomes the newest revision again.
            let body = json!({"revision": newest + 1});
            ops::patch(&api, name, &body, false, out).await?;
        }
        Some(_) => {}
        None => {
            let mut labels = owner
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.clone())
                .unwrap_or_default();
            labels.insert(HASH_LABEL.into(), hash.into());
            let revision = ControllerRevision {
                metadata: ObjectMeta {
                    name: Some(name.to_string()),
                    namespace: Some(ns.to_string()),
                    labels: Some(labels),
                    owner_references: Some(vec![util::owner_ref(
                        "apps/v1", owner.kind, owner.meta,
                    )]),
                    ..Default::default()
                },
                data: RawExtension(patch_of(owner.template)?),
                revision: Some(newest + 1),
            };
            ops::create(&api, &revision, out).await?;
        }
    }
    // Trim: the oldest revisions no one uses, beyond the limit.
    let limit = usize::try_from(owner.history_limit.unwrap_or(10).max(0)).unwrap_or(0);
    let unused: Vec<&ControllerRevision> = mine
        .iter()
        .filter(|r| {
            let rname = r.metadata.name.as_deref().unwrap_or_default();
            let rhash = r
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(HASH_LABEL))
                .map(String::as_str)
                .unwrap_or_default();
            rname != name && !in_use.contains(rname) && !in_use.contains(rhash)
        })
        .collect();
    let surplus = unused.len().saturating_sub(limit);
    for r in unused.into_iter().take(surplus) {
        let rname = r.metadata.name.as_deref().unwrap_or_default();
        ops::delete(&api, rname, r.metadata.uid.as_deref(), out).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_replaces_the_whole_template() {
        let t: PodTemplateSpec = serde_json::from_value(json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        }))
        .expect("template");
        let p = patch_of(&t).expect("patch");
        assert_eq!(p["spec"]["template"]["$patch"], "replace");
        assert_eq!(
            p["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1.27"
        );
    }
}
