//! Authentication (bearer tokens, ServiceAccount tokens, impersonation) and authorization
//! (RBAC through `mni-rbac`).
//!
//! Identities:
//! - the admin token written into `mni-dev`'s kubeconfig: user `mni:admin` in `system:masters`;
//! - ServiceAccount tokens issued by the TokenRequest subresource: HS256-signed JWTs for
//!   `system:serviceaccount:NS:NAME` with groups `system:serviceaccounts` and
//!   `system:serviceaccounts:NS`, valid while the ServiceAccount (same uid) exists;
//! - no credentials: only the public health and version endpoints, else 401 — except on a
//!   plain-HTTP loopback listener started with `--insecure-http`, where (as on kube-apiserver's
//!   old insecure port) such requests act as the admin, because client-go sends bearer tokens
//!   only over TLS.
//!
//! Callers allowed to `impersonate` (admins) may act as another user with `Impersonate-User`
//! and `Impersonate-Group` (`kubectl --as`, `--as-group`).

use std::sync::{Arc, Mutex};

use base64::Engine;
use http::HeaderMap;
use mni_rbac::{Attributes, Authorizer, UserInfo};
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::request::Target;

/// The admin identity's user name.
pub const ADMIN_USER: &str = "mni:admin";

/// Credentials the server accepts.
pub(crate) struct Authn {
    admin_token: String,
    signing_key: ring::hmac::Key,
    authorizer: Mutex<Option<(u64, Arc<Authorizer>)>>,
    rbac_generation: std::sync::atomic::AtomicU64,
    /// Requests without credentials act as the admin (plain-HTTP loopback serving only).
    unauthenticated_admin: bool,
}

impl std::fmt::Debug for Authn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authn").finish_non_exhaustive()
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

/// Paths anyone may read, as `system:public-info-viewer` allows.
fn public_path(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/"
    )
}

impl Authn {
    /// Credentials from an admin token and a ServiceAccount-token signing secret.
    pub(crate) fn new(admin_token: String, signing_secret: &[u8]) -> Self {
        Authn {
            admin_token,
            signing_key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, signing_secret),
            authorizer: Mutex::new(None),
            rbac_generation: std::sync::atomic::AtomicU64::new(1),
            unauthenticated_admin: false,
        }
    }

    /// Lets requests without credentials act as the admin (see the module docs).
    pub(crate) fn with_unauthenticated_admin(mut self, enabled: bool) -> Self {
        self.unauthenticated_admin = enabled;
        self
    }

    /// The admin bearer token.
    pub(crate) fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// Marks the RBAC snapshot stale (after any write to an RBAC object).
    pub(crate) fn rbac_changed(&self) {
        self.rbac_generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Issues a ServiceAccount token (the TokenRequest subresource).
    pub(crate) fn issue(
        &self,
        ns: &str,
        name: &str,
        uid: &str,
        seconds: i64,
        audiences: &[String],
    ) -> (String, i64) {
        let now = jiff::Timestamp::now().as_second();
        let exp = now + seconds;
        let header = b64(br#"{"alg":"HS256","typ":"JWT"}"#);
        let aud = if audiences.is_empty() {
            vec!["https://kubernetes.default.svc".to_string()]
        } else {
            audiences.to_vec()
        };
        let claims = json!({
            "aud": aud, "exp": exp, "iat": now, "nbf": now,
            "iss": "https://kubernetes.default.svc.cluster.local",
            "sub": mni_rbac::service_account_user_name(ns, name),
            "kubernetes.io": {"namespace": ns, "serviceaccount": {"name": name, "uid": uid}},
        });
        let payload = b64(claims.to_string().as_bytes());
        let signing_input = format!("{header}.{payload}");
        let sig = ring::hmac::sign(&self.signing_key, signing_input.as_bytes());
        (format!("{signing_input}.{}", b64(sig.as_ref())), exp)
    }

    /// Verifies a ServiceAccount token; returns its namespace, name and uid.
    fn verify(&self, token: &str) -> Option<(String, String, String)> {
        let (signing_input, sig) = token.rsplit_once('.')?;
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sig)
            .ok()?;
        ring::hmac::verify(&self.signing_key, signing_input.as_bytes(), &sig).ok()?;
        let (_, payload) = signing_input.split_once('.')?;
        let claims: Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .ok()?,
        )
        .ok()?;
        if claims["exp"].as_i64()? < jiff::Timestamp::now().as_second() {
            return None;
        }
        let k = &claims["kubernetes.io"];
        Some((
            k["namespace"].as_str()?.to_string(),
            k["serviceaccount"]["name"].as_str()?.to_string(),
            k["serviceaccount"]["uid"].as_str()?.to_string(),
        ))
    }
}

