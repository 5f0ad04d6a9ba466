// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The rules a VirtualPrivateCloud's address plan must keep, in Rust, with the messages of
//! the CEL rules in the CRD schema: the controller runs [`validate`] before it touches
//! Kube-OVN (CRDs installed without the rules, API servers older than 1.31) and the backend
//! runs it before it writes, so a client gets the same message from kubectl and from the API.
//!
//! Addresses are parsed as Kubernetes' CEL IP and CIDR library does (`mni_core::formats`, the
//! parsing every layer of mNi shares): a CIDR is `ADDRESS/BITS` (host bits may be set;
//! containment uses the network), IPv4 without leading zeros.

use std::net::IpAddr;

pub use mni_core::formats::net::{Cidr, parse_ip};
use mni_core::formats::{names, net};

use super::{SubnetSpec, VirtualPrivateCloudSpec};

/// One broken rule; its message names the subnet (or route, EIP, rule) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The VPC has no subnet.
    #[error("subnets: a VPC needs at least one subnet")]
    NoSubnet,
    /// Two subnets (or EIPs, or rules) have the same name.
    #[error("{what} {name}: the name is used more than once")]
    Duplicate {
        /// `subnet`, `eip`, `snat rule` or `dnat rule`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A name is not a DNS label.
    #[error(
        "{what} {name}: the name must be a DNS label (lowercase letters, digits and '-', at most 63)"
    )]
    Name {
        /// `subnet`, `eip`, `snat rule`, `dnat rule` or `namespace`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A cidrBlock is not a CIDR (or a v4,v6 pair).
    #[error(
        "subnet {subnet}: cidrBlock {cidr} is not a CIDR, nor an IPv4 and an IPv6 CIDR separated by a comma"
    )]
    Cidr {
        /// The subnet.
        subnet: String,
        /// The cidrBlock.
        cidr: String,
    },
    /// A dual-stack cidrBlock has two ranges of one family.
    #[error("subnet {subnet}: the dual-stack cidrBlock {cidr} needs one IPv4 and one IPv6 CIDR")]
    DualStack {
        /// The subnet.
        subnet: String,
        /// The cidrBlock.
        cidr: String,
    },
    /// The gateway is not an IP address.
    #[error("subnet {subnet}: gateway {gateway} is not an IP address")]
    Gateway {
        /// The subnet.
        subnet: String,
        /// The gateway.
        gateway: String,
    },
    /// The gateway is outside the subnet's range.
    #[error("subnet {subnet}: gateway {gateway} is outside cidrBlock {cidr}")]
    GatewayOutside {
        /// The subnet.
        subnet: String,
        /// The gateway.
        gateway: String,
        /// The cidrBlock.
        cidr: String,
    },
    /// An excludeIps entry is neither an IP nor a range.
    #[error("subnet {subnet}: excludeIps {entry} is not an IP address or a range FIRST..LAST")]
    Exclude {
        /// The subnet.
        subnet: String,
        /// The entry.
        entry: String,
    },
    /// An excludeIps entry is outside the subnet's range.
    #[error("subnet {subnet}: excludeIps {entry} is outside cidrBlock {cidr}")]
    ExcludeOutside {
        /// The subnet.
        subnet: String,
        /// The entry.
        entry: String,
        /// The cidrBlock.
        cidr: String,
    },
    /// An allowSubnets entry is not a CIDR.
    #[error("subnet {subnet}: allowSubnets {cidr} is not a CIDR")]
    AllowSubnet {
        /// The subnet.
        subnet: String,
        /// The entry.
        cidr: String,
    },
    /// Two subnets' ranges overlap.
    #[error("subnet {subnet}: cidrBlock {cidr} overlaps subnet {other} ({other_cidr})")]
    Overlap {
        /// The first subnet (in spec order) that overlaps another.
        subnet: String,
        /// Its cidrBlock.
        cidr: String,
        /// The first other subnet it overlaps.
        other: String,
        /// That one's cidrBlock.
        other_cidr: String,
    },
    /// A subnet's cidrBlock changed.
    #[error("subnet {subnet}: cidrBlock is immutable (it was {was}); add a new subnet instead")]
    Immutable {
        /// The subnet.
        subnet: String,
        /// The cidrBlock it had.
        was: String,
    },
    /// A static route's cidr is not a CIDR.
    #[error("static route {cidr}: cidr is not a CIDR")]
    RouteCidr {
        /// The cidr.
        cidr: String,
    },
    /// A static route's next hop is not an IP address.
    #[error("static route {cidr}: nextHopIP {next_hop} is not an IP address")]
    RouteNextHop {
        /// The route's cidr.
        cidr: String,
        /// The next hop.
        next_hop: String,
    },
    /// The NAT gateway's lanIp is in no subnet.
    #[error("natGateway: lanIp {lan_ip} is not inside a subnet of the VPC")]
    LanIp {
        /// The lanIp.
        lan_ip: String,
    },
    /// A NAT rule names an EIP the gateway does not have.
    #[error("{what} {rule}: eip {eip} is not one of natGateway.eips")]
    UnknownEip {
        /// `snat rule` or `dnat rule`.
        what: &'static str,
        /// The rule.
        rule: String,
        /// The EIP it names.
        eip: String,
    },
    /// A SNAT rule's internalCIDR is not a CIDR.
    #[error("snat rule {rule}: internalCIDR {cidr} is not a CIDR")]
    SnatCidr {
        /// The rule.
        rule: String,
        /// The internalCIDR.
        cidr: String,
    },
    /// A SNAT rule's internalCIDR is in no subnet.
    #[error("snat rule {rule}: internalCIDR {cidr} is not inside a subnet of the VPC")]
    SnatOutside {
        /// The rule.
        rule: String,
        /// The internalCIDR.
        cidr: String,
    },
    /// A DNAT rule's internalIp is not an IP address.
    #[error("dnat rule {rule}: internalIp {ip} is not an IP address")]
    DnatIp {
        /// The rule.
        rule: String,
        /// The internalIp.
        ip: String,
    },
    /// A DNAT rule's internalIp is in no subnet.
    #[error("dnat rule {rule}: internalIp {ip} is not inside a subnet of the VPC")]
    DnatOutside {
        /// The rule.
        rule: String,
        /// The internalIp.
        ip: String,
    },
}

