//! [`Subnet`]: a Kube-OVN subnet, one OVN logical switch in a VPC.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Condition;

/// A subnet: an OVN logical switch attached to a VPC's router. Dual-stack subnets list an
/// IPv4 and an IPv6 CIDR in `cidrBlock`, comma-separated, as upstream does.
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "Subnet",
    plural = "subnets",
    singular = "subnet",
    shortname = "subnet",
    status = "SubnetStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Kube-OVN subnet (mNi's subset of kubeovn.io/v1 Subnet).",
    printcolumn(name = "Provider", type_ = "string", json_path = ".spec.provider"),
    printcolumn(name = "Vpc", type_ = "string", json_path = ".spec.vpc"),
    printcolumn(name = "Protocol", type_ = "string", json_path = ".spec.protocol"),
    printcolumn(name = "CIDR", type_ = "string", json_path = ".spec.cidrBlock"),
    printcolumn(name = "Private", type_ = "boolean", json_path = ".spec.private"),
    printcolumn(name = "NAT", type_ = "boolean", json_path = ".spec.natOutgoing"),
    printcolumn(name = "Default", type_ = "boolean", json_path = ".spec.default"),
    printcolumn(
        name = "GatewayType",
        type_ = "string",
        json_path = ".spec.gatewayType"
    ),
    printcolumn(name = "V4Used", type_ = "number", json_path = ".status.v4usingIPs"),
    printcolumn(
        name = "V4Available",
        type_ = "number",
        json_path = ".status.v4availableIPs"
    ),
    printcolumn(name = "V6Used", type_ = "number", json_path = ".status.v6usingIPs"),
    printcolumn(
        name = "V6Available",
        type_ = "number",
        json_path = ".status.v6availableIPs"
    ),
    printcolumn(name = "ExcludeIPs", type_ = "string", json_path = ".spec.excludeIps")
)]
#[serde(rename_all = "camelCase")]
pub struct SubnetSpec {
    /// The VPC the subnet belongs to (Kube-OVN's default: `ovn-cluster`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc: Option<String>,
    /// Whether this is the default subnet of the default VPC.
    #[serde(default)]
    pub default: bool,
    /// `IPv4`, `IPv6` or `Dual`; Kube-OVN derives it from `cidrBlock` when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// The CIDR block: `10.0.1.0/24`, or for dual stack `10.0.1.0/24,fd00:10:1::/120`.
    pub cidr_block: String,
    /// The gateway address(es), comma-separated for dual stack; default: the first address
    /// of each CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    /// Addresses never handed out: single IPs and `first..last` ranges, either family.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_ips: Vec<String>,
    /// Namespaces whose pods get addresses from this subnet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Masquerade traffic leaving the cluster (default VPC only).
    #[serde(default)]
    pub nat_outgoing: bool,
    /// Deny traffic from other subnets except `allowSubnets`.
    #[serde(default)]
    pub private: bool,
    /// CIDRs allowed to reach a private subnet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_subnets: Vec<String>,
    /// The network provider: `ovn` (default) or `<nad>.<namespace>[.ovn]` for attachments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// `distributed` (default) or `centralized`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_type: Option<GatewayType>,
    /// Whether the subnet gets OVN load balancers for Services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_lb: Option<bool>,
}

/// A subnet's address families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Protocol {
    /// IPv4 only.
    IPv4,
    /// IPv6 only.
    IPv6,
    /// One IPv4 and one IPv6 CIDR.
    Dual,
}

/// How a subnet reaches outside its VPC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GatewayType {
    /// Every node is a gateway for its own pods.
    Distributed,
    /// Traffic leaves through the gateway node(s).
    Centralized,
}

/// What Kube-OVN reports about a subnet: conditions and address accounting.
///
/// The counts are JSON numbers (upstream's `float64`: an IPv6 /64 has more addresses than
/// a `u64` counts exactly); the ranges are strings like `10.0.1.2-10.0.1.9,10.0.1.21-10.0.1.254`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubnetStatus {
    /// `Validated`, `Ready` and `Error`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// IPv4 addresses still available: the CIDR minus network and broadcast addresses, the
    /// gateway, `excludeIps` and the addresses in use.
    #[serde(default, rename = "v4availableIPs")]
    pub v4available_ips: f64,
    /// IPv4 addresses in use (by pods, VIPs, NAT gateways…).
    #[serde(default, rename = "v4usingIPs")]
    pub v4using_ips: f64,
    /// IPv6 addresses still available, counted like `v4availableIPs`.
    #[serde(default, rename = "v6availableIPs")]
    pub v6available_ips: f64,
    /// IPv6 addresses in use.
    #[serde(default, rename = "v6usingIPs")]
    pub v6using_ips: f64,
    /// The available IPv4 addresses as ranges.
    #[serde(default, rename = "v4availableIPrange")]
    pub v4available_ip_range: String,
    /// The IPv4 addresses in use as ranges.
    #[serde(default, rename = "v4usingIPrange")]
    pub v4using_ip_range: String,
    /// The available IPv6 addresses as ranges.
    #[serde(default, rename = "v6availableIPrange")]
    pub v6available_ip_range: String,
    /// The IPv6 addresses in use as ranges.
    #[serde(default, rename = "v6usingIPrange")]
    pub v6using_ip_range: String,
}
