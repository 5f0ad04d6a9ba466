//! The fake controller's rules, one snapshot at a time.

use super::*;
use crate::v1::{
    IptablesDnatRuleSpec, IptablesEIPSpec, IptablesSnatRuleSpec, Protocol, SubnetSpec,
    VpcNatGatewaySpec, VpcSpec, is_condition_true,
};

fn now() -> Time {
    Time("2026-01-01T00:00:00Z".parse().expect("timestamp"))
}

fn later() -> Time {
    Time("2026-01-01T00:01:00Z".parse().expect("timestamp"))
}

fn settings() -> Settings {
    Settings {
        external_pool: Cidr::parse("172.19.0.0/24").expect("pool"),
    }
}

fn meta(name: &str, generation: i64) -> kube::api::ObjectMeta {
    kube::api::ObjectMeta {
        name: Some(name.to_string()),
        generation: Some(generation),
        ..Default::default()
    }
}

fn vpc(name: &str) -> Vpc {
    let mut v = Vpc::new(name, VpcSpec::default());
    v.metadata = meta(name, 1);
    v
}

fn subnet(name: &str, vpc: &str, cidr: &str, exclude: &[&str]) -> Subnet {
    let mut s = Subnet::new(
        name,
        SubnetSpec {
            vpc: Some(vpc.to_string()),
            cidr_block: cidr.to_string(),
            exclude_ips: exclude.iter().map(|e| e.to_string()).collect(),
            ..SubnetSpec::default()
        },
    );
    s.metadata = meta(name, 1);
    s
}

fn gateway(name: &str, vpc: &str, subnet: &str, lan_ip: &str) -> VpcNatGateway {
    let mut g = VpcNatGateway::new(
        name,
        VpcNatGatewaySpec {
            vpc: vpc.to_string(),
            subnet: subnet.to_string(),
            lan_ip: lan_ip.to_string(),
            ..VpcNatGatewaySpec::default()
        },
    );
    g.metadata = meta(name, 1);
    g
}

fn eip(name: &str, gw: &str, created: &str) -> IptablesEIP {
    let mut e = IptablesEIP::new(
        name,
        IptablesEIPSpec {
            nat_gw_dp: gw.to_string(),
            ..IptablesEIPSpec::default()
        },
    );
    e.metadata = meta(name, 1);
    e.metadata.creation_timestamp = Some(Time(created.parse().expect("created")));
    e
}

/// Applies the writes to the snapshot, as the API server would (merge patches).
fn apply(snapshot: &mut Snapshot, writes: &[Write]) {
    fn merge<K: Serialize + serde::de::DeserializeOwned>(object: &mut K, patch: &Value) {
        let mut value = serde_json::to_value(&*object).expect("json");
        json_merge(&mut value, patch);
        *object = serde_json::from_value(value).expect("object");
    }
    fn json_merge(target: &mut Value, patch: &Value) {
        match (target, patch) {
            (Value::Object(t), Value::Object(p)) => {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(k);
                    } else {
                        json_merge(t.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
            (t, p) => *t = p.clone(),
        }
    }
    fn find<'a, K: ResourceExt>(objects: &'a mut [K], name: &str) -> &'a mut K {
        objects
            .iter_mut()
            .find(|o| o.name_any() == name)
            .expect("object")
    }
    for w in writes {
        match w.kind {
            Kind::Vpc => merge(find(&mut snapshot.vpcs, &w.name), &w.patch),
            Kind::Subnet => merge(find(&mut snapshot.subnets, &w.name), &w.patch),
            Kind::VpcNatGateway => merge(find(&mut snapshot.gateways, &w.name), &w.patch),
            Kind::IptablesEip => merge(find(&mut snapshot.eips, &w.name), &w.patch),
            Kind::IptablesSnatRule => merge(find(&mut snapshot.snats, &w.name), &w.patch),
            Kind::IptablesDnatRule => merge(find(&mut snapshot.dnats, &w.name), &w.patch),
        }
    }
}