/// Every rule `spec` breaks, in the order of the spec (empty when it is valid).
#[must_use]
pub fn validate(spec: &VirtualPrivateCloudSpec) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    if spec.subnets.is_empty() {
        errors.push(ValidationError::NoSubnet);
    }
    duplicates("subnet", spec.subnets.iter().map(|s| &s.name), &mut errors);
    for subnet in &spec.subnets {
        check_subnet(subnet, &mut errors);
    }
    if let Some(e) = overlap(&spec.subnets) {
        errors.push(e);
    }
    for route in &spec.static_routes {
        if Cidr::parse(&route.cidr).is_err() {
            errors.push(ValidationError::RouteCidr {
                cidr: route.cidr.clone(),
            });
        }
        if parse_ip(&route.next_hop_ip).is_none() {
            errors.push(ValidationError::RouteNextHop {
                cidr: route.cidr.clone(),
                next_hop: route.next_hop_ip.clone(),
            });
        }
    }
    for namespace in &spec.namespaces {
        if !names::is_dns1123_label(namespace) {
            errors.push(ValidationError::Name {
                what: "namespace",
                name: namespace.clone(),
            });
        }
    }
    if let Some(nat) = &spec.nat_gateway {
        let ranges = subnet_ranges(&spec.subnets);
        let inside_ip = |ip: IpAddr| ranges.iter().any(|c| c.contains(ip));
        if !parse_ip(&nat.lan_ip).is_some_and(inside_ip) {
            errors.push(ValidationError::LanIp {
                lan_ip: nat.lan_ip.clone(),
            });
        }
        duplicates("eip", nat.eips.iter().map(|e| &e.name), &mut errors);
        duplicates(
            "snat rule",
            nat.snat_rules.iter().map(|r| &r.name),
            &mut errors,
        );
        duplicates(
            "dnat rule",
            nat.dnat_rules.iter().map(|r| &r.name),
            &mut errors,
        );
        for eip in &nat.eips {
            if !names::is_dns1123_label(&eip.name) {
                errors.push(ValidationError::Name {
                    what: "eip",
                    name: eip.name.clone(),
                });
            }
        }
        let known = |eip: &str| nat.eips.iter().any(|e| e.name == eip);
        for rule in &nat.snat_rules {
            match Cidr::parse(&rule.internal_cidr).ok() {
                None => errors.push(ValidationError::SnatCidr {
                    rule: rule.name.clone(),
                    cidr: rule.internal_cidr.clone(),
                }),
                Some(cidr) if !ranges.iter().any(|c| c.contains_cidr(&cidr)) => {
                    errors.push(ValidationError::SnatOutside {
                        rule: rule.name.clone(),
                        cidr: rule.internal_cidr.clone(),
                    });
                }
                Some(_) => {}
            }
            if !known(&rule.eip) {
                errors.push(ValidationError::UnknownEip {
                    what: "snat rule",
                    rule: rule.name.clone(),
                    eip: rule.eip.clone(),
                });
            }
        }
        for rule in &nat.dnat_rules {
            match parse_ip(&rule.internal_ip) {
                None => errors.push(ValidationError::DnatIp {
                    rule: rule.name.clone(),
                    ip: rule.internal_ip.clone(),
                }),
                Some(ip) if !inside_ip(ip) => errors.push(ValidationError::DnatOutside {
                    rule: rule.name.clone(),
                    ip: rule.internal_ip.clone(),
                }),
                Some(_) => {}
            }
            if !known(&rule.eip) {
                errors.push(ValidationError::UnknownEip {
                    what: "dnat rule",
                    rule: rule.name.clone(),
                    eip: rule.eip.clone(),
                });
            }
        }
    }
    errors
}

