//! Deleting one object: DeleteOptions preconditions, the propagation policy and its
//! finalizers, and objects with finalizers that only get their `deletionTimestamp`.

use serde_json::{Value, json};

use super::effects::is_service;
use super::{State, Written};
use crate::error::{ApiError, ApiResult};
use crate::object::{self, meta_mut, meta_str};
use crate::registry::ResourceInfo;
use crate::request::Target;
use crate::webhooks::Operation;

impl State {
    /// Deletes one object, honouring DeleteOptions (`preconditions`, `propagationPolicy`) and
    /// finalizers: an object with finalizers only gets its `deletionTimestamp`.
    pub(crate) async fn delete(
        &self,
        target: &Target,
        options: &Value,
        dry_run: bool,
        user: Option<&mni_rbac::UserInfo>,
    ) -> ApiResult<Written> {
        let info = &target.info;
        let ns = target.namespace.as_deref();
        let name = target.name.as_deref().unwrap_or_default();
        let key = info.key(ns, name);
        let policy = propagation_policy(options)?;
        loop {
            let (current, revision) = self.read(info, ns, name)?;
            check_preconditions(info, &current, options)?;
            let mut warnings = Vec::new();
            if let Some(user) = user
                && let Some(hooks) = self.webhooks_for(info, true)?
            {
                let a = super::objects::attributes(target, Operation::Delete, name, user, dry_run);
                let (w, _) = self
                    .mutate(hooks.as_ref(), &a, &mut Value::Null, Some(&current))
                    .await?;
                warnings.extend(w);
                warnings.extend(
                    self.validate_with_webhooks(&hooks, &a, None, Some(&current))
                        .await?,
                );
            }
            let mut finalizers = object::finalizers(&current);
            let deleting = meta_str(&current, "deletionTimestamp").is_some();
            let policy_finalizer = match policy {
                Propagation::Orphan => Some(ORPHAN_FINALIZER),
                Propagation::Foreground => Some(FOREGROUND_FINALIZER),
                Propagation::Background => None,
            };
            // Deleting with Orphan/Foreground adds its finalizer (also to an object already
            // being deleted, as kube-apiserver lets a later request change the policy).
            let mut changed = false;
            if let Some(f) = policy_finalizer
                && !finalizers.iter().any(|x| x == f)
            {
                finalizers.retain(|x| x != ORPHAN_FINALIZER && x != FOREGROUND_FINALIZER);
                finalizers.push(f.to_string());
                changed = true;
            }
            let is_namespace = info.group.is_empty() && info.plural == "namespaces";
            if !finalizers.is_empty() || is_namespace {
                if (deleting && !changed) || dry_run {
                    return Ok(Written {
                        object: current,
                        warnings,
                    });
                }
                let mut next = current.clone();
                let meta = meta_mut(&mut next);
                if !deleting {
                    meta.insert("deletionTimestamp".into(), Value::String(object::now()));
                    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
                    if info.generation {
                        let g = meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
                        meta.insert("generation".into(), json!(g + 1));
                    }
                }
                if finalizers.is_empty() {
                    meta.remove("finalizers");
                } else {
                    meta.insert("finalizers".into(), json!(finalizers));
                }
                if is_namespace {
                    next["status"]["phase"] = json!("Terminating");
                }
                let mut stored = object::to_storage(info, next);
                match self
                    .store
                    .update(&key, object::to_stored(&mut stored)?, Some(revision))
                    .await
                {
                    Ok(kv) => {
                        self.kick_controllers();
                        return Ok(Written {
                            object: object::to_served(
                                info,
                                object::with_revision(stored, kv.mod_revision),
                            ),
                            warnings,
                        });
                    }
                    Err(mni_store::Error::Conflict { .. }) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            if dry_run {
                return Ok(Written {
                    object: current,
                    warnings,
                });
            }
            self.before_remove(info, &current).await?;
            match self.store.delete(&key, Some(revision)).await {
                Ok(_) => {
                    if is_service(info) {
                        self.cluster_ips.removed(&key, &current);
                    }
                    self.after_delete(info);
                    if let Some(ns) = ns.filter(|_| info.namespaced) {
                        self.sync_quotas(ns, None).await;
                    }
                    return Ok(Written {
                        object: current,
                        warnings,
                    });
                }
                Err(mni_store::Error::Conflict { .. }) => {
                    self.remove_failed(info, &key)?;
                    continue;
                }
                Err(mni_store::Error::NotFound { .. }) => {
                    return Err(ApiError::not_found(info.group_resource(), name));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The finalizer that makes the garbage collector orphan an object's dependents.
pub(crate) const ORPHAN_FINALIZER: &str = "orphan";
/// The finalizer that makes the garbage collector delete dependents before their owner.
pub(crate) const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// How deleting an object treats its dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Propagation {
    Orphan,
    Foreground,
    Background,
}

/// `propagationPolicy` (or the deprecated `orphanDependents`) of DeleteOptions.
fn propagation_policy(options: &Value) -> ApiResult<Propagation> {
    match options.get("propagationPolicy").and_then(Value::as_str) {
        Some("Orphan") => Ok(Propagation::Orphan),
        Some("Foreground") => Ok(Propagation::Foreground),
        Some("Background") => Ok(Propagation::Background),
        Some(other) => Err(ApiError::invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            &[mni_apimachinery::FieldError::not_supported(
                "propagationPolicy",
                json!(other),
                &["Foreground", "Background", "Orphan"],
            )],
        )),
        None if options.get("orphanDependents") == Some(&json!(true)) => Ok(Propagation::Orphan),
        None => Ok(Propagation::Background),
    }
}

/// DeleteOptions preconditions (uid, resourceVersion).
fn check_preconditions(info: &ResourceInfo, current: &Value, options: &Value) -> ApiResult<()> {
    let Some(pre) = options.get("preconditions") else {
        return Ok(());
    };
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        if let Some(want) = pre.get(field).and_then(Value::as_str) {
            let have = meta_str(current, field).unwrap_or_default();
            if want != have {
                return Err(ApiError::conflict(
                    info.group_resource(),
                    object::name(current),
                    &format!(
                        "Precondition failed: {label} in precondition: {want}, {label} in object meta: {have}"
                    ),
                ));
            }
        }
    }
    Ok(())
}
