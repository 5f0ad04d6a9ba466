//! Namespaces: the system namespaces and the default RBAC policy exist at start-up; every
//! active namespace has its `default` ServiceAccount and its `kube-root-ca.crt` ConfigMap (the
//! cluster's CA bundle), as kube-controller-manager's serviceaccount and root-ca-cert-publisher
//! controllers keep them; and a namespace being deleted has its contents deleted (each object
//! honouring its own finalizers) before it goes away.

use serde_json::json;

use crate::error::ApiResult;
use crate::object;
use crate::request::Target;
use crate::state::{State, WriteOptions};

/// Namespaces every cluster has.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

fn namespaces_target(state: &State, name: Option<&str>) -> Option<Target> {
    Some(Target {
        info: state.registry().get("", "v1", "namespaces")?,
        namespace: None,
        name: name.map(str::to_string),
        subresource: None,
    })
}

/// Creates the system namespaces and the default RBAC policy when missing.
pub(crate) async fn bootstrap(state: &State) -> ApiResult<()> {
    let Some(target) = namespaces_target(state, None) else {
        return Ok(());
    };
    for ns in SYSTEM_NAMESPACES {
        if state
            .stored(&format!("/registry/core/namespaces/{ns}"))
            .is_some()
        {
            continue;
        }
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let opts = WriteOptions::internal("mni-controller-manager");
        match state.create(&target, obj, &opts, false).await {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    ensure_namespace_contents(state).await?;
    // The default RBAC policy, as kube-apiserver's bootstrap-roles post-start hook installs it.
    for obj in mni_rbac::bootstrap_policy() {
        let plural = match obj["kind"].as_str() {
            Some("ClusterRole") => "clusterroles",
            Some("ClusterRoleBinding") => "clusterrolebindings",
            _ => continue,
        };
        let Some(info) = state
            .registry()
            .get("rbac.authorization.k8s.io", "v1", plural)
        else {
            continue;
        };
        if state.stored(&info.key(None, object::name(&obj))).is_some() {
            continue;
        }
        let target = Target {
            info,
            namespace: None,
            name: None,
            subresource: None,
        };
        let opts = WriteOptions::internal("mni-controller-manager");
        match state.create(&target, obj, &opts, false).await {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    super::system::bootstrap(state).await
}

/// Creates what every active namespace has and lacks: the `default` ServiceAccount, and the
/// `kube-root-ca.crt` ConfigMap with the current CA bundle (rewritten if it differs).
pub(super) async fn ensure_namespace_contents(state: &State) -> ApiResult<()> {
    let (accounts, configmaps) = {
        let registry = state.registry();
        (
            registry.get("", "v1", "serviceaccounts"),
            registry.get("", "v1", "configmaps"),
        )
    };
    let (Some(accounts), Some(configmaps)) = (accounts, configmaps) else {
        return Ok(());
    };
    let ca = state.root_ca().to_string();
    let listed = state.list_stored("/registry/core/namespaces/")?;
    for kv in listed.items {
        let ns_obj = object::from_stored(&kv)?;
        if object::meta_str(&ns_obj, "deletionTimestamp").is_some() {
            continue;
        }
        let ns = object::name(&ns_obj).to_string();
        let account_key = accounts.key(Some(&ns), crate::serviceaccount::DEFAULT);
        if state.stored(&account_key).is_none() {
            let obj = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": crate::serviceaccount::DEFAULT, "namespace": ns}});
            create_quietly(state, &accounts, &ns, obj).await?;
        }
        let name = crate::serviceaccount::ROOT_CA_CONFIGMAP;
        let data = json!({"ca.crt": ca});
        match state.stored(&configmaps.key(Some(&ns), name)) {
            None => {
                let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": ns,
                        "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
                    "data": data});
                create_quietly(state, &configmaps, &ns, obj).await?;
            }
            Some(kv) => {
                let obj = object::from_stored(&kv)?;
                if obj["data"] != data {
                    let target = Target {
                        info: configmaps.clone(),
                        namespace: Some(ns.clone()),
                        name: Some(name.to_string()),
                        subresource: None,
                    };
                    let opts = WriteOptions::internal("root-ca-cert-publisher");
                    let change = |current: &serde_json::Value| {
                        let mut next = current.clone();
                        next["data"] = data.clone();
                        Ok(next)
                    };
                    match state.update(&target, &opts, false, change).await {
                        Ok(_) => {}
                        Err(e) if e.code == 409 || e.code == 404 => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    Ok(())
}

/// Creates `obj` in `ns`, ignoring that it exists already or the namespace is going away.
async fn create_quietly(
    state: &State,
    info: &std::sync::Arc<crate::registry::ResourceInfo>,
    ns: &str,
    obj: serde_json::Value,
) -> ApiResult<()> {
    let target = Target {
        info: info.clone(),
        namespace: Some(ns.to_string()),
        name: None,
        subresource: None,
    };
    let opts = WriteOptions::internal("mni-controller-manager");
    match state.create(&target, obj, &opts, false).await {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 || e.code == 403 || e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Finishes the deletion of terminating namespaces: deletes their contents, then the
/// namespace once nothing is left.
pub(super) async fn finalize_namespaces(state: &State) -> ApiResult<()> {
    let listed = state.list_stored("/registry/core/namespaces/")?;
    for kv in listed.items {
        let ns_obj = object::from_stored(&kv)?;
        if object::meta_str(&ns_obj, "deletionTimestamp").is_none() {
            continue;
        }
        let ns = object::name(&ns_obj).to_string();
        let resources: Vec<_> = {
            let registry = state.registry();
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
            let items = state.list_stored(&prefix)?;
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
                match state.delete(&target, &json!({}), false, None).await {
                    Ok(_) => {}
                    Err(e) if e.code == 404 || e.code == 409 => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if remaining == 0 {
            match state.remove_stored(&kv.key, kv.mod_revision).await {
                // Objects the namespace owned are now garbage.
                Ok(_) => state.kick_controllers(),
                Err(mni_store::Error::NotFound { .. } | mni_store::Error::Conflict { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
