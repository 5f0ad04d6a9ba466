// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The Kube-OVN objects of a VirtualPrivateCloud, as pure functions of it: names, labels and
//! specs. `VirtualPrivateCloudReconciler` server-side applies them.
//!
//! Kube-OVN's objects are cluster-scoped while VirtualPrivateClouds live in tenants'
//! namespaces, so names join the namespace and the VPC's name (`<namespace>-<vpc>` for the
//! Vpc and the VpcNatGateway, `<namespace>-<vpc>-<item>` for subnets, EIPs and rules); a name
//! over the length limit is cut and ends in a hash of the whole. Owner references cannot point
//! from cluster-scoped objects to namespaced ones, so every object carries labels naming its
//! owner (namespace, name, uid) instead: the controller prunes and cleans up by them, and the
//! orphan sweeper finds objects whose owner is gone.

use std::collections::BTreeMap;

use kube::ResourceExt;
use kube::api::ObjectMeta;
use mni_kubeovn::v1 as ovn;
use sha2::{Digest, Sha256};

use crate::api::network_v1alpha1::RoutePolicy;
use crate::api::network_v1alpha1::VirtualPrivateCloud;
use crate::api::network_v1alpha1::validate::Cidr;
use crate::api::network_v1alpha1::validate::default_gateway;
use crate::api::network_v1alpha1::validate::parse_ip;
use crate::api::network_v1alpha1::validate::protocol;

/// The label naming the owner's namespace.
pub const OWNER_NAMESPACE: &str = "network.mni.dev/owner-namespace";

/// The label naming the owner.
pub const OWNER_NAME: &str = "network.mni.dev/owner-name";

/// The label holding the owner's uid: what pruning, cleanup and the sweeper select on.
pub const OWNER_UID: &str = "network.mni.dev/owner-uid";

/// The label holding the name the item has in the VirtualPrivateCloud's spec (subnets, EIPs,
/// rules).
pub const SPEC_NAME: &str = "network.mni.dev/spec-name";

/// Who manages these objects (`app.kubernetes.io/managed-by`).
pub const MANAGED_BY: &str = "network-operator";

/// The longest name of a Kube-OVN object here: a DNS label, since Kube-OVN names OVN logical
/// routers and switches after them.
pub const MAX_NAME: usize = 63;

/// The longest VpcNatGateway name: Kube-OVN runs it as the StatefulSet `vpc-nat-gw-<name>`,
/// whose pods' revision-hash label (`vpc-nat-gw-<name>-<10 characters>`) must fit 63.
pub const MAX_NAT_GATEWAY_NAME: usize = 40;

/// `parts` joined with `-`; when longer than `max`, cut and ended with `-` and 8 hex digits of
/// the SHA-256 of the whole, so the name stays unique and deterministic.
#[must_use]
pub fn object_name(parts: &[&str], max: usize) -> String {
    let full = parts.join("-");
    if full.len() <= max {
        return full;
    }
    let hash: String = Sha256::digest(full.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    let keep = full[..max - hash.len() - 1].trim_end_matches('-');
    format!("{keep}-{hash}")
}

/// The Kube-OVN Vpc of `obj`: `<namespace>-<name>`.
#[must_use]
pub fn vpc_name(obj: &VirtualPrivateCloud) -> String {
    vpc_name_of(&obj.namespace().unwrap_or_default(), &obj.name_any())
}

/// The Kube-OVN Vpc of the VirtualPrivateCloud `name` in `namespace`.
#[must_use]
pub fn vpc_name_of(namespace: &str, name: &str) -> String {
    object_name(&[namespace, name], MAX_NAME)
}

/// The Kube-OVN object of item `item` (a subnet, EIP or rule) of `obj`.
#[must_use]
pub fn item_name(obj: &VirtualPrivateCloud, item: &str) -> String {
    let namespace = obj.namespace().unwrap_or_default();
    object_name(&[&namespace, &obj.name_any(), item], MAX_NAME)
}

/// The Kube-OVN VpcNatGateway of `obj`.
#[must_use]
pub fn nat_gateway_name(obj: &VirtualPrivateCloud) -> String {
    let namespace = obj.namespace().unwrap_or_default();
    object_name(&[&namespace, &obj.name_any()], MAX_NAT_GATEWAY_NAME)
}

/// The labels every Kube-OVN object of `obj` carries.
#[must_use]
pub fn labels(obj: &VirtualPrivateCloud) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_owned(),
            MANAGED_BY.to_owned(),
        ),
        (
            OWNER_NAMESPACE.to_owned(),
            obj.namespace().unwrap_or_default(),
        ),
        (OWNER_NAME.to_owned(), obj.name_any()),
        (OWNER_UID.to_owned(), obj.uid().unwrap_or_default()),
    ])
}