/// Plans and applies until nothing changes; panics if it does not converge.
fn converge(snapshot: &mut Snapshot) {
    for _ in 0..5 {
        let writes = plan(snapshot, &settings(), &now());
        if writes.is_empty() {
            // A later pass (new timestamp) must not write either.
            assert_eq!(plan(snapshot, &settings(), &later()), Vec::new());
            return;
        }
        apply(snapshot, &writes);
    }
    panic!("no convergence: {:#?}", plan(snapshot, &settings(), &now()));
}

#[test]
fn vpc_is_ready_and_lists_its_subnets() {
    let mut s = Snapshot {
        vpcs: vec![vpc("tenant-a")],
        subnets: vec![
            subnet("b-net", "tenant-a", "10.0.2.0/24", &[]),
            subnet("a-net", "tenant-a", "10.0.1.0/24", &[]),
            subnet("other", "tenant-b", "10.0.3.0/24", &[]),
        ],
        ..Snapshot::default()
    };
    s.vpcs[0].spec.default_subnet = Some("a-net".into());
    s.vpcs[0].spec.enable_external = Some(true);
    converge(&mut s);
    let status = s.vpcs[0].status.clone().expect("status");
    assert!(status.standby);
    assert!(!status.default);
    assert!(status.enable_external);
    assert_eq!(status.router.as_deref(), Some("tenant-a"));
    assert_eq!(status.default_logical_switch.as_deref(), Some("a-net"));
    assert_eq!(status.subnets, ["a-net", "b-net"]);
    let ready = crate::v1::find_condition(&status.conditions, READY).expect("Ready");
    assert_eq!(ready.status, "True");
    assert_eq!(ready.observed_generation, Some(1));

    // A subnet going away is reflected; the condition's timestamps stay.
    s.subnets.retain(|x| x.name_any() != "b-net");
    let writes = plan(&s, &settings(), &later());
    assert_eq!(
        writes,
        [Write {
            kind: Kind::Vpc,
            name: "tenant-a".into(),
            status: true,
            patch: json!({"status": {"subnets": ["a-net"]}}),
        }]
    );
}

#[test]
fn subnet_gets_defaults_counts_and_ready_once_its_vpc_exists() {
    let mut s = Snapshot {
        subnets: vec![subnet(
            "net",
            "tenant-a",
            "10.0.1.0/24,fd00:10:1::/120",
            &["10.0.1.10..10.0.1.19", "fd00:10:1::2..fd00:10:1::f"],
        )],
        ..Snapshot::default()
    };
    converge(&mut s);
    let sub = &s.subnets[0];
    assert_eq!(sub.spec.protocol, Some(Protocol::Dual));
    assert_eq!(sub.spec.provider.as_deref(), Some("ovn"));
    assert_eq!(sub.spec.gateway.as_deref(), Some("10.0.1.1,fd00:10:1::1"));
    assert_eq!(sub.spec.gateway_type, Some(GatewayType::Distributed));
    let status = sub.status.clone().expect("status");
    assert!(is_condition_true(&status.conditions, VALIDATED));
    let ready = crate::v1::find_condition(&status.conditions, READY).expect("Ready");
    assert_eq!(ready.status, "False");
    assert_eq!(ready.reason.as_deref(), Some("VpcNotFound"));
    assert!(
        ready
            .message
            .as_deref()
            .unwrap_or("")
            .contains("\"tenant-a\"")
    );
    assert_eq!(status.v4available_ips, 0.0);

    s.vpcs.push(vpc("tenant-a"));
    converge(&mut s);
    let status = s.subnets[0].status.clone().expect("status");
    assert!(is_condition_true(&status.conditions, READY));
    assert_eq!(status.v4available_ips, 243.0);
    assert_eq!(status.v6available_ips, 239.0);
    assert_eq!(status.v4using_ips, 0.0);
    assert_eq!(
        status.v4available_ip_range,
        "10.0.1.2-10.0.1.9,10.0.1.20-10.0.1.254"
    );
    assert_eq!(status.v6available_ip_range, "fd00:10:1::10-fd00:10:1::fe");
    let ready = crate::v1::find_condition(&status.conditions, READY).expect("Ready");
    assert_eq!(ready.last_transition_time, Some(now()));
}

