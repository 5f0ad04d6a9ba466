//! The fake Kube-OVN controller against a real mNi API server: over HTTP through
//! `mni-testkit`'s `TestEnv::with_kube_ovn`, and over HTTPS with kubectl, as `mni-dev` serves.

use std::process::Command;
use std::time::Duration;

use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt};
use mni_kubeovn::v1::{
    IptablesDnatRule, IptablesDnatRuleSpec, IptablesEIP, IptablesEIPSpec, IptablesSnatRule,
    IptablesSnatRuleSpec, Protocol, READY, Subnet, SubnetSpec, VALIDATED, Vpc, VpcNatGateway,
    VpcNatGatewaySpec, VpcSpec, find_condition, is_condition_true,
};
use mni_testkit::{TestEnv, wait_for, wait_for_condition};

const TIMEOUT: Duration = Duration::from_secs(20);

async fn create<K>(client: &Client, object: K) -> anyhow::Result<K>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
{
    let api: Api<K> = Api::all(client.clone());
    Ok(api.create(&PostParams::default(), &object).await?)
}

fn tenant_subnet() -> Subnet {
    Subnet::new(
        "tenant-a-net",
        SubnetSpec {
            vpc: Some("tenant-a".into()),
            cidr_block: "10.0.1.0/24,fd00:10:1::/120".into(),
            exclude_ips: vec![
                "10.0.1.10..10.0.1.19".into(),
                "10.0.1.254".into(),
                "fd00:10:1::2..fd00:10:1::f".into(),
            ],
            namespaces: vec!["tenant-a".into()],
            ..SubnetSpec::default()
        },
    )
}