/// The label selector of every Kube-OVN object of the owner with uid `uid`.
#[must_use]
pub fn owner_selector(uid: &str) -> String {
    format!("{OWNER_UID}={uid}")
}

/// The owner (namespace, name, uid) the labels of a Kube-OVN object name, if they do.
#[must_use]
pub fn owner_of(meta: &ObjectMeta) -> Option<(String, String, String)> {
    let labels = meta.labels.as_ref()?;
    Some((
        labels.get(OWNER_NAMESPACE)?.clone(),
        labels.get(OWNER_NAME)?.clone(),
        labels.get(OWNER_UID)?.clone(),
    ))
}

/// The name an object has in its owner's spec (its [`SPEC_NAME`] label).
#[must_use]
pub fn spec_name(meta: &ObjectMeta) -> Option<&str> {
    meta.labels.as_ref()?.get(SPEC_NAME).map(String::as_str)
}

fn meta(obj: &VirtualPrivateCloud, name: String, item: Option<&str>) -> ObjectMeta {
    let mut labels = labels(obj);
    if let Some(item) = item {
        labels.insert(SPEC_NAME.to_owned(), item.to_owned());
    }
    ObjectMeta {
        name: Some(name),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

/// Every Kube-OVN object a VirtualPrivateCloud asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Upstream {
    /// The Vpc: the router, its static routes and bound namespaces.
    pub vpc: ovn::Vpc,
    /// One Subnet per subnet of the spec, in its order.
    pub subnets: Vec<ovn::Subnet>,
    /// The NAT gateway, when the spec has one.
    pub nat_gateway: Option<ovn::VpcNatGateway>,
    /// Its EIPs.
    pub eips: Vec<ovn::IptablesEIP>,
    /// Its SNAT rules.
    pub snat_rules: Vec<ovn::IptablesSnatRule>,
    /// Its DNAT rules.
    pub dnat_rules: Vec<ovn::IptablesDnatRule>,
}

/// The Kube-OVN objects of `obj`, which must be valid (see `validate`).
///
/// The namespaces (default: `obj`'s own) are bound to the Vpc and to its first subnet, the
/// Vpc's default subnet: their pods get addresses there unless they ask for another subnet.
/// With a NAT gateway and no static route for `0.0.0.0/0`, the Vpc routes it to the gateway's
/// `lanIp`.
#[must_use]
pub fn desired(obj: &VirtualPrivateCloud) -> Upstream {
    let spec = &obj.spec;
    let vpc_name = vpc_name(obj);
    let namespaces = if spec.namespaces.is_empty() {
        vec![obj.namespace().unwrap_or_default()]
    } else {
        spec.namespaces.clone()
    };
    let mut static_routes: Vec<ovn::StaticRoute> = spec
        .static_routes
        .iter()
        .map(|r| ovn::StaticRoute {
            cidr: r.cidr.clone(),
            next_hop_ip: r.next_hop_ip.clone(),
            policy: Some(match r.policy {
                RoutePolicy::Destination => ovn::RoutePolicy::PolicyDst,
                RoutePolicy::Source => ovn::RoutePolicy::PolicySrc,
            }),
            route_table: None,
        })
        .collect();
    if let Some(nat) = &spec.nat_gateway
        && !static_routes.iter().any(|r| r.cidr == "0.0.0.0/0")
        && parse_ip(&nat.lan_ip).is_some_and(|ip| ip.is_ipv4())
    {
        static_routes.push(ovn::StaticRoute {
            cidr: "0.0.0.0/0".to_owned(),
            next_hop_ip: nat.lan_ip.clone(),
            policy: Some(ovn::RoutePolicy::PolicyDst),
            route_table: None,
        });
    }
    let first_subnet = spec.subnets.first().map(|s| item_name(obj, &s.name));
    let mut vpc = ovn::Vpc::new(
        &vpc_name,
        ovn::VpcSpec {
            namespaces: namespaces.clone(),
            static_routes,
            default_subnet: first_subnet,
            ..ovn::VpcSpec::default()
        },
    );
    vpc.metadata = meta(obj, vpc_name.clone(), None);

    let subnets: Vec<ovn::Subnet> = spec
        .subnets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = item_name(obj, &s.name);
            let mut subnet = ovn::Subnet::new(
                &name,
                ovn::SubnetSpec {
                    vpc: Some(vpc_name.clone()),
                    protocol: Some(match protocol(&s.cidr_block) {
                        "IPv6" => ovn::Protocol::IPv6,
                        "Dual" => ovn::Protocol::Dual,
                        _ => ovn::Protocol::IPv4,
                    }),
                    cidr_block: s.cidr_block.clone(),
                    gateway: Some(
                        s.gateway
                            .clone()
                            .unwrap_or_else(|| default_gateway(&s.cidr_block)),
                    ),
                    exclude_ips: s.exclude_ips.clone(),
                    namespaces: if i == 0 {
                        namespaces.clone()
                    } else {
                        Vec::new()
                    },
                    nat_outgoing: s.nat_outgoing,
                    private: s.private,
                    allow_subnets: s.allow_subnets.clone(),
                    ..ovn::SubnetSpec::default()
                },
            );
            subnet.metadata = meta(obj, name, Some(&s.name));
            subnet
        })
        .collect();

    let mut upstream = Upstream {
        vpc,
        subnets,
        nat_gateway: None,
        eips: Vec::new(),
        snat_rules: Vec::new(),
        dnat_rules: Vec::new(),
    };
    let Some(nat) = &spec.nat_gateway else {
        return upstream;
    };
    let gateway_name = nat_gateway_name(obj);
    let lan_subnet = parse_ip(&nat.lan_ip).and_then(|ip| {
        spec.subnets.iter().find(|s| {
            s.cidr_block
                .split(',')
                .filter_map(|c| Cidr::parse(c).ok())
                .any(|c| c.contains(ip))
        })
    });
    let mut gateway = ovn::VpcNatGateway::new(
        &gateway_name,
        ovn::VpcNatGatewaySpec {
            vpc: vpc_name.clone(),
            subnet: lan_subnet
                .map(|s| item_name(obj, &s.name))
                .unwrap_or_default(),
            lan_ip: nat.lan_ip.clone(),
            external_subnets: vec![nat.external_subnet.clone()],
            ..ovn::VpcNatGatewaySpec::default()
        },
    );
    gateway.metadata = meta(obj, gateway_name.clone(), None);
    upstream.nat_gateway = Some(gateway);
    upstream.eips = nat
        .eips
        .iter()
        .map(|e| {
            let name = item_name(obj, &e.name);
            let mut eip = ovn::IptablesEIP::new(
                &name,
                ovn::IptablesEIPSpec {
                    nat_gw_dp: gateway_name.clone(),
                    external_subnet: Some(nat.external_subnet.clone()),
                    ..ovn::IptablesEIPSpec::default()
                },
            );
            eip.metadata = meta(obj, name, Some(&e.name));
            eip
        })
        .collect();
    upstream.snat_rules = nat
        .snat_rules
        .iter()
        .map(|r| {
            let name = item_name(obj, &r.name);
            let mut rule = ovn::IptablesSnatRule::new(
                &name,
                ovn::IptablesSnatRuleSpec {
                    eip: item_name(obj, &r.eip),
                    internal_cidr: r.internal_cidr.clone(),
                },
            );
            rule.metadata = meta(obj, name, Some(&r.name));
            rule
        })
        .collect();
    upstream.dnat_rules = nat
        .dnat_rules
        .iter()
        .map(|r| {
            let name = item_name(obj, &r.name);
            let mut rule = ovn::IptablesDnatRule::new(
                &name,
                ovn::IptablesDnatRuleSpec {
                    eip: item_name(obj, &r.eip),
                    external_port: r.external_port.to_string(),
                    protocol: r.protocol.as_str().to_owned(),
                    internal_ip: r.internal_ip.clone(),
                    internal_port: r.internal_port.to_string(),
                },
            );
            rule.metadata = meta(obj, name, Some(&r.name));
            rule
        })
        .collect();
    upstream
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::network_v1alpha1::DnatRule;
    use crate::api::network_v1alpha1::Eip;
    use crate::api::network_v1alpha1::NatGateway;
    use crate::api::network_v1alpha1::SnatRule;
    use crate::api::network_v1alpha1::SubnetSpec;
    use crate::api::network_v1alpha1::VirtualPrivateCloudSpec;

    fn vpc(spec: VirtualPrivateCloudSpec) -> VirtualPrivateCloud {
        let mut obj = VirtualPrivateCloud::new("prod", spec);
        obj.metadata.namespace = Some("tenant-a".to_owned());
        obj.metadata.uid = Some("uid-1".to_owned());
        obj
    }

    fn subnet(name: &str, cidr: &str) -> SubnetSpec {
        SubnetSpec {
            name: name.to_owned(),
            cidr_block: cidr.to_owned(),
            ..SubnetSpec::default()
        }
    }

    #[test]
    fn names_are_unique_per_namespace_and_fit_the_limits() {
        assert_eq!(
            object_name(&["tenant-a", "prod"], MAX_NAME),
            "tenant-a-prod"
        );
        let long = "n".repeat(60);
        let name = object_name(&[&long, "prod", "web"], MAX_NAME);
        assert_eq!(name.len(), MAX_NAME);
        assert_ne!(name, object_name(&[&long, "prod", "db"], MAX_NAME));
        let gateway = object_name(&[&long, "prod"], MAX_NAT_GATEWAY_NAME);
        assert!(gateway.len() <= MAX_NAT_GATEWAY_NAME, "{gateway}");
    }

    #[test]
    fn a_vpc_becomes_a_vpc_and_its_subnets() {
        let mut web = subnet("web", "10.0.1.0/24");
        web.exclude_ips = vec!["10.0.1.2..10.0.1.9".to_owned()];
        let obj = vpc(VirtualPrivateCloudSpec {
            subnets: vec![web, subnet("dual", "10.0.2.0/24,fd00:2::/64")],
            ..VirtualPrivateCloudSpec::default()
        });
        let up = desired(&obj);
        assert_eq!(up.vpc.name_any(), "tenant-a-prod");
        assert_eq!(up.vpc.spec.namespaces, ["tenant-a"]);
        assert_eq!(
            up.vpc.spec.default_subnet.as_deref(),
            Some("tenant-a-prod-web")
        );
        let names: Vec<String> = up.subnets.iter().map(ResourceExt::name_any).collect();
        assert_eq!(names, ["tenant-a-prod-web", "tenant-a-prod-dual"]);
        let web = &up.subnets[0].spec;
        assert_eq!(web.vpc.as_deref(), Some("tenant-a-prod"));
        assert_eq!(web.gateway.as_deref(), Some("10.0.1.1"));
        assert_eq!(web.protocol, Some(ovn::Protocol::IPv4));
        assert_eq!(web.namespaces, ["tenant-a"]);
        let dual = &up.subnets[1].spec;
        assert_eq!(dual.protocol, Some(ovn::Protocol::Dual));
        assert_eq!(dual.gateway.as_deref(), Some("10.0.2.1,fd00:2::1"));
        assert!(dual.namespaces.is_empty());
        let labels = up.subnets[0].labels();
        assert_eq!(labels[OWNER_UID], "uid-1");
        assert_eq!(labels[SPEC_NAME], "web");
        assert!(up.nat_gateway.is_none() && up.eips.is_empty());
    }

    #[test]
    fn a_nat_gateway_brings_eips_rules_and_a_default_route() {
        let obj = vpc(VirtualPrivateCloudSpec {
            subnets: vec![subnet("web", "10.0.1.0/24")],
            nat_gateway: Some(NatGateway {
                lan_ip: "10.0.1.254".to_owned(),
                external_subnet: "external".to_owned(),
                eips: vec![Eip {
                    name: "e1".to_owned(),
                }],
                snat_rules: vec![SnatRule {
                    name: "out".to_owned(),
                    eip: "e1".to_owned(),
                    internal_cidr: "10.0.1.0/24".to_owned(),
                }],
                dnat_rules: vec![DnatRule {
                    name: "http".to_owned(),
                    eip: "e1".to_owned(),
                    external_port: 80,
                    internal_ip: "10.0.1.5".to_owned(),
                    internal_port: 8080,
                    ..DnatRule::default()
                }],
            }),
            ..VirtualPrivateCloudSpec::default()
        });
        let up = desired(&obj);
        let gateway = up.nat_gateway.expect("a NAT gateway");
        assert_eq!(gateway.spec.subnet, "tenant-a-prod-web");
        assert_eq!(gateway.spec.external_subnets, ["external"]);
        assert_eq!(up.vpc.spec.static_routes[0].next_hop_ip, "10.0.1.254");
        assert_eq!(up.eips[0].spec.nat_gw_dp, "tenant-a-prod");
        assert_eq!(up.snat_rules[0].spec.eip, "tenant-a-prod-e1");
        assert_eq!(up.dnat_rules[0].spec.external_port, "80");
        assert_eq!(up.dnat_rules[0].spec.protocol, "tcp");
    }
}
