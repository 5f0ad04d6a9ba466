//! [`Vpc`]: a Kube-OVN VPC, one OVN logical router with its routes.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Condition;

/// A VPC: an isolated OVN logical router. Its subnets name it in `spec.vpc`; the namespaces
/// listed here may use it.
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "Vpc",
    plural = "vpcs",
    singular = "vpc",
    shortname = "vpc",
    status = "VpcStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Kube-OVN VPC (mNi's subset of kubeovn.io/v1 Vpc).",
    printcolumn(
        name = "EnableExternal",
        type_ = "boolean",
        json_path = ".status.enableExternal"
    ),
    printcolumn(name = "Standby", type_ = "boolean", json_path = ".status.standby"),
    printcolumn(name = "Subnets", type_ = "string", json_path = ".status.subnets"),
    printcolumn(name = "Namespaces", type_ = "string", json_path = ".spec.namespaces"),
    printcolumn(
        name = "DefaultSubnet",
        type_ = "string",
        json_path = ".status.defaultLogicalSwitch"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct VpcSpec {
    /// Namespaces whose pods may use this VPC.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Static routes of the VPC's router.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_routes: Vec<StaticRoute>,
    /// Policy routes of the VPC's router.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_routes: Vec<PolicyRoute>,
    /// Connect the VPC to the external network (`ovn-vpc-external-network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_external: Option<bool>,
    /// The VPC's default subnet (pods of its namespaces land there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_subnet: Option<String>,
}

/// A static route of a VPC router.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaticRoute {
    /// The destination (or, with `policySrc`, source) CIDR, e.g. `0.0.0.0/0`.
    pub cidr: String,
    /// The next hop, e.g. a NAT gateway's `lanIp`.
    #[serde(rename = "nextHopIP")]
    pub next_hop_ip: String,
    /// Whether `cidr` matches the destination (default) or the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<RoutePolicy>,
    /// The route table (default: the main table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_table: Option<String>,
}

/// What a static route's CIDR matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RoutePolicy {
    /// Match the source address.
    #[serde(rename = "policySrc")]
    PolicySrc,
    /// Match the destination address (Kube-OVN's default).
    #[serde(rename = "policyDst")]
    PolicyDst,
}

/// A policy route of a VPC router (an OVN logical router policy).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRoute {
    /// Priority, 0–32767; higher wins.
    #[serde(default)]
    pub priority: i32,
    /// An OVN match expression, e.g. `ip4.src == 10.0.1.0/24`.
    #[serde(rename = "match")]
    pub match_: String,
    /// What to do with matching packets.
    pub action: PolicyRouteAction,
    /// The next hop; only with `action: reroute`.
    #[serde(default, rename = "nextHopIP", skip_serializing_if = "Option::is_none")]
    pub next_hop_ip: Option<String>,
}

/// What a policy route does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PolicyRouteAction {
    /// Let the packet through.
    #[default]
    Allow,
    /// Drop the packet.
    Drop,
    /// Send the packet to `nextHopIP`.
    Reroute,
}

/// What Kube-OVN reports about a VPC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VpcStatus {
    /// `Ready` once the logical router exists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `true` once the VPC's router has been created.
    #[serde(default)]
    pub standby: bool,
    /// Whether this is the cluster's default VPC (`ovn-cluster`).
    #[serde(default)]
    pub default: bool,
    /// The VPC's default subnet (its `spec.defaultSubnet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_logical_switch: Option<String>,
    /// The name of the OVN logical router (the VPC's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<String>,
    /// The names of the subnets whose `spec.vpc` is this VPC, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subnets: Vec<String>,
    /// Whether the VPC is connected to the external network.
    #[serde(default)]
    pub enable_external: bool,
}
