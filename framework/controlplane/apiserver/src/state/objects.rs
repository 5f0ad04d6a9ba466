//! Objects one at a time: read, create and read-modify-write (deletion is in `deletion`), for
//! objects and their `status` and `scale` subresources.
//!
//! Every write is a read-modify-write against one store key, guarded by the revision read
//! (optimistic concurrency): a caller-supplied stale resourceVersion is a 409, an unconditional
//! write that loses a race is retried. A write that changes nothing is not written, so it does
//! not bump resourceVersion or wake watchers, as in kube-apiserver.
//!
//! Admission runs in upstream's order: decoding and defaulting, the mutating webhooks (and
//! decoding and defaulting again if they changed the object), validation, then the validating
//! webhooks (see `hooks`).

use serde_json::{Value, json};

use super::effects::is_service;
use super::{State, WriteOptions, Written};
use crate::admission;
use crate::crd;
use crate::error::{ApiError, ApiResult};
use crate::object::{self, meta_mut, meta_str};
use crate::patch::Patch;
use crate::registry::ResourceInfo;
use crate::request::Target;
use crate::webhooks::{Attributes, Operation};

/// What is written names the kind it is written as. Handlers have already defaulted and
/// checked request bodies (see `typemeta`); this guards the objects patches produce.
fn check_type(info: &ResourceInfo, obj: &Value) -> ApiResult<()> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    let want = info.api_version();
    match obj.get("apiVersion").and_then(Value::as_str) {
        Some(v) if v == want => {}
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({want})"
            )));
        }
        None => {
            return Err(ApiError::bad_request(format!(
                "Object 'apiVersion' is missing in '{}'",
                truncate(obj)
            )));
        }
    }
    match obj.get("kind").and_then(Value::as_str) {
        Some(k) if k == info.kind => Ok(()),
        Some(k) => Err(ApiError::bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            info.kind
        ))),
        None => Err(ApiError::bad_request(format!(
            "Object 'Kind' is missing in '{}'",
            truncate(obj)
        ))),
    }
}

/// What admission webhooks are told about a write to `target`.
pub(super) fn attributes<'a>(
    target: &'a Target,
    operation: Operation,
    name: &'a str,
    user: &'a mni_rbac::UserInfo,
    dry_run: bool,
) -> Attributes<'a> {
    Attributes {
        operation,
        info: &target.info,
        subresource: target.subresource.as_deref(),
        namespace: target
            .namespace
            .as_deref()
            .filter(|_| target.info.namespaced),
        name,
        user,
        dry_run,
    }
}

fn truncate(obj: &Value) -> String {
    let s = obj.to_string();
    s.chars().take(200).collect()
}

/// Whether a status write can change what a quota counts: a pod's phase (finished pods stop
/// counting) and a claim's allocated size.
fn is_status_of_counted(info: &ResourceInfo) -> bool {
    info.group.is_empty() && matches!(info.plural.as_str(), "pods" | "persistentvolumeclaims")
}

/// Sets the namespace from the path, rejecting a mismatch.
pub(crate) fn bind_namespace(target: &Target, obj: &mut Value) -> ApiResult<()> {
    let info = &target.info;
    let meta = meta_mut(obj);
    if !info.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    let Some(ns) = target.namespace.as_deref() else {
        return Err(ApiError::method_not_allowed(
            "POST",
            &format!("{} across all namespaces", info.plural),
        ));
    };
    match meta.get("namespace").and_then(Value::as_str) {
        None | Some("") => {
            meta.insert("namespace".into(), Value::String(ns.into()));
            Ok(())
        }
        Some(given) if given == ns => Ok(()),
        Some(_) => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
    }
}