#[test]
fn subnet_without_vpc_belongs_to_the_default_vpc_and_bad_cidr_is_not_validated() {
    let mut plain = subnet("plain", "", "10.16.0.0/16", &[]);
    plain.spec.vpc = None;
    let mut s = Snapshot {
        vpcs: vec![vpc(DEFAULT_VPC)],
        subnets: vec![plain, subnet("bad", DEFAULT_VPC, "10.0.0.0/33", &[])],
        ..Snapshot::default()
    };
    converge(&mut s);
    assert_eq!(s.subnets[0].spec.vpc.as_deref(), Some(DEFAULT_VPC));
    assert!(is_condition_true(
        &s.subnets[0].status.clone().expect("status").conditions,
        READY
    ));
    let bad = s.subnets[1].status.clone().expect("status");
    let validated = crate::v1::find_condition(&bad.conditions, VALIDATED).expect("Validated");
    assert_eq!(validated.status, "False");
    assert!(
        validated
            .message
            .as_deref()
            .unwrap_or("")
            .contains("10.0.0.0/33")
    );
    assert!(!is_condition_true(&bad.conditions, READY));
    let vpc = s.vpcs[0].status.clone().expect("status");
    assert!(vpc.default);
    assert_eq!(vpc.subnets, ["bad", "plain"]);
}

fn nat_world() -> Snapshot {
    Snapshot {
        vpcs: vec![vpc("tenant-a")],
        ips: Vec::new(),
        subnets: vec![subnet("net", "tenant-a", "10.0.1.0/24", &[])],
        gateways: vec![gateway("gw", "tenant-a", "net", "10.0.1.254")],
        eips: vec![
            eip("eip-b", "gw", "2026-01-01T00:00:02Z"),
            eip("eip-a", "gw", "2026-01-01T00:00:01Z"),
        ],
        snats: vec![IptablesSnatRule::new(
            "snat",
            IptablesSnatRuleSpec {
                eip: "eip-a".into(),
                internal_cidr: "10.0.1.0/24".into(),
            },
        )],
        dnats: vec![IptablesDnatRule::new(
            "dnat",
            IptablesDnatRuleSpec {
                eip: "eip-b".into(),
                external_port: "8888".into(),
                protocol: "tcp".into(),
                internal_ip: "10.0.1.3".into(),
                internal_port: "80".into(),
            },
        )],
    }
}

