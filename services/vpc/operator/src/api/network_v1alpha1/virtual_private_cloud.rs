// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The `VirtualPrivateCloud` custom resource (`network.mni.dev/v1alpha1`, namespaced): a
//! tenant's virtual private cloud, which `VirtualPrivateCloudReconciler` maps onto Kube-OVN's
//! cluster-scoped `Vpc`, `Subnet`s and NAT objects.
//!
//! The address plan is checked twice with the same messages: by the API server, through the
//! CEL rules (`x-kubernetes-validations`) in the schema below (kube-apiserver 1.31 and later
//! evaluate them, with the IP and CIDR library), and by [`validate`](super::validate) in Rust,
//! which the controller runs before it touches Kube-OVN and the backend runs before it writes.

use kube::CustomResource;
use mni_core::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tenant's virtual private cloud: its subnets, static routes, the namespaces bound to it
/// and an optional NAT gateway.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "network.mni.dev",
    version = "v1alpha1",
    kind = "VirtualPrivateCloud",
    plural = "virtualprivateclouds",
    shortname = "tvpc",
    namespaced,
    status = "VirtualPrivateCloudStatus",
    printcolumn = r#"{"name":"VPC","type":"string","jsonPath":".status.vpc"}"#,
    printcolumn = r#"{"name":"Subnets","type":"string","jsonPath":".status.subnetsReady"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.subnets.all(a, self.subnets.all(b, a.name == b.name || !a.cidrBlock.split(',', 2).exists(x, b.cidrBlock.split(',', 2).exists(y, isCIDR(x) && isCIDR(y) && (cidr(x).containsCIDR(y) || cidr(y).containsCIDR(x))))))",
        "messageExpression": "self.subnets.map(a, self.subnets.filter(b, a.name != b.name && a.cidrBlock.split(',', 2).exists(x, b.cidrBlock.split(',', 2).exists(y, isCIDR(x) && isCIDR(y) && (cidr(x).containsCIDR(y) || cidr(y).containsCIDR(x))))).map(b, 'subnet %s: cidrBlock %s overlaps subnet %s (%s)'.format([a.name, a.cidrBlock, b.name, b.cidrBlock]))).filter(l, size(l) > 0)[0][0]",
        "reason": "FieldValueInvalid",
        "fieldPath": ".subnets"
    },
    {
        "rule": "!has(self.natGateway) || self.subnets.exists(s, s.cidrBlock.split(',', 2).exists(c, isCIDR(c) && isIP(self.natGateway.lanIp) && cidr(c).containsIP(self.natGateway.lanIp)))",
        "messageExpression": "'natGateway: lanIp ' + self.natGateway.lanIp + ' is not inside a subnet of the VPC'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".natGateway.lanIp"
    },
    {
        "rule": "!has(self.natGateway) || !has(self.natGateway.snatRules) || self.natGateway.snatRules.all(r, !isCIDR(r.internalCIDR) || self.subnets.exists(s, s.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsCIDR(r.internalCIDR))))",
        "messageExpression": "self.natGateway.snatRules.filter(r, !isCIDR(r.internalCIDR) || !self.subnets.exists(s, s.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsCIDR(r.internalCIDR)))).map(r, 'snat rule %s: internalCIDR %s is not inside a subnet of the VPC'.format([r.name, r.internalCIDR]))[0]",
        "reason": "FieldValueInvalid",
        "fieldPath": ".natGateway.snatRules"
    },
    {
        "rule": "!has(self.natGateway) || !has(self.natGateway.dnatRules) || self.natGateway.dnatRules.all(r, !isIP(r.internalIp) || self.subnets.exists(s, s.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsIP(r.internalIp))))",
        "messageExpression": "self.natGateway.dnatRules.filter(r, !isIP(r.internalIp) || !self.subnets.exists(s, s.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsIP(r.internalIp)))).map(r, 'dnat rule %s: internalIp %s is not inside a subnet of the VPC'.format([r.name, r.internalIp]))[0]",
        "reason": "FieldValueInvalid",
        "fieldPath": ".natGateway.dnatRules"
    }
]))]
pub struct VirtualPrivateCloudSpec {
    /// The subnets, each a Kube-OVN Subnet of this VPC; names are unique, address ranges must
    /// not overlap.
    #[schemars(length(min = 1, max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub subnets: Vec<SubnetSpec>,
    /// Static routes of the VPC's router. With a NAT gateway and no route for `0.0.0.0/0`,
    /// the operator adds the default route through the gateway's `lanIp`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub static_routes: Vec<StaticRoute>,
    /// The namespaces whose pods use this VPC's subnets (default: the VPC's own namespace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 32),
        inner(
            length(min = 1, max = 63),
            regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
        )
    )]
    pub namespaces: Vec<String>,
    /// A NAT gateway with elastic IPs and SNAT/DNAT rules, when the VPC reaches outside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway: Option<NatGateway>,
}

