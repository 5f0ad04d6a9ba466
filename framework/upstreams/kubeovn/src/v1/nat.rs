//! VPC NAT gateways and their iptables objects: [`VpcNatGateway`], [`IptablesEIP`],
//! [`IptablesSnatRule`] and [`IptablesDnatRule`].
//!
//! A NAT gateway is a pod (upstream: StatefulSet `vpc-nat-gw-<name>` in `kube-system`) with
//! one leg in a VPC subnet (`lanIp`) and one in an external subnet. An EIP is an address of
//! the external subnet on that pod (`natGwDp`); SNAT and DNAT rules name an EIP.

#![allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Condition;

/// The label Kube-OVN puts on an EIP naming its external subnet.
pub const SUBNET_NAME_LABEL: &str = "ovn.kubernetes.io/subnet";

/// The label Kube-OVN puts on an EIP naming its NAT gateway.
pub const VPC_NAT_GATEWAY_NAME_LABEL: &str = "ovn.kubernetes.io/vpc-nat-gw-name";

/// The label Kube-OVN puts on an EIP holding its IPv4 address.
pub const EIP_V4_IP_LABEL: &str = "ovn.kubernetes.io/eip_v4_ip";

/// A VPC NAT gateway. Upstream's status has no conditions: it mirrors the spec fields the
/// gateway pod was configured with once the pod exists.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "VpcNatGateway",
    plural = "vpc-nat-gateways",
    singular = "vpc-nat-gateway",
    shortname = "vpc-nat-gw",
    status = "VpcNatGatewayStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Kube-OVN VPC NAT gateway (mNi's subset of kubeovn.io/v1 VpcNatGateway).",
    printcolumn(name = "Vpc", type_ = "string", json_path = ".spec.vpc"),
    printcolumn(name = "Subnet", type_ = "string", json_path = ".spec.subnet"),
    printcolumn(name = "LanIP", type_ = "string", json_path = ".spec.lanIp")
)]
#[serde(rename_all = "camelCase")]
pub struct VpcNatGatewaySpec {
    /// The VPC the gateway serves.
    pub vpc: String,
    /// The VPC subnet the gateway's LAN leg is in.
    pub subnet: String,
    /// The gateway's address in `subnet` (routes' `nextHopIP`).
    pub lan_ip: String,
    /// The external subnets the gateway's EIPs come from (default:
    /// `ovn-vpc-external-network`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external_subnets: Vec<String>,
    /// Node selector of the gateway pod, as `key: value` strings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selector: Vec<String>,
    /// A QoS policy for the gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_policy: Option<String>,
}

/// What Kube-OVN reports about a NAT gateway: the configuration its pod runs with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VpcNatGatewayStatus {
    /// The external subnets the running gateway is attached to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external_subnets: Vec<String>,
    /// The node selector the running gateway was scheduled with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selector: Vec<String>,
    /// The QoS policy applied to the gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_policy: Option<String>,
}

/// An elastic IP on a NAT gateway. Leave `v4ip` empty to have one allocated from the
/// external subnet; Kube-OVN then writes it (and `macAddress`) into the spec.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "IptablesEIP",
    plural = "iptables-eips",
    singular = "iptables-eip",
    shortname = "eip",
    status = "IptablesEIPStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Kube-OVN iptables EIP (mNi's subset of kubeovn.io/v1 IptablesEIP).",
    printcolumn(name = "IP", type_ = "string", json_path = ".status.ip"),
    printcolumn(name = "Mac", type_ = "string", json_path = ".spec.macAddress"),
    printcolumn(name = "Nat", type_ = "string", json_path = ".status.nat"),
    printcolumn(name = "NatGwDp", type_ = "string", json_path = ".spec.natGwDp"),
    printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready")
)]
#[serde(rename_all = "camelCase")]
pub struct IptablesEIPSpec {
    /// The IPv4 address; empty: allocate one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub v4ip: String,
    /// The IPv6 address, for dual-stack external subnets.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub v6ip: String,
    /// The MAC address of the EIP's port; empty: generate one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac_address: String,
    /// The NAT gateway (a [`VpcNatGateway`] name) the EIP lives on.
    pub nat_gw_dp: String,
    /// The external subnet to allocate from (default: `ovn-vpc-external-network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_subnet: Option<String>,
    /// A QoS policy for the EIP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_policy: Option<String>,
}

