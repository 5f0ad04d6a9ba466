//! The admission plugins that read other objects of the namespace, in kube-apiserver's order:
//! `LimitRanger` and `DefaultStorageClass` (mutating, before the kind's own defaulting and
//! validation), then `LimitRanger`'s checks and `ResourceQuota` (validating). The quota
//! controller's part is here too: each quota's `status.used` is recomputed from the stored
//! objects after every write that changes what the namespace uses.
//!
//! Quota admission is serialised per server: a write that a quota limits holds the quota lock
//! from the check until `status.used` is written, so concurrent creates in one namespace can
//! never together exceed a quota.

use mni_formats::quantity::Quantity;
use serde_json::{Value, json};
use tokio::sync::MutexGuard;

use super::State;
use crate::error::{ApiError, ApiResult};
use crate::limits;
use crate::object::{self, meta_str};
use crate::quota::{self, ResourceList};
use crate::registry::ResourceInfo;
use crate::serviceaccount;

/// The store prefix of a namespace's ResourceQuotas.
fn quotas_prefix(ns: &str) -> String {
    format!("/registry/core/resourcequotas/{ns}/")
}

fn is_core(info: &ResourceInfo, plural: &str) -> bool {
    info.group.is_empty() && info.plural == plural
}

/// `<resource> "<name>" is forbidden: <why>`, as `admission.NewForbidden` words it.
fn forbidden(info: &ResourceInfo, obj: &Value, why: &str) -> ApiError {
    let gr = info.group_resource();
    let name = object::name(obj);
    let mut e = ApiError::forbidden(format!("{gr} \"{name}\" is forbidden: {why}"));
    let mut details = json!({"name": name, "kind": info.plural});
    if !info.group.is_empty() {
        details["group"] = json!(info.group);
    }
    e.details = Some(details);
    e
}

/// The quota lock, held from a quota check until the quotas' usage is written.
pub(crate) struct QuotaGuard<'a> {
    _lock: MutexGuard<'a, ()>,
    namespace: String,
}

impl State {
    /// Every stored object under `prefix`, parsed.
    fn stored_objects(&self, prefix: &str) -> ApiResult<Vec<Value>> {
        self.list_stored(prefix)?
            .items
            .iter()
            .map(object::from_stored)
            .collect()
    }

    /// The mutating plugins, on create: LimitRanger's default requests and limits for pods,
    /// then ServiceAccount's (its account and token volume; a named account that does not
    /// exist is refused), DefaultStorageClass for claims that name no class.
    pub(super) fn admit_namespace_defaults(
        &self,
        info: &ResourceInfo,
        ns: &str,
        obj: &mut Value,
    ) -> ApiResult<()> {
        if is_core(info, "pods") {
            let ranges = self.stored_objects(&format!("/registry/core/limitranges/{ns}/"))?;
            limits::default_pod(obj, &ranges);
            let account = serviceaccount::default_name(obj);
            let stored = self
                .stored(&format!("/registry/core/serviceaccounts/{ns}/{account}"))
                .map(|kv| object::from_stored(&kv))
                .transpose()?;
            if stored.is_none() && account != serviceaccount::DEFAULT {
                return Err(forbidden(
                    info,
                    obj,
                    &format!(
                        "error looking up service account {ns}/{account}: serviceaccount \"{account}\" not found"
                    ),
                ));
            }
            serviceaccount::mount_token(obj, stored.as_ref());
        } else if is_core(info, "persistentvolumeclaims")
            && obj
                .pointer("/spec/storageClassName")
                .is_none_or(Value::is_null)
            && let Some(class) = self.default_storage_class()?
            && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
        {
            spec.insert("storageClassName".into(), Value::String(class));
        }
        Ok(())
    }

    /// The default StorageClass: the newest of those annotated default, as upstream picks.
    fn default_storage_class(&self) -> ApiResult<Option<String>> {
        let classes = self.stored_objects("/registry/storage.k8s.io/storageclasses/")?;
        Ok(classes
            .iter()
            .filter(|c| {
                c.pointer("/metadata/annotations/storageclass.kubernetes.io~1is-default-class")
                    .and_then(Value::as_str)
                    == Some("true")
            })
            .max_by(|a, b| {
                meta_str(a, "creationTimestamp")
                    .cmp(&meta_str(b, "creationTimestamp"))
                    .then_with(|| object::name(b).cmp(object::name(a)))
            })
            .map(|c| object::name(c).to_string()))
    }

    /// LimitRanger's checks: a new pod, and a claim created or resized.
    pub(super) fn validate_limits(
        &self,
        info: &ResourceInfo,
        ns: &str,
        obj: &Value,
        create: bool,
    ) -> ApiResult<()> {
        let pods = is_core(info, "pods") && create;
        let claims = is_core(info, "persistentvolumeclaims");
        if !pods && !claims {
            return Ok(());
        }
        let ranges = self.stored_objects(&format!("/registry/core/limitranges/{ns}/"))?;
        if ranges.is_empty() {
            return Ok(());
        }
        let errors = if pods {
            limits::validate_pod(obj, &ranges)
        } else {
            limits::validate_claim(obj, &ranges)
        };
        if errors.is_empty() {
            Ok(())
        } else {
            Err(forbidden(info, obj, &limits::aggregate(&errors)))
        }
    }

