//! Least-privilege clients: a ServiceAccount with exactly the rules a test grants it.
//!
//! [`TestEnv::service_account_client`] applies a Namespace, a ServiceAccount, a Role with the
//! rules and a RoleBinding, requests a token through the TokenRequest API, and returns a
//! client that authenticates as `system:serviceaccount:NAMESPACE:NAME`. Running an operator
//! under such a client proves its RBAC rules are enough — and a 403 in a test is the same 403
//! it would get on a cluster. [`TestEnv::cluster_service_account_client`] grants the rules
//! cluster-wide (ClusterRole and ClusterRoleBinding) for operators that watch all namespaces.
//!
//! Everything is written with server-side apply, so asking again for the same account
//! replaces its rules and returns a fresh client.

use std::path::Path;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::env::{FIELD_MANAGER, TestEnv, token_client};
use crate::error::{Error, Result};

/// How long requested ServiceAccount tokens live: longer than any test.
const TOKEN_SECONDS: i64 = 24 * 60 * 60;

impl TestEnv {
    /// A client for ServiceAccount `namespace/name` that may do exactly what `rules` allow in
    /// `namespace` (a Role and RoleBinding named `mni-testkit:NAME`). Creates the namespace if
    /// it is missing. The client's default namespace is `namespace`.
    ///
    /// ```no_run
    /// use k8s_openapi::api::rbac::v1::PolicyRule;
    ///
    /// # async fn run(env: &mni_testkit::TestEnv) -> mni_testkit::Result<()> {
    /// let reader = PolicyRule {
    ///     api_groups: Some(vec![String::new()]),
    ///     resources: Some(vec!["configmaps".into()]),
    ///     verbs: vec!["get".into(), "list".into(), "watch".into()],
    ///     ..PolicyRule::default()
    /// };
    /// let client = env.service_account_client("billing", "operator", vec![reader]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn service_account_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<Client> {
        self.account_client(namespace, name, rules, false).await
    }

    /// Like [`service_account_client`](Self::service_account_client), but the rules hold in
    /// every namespace and for cluster-scoped kinds (a ClusterRole and ClusterRoleBinding named
    /// `mni-testkit:NAMESPACE:NAME`).
    pub async fn cluster_service_account_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<Client> {
        self.account_client(namespace, name, rules, true).await
    }

    /// The client an operator runs with in a cluster: ServiceAccount `namespace/name` with
    /// the rules of the ClusterRole manifest at `role_yaml` (the kustomize plugin derives it
    /// from the `+mni:rbac` lines into `config/rbac/role.yaml`) in every namespace. So a rule
    /// missing from the manifest fails in a test, not in a cluster.
    ///
    /// A project without RBAC manifests (no file at `role_yaml`) gets the admin client.
    ///
    /// ```no_run
    /// # async fn run(env: &mni_testkit::TestEnv) -> mni_testkit::Result<()> {
    /// let role = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/rbac/role.yaml");
    /// let client = env
    ///     .operator_client(&role, "billing-system", "billing-controller-manager")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn operator_client(
        &self,
        role_yaml: &Path,
        namespace: &str,
        name: &str,
    ) -> Result<Client> {
        let text = match std::fs::read_to_string(role_yaml) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(self.client()),
            Err(e) => {
                return Err(Error::Invalid(format!(
                    "reading {}: {e}",
                    role_yaml.display()
                )));
            }
        };
        let role: ClusterRole = serde_yaml::from_str(&text).map_err(|e| {
            Error::Invalid(format!(
                "{}: not a ClusterRole manifest: {e}",
                role_yaml.display()
            ))
        })?;
        self.cluster_service_account_client(namespace, name, role.rules.unwrap_or_default())
            .await
    }

    /// The client a scaffolded operator crate has in a cluster, by the scaffold's conventions:
    /// [`Self::operator_client`] with `crate_dir/config/rbac/role.yaml` as ServiceAccount
    /// `CRATE-controller-manager` in namespace `CRATE-system`. An integration test passes its
    /// own `env!("CARGO_MANIFEST_DIR")` and `env!("CARGO_PKG_NAME")`.
    ///
    /// ```no_run
    /// # async fn run(env: &mni_testkit::TestEnv) -> mni_testkit::Result<()> {
    /// let client = env
    ///     .crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn crate_operator_client(
        &self,
        crate_dir: impl AsRef<Path>,
        crate_name: &str,
    ) -> Result<Client> {
        let role = crate_dir.as_ref().join("config/rbac/role.yaml");
        let namespace = format!("{crate_name}-system");
        let account = format!("{crate_name}-controller-manager");
        self.operator_client(&role, &namespace, &account).await
    }

    async fn account_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
        cluster: bool,
    ) -> Result<Client> {
        let admin = self.client();
        let meta = |name: &str, namespace: Option<&str>| ObjectMeta {
            name: Some(name.to_string()),
            namespace: namespace.map(str::to_string),
            ..ObjectMeta::default()
        };
        let subject = Subject {
            kind: "ServiceAccount".to_string(),
            name: name.to_string(),
            namespace: Some(namespace.to_string()),
            api_group: None,
        };
        let namespaces: Api<Namespace> = Api::all(admin.clone());
        apply(
            &namespaces,
            &Namespace {
                metadata: meta(namespace, None),
                ..Namespace::default()
            },
        )
        .await?;
        let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), namespace);
        apply(
            &accounts,
            &ServiceAccount {
                metadata: meta(name, Some(namespace)),
                ..ServiceAccount::default()
            },
        )
        .await?;
        if cluster {
            let role = format!("mni-testkit:{namespace}:{name}");
            apply(
                &Api::<ClusterRole>::all(admin.clone()),
                &ClusterRole {
                    metadata: meta(&role, None),
                    rules: Some(rules),
                    aggregation_rule: None,
                },
            )
            .await?;
            apply(
                &Api::<ClusterRoleBinding>::all(admin.clone()),
                &ClusterRoleBinding {
                    metadata: meta(&role, None),
                    role_ref: role_ref("ClusterRole", &role),
                    subjects: Some(vec![subject]),
                },
            )
            .await?;
        } else {
            let role = format!("mni-testkit:{name}");
            apply(
                &Api::<Role>::namespaced(admin.clone(), namespace),
                &Role {
                    metadata: meta(&role, Some(namespace)),
                    rules: Some(rules),
                },
            )
            .await?;
            apply(
                &Api::<RoleBinding>::namespaced(admin.clone(), namespace),
                &RoleBinding {
                    metadata: meta(&role, Some(namespace)),
                    role_ref: role_ref("Role", &role),
                    subjects: Some(vec![subject]),
                },
            )
            .await?;
        }
        let request = TokenRequest {
            spec: Some(TokenRequestSpec {
                expiration_seconds: Some(TOKEN_SECONDS),
                ..TokenRequestSpec::default()
            }),
            ..TokenRequest::default()
        };
        let identity = format!("system:serviceaccount:{namespace}:{name}");
        let response = accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await
            .map_err(|source| Error::Api {
                action: format!("requesting a token for ServiceAccount {namespace}/{name}"),
                source,
            })?;
        let token = response
            .status
            .and_then(|s| s.token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "the TokenRequest for ServiceAccount {namespace}/{name} returned no token"
                ))
            })?;
        token_client(self.config(), &token, namespace, &identity)
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some("rbac.authorization.k8s.io".to_string()),
        kind: kind.to_string(),
        name: name.to_string(),
    }
}

/// Server-side applies `object` as the test kit's field manager.
async fn apply<K>(api: &Api<K>, object: &K) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    .map_err(|source| Error::Api {
        action: format!(
            "applying {} {}",
            K::kind(&()),
            crate::wait::qualified(object.meta().namespace.as_deref(), &name)
        ),
        source,
    })
}
