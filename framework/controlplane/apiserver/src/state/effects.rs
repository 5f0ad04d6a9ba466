//! What a write does besides writing: RBAC snapshots and webhook (and policy) snapshots dropped, CRDs served or no longer
//! served, the controllers woken. Shared by the writes of `objects` and `deletion`.

use serde_json::Value;

use super::State;
use crate::crd;
use crate::error::ApiResult;
use crate::object;
use crate::registry::ResourceInfo;

/// Whether `info` is core/v1 Services, whose writes allocate and free ClusterIPs.
pub(super) fn is_service(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "services"
}

impl State {
    /// Work that follows any committed write: RBAC changes invalidate the authorizer; a
    /// Namespace write wakes the namespace controller.
    pub(super) fn after_write(&self, info: &ResourceInfo) {
        if info.group.is_empty() && info.plural == "namespaces" {
            self.kick_namespaces();
        }
        if info.group == "rbac.authorization.k8s.io" {
            self.authn.rbac_changed();
        }
        if super::hooks::is_admission_configuration(info) {
            self.webhooks_changed();
        }
    }

    /// Work that must happen while the object still exists: a CRD's custom resources go (and
    /// its resources stop being served) before the CRD itself, as kube-apiserver's
    /// `customresourcecleanup` finalizer orders it — so a CRD re-created under the same name
    /// never loses its new objects to the old one's cleanup.
    pub(super) async fn before_remove(&self, info: &ResourceInfo, obj: &Value) -> ApiResult<()> {
        if crd::is_crd(info) {
            crd::unregister(&mut self.registry_mut(), obj);
            crd::delete_objects(&self.store, obj).await?;
        }
        Ok(())
    }

    /// Work that follows an object's removal from the store.
    pub(super) fn after_delete(&self, info: &ResourceInfo) {
        self.after_write(info);
        // Dependents of the removed object are now garbage.
        self.kick_controllers();
    }

    /// Undoes `before_remove` when the removal itself lost a race: the CRD is served again.
    pub(super) fn remove_failed(&self, info: &ResourceInfo, key: &str) -> ApiResult<()> {
        if crd::is_crd(info)
            && let Some(kv) = self.store.get(key)
        {
            crd::register(&mut self.registry_mut(), &object::from_stored(&kv)?)?;
        }
        Ok(())
    }
}