/// One subnet of a VPC, as Kube-OVN's Subnet writes it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.cidrBlock.split(',').size() <= 2 && self.cidrBlock.split(',').all(c, isCIDR(c))",
        "messageExpression": "'subnet ' + self.name + ': cidrBlock ' + self.cidrBlock + ' is not a CIDR, nor an IPv4 and an IPv6 CIDR separated by a comma'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".cidrBlock"
    },
    {
        "rule": "self.cidrBlock.split(',').size() != 2 || self.cidrBlock.split(',')[0].contains(':') != self.cidrBlock.split(',')[1].contains(':')",
        "messageExpression": "'subnet ' + self.name + ': the dual-stack cidrBlock ' + self.cidrBlock + ' needs one IPv4 and one IPv6 CIDR'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".cidrBlock"
    },
    {
        "rule": "!has(self.gateway) || self.gateway.split(',', 2).all(g, isIP(g))",
        "messageExpression": "'subnet ' + self.name + ': gateway ' + self.gateway + ' is not an IP address'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".gateway"
    },
    {
        "rule": "!has(self.gateway) || self.gateway.split(',', 2).all(g, !isIP(g) || self.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsIP(g)))",
        "messageExpression": "'subnet ' + self.name + ': gateway ' + self.gateway + ' is outside cidrBlock ' + self.cidrBlock",
        "reason": "FieldValueInvalid",
        "fieldPath": ".gateway"
    },
    {
        "rule": "!has(self.excludeIps) || self.excludeIps.all(e, e.split('..').size() <= 2 && e.split('..').all(p, isIP(p)))",
        "messageExpression": "'subnet ' + self.name + ': excludeIps ' + self.excludeIps.filter(e, !(e.split('..').size() <= 2 && e.split('..').all(p, isIP(p))))[0] + ' is not an IP address or a range FIRST..LAST'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".excludeIps"
    },
    {
        "rule": "!has(self.excludeIps) || self.excludeIps.all(e, e.split('..', 2).all(p, !isIP(p) || self.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsIP(p))))",
        "messageExpression": "'subnet ' + self.name + ': excludeIps ' + self.excludeIps.filter(e, !e.split('..', 2).all(p, !isIP(p) || self.cidrBlock.split(',', 2).exists(c, isCIDR(c) && cidr(c).containsIP(p))))[0] + ' is outside cidrBlock ' + self.cidrBlock",
        "reason": "FieldValueInvalid",
        "fieldPath": ".excludeIps"
    },
    {
        "rule": "!has(self.allowSubnets) || self.allowSubnets.all(c, isCIDR(c))",
        "messageExpression": "'subnet ' + self.name + ': allowSubnets ' + self.allowSubnets.filter(c, !isCIDR(c))[0] + ' is not a CIDR'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".allowSubnets"
    },
    {
        "rule": "self.cidrBlock == oldSelf.cidrBlock",
        "messageExpression": "'subnet ' + self.name + ': cidrBlock is immutable (it was ' + oldSelf.cidrBlock + '); add a new subnet instead'",
        "reason": "FieldValueForbidden",
        "fieldPath": ".cidrBlock"
    }
]))]
pub struct SubnetSpec {
    /// The subnet's name, unique in the VPC (a DNS label).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub name: String,
    /// The address range: an IPv4 or IPv6 CIDR, or both separated by a comma (`v4,v6`) for a
    /// dual-stack subnet. Immutable, as in Kube-OVN.
    #[schemars(length(min = 1, max = 64))]
    pub cidr_block: String,
    /// The gateway (`v4,v6` for dual stack); default: the first usable address of each range,
    /// as Kube-OVN chooses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub gateway: Option<String>,
    /// Addresses Kube-OVN must not hand out: IPs and ranges `FIRST..LAST`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 80)))]
    pub exclude_ips: Vec<String>,
    /// Whether traffic leaving the subnet is masqueraded.
    #[serde(default)]
    pub nat_outgoing: bool,
    /// Whether only `allowSubnets` may reach the subnet.
    #[serde(default)]
    pub private: bool,
    /// The CIDRs that may reach a private subnet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 100)))]
    pub allow_subnets: Vec<String>,
}

