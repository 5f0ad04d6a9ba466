//! [`Ip`]: Kube-OVN's record of one address in use (`ips.kubeovn.io`), one per pod or
//! virtual machine and subnet.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An address Kube-OVN handed out: which pod (or VM) holds it, on which subnet and node.
/// Kube-OVN names it `<pod>.<namespace>` (for a KubeVirt VM, `<vm>.<namespace>`, so the
/// address survives the VM's restarts); a Subnet's `v4usingIPs` counts these.
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kubeovn.io",
    version = "v1",
    kind = "IP",
    root = "Ip",
    plural = "ips",
    singular = "ip",
    shortname = "ip",
    derive = "Default",
    derive = "PartialEq",
    doc = "An address in use on a Kube-OVN subnet (mNi's subset of kubeovn.io/v1 IP).",
    printcolumn(name = "V4IP", type_ = "string", json_path = ".spec.v4IpAddress"),
    printcolumn(name = "V6IP", type_ = "string", json_path = ".spec.v6IpAddress"),
    printcolumn(name = "Mac", type_ = "string", json_path = ".spec.macAddress"),
    printcolumn(name = "Node", type_ = "string", json_path = ".spec.nodeName"),
    printcolumn(name = "Subnet", type_ = "string", json_path = ".spec.subnet")
)]
#[serde(rename_all = "camelCase")]
pub struct IpSpec {
    /// The pod (or VM) holding the address.
    #[serde(default)]
    pub pod_name: String,
    /// Its namespace.
    #[serde(default)]
    pub namespace: String,
    /// The subnet the address is from.
    #[serde(default)]
    pub subnet: String,
    /// The node the pod runs on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_name: String,
    /// The address(es), comma-separated for dual stack.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ip_address: String,
    /// The IPv4 address.
    #[serde(
        default,
        rename = "v4IpAddress",
        skip_serializing_if = "String::is_empty"
    )]
    pub v4_ip_address: String,
    /// The IPv6 address.
    #[serde(
        default,
        rename = "v6IpAddress",
        skip_serializing_if = "String::is_empty"
    )]
    pub v6_ip_address: String,
    /// The MAC address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac_address: String,
    /// What holds it: empty for a pod, `VirtualMachine` for a KubeVirt VM.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pod_type: String,
}

impl Ip {
    /// The addresses the IP records: `v4IpAddress`, `v6IpAddress` and `ipAddress`, parsed.
    pub fn addresses(&self) -> Vec<std::net::IpAddr> {
        let spec = &self.spec;
        let mut out: Vec<std::net::IpAddr> =
            [&spec.v4_ip_address, &spec.v6_ip_address, &spec.ip_address]
                .iter()
                .flat_map(|s| s.split(','))
                .filter_map(|s| s.trim().parse().ok())
                .collect();
        out.sort();
        out.dedup();
        out
    }
}
