// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `TenantReconciler` against an in-process control plane (`mni-testkit`), running as the
//! operator's own ServiceAccount with the rules of `config/rbac/role.yaml`: a tenant's
//! namespaces and what is in them, nesting, refusals that create nothing, usage against
//! quota, deletion, and the default VPC when the VPC service's CRD is installed; and tenant
//! isolation with real credentials: a tenant admin's bearer token manages VPCs and VMs in its
//! tenant and nothing in another (real requests, and `kubectl auth can-i`; kubectl must be on
//! PATH).

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, LimitRange, Namespace, ResourceQuota, Secret, ServiceAccount,
};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use mni_operator::{Manager, READY, RunningManager};
use mni_testkit::{TestEnv, wait_deleted, wait_for, wait_for_condition};

use mni_platform::api::platform_v1alpha1::{QuotaQuantity, Tenant, TenantSpec};
use mni_platform::controllers::tenant::TenantReconciler;

/// The VPC service's CRD, read from its place in the repository.
const VPC_CRD: &str =
    include_str!("../../vpc/operator/config/crd/bases/network.mni.dev_virtualprivateclouds.yaml");
/// The VM service's Instance CRD, read from its place in the repository.
const INSTANCE_CRD: &str =
    include_str!("../../vm/operator/config/crd/bases/compute.mni.dev_instances.yaml");
/// The VM service's sample Instance.
const INSTANCE_SAMPLE: &str =
    include_str!("../../vm/operator/config/samples/compute_v1alpha1_instance.yaml");

struct Fixture {
    env: TestEnv,
    manager: RunningManager,
    tenants: Api<Tenant>,
}

impl Fixture {
    /// The control plane and the operator; with the VPC and VM services' CRDs, and over
    /// HTTPS (kubectl sends tokens only over TLS), when `with_services`.
    async fn start(with_services: bool) -> Self {
        let mut builder = TestEnv::builder()
            .with_crds(mni_platform::api::crds())
            .with_tls(with_services);
        if with_services {
            for text in [VPC_CRD, INSTANCE_CRD] {
                let crd: CustomResourceDefinition = serde_yaml::from_str(text).expect("a CRD");
                builder = builder.with_crds([crd]);
            }
        }
        let env = builder.start().await.expect("control plane starts");
        install_tenant_roles(&env).await;
        let client = env
            .crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"))
            .await
            .expect("the operator's client");
        let manager = Manager::builder(client)
            .with_controller(TenantReconciler)
            .start_for_tests()
            .await
            .expect("manager starts");
        let tenants = Api::all(env.client());
        Self {
            env,
            manager,
            tenants,
        }
    }

    async fn create(&self, name: &str, spec: TenantSpec) {
        self.tenants
            .create(&PostParams::default(), &Tenant::new(name, spec))
            .await
            .expect("create the Tenant");
    }

    async fn ready(&self, name: &str) -> Tenant {
        wait_for_condition(&self.tenants, name, READY, "True", self.env.timeout())
            .await
            .expect("the Tenant becomes Ready")
    }

    /// Waits for `Ready=False` and returns its reason and message.
    async fn refused(&self, name: &str) -> (String, String) {
        let tenant = wait_for_condition(&self.tenants, name, READY, "False", self.env.timeout())
            .await
            .expect("the Tenant is refused");
        let c = condition(&tenant, READY);
        (c.reason.clone(), c.message.clone())
    }

    async fn stop(self) {
        self.manager.shutdown().await.expect("clean shutdown");
        self.env.shutdown().await;
    }
}

/// Installs the ClusterRoles tenants' groups are bound to, as the operator's manifests do.
async fn install_tenant_roles(env: &TestEnv) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/tenant_roles.yaml");
    let text = std::fs::read_to_string(path).expect("tenant_roles.yaml");
    let api: Api<ClusterRole> = Api::all(env.client());
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let role: ClusterRole = serde::Deserialize::deserialize(doc).expect("a ClusterRole");
        let name = role.metadata.name.clone().expect("named");
        api.patch(&name, &PatchParams::apply("test"), &Patch::Apply(&role))
            .await
            .expect("apply the ClusterRole");
    }
}