/// The subnets of `new` whose cidrBlock differs from the one `old` gives them (the CRD's
/// transition rule); `old` maps subnet names to the cidrBlock they had, e.g. from the stored
/// object or from the Kube-OVN Subnets.
#[must_use]
pub fn validate_update<'a>(
    old: impl IntoIterator<Item = (&'a str, &'a str)>,
    new: &VirtualPrivateCloudSpec,
) -> Vec<ValidationError> {
    let old: Vec<(&str, &str)> = old.into_iter().collect();
    new.subnets
        .iter()
        .filter_map(|s| {
            let (_, was) = old.iter().find(|(name, _)| *name == s.name)?;
            (*was != s.cidr_block).then(|| ValidationError::Immutable {
                subnet: s.name.clone(),
                was: (*was).to_owned(),
            })
        })
        .collect()
}

/// The errors as one message, `a; b`.
#[must_use]
pub fn message(errors: &[ValidationError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn check_subnet(subnet: &SubnetSpec, errors: &mut Vec<ValidationError>) {
    let name = &subnet.name;
    if !names::is_dns1123_label(name) {
        errors.push(ValidationError::Name {
            what: "subnet",
            name: name.clone(),
        });
    }
    let parts: Vec<&str> = subnet.cidr_block.split(',').collect();
    let ranges: Vec<Cidr> = parts.iter().filter_map(|p| Cidr::parse(p).ok()).collect();
    if parts.len() > 2 || ranges.len() != parts.len() {
        errors.push(ValidationError::Cidr {
            subnet: name.clone(),
            cidr: subnet.cidr_block.clone(),
        });
    }
    if parts.len() == 2 && parts[0].contains(':') == parts[1].contains(':') {
        errors.push(ValidationError::DualStack {
            subnet: name.clone(),
            cidr: subnet.cidr_block.clone(),
        });
    }
    let inside = |ip: IpAddr| ranges.iter().any(|c| c.contains(ip));
    if let Some(gateway) = &subnet.gateway {
        let ips: Vec<Option<IpAddr>> = gateway.split(',').map(parse_ip).collect();
        if ips.iter().any(Option::is_none) {
            errors.push(ValidationError::Gateway {
                subnet: name.clone(),
                gateway: gateway.clone(),
            });
        }
        if ips.iter().flatten().any(|ip| !inside(*ip)) {
            errors.push(ValidationError::GatewayOutside {
                subnet: name.clone(),
                gateway: gateway.clone(),
                cidr: subnet.cidr_block.clone(),
            });
        }
    }
    let malformed = subnet.exclude_ips.iter().find(|e| {
        let ends: Vec<&str> = e.split("..").collect();
        ends.len() > 2 || ends.iter().any(|p| parse_ip(p).is_none())
    });
    if let Some(entry) = malformed {
        errors.push(ValidationError::Exclude {
            subnet: name.clone(),
            entry: entry.clone(),
        });
    }
    let outside = subnet
        .exclude_ips
        .iter()
        .find(|e| e.split("..").filter_map(parse_ip).any(|ip| !inside(ip)));
    if let Some(entry) = outside {
        errors.push(ValidationError::ExcludeOutside {
            subnet: name.clone(),
            entry: entry.clone(),
            cidr: subnet.cidr_block.clone(),
        });
    }
    if let Some(cidr) = subnet
        .allow_subnets
        .iter()
        .find(|c| Cidr::parse(c).is_err())
    {
        errors.push(ValidationError::AllowSubnet {
            subnet: name.clone(),
            cidr: cidr.clone(),
        });
    }
}

/// The first subnet (in spec order) whose range overlaps another's, with the first such other.
fn overlap(subnets: &[SubnetSpec]) -> Option<ValidationError> {
    let overlaps = |a: &SubnetSpec, b: &SubnetSpec| {
        a.name != b.name
            && ranges(&a.cidr_block)
                .iter()
                .any(|x| ranges(&b.cidr_block).iter().any(|y| x.overlaps(y)))
    };
    subnets.iter().find_map(|a| {
        let b = subnets.iter().find(|b| overlaps(a, b))?;
        Some(ValidationError::Overlap {
            subnet: a.name.clone(),
            cidr: a.cidr_block.clone(),
            other: b.name.clone(),
            other_cidr: b.cidr_block.clone(),
        })
    })
}

fn duplicates<'a>(
    what: &'static str,
    names: impl Iterator<Item = &'a String>,
    errors: &mut Vec<ValidationError>,
) {
    let mut seen: Vec<&String> = Vec::new();
    for name in names {
        if seen.contains(&name) {
            let e = ValidationError::Duplicate {
                what,
                name: name.clone(),
            };
            if !errors.contains(&e) {
                errors.push(e);
            }
        }
        seen.push(name);
    }
}

/// The ranges of every subnet.
fn subnet_ranges(subnets: &[SubnetSpec]) -> Vec<Cidr> {
    subnets.iter().flat_map(|s| ranges(&s.cidr_block)).collect()
}

/// The ranges of a cidrBlock that parse.
fn ranges(cidr_block: &str) -> Vec<Cidr> {
    cidr_block
        .split(',')
        .filter_map(|c| Cidr::parse(c).ok())
        .collect()
}

/// The first usable address of `cidr`: the network address plus one, as Kube-OVN picks a
/// gateway.
#[must_use]
pub fn first_usable(cidr: &Cidr) -> IpAddr {
    let first = net::to_bits(cidr.network()).wrapping_add(1);
    net::from_bits(first, cidr.width())
}

/// Kube-OVN's `protocol` of a cidrBlock: `IPv4`, `IPv6` or `Dual`.
#[must_use]
pub fn protocol(cidr_block: &str) -> &'static str {
    let parts: Vec<&str> = cidr_block.split(',').collect();
    match parts.as_slice() {
        [one] if one.contains(':') => "IPv6",
        [_] => "IPv4",
        _ => "Dual",
    }
}