/// Compares two secrets through their digests, so the comparison's timing says nothing about
/// the secret.
fn same_secret(a: &str, b: &str) -> bool {
    let da = ring::digest::digest(&ring::digest::SHA256, a.as_bytes());
    let db = ring::digest::digest(&ring::digest::SHA256, b.as_bytes());
    da.as_ref() == db.as_ref()
}

fn admin() -> UserInfo {
    UserInfo::new(ADMIN_USER, ["system:masters", "system:authenticated"])
}

impl Authn {
    /// Who is asking: the authenticated user, after impersonation. `None` means anonymous,
    /// which only the public paths accept.
    pub(crate) fn authenticate(
        &self,
        store: &mni_store::Store,
        headers: &HeaderMap,
        path: &str,
    ) -> ApiResult<UserInfo> {
        let token = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        let user = match token {
            None if self.unauthenticated_admin => admin(),
            None if public_path(path) => return Ok(UserInfo::anonymous()),
            None => return Err(unauthorized()),
            Some(t) if !t.is_empty() && same_secret(t, self.admin_token()) => admin(),
            Some(t) => {
                let (ns, name, uid) = self.verify(t).ok_or_else(unauthorized)?;
                let sa = store
                    .get(&format!("/registry/core/serviceaccounts/{ns}/{name}"))
                    .and_then(|kv| object::from_stored(&kv).ok())
                    .ok_or_else(unauthorized)?;
                if object::meta_str(&sa, "uid") != Some(uid.as_str()) {
                    return Err(unauthorized());
                }
                let mut u = UserInfo::service_account(&ns, &name);
                u.uid = uid;
                u
            }
        };
        self.impersonate(store, user, headers)
    }

    fn impersonate(
        &self,
        store: &mni_store::Store,
        user: UserInfo,
        headers: &HeaderMap,
    ) -> ApiResult<UserInfo> {
        let as_user = headers
            .get("impersonate-user")
            .and_then(|v| v.to_str().ok());
        let groups: Vec<String> = headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        let Some(as_user) = as_user else {
            if groups.is_empty() {
                return Ok(user);
            }
            return Err(ApiError::bad_request(
                "requested impersonation of groups without a user: Impersonate-User is required",
            ));
        };
        let check = |attrs: Attributes| -> ApiResult<()> {
            let d = self.authorizer(store)?.authorize(&attrs);
            if d.allowed {
                Ok(())
            } else {
                Err(ApiError::forbidden(mni_rbac::forbidden_status_message(
                    &attrs, &d.reason,
                )))
            }
        };
        let mut target = match as_user
            .strip_prefix("system:serviceaccount:")
            .and_then(|r| r.split_once(':'))
        {
            Some((ns, name)) => {
                check(
                    Attributes::resource(user.clone(), "impersonate", "", "serviceaccounts")
                        .in_namespace(ns)
                        .named(name),
                )?;
                UserInfo::service_account(ns, name)
            }
            None => {
                check(
                    Attributes::resource(user.clone(), "impersonate", "", "users").named(as_user),
                )?;
                let mut g = Vec::new();
                if as_user != mni_rbac::ANONYMOUS_USER {
                    g.push(mni_rbac::ALL_AUTHENTICATED.to_string());
                }
                UserInfo::new(as_user, g)
            }
        };
        for g in groups {
            check(Attributes::resource(user.clone(), "impersonate", "", "groups").named(&g))?;
            if !target.groups.contains(&g) {
                target.groups.push(g);
            }
        }
        Ok(target)
    }