    /// ResourceQuota admission: refuses a write that would take any quota of the namespace
    /// over its `hard` limits. When a quota limits the write, returns the held quota lock;
    /// pass it to [`sync_quotas`](Self::sync_quotas) once the write is stored.
    pub(super) async fn admit_quota(
        &self,
        info: &ResourceInfo,
        ns: &str,
        obj: &Value,
        old: Option<&Value>,
    ) -> ApiResult<Option<QuotaGuard<'_>>> {
        if self.list_stored(&quotas_prefix(ns))?.items.is_empty() {
            return Ok(None);
        }
        let new_usage = quota::usage(&info.group, &info.plural, obj);
        let old_usage = old
            .map(|o| quota::usage(&info.group, &info.plural, o))
            .unwrap_or_default();
        let delta = quota::delta(&new_usage, &old_usage);
        let lock = self.quota_lock.lock().await;
        let quotas = self.stored_objects(&quotas_prefix(ns))?;
        let mut limited = false;
        for q in &quotas {
            let hard = quota::resource_list(q.pointer("/spec/hard"));
            if !hard
                .keys()
                .any(|k| quota::may_count(&info.group, &info.plural, k))
                || !quota::matches_scopes(q, &info.plural, obj)
            {
                continue;
            }
            limited = true;
            let used = self.quota_usage(ns, q, &hard)?;
            let new_pod = (old.is_none() && is_core(info, "pods")).then_some(obj);
            quota::check(object::name(q), &hard, &used, &delta, new_pod)
                .map_err(|why| forbidden(info, obj, &why))?;
        }
        Ok(limited.then(|| QuotaGuard {
            _lock: lock,
            namespace: ns.to_string(),
        }))
    }

    /// What the namespace's objects use now, of the resources one quota limits.
    fn quota_usage(&self, ns: &str, q: &Value, hard: &ResourceList) -> ApiResult<ResourceList> {
        let mut used: ResourceList = hard.keys().map(|k| (k.clone(), Quantity::ZERO)).collect();
        // Only the kinds that can count towards this quota are read.
        let infos: Vec<_> = {
            let registry = self.registry();
            let mut seen = std::collections::BTreeSet::new();
            registry
                .all()
                .filter(|i| {
                    i.namespaced
                        && hard
                            .keys()
                            .any(|k| quota::may_count(&i.group, &i.plural, k))
                        && seen.insert(i.storage_prefix.clone())
                })
                .cloned()
                .collect()
        };
        for info in infos {
            for obj in self.stored_objects(&info.collection_prefix(Some(ns)))? {
                if !quota::matches_scopes(q, &info.plural, &obj) {
                    continue;
                }
                for (k, v) in quota::usage(&info.group, &info.plural, &obj) {
                    if let Some(slot) = used.get_mut(&k) {
                        *slot += v;
                    }
                }
            }
        }
        Ok(used)
    }

    /// The quota controller's part: recomputes `status.hard` and `status.used` of every quota
    /// in the namespace and writes those that changed. `guard` is the lock from
    /// [`admit_quota`](Self::admit_quota); without one (after deletes and quota changes) the
    /// lock is taken here.
    pub(super) async fn sync_quotas(&self, ns: &str, guard: Option<QuotaGuard<'_>>) {
        let guard = match guard {
            Some(g) => g,
            None => {
                if self
                    .list_stored(&quotas_prefix(ns))
                    .is_ok_and(|l| l.items.is_empty())
                {
                    return;
                }
                QuotaGuard {
                    _lock: self.quota_lock.lock().await,
                    namespace: ns.to_string(),
                }
            }
        };
        if let Err(e) = self.write_quota_status(&guard.namespace).await {
            tracing::warn!(namespace = ns, error = %e.message, "quota status not updated");
        }
    }

    async fn write_quota_status(&self, ns: &str) -> ApiResult<()> {
        for _attempt in 0..5 {
            let listed = self.list_stored(&quotas_prefix(ns))?;
            let mut conflict = false;
            for kv in listed.items {
                let mut q = object::from_stored(&kv)?;
                let hard = quota::resource_list(q.pointer("/spec/hard"));
                let used = self.quota_usage(ns, &q, &hard)?;
                let status = json!({"hard": quota::to_json(&hard), "used": quota::to_json(&used)});
                if q.get("status") == Some(&status) {
                    continue;
                }
                q["status"] = status;
                match self
                    .store
                    .update(&kv.key, object::to_stored(&mut q)?, Some(kv.mod_revision))
                    .await
                {
                    Ok(_) => {}
                    Err(mni_store::Error::Conflict { .. } | mni_store::Error::NotFound { .. }) => {
                        conflict = true;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if !conflict {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Whether a write of `info` in a namespace can change a quota's usage: it is a quota,
    /// or the namespace has one.
    pub(super) fn affects_quotas(&self, info: &ResourceInfo, ns: &str) -> bool {
        is_core(info, "resourcequotas")
            || self
                .list_stored(&quotas_prefix(ns))
                .is_ok_and(|l| !l.items.is_empty())
    }
}
