// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `VirtualPrivateCloudReconciler` against an in-process control plane (`mni-testkit`) with
//! the fake Kube-OVN controller, running as the operator's own ServiceAccount with the rules of
//! `config/rbac/role.yaml`: Kube-OVN objects appear, are labelled back to their owner, report
//! ready; removed items are pruned; deletion cleans up even when the operator was stopped.

use std::sync::Arc;
use std::time::Duration;

use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use mni_kubeovn::v1 as ovn;
use mni_operator::{ControllerOptions, Manager, Metrics, READY, RunningManager};
use mni_testkit::{TestEnv, wait_deleted, wait_for, wait_for_condition};

use network_operator::api::network_v1alpha1::DnatRule;
use network_operator::api::network_v1alpha1::Eip;
use network_operator::api::network_v1alpha1::NatGateway;
use network_operator::api::network_v1alpha1::SnatRule;
use network_operator::api::network_v1alpha1::SubnetSpec;
use network_operator::api::network_v1alpha1::VirtualPrivateCloud;
use network_operator::api::network_v1alpha1::VirtualPrivateCloudSpec;
use network_operator::controllers::kube_ovn_orphans::KubeOvnOrphanReconciler;
use network_operator::controllers::virtual_private_cloud::VirtualPrivateCloudReconciler;
use network_operator::controllers::virtual_private_cloud::upstream::OWNER_UID;
use network_operator::controllers::virtual_private_cloud::upstream::SPEC_NAME;

const NAMESPACE: &str = "default";

async fn start_env() -> TestEnv {
    TestEnv::builder()
        .with_crds(network_operator::api::crds())
        .with_kube_ovn(true)
        .start()
        .await
        .expect("control plane starts")
}

/// The VPC controller and the orphan sweeper, as `src/main.rs` registers them.
async fn start_manager(env: &TestEnv) -> RunningManager {
    start_manager_with(env, Arc::new(Metrics::new())).await
}

/// [`start_manager`], counting into `metrics`.
async fn start_manager_with(env: &TestEnv, metrics: Arc<Metrics>) -> RunningManager {
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    Manager::builder(client.await.expect("the operator's client"))
        .with_metrics(metrics)
        .with_controller(VirtualPrivateCloudReconciler)
        .with_controller_options(
            KubeOvnOrphanReconciler,
            ControllerOptions::default().with_error_reporting(false),
        )
        .start_for_tests()
        .await
        .expect("manager starts")
}

fn subnet(name: &str, cidr: &str) -> SubnetSpec {
    SubnetSpec {
        name: name.to_owned(),
        cidr_block: cidr.to_owned(),
        ..SubnetSpec::default()
    }
}

fn with_nat(mut spec: VirtualPrivateCloudSpec) -> VirtualPrivateCloudSpec {
    spec.nat_gateway = Some(NatGateway {
        lan_ip: "10.0.1.254".to_owned(),
        external_subnet: "ovn-vpc-external-network".to_owned(),
        eips: vec![
            Eip {
                name: "egress".to_owned(),
            },
            Eip {
                name: "ingress".to_owned(),
            },
        ],
        snat_rules: vec![SnatRule {
            name: "web-out".to_owned(),
            eip: "egress".to_owned(),
            internal_cidr: "10.0.1.0/24".to_owned(),
        }],
        dnat_rules: vec![DnatRule {
            name: "web-https".to_owned(),
            eip: "ingress".to_owned(),
            external_port: 443,
            internal_ip: "10.0.1.10".to_owned(),
            internal_port: 8443,
            ..DnatRule::default()
        }],
    });
    spec
}

fn two_subnets() -> VirtualPrivateCloudSpec {
    VirtualPrivateCloudSpec {
        subnets: vec![
            subnet("web", "10.0.1.0/24,fd00:10:1::/64"),
            subnet("db", "10.0.2.0/24"),
        ],
        ..VirtualPrivateCloudSpec::default()
    }
}