fn condition<'a>(tenant: &'a Tenant, type_: &str) -> &'a mni_operator::Condition {
    tenant
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
        .unwrap_or_else(|| panic!("no {type_} condition on {tenant:?}"))
}

fn quota(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, QuotaQuantity> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), QuotaQuantity::from(*v)))
        .collect()
}

fn groups(binding: &RoleBinding) -> Vec<String> {
    binding
        .subjects
        .iter()
        .flatten()
        .map(|s| format!("{}:{}", s.kind, s.name))
        .collect()
}

#[tokio::test]
async fn a_tenant_gets_isolated_namespaces_with_quota_limits_and_access() {
    let f = Fixture::start(false).await;
    f.create(
        "acme",
        TenantSpec {
            quota: quota(&[("configmaps", "10"), ("requests.cpu", "4")]),
            admins: vec!["acme-admins".into()],
            viewers: vec!["acme-viewers".into()],
            ..TenantSpec::default()
        },
    )
    .await;
    let tenant = f.ready("acme").await;
    let status = tenant.status.clone().expect("status");
    assert_eq!(status.namespaces, ["tenant-acme"]);
    assert_eq!(status.path, ["acme"]);
    assert_eq!(status.observed_generation, Some(1));
    let vpc = condition(&tenant, "DefaultVPC");
    assert_eq!(
        (vpc.status.as_str(), vpc.reason.as_str()),
        ("False", "VPCServiceNotInstalled")
    );

    let client = f.env.client();
    let ns: Namespace = Api::all(client.clone()).get("tenant-acme").await.unwrap();
    let labels = ns.metadata.labels.clone().unwrap();
    assert_eq!(labels["platform.mni.dev/tenant"], "acme");
    assert_eq!(labels["pod-security.kubernetes.io/enforce"], "restricted");
    let owner = &ns.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Tenant", "acme")
    );

    let rq: ResourceQuota = Api::namespaced(client.clone(), "tenant-acme")
        .get("tenant-quota")
        .await
        .unwrap();
    let hard = rq.spec.unwrap().hard.unwrap();
    assert_eq!(hard["configmaps"].0, "10");
    assert_eq!(hard["requests.cpu"].0, "4");
    let lr: LimitRange = Api::namespaced(client.clone(), "tenant-acme")
        .get("tenant-limits")
        .await
        .unwrap();
    let item = &lr.spec.unwrap().limits[0];
    assert_eq!(item.default.as_ref().unwrap()["memory"].0, "512Mi");
    let np: NetworkPolicy = Api::namespaced(client.clone(), "tenant-acme")
        .get("tenant-isolation")
        .await
        .unwrap();
    let np = serde_json::to_value(np.spec.unwrap()).unwrap();
    assert_eq!(np["policyTypes"], serde_json::json!(["Ingress"]));
    assert_eq!(np["podSelector"], serde_json::json!({}));
    assert_eq!(
        np["ingress"][0]["from"][0]["namespaceSelector"]["matchExpressions"][0],
        serde_json::json!({"key": "platform.mni.dev/tenant", "operator": "In", "values": ["acme"]})
    );
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), "tenant-acme");
    let admins = bindings.get("tenant-admins").await.unwrap();
    assert_eq!(admins.role_ref.name, "mni-platform-tenant-admin");
    assert_eq!(groups(&admins), ["Group:acme-admins"]);
    let viewers = bindings.get("tenant-viewers").await.unwrap();
    assert_eq!(viewers.role_ref.name, "mni-platform-tenant-viewer");
    assert_eq!(groups(&viewers), ["Group:acme-viewers"]);

    // Usage against quota: the ConfigMaps in the namespace, as the ResourceQuota counts them.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "tenant-acme");
    for name in ["one", "two"] {
        let cm = ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        cms.create(&PostParams::default(), &cm).await.unwrap();
    }
    let count = cms.list(&ListParams::default()).await.unwrap().items.len();
    let want = count.to_string();
    let tenant = wait_for(
        &f.tenants,
        "acme",
        |t| {
            t.status
                .as_ref()
                .and_then(|s| s.quota.as_ref())
                .and_then(|q| q.used.get("configmaps"))
                .is_some_and(|used| *used == want)
        },
        Duration::from_secs(20),
    )
    .await
    .expect("status.quota.used counts the ConfigMaps");
    let q = tenant.status.unwrap().quota.unwrap();
    assert_eq!(q.hard["configmaps"], "10");
    assert!(count >= 2, "{count}");

    // Deleting the tenant deletes its namespaces.
    f.tenants
        .delete("acme", &DeleteParams::default())
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    wait_deleted(&namespaces, "tenant-acme", Duration::from_secs(30))
        .await
        .expect("the namespace goes with its tenant");
    f.stop().await;
}