fn eip(name: &str) -> IptablesEIP {
    IptablesEIP::new(
        name,
        IptablesEIPSpec {
            nat_gw_dp: "tenant-a-gw".into(),
            ..IptablesEIPSpec::default()
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_gets_the_status_kube_ovn_would_give_it() -> anyhow::Result<()> {
    let env = TestEnv::builder().with_kube_ovn(true).start().await?;
    let client = env.client();
    let subnets: Api<Subnet> = Api::all(client.clone());
    let vpcs: Api<Vpc> = Api::all(client.clone());

    // A subnet before its VPC: not ready, and it says why.
    create(&client, tenant_subnet()).await?;
    let waiting = wait_for(
        &subnets,
        "tenant-a-net",
        |s: &Subnet| {
            s.status
                .as_ref()
                .and_then(|st| find_condition(&st.conditions, READY))
                .is_some_and(|c| c.reason.as_deref() == Some("VpcNotFound"))
        },
        TIMEOUT,
    )
    .await?;
    let status = waiting.status.clone().unwrap_or_default();
    assert!(is_condition_true(&status.conditions, VALIDATED));
    let ready = find_condition(&status.conditions, READY)
        .cloned()
        .unwrap_or_default();
    assert_eq!(ready.status, "False");
    assert!(
        ready.message.as_deref().unwrap_or("").contains("tenant-a"),
        "{ready:?}"
    );

    create(
        &client,
        Vpc::new(
            "tenant-a",
            VpcSpec {
                namespaces: vec!["tenant-a".into()],
                default_subnet: Some("tenant-a-net".into()),
                ..VpcSpec::default()
            },
        ),
    )
    .await?;
    let vpc = wait_for_condition(&vpcs, "tenant-a", READY, "True", TIMEOUT).await?;
    let vpc = wait_for(
        &vpcs,
        "tenant-a",
        |v: &Vpc| v.status.as_ref().is_some_and(|s| !s.subnets.is_empty()),
        TIMEOUT,
    )
    .await
    .unwrap_or(vpc);
    let vs = vpc.status.clone().unwrap_or_default();
    assert!(vs.standby);
    assert!(!vs.default);
    assert_eq!(vs.router.as_deref(), Some("tenant-a"));
    assert_eq!(vs.default_logical_switch.as_deref(), Some("tenant-a-net"));
    assert_eq!(vs.subnets, ["tenant-a-net"]);
    let cond = find_condition(&vs.conditions, READY)
        .cloned()
        .unwrap_or_default();
    assert_eq!(cond.observed_generation, vpc.metadata.generation);

    let subnet = wait_for_condition(&subnets, "tenant-a-net", READY, "True", TIMEOUT).await?;
    assert_eq!(subnet.spec.protocol, Some(Protocol::Dual));
    assert_eq!(
        subnet.spec.gateway.as_deref(),
        Some("10.0.1.1,fd00:10:1::1")
    );
    assert_eq!(subnet.spec.provider.as_deref(), Some("ovn"));
    let ss = subnet.status.clone().unwrap_or_default();
    // 254 usable − gateway − 10 (.10–.19) − .254.
    assert_eq!(ss.v4available_ips, 242.0);
    // 254 usable − gateway − 14 (::2–::f).
    assert_eq!(ss.v6available_ips, 239.0);
    assert_eq!((ss.v4using_ips, ss.v6using_ips), (0.0, 0.0));
    assert_eq!(
        ss.v4available_ip_range,
        "10.0.1.2-10.0.1.9,10.0.1.20-10.0.1.253"
    );

    // The NAT side: a gateway, two EIPs, an SNAT and a DNAT rule.
    create(
        &client,
        VpcNatGateway::new(
            "tenant-a-gw",
            VpcNatGatewaySpec {
                vpc: "tenant-a".into(),
                subnet: "tenant-a-net".into(),
                lan_ip: "10.0.1.254".into(),
                ..VpcNatGatewaySpec::default()
            },
        ),
    )
    .await?;
    create(&client, eip("eip-1")).await?;
    create(&client, eip("eip-2")).await?;
    create(
        &client,
        IptablesSnatRule::new(
            "tenant-a-snat",
            IptablesSnatRuleSpec {
                eip: "eip-1".into(),
                internal_cidr: "10.0.1.0/24".into(),
            },
        ),
    )
    .await?;
    create(
        &client,
        IptablesDnatRule::new(
            "tenant-a-dnat",
            IptablesDnatRuleSpec {
                eip: "eip-2".into(),
                external_port: "8888".into(),
                protocol: "tcp".into(),
                internal_ip: "10.0.1.3".into(),
                internal_port: "80".into(),
            },
        ),
    )
    .await?;

    let gateways: Api<VpcNatGateway> = Api::all(client.clone());
    let gw = wait_for(
        &gateways,
        "tenant-a-gw",
        |g: &VpcNatGateway| {
            g.status
                .as_ref()
                .is_some_and(|s| !s.external_subnets.is_empty())
        },
        TIMEOUT,
    )
    .await?;
    assert_eq!(
        gw.status.unwrap_or_default().external_subnets,
        ["ovn-vpc-external-network"]
    );

    let eips: Api<IptablesEIP> = Api::all(client.clone());
    let mut addresses = Vec::new();
    for name in ["eip-1", "eip-2"] {
        let e = wait_for(
            &eips,
            name,
            |e: &IptablesEIP| {
                e.status
                    .as_ref()
                    .is_some_and(|s| s.ready && !s.nat.is_empty())
            },
            TIMEOUT,
        )
        .await?;
        let st = e.status.clone().unwrap_or_default();
        assert!(is_condition_true(&st.conditions, READY), "{e:?}");
        assert_eq!(
            e.spec.v4ip, st.ip,
            "spec.v4ip is filled in, as upstream does"
        );
        assert!(e.spec.mac_address.starts_with("02:00:"), "{e:?}");
        addresses.push(st.ip.clone());
        let nat = if name == "eip-1" { "snat" } else { "dnat" };
        assert_eq!(st.nat, nat);
    }
    addresses.sort();
    assert_eq!(addresses, ["172.19.0.2", "172.19.0.3"]);

    let snats: Api<IptablesSnatRule> = Api::all(client.clone());
    let snat = wait_for(
        &snats,
        "tenant-a-snat",
        |r: &IptablesSnatRule| r.status.as_ref().is_some_and(|s| s.ready),
        TIMEOUT,
    )
    .await?;
    let eip1 = eips.get("eip-1").await?;
    let st = snat.status.unwrap_or_default();
    assert_eq!(st.v4ip, eip1.spec.v4ip);
    assert_eq!(st.nat_gw_dp, "tenant-a-gw");
    assert_eq!(st.internal_cidr, "10.0.1.0/24");
    assert!(is_condition_true(&st.conditions, READY));

    let dnats: Api<IptablesDnatRule> = Api::all(client.clone());
    let dnat = wait_for(
        &dnats,
        "tenant-a-dnat",
        |r: &IptablesDnatRule| r.status.as_ref().is_some_and(|s| s.ready),
        TIMEOUT,
    )
    .await?;
    let eip2 = eips.get("eip-2").await?;
    let st = dnat.status.unwrap_or_default();
    assert_eq!(st.v4ip, eip2.spec.v4ip);
    assert_eq!(
        (
            st.protocol.as_str(),
            st.internal_ip.as_str(),
            st.internal_port.as_str(),
            st.external_port.as_str(),
            st.nat_gw_dp.as_str()
        ),
        ("tcp", "10.0.1.3", "80", "8888", "tenant-a-gw")
    );

    // Addresses are never handed out twice: a freed one is reused only once its EIP is gone.
    eips.delete("eip-1", &DeleteParams::default()).await?;
    mni_testkit::wait_deleted(&eips, "eip-1", TIMEOUT).await?;
    create(&client, eip("eip-3")).await?;
    let e3 = wait_for(
        &eips,
        "eip-3",
        |e: &IptablesEIP| e.status.as_ref().is_some_and(|s| s.ready),
        TIMEOUT,
    )
    .await?;
    assert_ne!(e3.spec.v4ip, eip2.spec.v4ip);
    // The SNAT rule lost its EIP.
    let snat = wait_for(
        &snats,
        "tenant-a-snat",
        |r: &IptablesSnatRule| r.status.as_ref().is_some_and(|s| !s.ready),
        TIMEOUT,
    )
    .await?;
    let cond = snat
        .status
        .and_then(|s| find_condition(&s.conditions, READY).cloned())
        .unwrap_or_default();
    assert_eq!(cond.reason.as_deref(), Some("EipNotFound"), "{cond:?}");

    // A converged cluster sees no writes.
    let before = subnets.get("tenant-a-net").await?.resource_version();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        subnets.get("tenant-a-net").await?.resource_version(),
        before
    );

    env.shutdown().await;
    Ok(())
}

/// kubectl (which sends tokens only over TLS) against an HTTPS server, as `mni-dev up` serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_subnets_shows_the_printer_columns() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let identity = mni_apiserver::tls::TlsIdentity::load_or_create(&tmp.path().join("pki"), None)?;
    let server = mni_apiserver::Server::builder()
        .with_tls(identity)
        .start()
        .await?;
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(
        serde_yaml::from_str(&server.kubeconfig())?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    let client = Client::try_from(config)?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let sim = tokio::spawn(
        mni_kubeovn::simulator::Simulator::new(client.clone()).run(async {
            let _ = stopped.await;
        }),
    );
    // The simulator installs the CRDs; wait until a Vpc can be created.
    let vpcs: Api<Vpc> = Api::all(client.clone());
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        match vpcs
            .create(
                &PostParams::default(),
                &Vpc::new("tenant-a", VpcSpec::default()),
            )
            .await
        {
            Ok(_) => break,
            Err(e) if tokio::time::Instant::now() > deadline => return Err(e.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    create(&client, tenant_subnet()).await?;
    let subnets: Api<Subnet> = Api::all(client.clone());
    wait_for_condition(&subnets, "tenant-a-net", READY, "True", TIMEOUT).await?;

    let kubectl = |args: &[&str]| -> anyhow::Result<String> {
        let out = Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", &kubeconfig)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let table = kubectl(&["get", "subnets"])?;
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "PROVIDER",
            "VPC",
            "PROTOCOL",
            "CIDR",
            "PRIVATE",
            "NAT",
            "DEFAULT",
            "GATEWAYTYPE",
            "V4USED",
            "V4AVAILABLE",
            "V6USED",
            "V6AVAILABLE",
            "EXCLUDEIPS"
        ],
        "{table}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        row[..13],
        [
            "tenant-a-net",
            "ovn",
            "tenant-a",
            "Dual",
            "10.0.1.0/24,fd00:10:1::/120",
            "false",
            "false",
            "false",
            "distributed",
            "0",
            "242",
            "0",
            "239"
        ],
        "{table}"
    );
    let vpcs_table = kubectl(&["get", "vpc", "tenant-a"])?;
    assert!(vpcs_table.contains("STANDBY"), "{vpcs_table}");
    assert!(vpcs_table.contains("true"), "{vpcs_table}");
    let waited = kubectl(&[
        "wait",
        "--for=condition=Ready",
        "subnet/tenant-a-net",
        "--timeout=10s",
    ])?;
    assert!(waited.contains("condition met"), "{waited}");

    let _ = stop.send(());
    sim.await??;
    server.shutdown().await;
    Ok(())
}