/// The gateway Kube-OVN would choose: the first usable address of each range, `v4,v6`.
#[must_use]
pub fn default_gateway(cidr_block: &str) -> String {
    ranges(cidr_block)
        .into_iter()
        .map(|c| first_usable(&c).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::super::{DnatRule, Eip, NatGateway, SnatRule, StaticRoute};
    use super::*;

    fn subnet(name: &str, cidr: &str) -> SubnetSpec {
        SubnetSpec {
            name: name.to_owned(),
            cidr_block: cidr.to_owned(),
            ..SubnetSpec::default()
        }
    }

    fn spec(subnets: Vec<SubnetSpec>) -> VirtualPrivateCloudSpec {
        VirtualPrivateCloudSpec {
            subnets,
            ..VirtualPrivateCloudSpec::default()
        }
    }

    /// `spec` breaks exactly the rules whose messages are `expected`.
    fn check(spec: &VirtualPrivateCloudSpec, expected: &[&str]) {
        let messages: Vec<String> = validate(spec).iter().map(ToString::to_string).collect();
        assert_eq!(messages, expected);
    }

    #[test]
    fn accepts_ipv4_ipv6_and_dual_stack_plans() {
        let mut web = subnet("web", "10.0.1.0/24");
        web.gateway = Some("10.0.1.1".to_owned());
        web.exclude_ips = vec!["10.0.1.2..10.0.1.10".to_owned(), "10.0.1.254".to_owned()];
        let dual = subnet("dual", "10.0.2.0/24,fd00:10:2::/64");
        let v6 = subnet("v6", "fd00:10:3::/64");
        let mut plan = spec(vec![web, dual, v6]);
        plan.static_routes = vec![StaticRoute {
            cidr: "0.0.0.0/0".to_owned(),
            next_hop_ip: "10.0.1.254".to_owned(),
            ..StaticRoute::default()
        }];
        plan.nat_gateway = Some(NatGateway {
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
        });
        check(&plan, &[]);
    }

    #[test]
    fn names_the_subnet_and_the_rule() {
        check(
            &spec(vec![subnet("web", "10.0.0.0/33")]),
            &[
                "subnet web: cidrBlock 10.0.0.0/33 is not a CIDR, nor an IPv4 and an IPv6 CIDR separated by a comma",
            ],
        );
        check(
            &spec(vec![subnet("web", "10.0.0.0/24,10.1.0.0/24")]),
            &[
                "subnet web: the dual-stack cidrBlock 10.0.0.0/24,10.1.0.0/24 needs one IPv4 and one IPv6 CIDR",
            ],
        );
        let mut web = subnet("web", "10.0.0.0/24");
        web.gateway = Some("10.0.1.1".to_owned());
        check(
            &spec(vec![web.clone()]),
            &["subnet web: gateway 10.0.1.1 is outside cidrBlock 10.0.0.0/24"],
        );
        web.gateway = Some("gw".to_owned());
        check(
            &spec(vec![web.clone()]),
            &["subnet web: gateway gw is not an IP address"],
        );
        web.gateway = None;
        web.exclude_ips = vec!["10.0.0.5".to_owned(), "10.9.0.1..10.9.0.3".to_owned()];
        check(
            &spec(vec![web.clone()]),
            &["subnet web: excludeIps 10.9.0.1..10.9.0.3 is outside cidrBlock 10.0.0.0/24"],
        );
        web.exclude_ips = vec!["10.0.0.5-10.0.0.9".to_owned()];
        check(
            &spec(vec![web]),
            &[
                "subnet web: excludeIps 10.0.0.5-10.0.0.9 is not an IP address or a range FIRST..LAST",
            ],
        );
        check(
            &spec(vec![
                subnet("web", "10.0.0.0/16"),
                subnet("db", "10.0.5.0/24"),
            ]),
            &["subnet web: cidrBlock 10.0.0.0/16 overlaps subnet db (10.0.5.0/24)"],
        );
        check(
            &spec(vec![
                subnet("web", "10.0.0.0/24"),
                subnet("web", "10.0.1.0/24"),
            ]),
            &["subnet web: the name is used more than once"],
        );
        let mut db = subnet("db", "10.0.2.0/24");
        db.private = true;
        db.allow_subnets = vec!["10.0.1.0/24".to_owned(), "web".to_owned()];
        check(
            &spec(vec![db]),
            &["subnet db: allowSubnets web is not a CIDR"],
        );
        check(&spec(vec![]), &["subnets: a VPC needs at least one subnet"]);
    }

    #[test]
    fn nat_rules_must_fit_the_vpc() {
        let mut plan = spec(vec![subnet("web", "10.0.0.0/24")]);
        plan.nat_gateway = Some(NatGateway {
            lan_ip: "10.1.0.254".to_owned(),
            external_subnet: "external".to_owned(),
            eips: vec![Eip {
                name: "e1".to_owned(),
            }],
            snat_rules: vec![SnatRule {
                name: "out".to_owned(),
                eip: "e2".to_owned(),
                internal_cidr: "10.2.0.0/24".to_owned(),
            }],
            dnat_rules: vec![],
        });
        check(
            &plan,
            &[
                "natGateway: lanIp 10.1.0.254 is not inside a subnet of the VPC",
                "snat rule out: internalCIDR 10.2.0.0/24 is not inside a subnet of the VPC",
                "snat rule out: eip e2 is not one of natGateway.eips",
            ],
        );
    }

    #[test]
    fn cidr_blocks_are_immutable() {
        let plan = spec(vec![
            subnet("web", "10.0.1.0/24"),
            subnet("db", "10.0.2.0/24"),
        ]);
        let errors = validate_update([("web", "10.0.0.0/24"), ("gone", "10.9.0.0/24")], &plan);
        assert_eq!(
            message(&errors),
            "subnet web: cidrBlock is immutable (it was 10.0.0.0/24); add a new subnet instead"
        );
    }

    #[test]
    fn protocols_and_default_gateways_follow_kube_ovn() {
        assert_eq!(protocol("10.0.0.0/24"), "IPv4");
        assert_eq!(protocol("fd00::/64"), "IPv6");
        assert_eq!(protocol("10.0.0.0/24,fd00::/64"), "Dual");
        assert_eq!(default_gateway("10.0.0.0/24"), "10.0.0.1");
        assert_eq!(default_gateway("10.0.0.7/24,fd00::/64"), "10.0.0.1,fd00::1");
        let c = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(c.contains_cidr(&Cidr::parse("10.1.0.0/16").unwrap()));
        assert!(!c.contains_cidr(&Cidr::parse("fd00::/64").unwrap()));
        assert!(
            Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains("1.2.3.4".parse().unwrap())
        );
        assert!(Cidr::parse("10.0.0.0/024").is_err());
        assert!(Cidr::parse("010.0.0.0/24").is_err());
    }
}