#[tokio::test]
async fn sub_tenants_nest_inside_their_parent_and_its_quota() {
    let f = Fixture::start(false).await;
    f.create(
        "acme",
        TenantSpec {
            quota: quota(&[("pods", "10")]),
            admins: vec!["acme-admins".into()],
            ..TenantSpec::default()
        },
    )
    .await;
    f.ready("acme").await;
    f.create(
        "dev",
        TenantSpec {
            parent: Some("acme".into()),
            quota: quota(&[("pods", "6")]),
            admins: vec!["dev-admins".into()],
            ..TenantSpec::default()
        },
    )
    .await;
    let dev = f.ready("dev").await;
    let status = dev.status.clone().unwrap();
    assert_eq!(status.namespaces, ["tenant-acme-dev"]);
    assert_eq!(status.path, ["acme", "dev"]);
    assert!(
        dev.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|r| r.name == "acme"),
        "the sub-tenant is owned by its parent"
    );
    let client = f.env.client();
    let ns: Namespace = Api::all(client.clone())
        .get("tenant-acme-dev")
        .await
        .unwrap();
    let labels = ns.metadata.labels.unwrap();
    assert_eq!(labels["platform.mni.dev/tenant"], "dev");
    assert_eq!(labels["tenant.platform.mni.dev/acme"], "true");
    let admins: RoleBinding = Api::namespaced(client.clone(), "tenant-acme-dev")
        .get("tenant-admins")
        .await
        .unwrap();
    assert_eq!(groups(&admins), ["Group:dev-admins", "Group:acme-admins"]);

    // A second child that would overflow the parent's quota is refused, and gets nothing.
    f.create(
        "qa",
        TenantSpec {
            parent: Some("acme".into()),
            quota: quota(&[("pods", "6")]),
            ..TenantSpec::default()
        },
    )
    .await;
    let (reason, message) = f.refused("qa").await;
    assert_eq!(reason, "QuotaExceedsParent");
    assert!(
        message.contains(r#"spec.quota.pods: the sub-tenants of "acme" would ask for 12 together, more than its quota of 10"#),
        "{message}"
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(
        namespaces
            .get_opt("tenant-acme-qa")
            .await
            .unwrap()
            .is_none()
    );

    // Deleting the parent deletes the subtree.
    f.tenants
        .delete("acme", &DeleteParams::default())
        .await
        .unwrap();
    wait_deleted(&f.tenants, "dev", Duration::from_secs(30))
        .await
        .expect("the sub-tenant goes with its parent");
    wait_deleted(&namespaces, "tenant-acme-dev", Duration::from_secs(30))
        .await
        .expect("and its namespace");
    f.stop().await;
}

#[tokio::test]
async fn overlapping_namespaces_and_invalid_quotas_are_refused_with_nothing_created() {
    let f = Fixture::start(false).await;
    f.create("acme", TenantSpec::default()).await;
    f.ready("acme").await;
    let client = f.env.client();
    let namespaces: Api<Namespace> = Api::all(client.clone());

    // Claiming another tenant's namespace.
    f.create(
        "thief",
        TenantSpec {
            namespaces: vec!["thief-own".into(), "tenant-acme".into()],
            ..TenantSpec::default()
        },
    )
    .await;
    let (reason, message) = f.refused("thief").await;
    assert_eq!(reason, "NamespaceConflict");
    assert!(
        message.contains(r#"namespace "tenant-acme" belongs to tenant "acme""#),
        "{message}"
    );
    assert!(namespaces.get_opt("thief-own").await.unwrap().is_none());

    // Claiming a namespace that exists outside any tenant.
    let legacy = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some("legacy".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    namespaces
        .create(&PostParams::default(), &legacy)
        .await
        .unwrap();
    f.create(
        "squatter",
        TenantSpec {
            namespaces: vec!["squatter-own".into(), "legacy".into()],
            ..TenantSpec::default()
        },
    )
    .await;
    let (reason, message) = f.refused("squatter").await;
    assert_eq!(reason, "NamespaceConflict");
    assert!(
        message.contains(r#"namespace "legacy" already exists and belongs to no tenant"#),
        "{message}"
    );
    assert!(namespaces.get_opt("squatter-own").await.unwrap().is_none());
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), "legacy");
    assert!(bindings.get_opt("tenant-admins").await.unwrap().is_none());

    // An unparseable quantity: the schema refuses it, naming the field.
    let err = f
        .tenants
        .create(
            &PostParams::default(),
            &Tenant::new(
                "bad",
                TenantSpec {
                    quota: quota(&[("pods", "lots")]),
                    ..TenantSpec::default()
                },
            ),
        )
        .await
        .expect_err("an unparseable quantity is refused");
    assert!(err.to_string().contains("spec.quota.pods"), "{err}");

    // A negative one parses: the controller refuses it, naming the field.
    f.create(
        "negative",
        TenantSpec {
            quota: quota(&[("requests.cpu", "-1")]),
            ..TenantSpec::default()
        },
    )
    .await;
    let (reason, message) = f.refused("negative").await;
    assert_eq!(reason, "InvalidQuota");
    assert!(
        message.contains(r#"spec.quota.requests.cpu: "-1" is not a valid quantity"#),
        "{message}"
    );
    assert!(
        namespaces
            .get_opt("tenant-negative")
            .await
            .unwrap()
            .is_none()
    );
    f.stop().await;
}

#[tokio::test]
async fn a_tenant_gets_a_default_vpc_when_the_vpc_service_is_installed() {
    let f = Fixture::start(true).await;
    f.create(
        "acme",
        TenantSpec {
            namespaces: vec!["acme-prod".into(), "acme-stage".into()],
            ..TenantSpec::default()
        },
    )
    .await;
    let tenant = f.ready("acme").await;
    let vpc = condition(&tenant, "DefaultVPC");
    assert_eq!(vpc.status.as_str(), "True");
    assert_eq!(vpc.message, "VirtualPrivateCloud acme-prod/default");
    let resource = ApiResource {
        group: "network.mni.dev".into(),
        version: "v1alpha1".into(),
        api_version: "network.mni.dev/v1alpha1".into(),
        kind: "VirtualPrivateCloud".into(),
        plural: "virtualprivateclouds".into(),
    };
    let vpcs: Api<DynamicObject> = Api::namespaced_with(f.env.client(), "acme-prod", &resource);
    let vpc = vpcs.get("default").await.expect("the default VPC");
    assert_eq!(
        vpc.data["spec"]["namespaces"],
        serde_json::json!(["acme-prod", "acme-stage"])
    );
    assert_eq!(vpc.metadata.owner_references.unwrap()[0].name, "acme");
    f.stop().await;
}

fn vpc_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("network.mni.dev", "v1alpha1", "VirtualPrivateCloud"),
        "virtualprivateclouds",
    )
}

fn instance_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("compute.mni.dev", "v1alpha1", "Instance"),
        "instances",
    )
}