    /// The current RBAC snapshot, rebuilt after RBAC objects change.
    pub(crate) fn authorizer(&self, store: &mni_store::Store) -> ApiResult<Arc<Authorizer>> {
        let generation = self
            .rbac_generation
            .load(std::sync::atomic::Ordering::SeqCst);
        let mut cache = self.authorizer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((g, a)) = cache.as_ref()
            && *g == generation
        {
            return Ok(a.clone());
        }
        let read = |plural: &str| -> ApiResult<Vec<Value>> {
            store
                .list(
                    &format!("/registry/rbac.authorization.k8s.io/{plural}/"),
                    &mni_store::ListOptions::default(),
                )?
                .items
                .iter()
                .map(object::from_stored)
                .collect()
        };
        let a = Arc::new(Authorizer::new(
            &read("roles")?,
            &read("clusterroles")?,
            &read("rolebindings")?,
            &read("clusterrolebindings")?,
        ));
        *cache = Some((generation, a.clone()));
        Ok(a)
    }

    /// Decides a request; 403 with Kubernetes' message when RBAC denies it.
    pub(crate) fn authorize(&self, store: &mni_store::Store, attrs: &Attributes) -> ApiResult<()> {
        if mni_rbac::is_superuser(&attrs.user) {
            return Ok(());
        }
        let decision = self.authorizer(store)?.authorize(attrs);
        if decision.allowed {
            return Ok(());
        }
        let status = mni_rbac::forbidden_status(attrs, &decision.reason);
        let mut e = ApiError::forbidden(
            status["message"]
                .as_str()
                .unwrap_or("forbidden")
                .to_string(),
        );
        e.details = status.get("details").cloned();
        Err(e)
    }
}

/// The RBAC attributes of a resource request.
pub(crate) fn resource_attributes(
    user: &UserInfo,
    method: &http::Method,
    target: &Target,
    watch: bool,
    field_name: Option<&str>,
) -> Attributes {
    let item = target.name.is_some();
    let verb = match (method.as_str(), item) {
        ("GET" | "HEAD", false) if watch => "watch",
        ("GET" | "HEAD", false) => "list",
        ("GET" | "HEAD", true) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        (other, _) => {
            return Attributes::resource(
                user.clone(),
                other.to_ascii_lowercase(),
                target.info.group.clone(),
                target.info.plural.clone(),
            );
        }
    };
    let mut attrs = Attributes::resource(
        user.clone(),
        verb,
        target.info.group.clone(),
        target.info.plural.clone(),
    )
    .version(target.info.version.clone());
    if let Some(ns) = &target.namespace {
        attrs = attrs.in_namespace(ns.clone());
    }
    if let Some(sub) = &target.subresource {
        attrs = attrs.subresource(sub.clone());
    }
    if let Some(name) = target.name.as_deref().or(field_name) {
        attrs = attrs.named(name);
    }
    attrs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_account_tokens_verify_and_expire() {
        let a = Authn::new("admin".into(), b"secret");
        let (token, _) = a.issue("ns", "sa", "uid-1", 3600, &[]);
        assert_eq!(
            a.verify(&token),
            Some(("ns".into(), "sa".into(), "uid-1".into()))
        );
        let (expired, _) = a.issue("ns", "sa", "uid-1", -10, &[]);
        assert_eq!(a.verify(&expired), None);
        let other = Authn::new("admin".into(), b"other");
        assert_eq!(other.verify(&token), None, "signed with another key");
        let mut tampered = token.clone();
        tampered.insert(token.find('.').unwrap_or(0) + 3, 'x');
        assert_eq!(a.verify(&tampered), None);
    }
}
