//! Background loops that do what kube-controller-manager does where clients depend on it.
//!
//! The system namespaces exist at start-up; a namespace being deleted has its contents deleted
//! (each object honouring its own finalizers) before it goes away; and the garbage collector
//! (`gc`) runs after every deletion and sweeps everything every ten seconds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::error::ApiResult;
use crate::object;
use crate::request::Target;
use crate::rest::WriteOptions;
use crate::server::Shared;

/// Namespaces every cluster has.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

fn namespaces_target(shared: &Shared, name: Option<&str>) -> Option<Target> {
    Some(Target {
        info: shared.registry().get("", "v1", "namespaces")?,
        namespace: None,
        name: name.map(str::to_string),
        subresource: None,
    })
}

/// Creates the system namespaces and the default RBAC policy when missing.
pub(crate) async fn bootstrap(shared: &Shared) -> ApiResult<()> {
    let Some(target) = namespaces_target(shared, None) else {
        return Ok(());
    };
    for ns in SYSTEM_NAMESPACES {
        if shared
            .store
            .get(&format!("/registry/core/namespaces/{ns}"))
            .is_some()
        {
            continue;
        }
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let opts = WriteOptions::internal("mni-controller-manager");
        match shared.create(&target, obj, opts).await {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    // The default RBAC policy, as kube-apiserver's bootstrap-roles post-start hook installs it.
    for obj in mni_rbac::bootstrap_policy() {
        let plural = match obj["kind"].as_str() {
            Some("ClusterRole") => "clusterroles",
            Some("ClusterRoleBinding") => "clusterrolebindings",
            _ => continue,
        };
        let Some(info) = shared
            .registry()
            .get("rbac.authorization.k8s.io", "v1", plural)
        else {
            continue;
        };
        if shared
            .store
            .get(&info.key(None, object::name(&obj)))
            .is_some()
        {
            continue;
        }
        let target = Target {
            info,
            namespace: None,
            name: None,
            subresource: None,
        };
        let opts = WriteOptions::internal("mni-controller-manager");
        match shared.create(&target, obj, opts).await {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Finishes the deletion of terminating namespaces: deletes their contents, then the
/// namespace once nothing is left.
async fn finalize_namespaces(shared: &Shared) -> ApiResult<()> {
    let listed = shared.store.list(
        "/registry/core/namespaces/",
        &mni_store::ListOptions::default(),
    )?;
    for kv in listed.items {
        let ns_obj = object::from_stored(&kv)?;
        if object::meta_str(&ns_obj, "deletionTimestamp").is_none() {
            continue;
        }
        let ns = object::name(&ns_obj).to_string();
        let resources: Vec<_> = {
            let registry = shared.registry();
            let mut seen = std::collections::BTreeSet::new();
            registry
                .all()
                .filter(|i| i.namespaced && seen.insert(i.storage_prefix.clone()))
                .cloned()
                .collect()
        };
        let mut remaining = 0;
        for info in resources {
            let prefix = info.collection_prefix(Some(&ns));
            let items = shared
                .store
                .list(&prefix, &mni_store::ListOptions::default())?;
            for item in items.items {
                remaining += 1;
                let obj = object::from_stored(&item)?;
                if object::meta_str(&obj, "deletionTimestamp").is_some() {
                    continue;
                }
                let target = Target {
                    info: info.clone(),
                    namespace: Some(ns.clone()),
                    name: Some(object::name(&obj).to_string()),
                    subresource: None,
                };
                match shared.delete(&target, &json!({}), false).await {
                    Ok(_) => {}
                    Err(e) if e.code == 404 || e.code == 409 => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if remaining == 0 {
            match shared.store.delete(&kv.key, Some(kv.mod_revision)).await {
                // Objects the namespace owned are now garbage.
                Ok(_) => shared.kick_controllers(),
                Err(mni_store::Error::NotFound { .. } | mni_store::Error::Conflict { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// Seconds between the garbage collector's safety-net sweeps.
const GC_SWEEP_SECONDS: u64 = 60;

/// Runs the namespace finalizer: on every deletion kick, and every second as a safety net.
pub(crate) async fn run(shared: Arc<Shared>) {
    let mut stop = shared.shutdown_signal();
    let mut ticks: u64 = 0;
    loop {
        // A deletion kicks both loops at once; otherwise the namespace finalizer (cheap: it
        // looks at namespaces only) runs every second and a full garbage-collection sweep,
        // which reads every object, every minute. The sweep is only a safety net: every write
        // that makes garbage (a removal, a reference to a gone owner) kicks it at once.
        let kicked = tokio::select! {
            _ = stop.changed() => return,
            () = shared.wait_for_kick() => true,
            () = tokio::time::sleep(Duration::from_secs(1)) => false,
        };
        ticks += 1;
        if let Err(e) = finalize_namespaces(&shared).await {
            tracing::warn!(error = %e, "namespace finalizer");
        }
        if (kicked || ticks.is_multiple_of(GC_SWEEP_SECONDS))
            && let Err(e) = crate::gc::collect(&shared).await
        {
            tracing::warn!(error = %e, "garbage collector");
        }
    }
}