/// A VPC named `name` with one subnet.
fn vpc(name: &str) -> DynamicObject {
    let mut vpc = DynamicObject::new(name, &vpc_resource());
    vpc.data = serde_json::json!({
        "spec": {"subnets": [{"name": "web", "cidrBlock": "10.1.0.0/24"}]}
    });
    vpc
}

/// The VM service's sample Instance, named `name`.
fn instance(name: &str) -> DynamicObject {
    let mut vm: DynamicObject = serde_yaml::from_str(INSTANCE_SAMPLE).expect("the sample");
    vm.metadata = kube::api::ObjectMeta {
        name: Some(name.into()),
        ..Default::default()
    };
    vm
}

/// A bearer token (TokenRequest API) for a new ServiceAccount `namespace/name`, made with
/// its namespace: it authenticates as a member of `system:serviceaccounts:NAMESPACE`.
async fn token(env: &TestEnv, namespace: &str, name: &str) -> String {
    let mut ns = Namespace::default();
    ns.metadata.name = Some(namespace.into());
    Api::<Namespace>::all(env.client())
        .create(&PostParams::default(), &ns)
        .await
        .expect("the namespace");
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client(), namespace);
    let mut account = ServiceAccount::default();
    account.metadata.name = Some(name.into());
    accounts
        .create(&PostParams::default(), &account)
        .await
        .expect("the ServiceAccount");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .expect("a TokenRequest")
        .status
        .and_then(|s| s.token)
        .expect("a token")
}

