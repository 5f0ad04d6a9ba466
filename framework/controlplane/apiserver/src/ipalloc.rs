//! Services' cluster IPs: an index of the allocated addresses, so that allocating one does not
//! read every Service.
//!
//! The index maps each allocated address to the key of the Service holding it. It is built from
//! the store on first use and then kept by the writes: a create reserves its address before it
//! commits (so concurrent creates never pick the same one) and gives it back if it does not
//! commit; an update that gives a Service an address records it; a removal releases the address
//! (only if the same key still holds it, so a released-then-reused address is never lost).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use crate::error::{ApiError, ApiResult};

/// The Services' prefix in the store.
const SERVICES: &str = "/registry/core/services/";

/// A Service's `spec.clusterIP`, and nothing else of it.
#[derive(serde::Deserialize)]
struct ClusterIpOnly {
    #[serde(default)]
    spec: ClusterIpSpec,
}

#[derive(serde::Deserialize, Default)]
struct ClusterIpSpec {
    #[serde(default, rename = "clusterIP")]
    cluster_ip: Option<String>,
}

/// The allocated cluster IPs (address → Service key); `None` until first used.
#[derive(Debug, Default)]
pub(crate) struct ClusterIps {
    by_ip: Mutex<Option<HashMap<String, String>>>,
}

/// The address a Service's `spec.clusterIP` holds, if any (`None` and `""` hold none).
pub(crate) fn held(svc: &Value) -> Option<&str> {
    svc.pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty() && *ip != "None")
}

/// An address reserved for a Service being created: given back when dropped uncommitted.
pub(crate) struct Reservation<'a> {
    ips: &'a ClusterIps,
    key: String,
    ip: String,
    committed: bool,
}

impl Reservation<'_> {
    /// The reserved address.
    pub(crate) fn ip(&self) -> &str {
        &self.ip
    }

    /// The Service was stored: the address stays allocated.
    pub(crate) fn commit(mut self) {
        self.committed = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.committed {
            self.ips.release(&self.key, &self.ip);
        }
    }
}

impl ClusterIps {
    fn with<R>(
        &self,
        store: &mni_store::Store,
        f: impl FnOnce(&mut HashMap<String, String>) -> R,
    ) -> ApiResult<R> {
        let mut guard = self.by_ip.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.is_none() {
            let listed = store.list(SERVICES, &mni_store::ListOptions::default())?;
            let mut by_ip = HashMap::new();
            for kv in listed.items {
                // Only spec.clusterIP is read; the rest of each Service is skipped, not built.
                if let Some(ip) = serde_json::from_slice::<ClusterIpOnly>(&kv.value)
                    .ok()
                    .and_then(|o| o.spec.cluster_ip)
                    .filter(|ip| !ip.is_empty() && ip != "None")
                {
                    by_ip.insert(ip, kv.key);
                }
            }
            *guard = Some(by_ip);
        }
        Ok(f(guard.as_mut().expect("loaded above")))
    }

    /// Reserves `wanted`, or a free address of 10.96.0.0/12 when `None`, for the Service at
    /// `key`. `Ok(None)`: `wanted` is already allocated.
    pub(crate) fn reserve(
        &self,
        store: &mni_store::Store,
        key: &str,
        wanted: Option<&str>,
    ) -> ApiResult<Option<Reservation<'_>>> {
        let ip = self.with(store, |by_ip| match wanted {
            Some(w) if by_ip.contains_key(w) => Ok::<_, ApiError>(None),
            Some(w) => {
                by_ip.insert(w.to_string(), key.to_string());
                Ok(Some(w.to_string()))
            }
            None => {
                // 10.96.0.0/12 without its network, broadcast and the API server's .1.
                let seed = uuid::Uuid::new_v4().as_u128();
                let ip = (0..(1u32 << 20) - 3)
                    .map(|i| ((seed as u32).wrapping_add(i) % ((1 << 20) - 3)) + 2)
                    .map(|n| {
                        let v = (10u32 << 24) | (96 << 16) | n;
                        std::net::Ipv4Addr::from(v).to_string()
                    })
                    .find(|ip| !by_ip.contains_key(ip))
                    .ok_or_else(|| ApiError::internal("the service IP range is full"))?;
                by_ip.insert(ip.clone(), key.to_string());
                Ok(Some(ip))
            }
        })??;
        Ok(ip.map(|ip| Reservation {
            ips: self,
            key: key.to_string(),
            ip,
            committed: false,
        }))
    }

    /// Gives `ip` back if the Service at `key` holds it.
    fn release(&self, key: &str, ip: &str) {
        let mut guard = self.by_ip.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(by_ip) = guard.as_mut()
            && by_ip.get(ip).is_some_and(|k| k == key)
        {
            by_ip.remove(ip);
        }
    }

    /// The Service at `key` was removed from the store.
    pub(crate) fn removed(&self, key: &str, svc: &Value) {
        if let Some(ip) = held(svc) {
            self.release(key, ip);
        }
    }

    /// The Service at `key` was updated from `old` to `new`.
    pub(crate) fn updated(&self, key: &str, old: &Value, new: &Value) {
        let (before, after) = (held(old), held(new));
        if before == after {
            return;
        }
        if let Some(ip) = before {
            self.release(key, ip);
        }
        if let Some(ip) = after {
            let mut guard = self.by_ip.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(by_ip) = guard.as_mut() {
                by_ip.insert(ip.to_string(), key.to_string());
            }
        }
    }
}