/// Which address of a packet a static route matches.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum RoutePolicy {
    /// The destination (the usual routing).
    #[default]
    #[serde(rename = "policyDst")]
    Destination,
    /// The source.
    #[serde(rename = "policySrc")]
    Source,
}

/// A static route of the VPC's router.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "isCIDR(self.cidr)",
        "messageExpression": "'static route ' + self.cidr + ': cidr is not a CIDR'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".cidr"
    },
    {
        "rule": "isIP(self.nextHopIP)",
        "messageExpression": "'static route ' + self.cidr + ': nextHopIP ' + self.nextHopIP + ' is not an IP address'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".nextHopIP"
    }
]))]
pub struct StaticRoute {
    /// The destination (or, with `policySrc`, source) range.
    #[schemars(length(min = 1, max = 64))]
    pub cidr: String,
    /// Where matching packets go.
    #[serde(rename = "nextHopIP")]
    #[schemars(length(min = 1, max = 64))]
    pub next_hop_ip: String,
    /// Which address the route matches (default `policyDst`).
    #[serde(default)]
    pub policy: RoutePolicy,
}

/// A NAT gateway: a Kube-OVN VpcNatGateway in one of the VPC's subnets, with elastic IPs from
/// an external subnet and SNAT/DNAT rules on them.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.snatRules) || self.snatRules.all(r, has(self.eips) && self.eips.exists(e, e.name == r.eip))",
        "messageExpression": "self.snatRules.filter(r, !has(self.eips) || !self.eips.exists(e, e.name == r.eip)).map(r, 'snat rule %s: eip %s is not one of natGateway.eips'.format([r.name, r.eip]))[0]",
        "reason": "FieldValueInvalid",
        "fieldPath": ".snatRules"
    },
    {
        "rule": "!has(self.dnatRules) || self.dnatRules.all(r, has(self.eips) && self.eips.exists(e, e.name == r.eip))",
        "messageExpression": "self.dnatRules.filter(r, !has(self.eips) || !self.eips.exists(e, e.name == r.eip)).map(r, 'dnat rule %s: eip %s is not one of natGateway.eips'.format([r.name, r.eip]))[0]",
        "reason": "FieldValueInvalid",
        "fieldPath": ".dnatRules"
    }
]))]
pub struct NatGateway {
    /// The gateway's address inside the VPC; it picks the subnet the gateway runs in.
    #[serde(rename = "lanIp")]
    #[schemars(length(min = 1, max = 64))]
    pub lan_ip: String,
    /// The Kube-OVN Subnet (cluster-wide, made by the platform team) the EIPs come from.
    #[schemars(length(min = 1, max = 253))]
    pub external_subnet: String,
    /// The elastic IPs, each a Kube-OVN IptablesEIP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub eips: Vec<Eip>,
    /// Source NAT: traffic from `internalCIDR` leaves through an EIP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub snat_rules: Vec<SnatRule>,
    /// Destination NAT: a port of an EIP forwards to an address inside the VPC.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub dnat_rules: Vec<DnatRule>,
}

/// An elastic IP of the NAT gateway.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Eip {
    /// The EIP's name, unique in the VPC (a DNS label).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub name: String,
}