impl State {
    /// Checks a namespace exists and is not terminating, before creating in it.
    async fn check_namespace(&self, ns: &str) -> ApiResult<()> {
        let Some(kv) = self.store.get(&format!("/registry/core/namespaces/{ns}")) else {
            return Err(ApiError::not_found(
                crate::error::GroupResource {
                    group: "",
                    resource: "namespaces",
                },
                ns,
            ));
        };
        let obj = object::from_stored(&kv)?;
        if meta_str(&obj, "deletionTimestamp").is_some() {
            return Err(ApiError::forbidden(format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            )));
        }
        Ok(())
    }

    /// Reads one object in the served version of `info`.
    pub(crate) fn read(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
    ) -> ApiResult<(Value, i64)> {
        let kv = self
            .store
            .get(&info.key(ns, name))
            .ok_or_else(|| ApiError::not_found(info.group_resource(), name))?;
        Ok((
            object::to_served(info, object::from_stored(&kv)?),
            kv.mod_revision,
        ))
    }

    /// Creates an object in a collection (`applied`: it is the create half of a server-side
    /// apply, whose managedFields are already set).
    pub(crate) async fn create(
        &self,
        target: &Target,
        mut obj: Value,
        opts: &WriteOptions,
        applied: bool,
    ) -> ApiResult<Written> {
        let info = &target.info;
        if target.name.is_some() {
            return Err(ApiError::method_not_allowed("POST", &info.plural));
        }
        check_type(info, &obj)?;
        bind_namespace(target, &mut obj)?;
        let meta = meta_mut(&mut obj);
        let has_name = meta
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if !has_name
            && let Some(prefix) = meta.get("generateName").and_then(Value::as_str)
            && !prefix.is_empty()
        {
            let generated = format!("{prefix}{}", object::name_suffix());
            meta.insert("name".into(), Value::String(generated));
        }
        for k in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta.remove(k);
        }
        meta.insert("uid".into(), Value::String(object::uid()));
        meta.insert("creationTimestamp".into(), Value::String(object::now()));
        if info.generation {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.remove("generation");
        }
        if info.status
            && let Some(o) = obj.as_object_mut()
        {
            o.remove("status");
        }
        let ns = target.namespace.as_deref().filter(|_| info.namespaced);
        if let Some(ns) = ns {
            self.check_namespace(ns).await?;
            self.admit_namespace_defaults(info, ns, &mut obj)?;
        }
        let hooks = self.webhooks_for(info, opts.user.is_some())?;
        let mut warnings = admission::decode(info, &mut obj, opts.validation)?;
        if let (Some(hooks), Some(user)) = (&hooks, &opts.user) {
            let name = object::name(&obj).to_string();
            let a = attributes(target, Operation::Create, &name, user, opts.dry_run);
            let (w, changed) = self.mutate(hooks, &a, &mut obj, None).await?;
            warnings.extend(w);
            if changed {
                check_type(info, &obj)?;
                bind_namespace(target, &mut obj)?;
                warnings.extend(admission::decode(info, &mut obj, opts.validation)?);
            }
        }
        warnings.extend(admission::check(info, &obj, None)?);
        self.type_check_policy(info, None, &mut obj);
        if crd::is_crd(info) {
            crd::prepare(&self.registry(), &mut obj, None)?;
        }
        if let Some(ns) = ns {
            self.validate_limits(info, ns, &obj, true)?;
        }
        if let (Some(hooks), Some(user)) = (&hooks, &opts.user) {
            let name = object::name(&obj).to_string();
            let a = attributes(target, Operation::Create, &name, user, opts.dry_run);
            warnings.extend(
                self.validate_with_webhooks(hooks, &a, Some(&obj), None)
                    .await?,
            );
        }
        let key = info.key(target.namespace.as_deref(), object::name(&obj));
        // Held until the Service is stored; given back if it is not.
        let reserved = if is_service(info) {
            self.allocate_cluster_ip(&key, &mut obj)?
        } else {
            None
        };
        if !applied {
            crate::fields::track_update(info, None, &mut obj, &opts.manager, None);
        }
        let name = object::name(&obj).to_string();
        // Checked on dry runs too; only a real write is charged (the lock is dropped unused).
        let quota = match ns {
            Some(ns) => self.admit_quota(info, ns, &obj, None).await?,
            None => None,
        };
        if opts.dry_run {
            if self
                .store
                .get(&info.key(target.namespace.as_deref(), &name))
                .is_some()
            {
                return Err(ApiError::already_exists(info.group_resource(), &name));
            }
            return Ok(Written {
                object: obj,
                warnings,
            });
        }
        let mut stored = object::to_storage(info, obj);
        let kv = self
            .store
            .create(&key, object::to_stored(&mut stored)?)
            .await
            .map_err(|e| match e {
                mni_store::Error::AlreadyExists { .. } => {
                    ApiError::already_exists(info.group_resource(), &name)
                }
                other => other.into(),
            })?;
        self.after_write(info);
        if let Some(r) = reserved {
            r.commit();
        }
        if let Some(ns) = ns
            && (quota.is_some() || self.affects_quotas(info, ns))
        {
            self.sync_quotas(ns, quota).await;
        }
        if stored.pointer("/metadata/ownerReferences").is_some()
            && self.has_absent_owner(info, &stored)
        {
            // The owner is already gone: let the garbage collector look now rather than at
            // its next sweep. (Kicking on every owned create made it sweep — read every
            // stored object — back to back while a controller created children.)
            self.kick_controllers();
        }
        let created = object::to_served(info, object::with_revision(stored, kv.mod_revision));
        if crd::is_crd(info) {
            crd::register(&mut self.registry_mut(), &created)?;
        }
        Ok(Written {
            object: created,
            warnings,
        })
    }

    /// Gives a Service a ClusterIP from 10.96.0.0/12 unless it is headless, an ExternalName, or
    /// asked for a specific address (which must be free).
    fn allocate_cluster_ip(
        &self,
        key: &str,
        svc: &mut Value,
    ) -> ApiResult<Option<crate::ipalloc::Reservation<'_>>> {
        let spec = &svc["spec"];
        if spec["type"] == "ExternalName" || spec["clusterIP"] == "None" {
            return Ok(None);
        }
        let wanted = spec["clusterIP"].as_str().filter(|s| !s.is_empty());
        let Some(reserved) = self.cluster_ips.reserve(&self.store, key, wanted)? else {
            return Err(ApiError::invalid(
                "Service",
                "",
                object::name(svc),
                &[mni_apimachinery::FieldError::invalid(
                    "spec.clusterIPs",
                    json!([wanted]),
                    "failed to allocate IP: provided IP is already allocated",
                )],
            ));
        };
        let ip = reserved.ip().to_string();
        svc["spec"]["clusterIP"] = json!(ip);
        svc["spec"]["clusterIPs"] = json!([ip]);
        if svc["spec"].get("ipFamilies").is_none() {
            svc["spec"]["ipFamilies"] = json!(["IPv4"]);
        }
        if svc["spec"].get("ipFamilyPolicy").is_none() {
            svc["spec"]["ipFamilyPolicy"] = json!("SingleStack");
        }
        Ok(Some(reserved))
    }

    /// PATCH of an object with a parsed (non-apply) patch: a resourceVersion in the patched
    /// object must be the current one.
    pub(crate) async fn patch(
        &self,
        target: &Target,
        doc: &Patch,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let info = target.info.clone();
        self.update(target, opts, false, |current| {
            let patched = doc.apply(current)?;
            if let Some(rv) = meta_str(&patched, "resourceVersion")
                && meta_str(current, "resourceVersion") != Some(rv)
            {
                return Err(ApiError::stale(
                    info.group_resource(),
                    object::name(current),
                ));
            }
            Ok(patched)
        })
        .await
    }

    /// The read-modify-write loop behind PUT and PATCH: `change` makes the new object from the
    /// current one, and is called again when another write wins the race. `applied`: the
    /// change is a server-side apply, which sets managedFields itself.
    pub(crate) async fn update(
        &self,
        target: &Target,
        opts: &WriteOptions,
        applied: bool,
        change: impl Fn(&Value) -> ApiResult<Value>,
    ) -> ApiResult<Written> {
        let info = &target.info;
        let ns = target.namespace.as_deref();
        let name = target.name.as_deref().unwrap_or_default();
        let key = info.key(ns, name);
        loop {
            let (current, revision) = self.read(info, ns, name)?;
            let candidate = change(&current)?;
            check_type(info, &candidate)?;
            let sub = target.subresource.as_deref();
            let mut next = merge_for_update(info, sub, &current, candidate)?;
            let hooks = self.webhooks_for(info, opts.user.is_some())?;
            let mut warnings = admission::decode(info, &mut next, opts.validation)?;
            if let (Some(hooks), Some(user)) = (&hooks, &opts.user) {
                let a = attributes(target, Operation::Update, name, user, opts.dry_run);
                let (w, changed) = self.mutate(hooks, &a, &mut next, Some(&current)).await?;
                warnings.extend(w);
                if changed {
                    // What the webhook may not change (name, uid, status on the main
                    // resource, …) is put back, as after the client's own change.
                    check_type(info, &next)?;
                    next = merge_for_update(info, sub, &current, next)?;
                    warnings.extend(admission::decode(info, &mut next, opts.validation)?);
                }
            }
            warnings.extend(admission::check(info, &next, Some(&current))?);
            self.type_check_policy(info, sub, &mut next);
            if crd::is_crd(info) {
                crd::prepare(&self.registry(), &mut next, Some(&current))?;
            }
            if let Some(ns) = ns.filter(|_| info.namespaced) {
                self.validate_limits(info, ns, &next, false)?;
            }
            if let (Some(hooks), Some(user)) = (&hooks, &opts.user) {
                let a = attributes(target, Operation::Update, name, user, opts.dry_run);
                warnings.extend(
                    self.validate_with_webhooks(hooks, &a, Some(&next), Some(&current))
                        .await?,
                );
            }
            if !applied {
                crate::fields::track_update(
                    info,
                    Some(&current),
                    &mut next,
                    &opts.manager,
                    target.subresource.as_deref(),
                );
            }
            let deleting = meta_str(&next, "deletionTimestamp").is_some();
            if deleting && object::finalizers(&next).is_empty() {
                if opts.dry_run {
                    return Ok(Written::new(next));
                }
                self.before_remove(info, &next).await?;
                return match self.store.delete(&key, Some(revision)).await {
                    Ok(_) => {
                        if is_service(info) {
                            self.cluster_ips.removed(&key, &current);
                        }
                        self.after_delete(info);
                        if let Some(ns) = ns.filter(|_| info.namespaced) {
                            self.sync_quotas(ns, None).await;
                        }
                        Ok(Written {
                            object: next,
                            warnings,
                        })
                    }
                    Err(mni_store::Error::Conflict { .. }) => {
                        self.remove_failed(info, &key)?;
                        continue;
                    }
                    Err(e) => Err(e.into()),
                };
            }
            if next == current {
                return Ok(Written {
                    object: current,
                    warnings,
                });
            }
            let quota = match ns.filter(|_| info.namespaced) {
                Some(ns) if target.subresource.is_none() || is_status_of_counted(info) => {
                    self.admit_quota(info, ns, &next, Some(&current)).await?
                }
                _ => None,
            };
            if opts.dry_run {
                return Ok(Written {
                    object: next,
                    warnings,
                });
            }
            let mut stored = object::to_storage(info, next);
            match self
                .store
                .update(&key, object::to_stored(&mut stored)?, Some(revision))
                .await
            {
                Ok(kv) => {
                    self.after_write(info);
                    if let Some(ns) = ns.filter(|_| info.namespaced)
                        && (quota.is_some() || self.affects_quotas(info, ns))
                    {
                        self.sync_quotas(ns, quota).await;
                    }
                    if is_service(info) {
                        self.cluster_ips.updated(&key, &current, &stored);
                    }
                    if stored.pointer("/metadata/ownerReferences")
                        != current.pointer("/metadata/ownerReferences")
                        && self.has_absent_owner(info, &stored)
                    {
                        // A reference to a gone owner was just added: collect now rather
                        // than at the next safety-net sweep.
                        self.kick_controllers();
                    }
                    let updated =
                        object::to_served(info, object::with_revision(stored, kv.mod_revision));
                    if crd::is_crd(info) {
                        crd::register(&mut self.registry_mut(), &updated)?;
                    }
                    return Ok(Written {
                        object: updated,
                        warnings,
                    });
                }
                Err(mni_store::Error::Conflict { .. }) => continue,
                Err(mni_store::Error::NotFound { .. }) => {
                    return Err(ApiError::not_found(info.group_resource(), name));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Applies the rules of an update to the main resource or a subresource: what the client may
/// change, what the server keeps, and `generation`.
fn merge_for_update(
    info: &ResourceInfo,
    subresource: Option<&str>,
    current: &Value,
    candidate: Value,
) -> ApiResult<Value> {
    let mut next = match subresource {
        Some("status") => {
            let mut next = current.clone();
            match candidate.get("status") {
                Some(s) => next["status"] = s.clone(),
                None => {
                    if let Some(o) = next.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
            next
        }
        Some("scale") | None => {
            let mut next = candidate;
            if info.status && subresource.is_none() {
                match current.get("status") {
                    Some(s) => next["status"] = s.clone(),
                    None => {
                        if let Some(o) = next.as_object_mut() {
                            o.remove("status");
                        }
                    }
                }
            }
            next
        }
        Some(other) => {
            return Err(ApiError::method_not_allowed("PUT", other));
        }
    };
    let no_meta = json!({});
    let cur_meta = current.get("metadata").unwrap_or(&no_meta);
    let meta = meta_mut(&mut next);
    for k in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match cur_meta.get(k) {
            Some(v) => {
                meta.insert(k.into(), v.clone());
            }
            None => {
                meta.remove(k);
            }
        }
    }
    meta.insert(
        "resourceVersion".into(),
        cur_meta
            .get("resourceVersion")
            .cloned()
            .unwrap_or(Value::Null),
    );
    if is_service(info) && subresource.is_none() && next["spec"].is_object() {
        // The allocated address is kept when an update leaves it out, and cannot change.
        for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            let given = next
                .pointer(&format!("/spec/{field}"))
                .filter(|v| !v.is_null() && *v != "");
            match (given, current.pointer(&format!("/spec/{field}"))) {
                (None, Some(old)) => next["spec"][field] = old.clone(),
                (Some(new), Some(old))
                    if new != old && matches!(field, "clusterIP" | "clusterIPs") =>
                {
                    return Err(ApiError::invalid(
                        "Service",
                        "",
                        object::name(current),
                        &[mni_apimachinery::FieldError::invalid(
                            format!("spec.{field}"),
                            new.clone(),
                            "field is immutable",
                        )],
                    ));
                }
                _ => {}
            }
        }
    }
    let name = object::name(current).to_string();
    if meta_str(current, "deletionTimestamp").is_some() {
        let before = object::finalizers(current);
        if object::finalizers(&next)
            .iter()
            .any(|f| !before.contains(f))
        {
            return Err(ApiError::invalid(
                &info.kind,
                &info.group,
                &name,
                &[mni_apimachinery::FieldError::forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted",
                )],
            ));
        }
    }
    if info.generation && object::spec_differs(&next, current) {
        let g = current["metadata"]["generation"].as_i64().unwrap_or(0);
        meta_mut(&mut next).insert("generation".into(), json!(g + 1));
    }
    Ok(next)
}