/// The names of the Kube-OVN objects of kind `T` labelled with `uid`.
async fn owned<T>(env: &TestEnv, uid: &str) -> Vec<String>
where
    T: kube::Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned,
{
    let list = Api::<T>::all(env.client())
        .list(&ListParams::default().labels(&format!("{OWNER_UID}={uid}")))
        .await
        .expect("list");
    let mut names: Vec<String> = list.items.iter().map(ResourceExt::name_any).collect();
    names.sort();
    names
}

/// Every Kube-OVN object labelled with `uid`, kind by kind.
async fn all_owned(env: &TestEnv, uid: &str) -> Vec<String> {
    let mut all = owned::<ovn::Vpc>(env, uid).await;
    all.extend(owned::<ovn::Subnet>(env, uid).await);
    all.extend(owned::<ovn::VpcNatGateway>(env, uid).await);
    all.extend(owned::<ovn::IptablesEIP>(env, uid).await);
    all.extend(owned::<ovn::IptablesSnatRule>(env, uid).await);
    all.extend(owned::<ovn::IptablesDnatRule>(env, uid).await);
    all
}

async fn wait_until_none_owned(env: &TestEnv, uid: &str) {
    let deadline = tokio::time::Instant::now() + env.timeout();
    loop {
        let left = all_owned(env, uid).await;
        if left.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "Kube-OVN objects left behind: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_vpc_becomes_kube_ovn_objects_and_reports_their_status() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    let created = api
        .create(
            &PostParams::default(),
            &VirtualPrivateCloud::new("prod", with_nat(two_subnets())),
        )
        .await
        .expect("create");
    let uid = created.uid().expect("uid");
    let ready = wait_for_condition(&api, "prod", READY, "True", env.timeout())
        .await
        .expect("the VirtualPrivateCloud becomes Ready");

    let vpc = Api::<ovn::Vpc>::all(env.client())
        .get("default-prod")
        .await
        .expect("the Kube-OVN Vpc");
    assert_eq!(vpc.labels()[OWNER_UID], uid);
    assert_eq!(vpc.spec.namespaces, [NAMESPACE]);
    assert_eq!(vpc.spec.static_routes[0].next_hop_ip, "10.0.1.254");
    let subnets: Api<ovn::Subnet> = Api::all(env.client());
    let web = subnets.get("default-prod-web").await.expect("subnet web");
    assert_eq!(web.spec.vpc.as_deref(), Some("default-prod"));
    assert_eq!(web.spec.protocol, Some(ovn::Protocol::Dual));
    assert_eq!(web.spec.gateway.as_deref(), Some("10.0.1.1,fd00:10:1::1"));
    assert_eq!(web.labels()[SPEC_NAME], "web");
    assert_eq!(
        owned::<ovn::IptablesEIP>(&env, &uid).await,
        ["default-prod-egress", "default-prod-ingress"]
    );
    let dnat = Api::<ovn::IptablesDnatRule>::all(env.client())
        .get("default-prod-web-https")
        .await
        .expect("the DNAT rule");
    assert_eq!(dnat.spec.eip, "default-prod-ingress");
    assert_eq!(dnat.spec.external_port, "443");

    let status = ready.status.expect("status");
    assert_eq!(status.vpc.as_deref(), Some("default-prod"));
    assert_eq!(status.subnets_ready.as_deref(), Some("2/2"));
    let web = &status.subnets[0];
    assert_eq!((web.name.as_str(), web.protocol.as_str()), ("web", "Dual"));
    assert!(web.v4_available_ips.unwrap_or_default() > 0.0, "{web:?}");
    assert!(web.v6_available_ips.unwrap_or_default() > 0.0, "{web:?}");
    let db = &status.subnets[1];
    assert!(db.v4_available_ips.unwrap_or_default() > 0.0 && db.v6_available_ips.is_none());
    let nat = status.nat_gateway.expect("NAT status");
    assert!(nat.ready);
    assert!(
        nat.eips.iter().all(|e| e.ready && e.ip.is_some()),
        "{nat:?}"
    );
    let validated = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Validated")
        .expect("Validated");
    assert_eq!(validated.status.as_str(), "True");

    // Removing a subnet, an EIP and its rule deletes their Kube-OVN objects.
    let mut obj = api.get("prod").await.expect("get");
    obj.spec.subnets.retain(|s| s.name != "db");
    let nat = obj.spec.nat_gateway.as_mut().expect("NAT");
    nat.eips.retain(|e| e.name != "ingress");
    nat.dnat_rules.clear();
    api.replace("prod", &PostParams::default(), &obj)
        .await
        .expect("replace");
    wait_deleted(&subnets, "default-prod-db", env.timeout())
        .await
        .expect("subnet db is pruned");
    let eips: Api<ovn::IptablesEIP> = Api::all(env.client());
    wait_deleted(&eips, "default-prod-ingress", env.timeout())
        .await
        .expect("EIP ingress is pruned");
    let pruned = wait_for(
        &api,
        "prod",
        |v: &VirtualPrivateCloud| {
            v.status
                .as_ref()
                .is_some_and(|s| s.subnets_ready.as_deref() == Some("1/1"))
        },
        env.timeout(),
    )
    .await
    .expect("the status follows");
    assert_eq!(pruned.status.expect("status").subnets.len(), 1);

    api.delete("prod", &DeleteParams::default())
        .await
        .expect("delete");
    wait_deleted(&api, "prod", env.timeout())
        .await
        .expect("the finalizer lets go");
    assert!(all_owned(&env, &uid).await.is_empty());

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

/// The sum of the samples of `metric` whose line has every one of `labels`, in Prometheus text.
fn sum(text: &str, metric: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{'))
        })
        .filter(|l| labels.iter().all(|label| l.contains(label)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn a_converged_vpc_is_reconciled_without_writes() {
    let env = start_env().await;
    let metrics = Arc::new(Metrics::new());
    let manager = start_manager_with(&env, metrics.clone()).await;
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    api.create(
        &PostParams::default(),
        &VirtualPrivateCloud::new("quiet", with_nat(two_subnets())),
    )
    .await
    .expect("create");
    wait_for_condition(&api, "quiet", READY, "True", env.timeout())
        .await
        .expect("the VirtualPrivateCloud becomes Ready");
    let reconciles = || {
        sum(
            &metrics.encode(),
            "controller_runtime_reconcile_total",
            &["controller=\"virtual-private-cloud-controller\""],
        )
    };
    // Let the status writes of becoming Ready come back as events and settle.
    let mut settled = reconciles();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = reconciles();
        if now == settled {
            break;
        }
        settled = now;
    }
    let writes = |text: &str| {
        ["create", "update", "patch", "delete"]
            .iter()
            .map(|verb| {
                sum(
                    text,
                    "apiserver_request_total",
                    &[&format!("verb=\"{verb}\"")],
                )
            })
            .sum::<f64>()
    };
    let before = writes(&env.api_server_metrics().await.expect("metrics"));
    // Each annotation is an event, and each event a reconcile of the converged VPC (waited
    // for one at a time: reconciles of one object queued together are merged).
    for i in 0..3 {
        let seen = reconciles();
        api.patch(
            "quiet",
            &PatchParams::default(),
            &Patch::Merge(
                serde_json::json!({"metadata": {"annotations": {"poke": i.to_string()}}}),
            ),
        )
        .await
        .expect("annotate");
        tokio::time::timeout(env.timeout(), async {
            while reconciles() <= seen {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("a reconcile after annotation {i}:\n{}", metrics.encode()));
    }
    let after = writes(&env.api_server_metrics().await.expect("metrics"));
    assert_eq!(
        after - before,
        3.0,
        "the three annotations are the only writes: a converged VPC's reconcile sends none"
    );
    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

#[tokio::test]
async fn deleting_a_vpc_while_the_operator_is_stopped_leaves_nothing_behind() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    let created = api
        .create(
            &PostParams::default(),
            &VirtualPrivateCloud::new("doomed", with_nat(two_subnets())),
        )
        .await
        .expect("create");
    let uid = created.uid().expect("uid");
    wait_for_condition(&api, "doomed", READY, "True", env.timeout())
        .await
        .expect("Ready");
    assert_eq!(all_owned(&env, &uid).await.len(), 8);

    manager.shutdown().await.expect("the operator stops");
    api.delete("doomed", &DeleteParams::default())
        .await
        .expect("delete");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = api.get("doomed").await.expect("the finalizer holds it");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(all_owned(&env, &uid).await.len(), 8, "nothing ran");

    let manager = start_manager(&env).await;
    wait_deleted(&api, "doomed", env.timeout())
        .await
        .expect("the restarted operator cleans up");
    wait_until_none_owned(&env, &uid).await;

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

#[tokio::test]
async fn kube_ovn_objects_without_their_vpc_are_swept() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    let created = api
        .create(
            &PostParams::default(),
            &VirtualPrivateCloud::new("forgotten", two_subnets()),
        )
        .await
        .expect("create");
    let uid = created.uid().expect("uid");
    wait_for_condition(&api, "forgotten", READY, "True", env.timeout())
        .await
        .expect("Ready");
    manager.shutdown().await.expect("the operator stops");

    // Someone deletes the VPC and removes the finalizer by hand.
    api.delete("forgotten", &DeleteParams::default())
        .await
        .expect("delete");
    let patch = serde_json::json!({ "metadata": { "finalizers": null } });
    api.patch("forgotten", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("remove the finalizer");
    wait_deleted(&api, "forgotten", env.timeout())
        .await
        .expect("gone");
    assert_eq!(all_owned(&env, &uid).await.len(), 3, "left behind");

    let manager = start_manager(&env).await;
    wait_until_none_owned(&env, &uid).await;

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

#[tokio::test]
async fn a_failing_kube_ovn_object_is_named_in_degraded() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api: Api<VirtualPrivateCloud> = Api::namespaced(env.client(), NAMESPACE);
    // Two DNAT rules forward the same port of one EIP: Kube-OVN keeps the second not ready.
    let mut spec = with_nat(two_subnets());
    let nat = spec.nat_gateway.as_mut().expect("NAT");
    let mut second = nat.dnat_rules[0].clone();
    second.name = "web-https-again".to_owned();
    second.internal_ip = "10.0.1.11".to_owned();
    nat.dnat_rules.push(second);
    api.create(
        &PostParams::default(),
        &VirtualPrivateCloud::new("clash", spec),
    )
    .await
    .expect("create");
    let degraded = wait_for_condition(&api, "clash", "Degraded", "True", env.timeout())
        .await
        .expect("Degraded");
    let conditions = degraded.status.expect("status").conditions;
    let message = &conditions
        .iter()
        .find(|c| c.type_ == "Degraded")
        .expect("Degraded")
        .message;
    assert!(
        message.starts_with("IptablesDnatRule default-clash-web-https-again: "),
        "{message}"
    );
    let ready = conditions.iter().find(|c| c.type_ == READY).expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "UpstreamFailed")
    );

    // Dropping the second rule heals it.
    let mut obj = api.get("clash").await.expect("get");
    let nat = obj.spec.nat_gateway.as_mut().expect("NAT");
    nat.dnat_rules.truncate(1);
    api.replace("clash", &PostParams::default(), &obj)
        .await
        .expect("replace");
    wait_for_condition(&api, "clash", READY, "True", env.timeout())
        .await
        .expect("Ready again");
    let healed = wait_for_condition(&api, "clash", "Degraded", "False", env.timeout())
        .await
        .expect("not Degraded");
    assert!(
        healed
            .status
            .expect("status")
            .nat_gateway
            .expect("NAT")
            .ready
    );

    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