/// A source NAT rule.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "isCIDR(self.internalCIDR)",
        "messageExpression": "'snat rule ' + self.name + ': internalCIDR ' + self.internalCIDR + ' is not a CIDR'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".internalCIDR"
    }
]))]
pub struct SnatRule {
    /// The rule's name, unique in the VPC (a DNS label).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub name: String,
    /// The EIP (a name in `eips`) the traffic leaves through.
    #[schemars(length(min = 1, max = 63))]
    pub eip: String,
    /// The source range inside the VPC.
    #[serde(rename = "internalCIDR")]
    #[schemars(length(min = 1, max = 64))]
    pub internal_cidr: String,
}

/// The transport protocol of a DNAT rule.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// TCP.
    #[default]
    Tcp,
    /// UDP.
    Udp,
}

impl Protocol {
    /// `tcp` or `udp`, as Kube-OVN writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
        }
    }
}

/// A destination NAT rule.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "isIP(self.internalIp)",
        "messageExpression": "'dnat rule ' + self.name + ': internalIp ' + self.internalIp + ' is not an IP address'",
        "reason": "FieldValueInvalid",
        "fieldPath": ".internalIp"
    }
]))]
pub struct DnatRule {
    /// The rule's name, unique in the VPC (a DNS label).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub name: String,
    /// The EIP (a name in `eips`) whose port is forwarded.
    #[schemars(length(min = 1, max = 63))]
    pub eip: String,
    /// The port on the EIP.
    #[schemars(range(min = 1, max = 65535))]
    pub external_port: u16,
    /// `tcp` (default) or `udp`.
    #[serde(default)]
    pub protocol: Protocol,
    /// The address inside the VPC that receives the traffic.
    #[serde(rename = "internalIp")]
    #[schemars(length(min = 1, max = 64))]
    pub internal_ip: String,
    /// The port on `internalIp`.
    #[schemars(range(min = 1, max = 65535))]
    pub internal_port: u16,
}

/// What the operator last observed about a VirtualPrivateCloud and its Kube-OVN objects.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VirtualPrivateCloudStatus {
    /// `Validated`, `Ready`, `Progressing` and `Degraded`, each with the generation it
    /// describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The name of the Kube-OVN Vpc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc: Option<String>,
    /// Ready subnets out of all, e.g. `2/3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnets_ready: Option<String>,
    /// Each subnet as Kube-OVN reports it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subnets: Vec<SubnetStatus>,
    /// The NAT gateway and its EIPs, when the spec asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway: Option<NatGatewayStatus>,
}

/// One subnet as Kube-OVN reports it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubnetStatus {
    /// The subnet's name in the spec.
    pub name: String,
    /// The Kube-OVN Subnet's name.
    pub subnet: String,
    /// The address range.
    pub cidr_block: String,
    /// `IPv4`, `IPv6` or `Dual`.
    pub protocol: String,
    /// Whether Kube-OVN reports the Subnet `Ready`.
    pub ready: bool,
    /// Free IPv4 addresses, as Kube-OVN counts them.
    #[serde(
        default,
        rename = "v4AvailableIPs",
        skip_serializing_if = "Option::is_none"
    )]
    pub v4_available_ips: Option<f64>,
    /// Free IPv6 addresses, as Kube-OVN counts them.
    #[serde(
        default,
        rename = "v6AvailableIPs",
        skip_serializing_if = "Option::is_none"
    )]
    pub v6_available_ips: Option<f64>,
}

/// The NAT gateway as Kube-OVN reports it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NatGatewayStatus {
    /// The Kube-OVN VpcNatGateway's name.
    pub name: String,
    /// Whether every EIP and rule is ready.
    pub ready: bool,
    /// The elastic IPs and the addresses they got.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eips: Vec<EipStatus>,
}

/// One elastic IP as Kube-OVN reports it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EipStatus {
    /// The EIP's name in the spec.
    pub name: String,
    /// The address Kube-OVN allocated, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Whether Kube-OVN reports the EIP ready.
    pub ready: bool,
}