/// kubectl with a kubeconfig whose only credentials are `token`; its stdout, trimmed, and
/// whether it succeeded. It runs off the test's runtime, which also serves the API server
/// kubectl talks to.
async fn kubectl(env: &TestEnv, token: &str, args: &[&str]) -> (String, bool) {
    let path = std::env::temp_dir().join(format!(
        "mni-platform-{}-{}.kubeconfig",
        std::process::id(),
        &token[token.len() - 12..]
    ));
    std::fs::write(&path, env.kubeconfig().replace(env.admin_token(), token))
        .expect("write the kubeconfig");
    let mut command = Command::new("kubectl");
    command
        .arg("--kubeconfig")
        .arg(&path)
        .arg("--request-timeout=20s")
        .args(args);
    let args = args.join(" ");
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("kubectl's thread")
        .expect("kubectl runs (it must be on PATH)");
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if stdout.is_empty() {
        eprintln!("kubectl {args}: {}", String::from_utf8_lossy(&out.stderr));
    }
    (stdout, out.status.success())
}

fn forbidden(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 403)
}

#[tokio::test]
async fn a_tenant_admin_token_manages_its_tenant_and_nothing_of_another() {
    let f = Fixture::start(true).await;
    for name in ["a", "b"] {
        let spec = TenantSpec {
            admins: vec![format!("system:serviceaccounts:team-{name}")],
            ..TenantSpec::default()
        };
        f.create(name, spec).await;
    }
    for name in ["a", "b"] {
        f.ready(name).await;
    }
    let alice = token(&f.env, "team-a", "alice").await;
    let as_alice = |namespace: &str, resource: &ApiResource| -> Api<DynamicObject> {
        let client = f
            .env
            .client_with_token(&alice, namespace)
            .expect("a client with the token");
        Api::namespaced_with(client, namespace, resource)
    };

    // In her tenant: VPCs and VMs, created, listed, changed and deleted.
    let vpcs_a = as_alice("tenant-a", &vpc_resource());
    vpcs_a
        .create(&PostParams::default(), &vpc("web"))
        .await
        .expect("A's admin creates a VPC in A");
    let names: Vec<String> = vpcs_a
        .list(&ListParams::default())
        .await
        .expect("and lists A's VPCs")
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect();
    assert!(names.contains(&"web".to_owned()), "{names:?}");
    assert!(names.contains(&"default".to_owned()), "{names:?}");
    let vms_a = as_alice("tenant-a", &instance_resource());
    vms_a
        .create(&PostParams::default(), &instance("vm1"))
        .await
        .expect("A's admin creates a VM in A");
    vms_a
        .patch(
            "vm1",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"runStrategy": "Halted"}})),
        )
        .await
        .expect("and changes it");
    vms_a
        .delete("vm1", &DeleteParams::default())
        .await
        .expect("and deletes it");

    // In tenant B: nothing, neither read nor write, for VPCs, VMs or Secrets.
    let vpcs_b = as_alice("tenant-b", &vpc_resource());
    let err = vpcs_b.get("default").await.expect_err("no read in B");
    assert!(forbidden(&err), "{err}");
    let err = vpcs_b
        .list(&ListParams::default())
        .await
        .expect_err("no list in B");
    assert!(forbidden(&err), "{err}");
    let err = vpcs_b
        .create(&PostParams::default(), &vpc("intruder"))
        .await
        .expect_err("no create in B");
    assert!(forbidden(&err), "{err}");
    let err = vpcs_b
        .delete("default", &DeleteParams::default())
        .await
        .expect_err("no delete in B");
    assert!(forbidden(&err), "{err}");
    let err = as_alice("tenant-b", &instance_resource())
        .create(&PostParams::default(), &instance("intruder"))
        .await
        .expect_err("no VM in B");
    assert!(forbidden(&err), "{err}");
    let err = Api::<Secret>::namespaced(
        f.env.client_with_token(&alice, "tenant-b").expect("client"),
        "tenant-b",
    )
    .list(&ListParams::default())
    .await
    .expect_err("no Secrets of B");
    assert!(forbidden(&err), "{err}");
    // B's default VPC is untouched.
    Api::<DynamicObject>::namespaced_with(f.env.client(), "tenant-b", &vpc_resource())
        .get("default")
        .await
        .expect("B's default VPC is still there");

    // kubectl, with the token alone, agrees.
    let vpcs = "virtualprivateclouds.network.mni.dev";
    let vms = "instances.compute.mni.dev";
    for (verb, resource, namespace, expected) in [
        ("create", vpcs, "tenant-a", "yes"),
        ("delete", vms, "tenant-a", "yes"),
        ("create", vpcs, "tenant-b", "no"),
        ("get", vms, "tenant-b", "no"),
        ("list", "secrets", "tenant-b", "no"),
        // The tenant's isolation is the platform's, not the tenant admin's, to change.
        ("delete", "networkpolicies", "tenant-a", "no"),
        ("update", "resourcequotas", "tenant-a", "no"),
        ("create", "namespaces", "", "no"),
    ] {
        let mut args = vec!["auth", "can-i", verb, resource];
        if !namespace.is_empty() {
            args.extend(["-n", namespace]);
        }
        let (answer, _) = kubectl(&f.env, &alice, &args).await;
        assert_eq!(
            answer, expected,
            "kubectl auth can-i {verb} {resource} -n {namespace}"
        );
    }
    let (out, ok) = kubectl(
        &f.env,
        &alice,
        &["get", vpcs, "-n", "tenant-a", "-o", "name"],
    )
    .await;
    assert!(
        ok && out.contains("virtualprivatecloud.network.mni.dev/web"),
        "{out}"
    );
    let (_, ok) = kubectl(&f.env, &alice, &["get", vpcs, "-n", "tenant-b"]).await;
    assert!(!ok, "kubectl get in tenant B must be refused");

    // The network policies are in place, and A's admin can see hers.
    let (out, ok) = kubectl(
        &f.env,
        &alice,
        &["get", "networkpolicies", "-n", "tenant-a", "-o", "name"],
    )
    .await;
    assert!(ok && !out.is_empty(), "{out}");
    for namespace in ["tenant-a", "tenant-b"] {
        let policies = Api::<NetworkPolicy>::namespaced(f.env.client(), namespace)
            .list(&ListParams::default())
            .await
            .expect("list NetworkPolicies");
        assert!(
            !policies.items.is_empty(),
            "no NetworkPolicy in {namespace}"
        );
    }

    // The committed sample, applied as a cluster administrator would, is a working tenant.
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/samples/platform_v1alpha1_tenant.yaml"
    );
    let admin = f.env.admin_token().to_owned();
    let (out, ok) = kubectl(&f.env, &admin, &["apply", "-f", sample]).await;
    assert!(ok, "kubectl apply of the sample: {out}");
    let tenant = f.ready("tenant-sample").await;
    assert_eq!(
        tenant.status.expect("status").namespaces,
        ["tenant-tenant-sample"]
    );
    f.stop().await;
}