#[test]
fn eips_get_pool_addresses_oldest_first_and_rules_follow() {
    let mut s = nat_world();
    converge(&mut s);
    let gw = s.gateways[0].status.clone().expect("gw status");
    assert_eq!(gw.external_subnets, [DEFAULT_EXTERNAL_SUBNET]);

    let a = s.eips.iter().find(|e| e.name_any() == "eip-a").expect("a");
    let b = s.eips.iter().find(|e| e.name_any() == "eip-b").expect("b");
    assert_eq!(a.spec.v4ip, "172.19.0.2");
    assert_eq!(a.spec.mac_address, "02:00:ac:13:00:02");
    assert_eq!(
        a.spec.external_subnet.as_deref(),
        Some(DEFAULT_EXTERNAL_SUBNET)
    );
    assert_eq!(
        a.labels().get(EIP_V4_IP_LABEL).map(String::as_str),
        Some("172.19.0.2")
    );
    assert_eq!(
        a.labels()
            .get(VPC_NAT_GATEWAY_NAME_LABEL)
            .map(String::as_str),
        Some("gw")
    );
    assert_eq!(
        a.labels().get(SUBNET_NAME_LABEL).map(String::as_str),
        Some(DEFAULT_EXTERNAL_SUBNET)
    );
    assert_eq!(b.spec.v4ip, "172.19.0.3");
    let sa = a.status.clone().expect("status");
    assert!(sa.ready);
    assert_eq!(sa.ip, "172.19.0.2");
    assert_eq!(sa.nat, "snat");
    assert!(is_condition_true(&sa.conditions, READY));
    assert_eq!(b.status.clone().expect("status").nat, "dnat");

    let snat = s.snats[0].status.clone().expect("snat status");
    assert!(snat.ready);
    assert_eq!(snat.v4ip, "172.19.0.2");
    assert_eq!(snat.nat_gw_dp, "gw");
    assert_eq!(snat.internal_cidr, "10.0.1.0/24");
    let dnat = s.dnats[0].status.clone().expect("dnat status");
    assert!(dnat.ready);
    assert_eq!(dnat.v4ip, "172.19.0.3");
    assert_eq!(
        (
            dnat.protocol.as_str(),
            dnat.internal_ip.as_str(),
            dnat.internal_port.as_str(),
            dnat.external_port.as_str()
        ),
        ("tcp", "10.0.1.3", "80", "8888")
    );

    // A new EIP never gets a held address, even one held only in status.
    let mut held_in_status = eip("eip-c", "gw", "2026-01-01T00:00:03Z");
    held_in_status.status = Some(IptablesEIPStatus {
        ip: "172.19.0.4".into(),
        ..IptablesEIPStatus::default()
    });
    s.eips.push(held_in_status);
    s.eips.push(eip("eip-d", "gw", "2026-01-01T00:00:00Z"));
    converge(&mut s);
    let ip_of = |n: &str| {
        s.eips
            .iter()
            .find(|e| e.name_any() == n)
            .map(|e| e.spec.v4ip.clone())
            .expect("eip")
    };
    assert_eq!(
        [
            ip_of("eip-a"),
            ip_of("eip-b"),
            ip_of("eip-c"),
            ip_of("eip-d")
        ],
        ["172.19.0.2", "172.19.0.3", "172.19.0.4", "172.19.0.5"]
    );
}

#[test]
fn eips_use_an_external_subnet_object_and_report_conflicts() {
    let mut s = nat_world();
    let mut ext = subnet(
        "ext",
        DEFAULT_VPC,
        "192.168.100.0/24",
        &["192.168.100.2..192.168.100.9"],
    );
    ext.spec.gateway = Some("192.168.100.1".into());
    s.subnets.push(ext);
    s.gateways[0].spec.external_subnets = vec!["ext".into()];
    s.eips[0].spec.v4ip = "192.168.100.50".into(); // eip-b, static
    converge(&mut s);
    let a = s.eips.iter().find(|e| e.name_any() == "eip-a").expect("a");
    assert_eq!(a.spec.v4ip, "192.168.100.10");
    let b = s.eips.iter().find(|e| e.name_any() == "eip-b").expect("b");
    assert_eq!(b.status.clone().expect("status").ip, "192.168.100.50");

    let mut dup = eip("eip-dup", "gw", "2026-01-02T00:00:00Z");
    dup.spec.v4ip = "192.168.100.50".into();
    s.eips.push(dup);
    converge(&mut s);
    let dup = s
        .eips
        .iter()
        .find(|e| e.name_any() == "eip-dup")
        .expect("dup");
    let status = dup.status.clone().expect("status");
    assert!(!status.ready);
    let ready = crate::v1::find_condition(&status.conditions, READY).expect("Ready");
    assert_eq!(ready.reason.as_deref(), Some("IPConflict"));
    assert!(ready.message.as_deref().unwrap_or("").contains("eip-b"));
}

