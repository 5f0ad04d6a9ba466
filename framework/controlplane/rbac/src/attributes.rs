//! Who asks for what: the authenticated [`UserInfo`], the request [`Attributes`] an authorizer
//! sees, and the [`Decision`] it returns.
//!
//! These mirror `user.Info`, `authorizer.Attributes` and the `(decision, reason)` pair of
//! kube-apiserver. The HTTP layer fills them in (from the authenticator and the request path, as
//! `request.RequestInfo` does); nothing here parses URLs.

use std::collections::BTreeMap;

/// The group every authenticated user belongs to.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user name of anonymous requests.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// The privileged group: its members are allowed everything, before RBAC is consulted.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// The group of all service accounts.
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// The prefix of service-account user names: `system:serviceaccount:<namespace>:<name>`.
pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";

/// The authenticated identity making a request (Kubernetes `user.Info`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name, e.g. `alice` or `system:serviceaccount:ns:sa`.
    pub name: String,
    /// The user's UID, if the authenticator knows one.
    pub uid: String,
    /// The groups the user belongs to, e.g. `system:authenticated`.
    pub groups: Vec<String>,
    /// Extra authenticator-provided attributes (unused by RBAC, kept for reviews).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with a name and groups (no UID, no extra).
    pub fn new<I, S>(name: impl Into<String>, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            name: name.into(),
            uid: String::new(),
            groups: groups.into_iter().map(Into::into).collect(),
            extra: BTreeMap::new(),
        }
    }

    /// The identity of a service-account token, as the kube authenticator builds it: user
    /// `system:serviceaccount:<namespace>:<name>` in groups `system:serviceaccounts`,
    /// `system:serviceaccounts:<namespace>` and `system:authenticated`.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self::new(
            service_account_user_name(namespace, name),
            [
                ALL_SERVICE_ACCOUNTS.to_string(),
                format!("{ALL_SERVICE_ACCOUNTS}:{namespace}"),
                ALL_AUTHENTICATED.to_string(),
            ],
        )
    }

    /// The anonymous user: `system:anonymous` in group `system:unauthenticated`.
    pub fn anonymous() -> Self {
        Self::new(ANONYMOUS_USER, [ALL_UNAUTHENTICATED])
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// The user name of a service account: `system:serviceaccount:<namespace>:<name>`.
pub fn service_account_user_name(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USER_PREFIX}{namespace}:{name}")
}

/// Whether `user` is a superuser (a member of `system:masters`), allowed everything without
/// consulting RBAC — kube-apiserver's privileged-group authorizer.
pub fn is_superuser(user: &UserInfo) -> bool {
    user.in_group(SYSTEM_MASTERS)
}

/// The attributes of one request, as the authorization filter sees them
/// (Kubernetes `authorizer.Attributes`).
///
/// For a resource request (`resource_request == true`) the verb is one of `get`, `list`,
/// `watch`, `create`, `update`, `patch`, `delete`, `deletecollection` (or a custom verb such as
/// `impersonate`, `bind`, `escalate`, `use`); `namespace` is empty for cluster-scoped resources
/// and for requests across all namespaces; `name` is empty for `list`, `watch`, `create` and
/// `deletecollection` unless the HTTP layer derived it (kube sets it for a list or watch with a
/// `metadata.name` field selector). For a non-resource request the verb is the lower-case HTTP
/// method (`get`, `post`, `put`, `patch`, `delete`, `head`, `options`) and `path` is the URL path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who makes the request.
    pub user: UserInfo,
    /// The verb, e.g. `list`.
    pub verb: String,
    /// The namespace; empty for cluster-scoped requests.
    pub namespace: String,
    /// The API group; empty for the core group.
    pub api_group: String,
    /// The API version (only reported back, never matched by RBAC).
    pub api_version: String,
    /// The resource (plural, lower case), e.g. `deployments`.
    pub resource: String,
    /// The subresource, e.g. `status` or `scale`; empty if none.
    pub subresource: String,
    /// The object name; empty if the request names no object.
    pub name: String,
    /// Whether this is a resource request (otherwise a non-resource URL such as `/healthz`).
    pub resource_request: bool,
    /// The request path (used for non-resource requests).
    pub path: String,
}

impl Attributes {
    /// A cluster-scoped resource request; chain [`in_namespace`](Self::in_namespace),
    /// [`subresource`](Self::subresource) and [`named`](Self::named) to refine it.
    pub fn resource(
        user: UserInfo,
        verb: impl Into<String>,
        api_group: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            user,
            verb: verb.into(),
            api_group: api_group.into(),
            resource: resource.into(),
            resource_request: true,
            ..Self::default()
        }
    }

    /// A non-resource request, e.g. `get` of `/healthz`.
    pub fn non_resource(user: UserInfo, verb: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            user,
            verb: verb.into(),
            path: path.into(),
            resource_request: false,
            ..Self::default()
        }
    }

    /// The same request in `namespace`.
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// The same request on `subresource`.
    pub fn subresource(mut self, subresource: impl Into<String>) -> Self {
        self.subresource = subresource.into();
        self
    }

    /// The same request for the object `name`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The same request with the API version set (reported in Forbidden details only).
    pub fn version(mut self, api_version: impl Into<String>) -> Self {
        self.api_version = api_version.into();
        self
    }
}

/// The outcome of authorizing one request.
///
/// RBAC never denies explicitly: `allowed == false` is kube's "no opinion", which the server
/// turns into 403 Forbidden. `reason` is what kube puts in `SubjectAccessReviewStatus.reason`
/// and after the Forbidden message: `RBAC: allowed by …` when allowed, an aggregate of role
/// resolution errors (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`) or empty
/// when denied, and empty for superusers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// Why (possibly empty).
    pub reason: String,
}

impl Decision {
    /// An allowing decision with `reason`.
    pub fn allow(reason: impl Into<String>) -> Self {
        Self {
            allowed: true,
            reason: reason.into(),
        }
    }

    /// A non-allowing decision ("no opinion") with `reason`.
    pub fn no_opinion(reason: impl Into<String>) -> Self {
        Self {
            allowed: false,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_account_identity_has_the_kube_groups() {
        let u = UserInfo::service_account("ns", "sa");
        assert_eq!(u.name, "system:serviceaccount:ns:sa");
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ]
        );
        assert!(!is_superuser(&u));
        assert!(is_superuser(&UserInfo::new("admin", ["system:masters"])));
    }

    #[test]
    fn builders_fill_the_fields() {
        let a = Attributes::resource(UserInfo::anonymous(), "get", "apps", "deployments")
            .in_namespace("ns")
            .subresource("status")
            .named("d")
            .version("v1");
        assert!(a.resource_request);
        assert_eq!(
            (
                a.namespace.as_str(),
                a.subresource.as_str(),
                a.name.as_str(),
                a.api_version.as_str()
            ),
            ("ns", "status", "d", "v1")
        );
        let n = Attributes::non_resource(UserInfo::anonymous(), "get", "/healthz");
        assert!(!n.resource_request);
        assert_eq!(n.path, "/healthz");
    }
}