/// What Kube-OVN reports about an EIP.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IptablesEIPStatus {
    /// Whether the address is configured on the gateway.
    #[serde(default)]
    pub ready: bool,
    /// The IPv4 address in use.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ip: String,
    /// Set while a change is being redone on the gateway.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub redo: String,
    /// How the EIP is used: `snat`, `dnat`, `fip`, comma-separated when several.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub nat: String,
    /// The QoS policy applied.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub qos_policy: String,
    /// `Ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// Source NAT of an internal CIDR through an EIP.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "IptablesSnatRule",
    plural = "iptables-snat-rules",
    singular = "iptables-snat-rule",
    shortname = "snat",
    status = "IptablesSnatRuleStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Kube-OVN iptables SNAT rule (mNi's subset of kubeovn.io/v1 IptablesSnatRule).",
    printcolumn(name = "EIP", type_ = "string", json_path = ".spec.eip"),
    printcolumn(name = "V4ip", type_ = "string", json_path = ".status.v4ip"),
    printcolumn(name = "V6ip", type_ = "string", json_path = ".status.v6ip"),
    printcolumn(
        name = "InternalCIDR",
        type_ = "string",
        json_path = ".spec.internalCIDR"
    ),
    printcolumn(name = "NatGwDp", type_ = "string", json_path = ".status.natGwDp"),
    printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready")
)]
pub struct IptablesSnatRuleSpec {
    /// The [`IptablesEIP`] to translate to.
    pub eip: String,
    /// The internal addresses to translate, e.g. `10.0.1.0/24`.
    #[serde(rename = "internalCIDR")]
    pub internal_cidr: String,
}

/// What Kube-OVN reports about an SNAT rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IptablesSnatRuleStatus {
    /// Whether the rule is configured on the gateway.
    #[serde(default)]
    pub ready: bool,
    /// The EIP's IPv4 address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub v4ip: String,
    /// The EIP's IPv6 address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub v6ip: String,
    /// The NAT gateway the rule is on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub nat_gw_dp: String,
    /// Set while a change is being redone on the gateway.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub redo: String,
    /// The internal CIDR the rule was configured with.
    #[serde(
        default,
        rename = "internalCIDR",
        skip_serializing_if = "String::is_empty"
    )]
    pub internal_cidr: String,
    /// `Ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// Destination NAT (port forwarding) from an EIP's port to an internal address.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "IptablesDnatRule",
    plural = "iptables-dnat-rules",
    singular = "iptables-dnat-rule",
    shortname = "dnat",
    status = "IptablesDnatRuleStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Kube-OVN iptables DNAT rule (mNi's subset of kubeovn.io/v1 IptablesDnatRule).",
    printcolumn(name = "Eip", type_ = "string", json_path = ".spec.eip"),
    printcolumn(name = "Protocol", type_ = "string", json_path = ".spec.protocol"),
    printcolumn(name = "V4ip", type_ = "string", json_path = ".status.v4ip"),
    printcolumn(name = "V6ip", type_ = "string", json_path = ".status.v6ip"),
    printcolumn(name = "InternalIp", type_ = "string", json_path = ".spec.internalIp"),
    printcolumn(
        name = "ExternalPort",
        type_ = "string",
        json_path = ".spec.externalPort"
    ),
    printcolumn(
        name = "InternalPort",
        type_ = "string",
        json_path = ".spec.internalPort"
    ),
    printcolumn(name = "NatGwDp", type_ = "string", json_path = ".status.natGwDp"),
    printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready")
)]
#[serde(rename_all = "camelCase")]
pub struct IptablesDnatRuleSpec {
    /// The [`IptablesEIP`] whose port is forwarded.
    pub eip: String,
    /// The EIP's port, as a string (upstream's type), e.g. `"8888"`.
    pub external_port: String,
    /// `tcp` or `udp`.
    pub protocol: String,
    /// The internal address to forward to.
    pub internal_ip: String,
    /// The internal port, as a string, e.g. `"80"`.
    pub internal_port: String,
}

/// What Kube-OVN reports about a DNAT rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IptablesDnatRuleStatus {
    /// Whether the rule is configured on the gateway.
    #[serde(default)]
    pub ready: bool,
    /// The EIP's IPv4 address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub v4ip: String,
    /// The EIP's IPv6 address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub v6ip: String,
    /// The NAT gateway the rule is on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub nat_gw_dp: String,
    /// Set while a change is being redone on the gateway.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub redo: String,
    /// The protocol the rule was configured with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub protocol: String,
    /// The internal address the rule was configured with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub internal_ip: String,
    /// The internal port the rule was configured with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub internal_port: String,
    /// The external port the rule was configured with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub external_port: String,
    /// `Ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