#[test]
fn nothing_is_ready_until_the_gateway_can_run() {
    let mut s = nat_world();
    s.subnets.clear();
    converge(&mut s);
    assert_eq!(s.gateways[0].status, None);
    for e in &s.eips {
        let status = e.status.clone().expect("status");
        assert!(!status.ready, "{}", e.name_any());
        assert!(status.ip.is_empty());
        assert!(!e.spec.v4ip.is_empty(), "allocated anyway, as upstream");
    }
    let snat = s.snats[0].status.clone().expect("status");
    assert!(!snat.ready);
    let cond = crate::v1::find_condition(&snat.conditions, READY).expect("Ready");
    assert_eq!(cond.reason.as_deref(), Some("EipNotReady"));

    // The subnet appears: everything becomes ready, and a lanIp outside it keeps it down.
    s.subnets
        .push(subnet("net", "tenant-a", "10.0.1.0/24", &[]));
    converge(&mut s);
    assert!(s.dnats[0].status.clone().expect("status").ready);
    s.gateways[0].spec.lan_ip = "10.9.9.9".into();
    converge(&mut s);
    assert!(!s.eips[0].status.clone().expect("status").ready);
    assert!(!s.dnats[0].status.clone().expect("status").ready);
    // Status fields that no longer apply are removed.
    assert_eq!(s.gateways[0].status, Some(VpcNatGatewayStatus::default()));
    assert_eq!(s.dnats[0].status.clone().expect("status").v4ip, "");
}

#[test]
fn a_second_dnat_rule_for_the_same_port_is_not_ready() {
    let mut s = nat_world();
    let mut second = s.dnats[0].clone();
    second.metadata.name = Some("dnat-2".into());
    second.spec.internal_ip = "10.0.1.4".into();
    second.spec.protocol = "TCP".into();
    s.dnats.push(second.clone());
    let mut udp = second;
    udp.metadata.name = Some("dnat-udp".into());
    udp.spec.protocol = "udp".into();
    s.dnats.push(udp);
    converge(&mut s);
    assert!(s.dnats[0].status.clone().expect("status").ready);
    let status = s.dnats[1].status.clone().expect("status");
    assert!(!status.ready);
    let cond = crate::v1::find_condition(&status.conditions, READY)
        .cloned()
        .expect("Ready");
    assert_eq!(cond.reason.as_deref(), Some("PortConflict"));
    assert!(cond.message.as_deref().unwrap_or("").contains("\"dnat\""));
    assert!(
        s.dnats[2].status.clone().expect("status").ready,
        "another protocol"
    );
}

#[test]
fn rules_on_a_missing_eip_say_so() {
    let mut s = nat_world();
    s.eips.clear();
    converge(&mut s);
    let cond = crate::v1::find_condition(
        &s.snats[0].status.clone().expect("status").conditions,
        READY,
    )
    .cloned()
    .expect("Ready");
    assert_eq!(cond.reason.as_deref(), Some("EipNotFound"));
    assert!(cond.message.as_deref().unwrap_or("").contains("\"eip-a\""));
}

#[test]
fn ip_objects_on_a_subnet_are_in_use() {
    let ip = |name: &str, subnet: &str, v4: &str| {
        crate::v1::Ip::new(
            name,
            crate::v1::IpSpec {
                pod_name: name.into(),
                namespace: "ns".into(),
                subnet: subnet.into(),
                v4_ip_address: v4.into(),
                ip_address: v4.into(),
                ..Default::default()
            },
        )
    };
    let mut s = Snapshot {
        vpcs: vec![vpc("tenant-a")],
        subnets: vec![subnet("net", "tenant-a", "10.0.1.0/24", &[])],
        ips: vec![
            ip("vm-a.ns", "net", "10.0.1.2"),
            ip("vm-b.ns", "net", "10.0.1.7"),
            ip("elsewhere.ns", "other", "10.0.1.3"),
        ],
        ..Snapshot::default()
    };
    converge(&mut s);
    let status = s.subnets[0].status.clone().expect("status");
    assert_eq!(status.v4using_ips, 2.0);
    assert_eq!(status.v4using_ip_range, "10.0.1.2,10.0.1.7");
    // 254 usable − gateway − 2 in use.
    assert_eq!(status.v4available_ips, 251.0);
    assert_eq!(
        status.v4available_ip_range,
        "10.0.1.3-10.0.1.6,10.0.1.8-10.0.1.254"
    );
}
