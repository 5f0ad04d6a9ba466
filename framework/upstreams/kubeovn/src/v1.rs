//! `kubeovn.io/v1`: mNi's subset of Kube-OVN's API, as `kube::CustomResource` types.
//!
//! Seven cluster-scoped kinds, all but [`Ip`] with a `status` subresource:
//!
//! - [`Vpc`] — a logical router with its static and policy routes;
//! - [`Subnet`] — a logical switch in a VPC, with its CIDR block(s), gateway and exclusions;
//! - [`VpcNatGateway`] — the NAT gateway pod of a VPC (`vpc-nat-gw-<name>` upstream);
//! - [`IptablesEIP`] — an external address on a NAT gateway;
//! - [`IptablesSnatRule`] and [`IptablesDnatRule`] — SNAT and DNAT through an EIP;
//! - [`Ip`] — an address in use by a pod or VM (what a Subnet's `v4usingIPs` counts).
//!
//! Field names, JSON types and printer columns follow the upstream CRDs of Kube-OVN 1.16
//! (`charts/kube-ovn-v2/crds/kube-ovn-crd.yaml`), including their irregular spellings
//! (`nextHopIP`, `internalCIDR`, `v4availableIPs`, `lanIp`, `excludeIps`), so the same
//! operator code reads and writes a real Kube-OVN installation. Only the fields mNi uses are
//! modelled; a real cluster's objects deserialize fine (unknown fields are ignored), but
//! writing one of these types back with `replace` would drop them, so write with server-side
//! apply or merge patches.
//!
//! [`crds`] returns the CRDs of the subset (mNi's own schemas: stricter than upstream where
//! an enum is known, e.g. [`Protocol`]). Conditions use Kube-OVN's [`Condition`] shape
//! (with `lastUpdateTime`), not `metav1.Condition`.

mod condition;
mod ip;
mod nat;
mod subnet;
mod vpc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use condition::{
    Condition, ERROR, READY, STATUS_FALSE, STATUS_TRUE, STATUS_UNKNOWN, VALIDATED, find_condition,
    is_condition_true,
};
pub use ip::{Ip, IpSpec};
pub use nat::{
    EIP_V4_IP_LABEL, IptablesDnatRule, IptablesDnatRuleSpec, IptablesDnatRuleStatus, IptablesEIP,
    IptablesEIPSpec, IptablesEIPStatus, IptablesSnatRule, IptablesSnatRuleSpec,
    IptablesSnatRuleStatus, SUBNET_NAME_LABEL, VPC_NAT_GATEWAY_NAME_LABEL, VpcNatGateway,
    VpcNatGatewaySpec, VpcNatGatewayStatus,
};
pub use subnet::{GatewayType, Protocol, Subnet, SubnetSpec, SubnetStatus};
pub use vpc::{PolicyRoute, PolicyRouteAction, RoutePolicy, StaticRoute, Vpc, VpcSpec, VpcStatus};

/// The API group of every kind here.
pub const GROUP: &str = "kubeovn.io";

/// The API version of every kind here.
pub const VERSION: &str = "v1";

/// The CRDs of the subset, in dependency order: `vpcs`, `subnets`, `vpc-nat-gateways`,
/// `iptables-eips`, `iptables-snat-rules`, `iptables-dnat-rules`, `ips` (all `.kubeovn.io`).
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        Vpc::crd(),
        Subnet::crd(),
        VpcNatGateway::crd(),
        IptablesEIP::crd(),
        IptablesSnatRule::crd(),
        IptablesDnatRule::crd(),
        Ip::crd(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn crd_json(name: &str) -> Value {
        let crd = crds()
            .into_iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no CRD {name}"));
        serde_json::to_value(crd).expect("crd json")
    }

    fn columns(crd: &Value) -> Vec<(String, String, String)> {
        crd["spec"]["versions"][0]["additionalPrinterColumns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap_or_default().to_string(),
                    c["type"].as_str().unwrap_or_default().to_string(),
                    c["jsonPath"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn crds_are_cluster_scoped_with_status_and_upstream_names() {
        let expected = [
            ("vpcs.kubeovn.io", "Vpc", "vpc", "vpc"),
            ("subnets.kubeovn.io", "Subnet", "subnet", "subnet"),
            (
                "vpc-nat-gateways.kubeovn.io",
                "VpcNatGateway",
                "vpc-nat-gateway",
                "vpc-nat-gw",
            ),
            (
                "iptables-eips.kubeovn.io",
                "IptablesEIP",
                "iptables-eip",
                "eip",
            ),
            (
                "iptables-snat-rules.kubeovn.io",
                "IptablesSnatRule",
                "iptables-snat-rule",
                "snat",
            ),
            (
                "iptables-dnat-rules.kubeovn.io",
                "IptablesDnatRule",
                "iptables-dnat-rule",
                "dnat",
            ),
        ];
        // And `ips`: no status subresource upstream.
        assert_eq!(crds().len(), expected.len() + 1);
        let ip = crd_json("ips.kubeovn.io");
        assert_eq!(ip["spec"]["scope"], "Cluster");
        assert_eq!(ip["spec"]["names"]["kind"], "IP");
        assert_eq!(ip["spec"]["names"]["shortNames"], json!(["ip"]));
        let names: Vec<String> = columns(&ip).into_iter().map(|c| c.0).collect();
        assert_eq!(names, ["V4IP", "V6IP", "Mac", "Node", "Subnet"]);
        for (name, kind, singular, short) in expected {
            let crd = crd_json(name);
            let spec = &crd["spec"];
            assert_eq!(spec["group"], GROUP, "{name}");
            assert_eq!(spec["scope"], "Cluster", "{name}");
            assert_eq!(spec["names"]["kind"], kind, "{name}");
            assert_eq!(spec["names"]["singular"], singular, "{name}");
            assert_eq!(spec["names"]["shortNames"], json!([short]), "{name}");
            let version = &spec["versions"][0];
            assert_eq!(version["name"], VERSION, "{name}");
            assert_eq!(version["subresources"]["status"], json!({}), "{name}");
            let schema = version["schema"]["openAPIV3Schema"].to_string();
            assert!(!schema.contains("$ref"), "{name}: {schema}");
        }
    }

    #[test]
    fn subnet_crd_keeps_upstream_columns_and_json_names() {
        let crd = crd_json("subnets.kubeovn.io");
        let cols = columns(&crd);
        let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "Provider",
                "Vpc",
                "Protocol",
                "CIDR",
                "Private",
                "NAT",
                "Default",
                "GatewayType",
                "V4Used",
                "V4Available",
                "V6Used",
                "V6Available",
                "ExcludeIPs"
            ]
        );
        assert!(cols.contains(&(
            "V4Available".into(),
            "number".into(),
            ".status.v4availableIPs".into()
        )));
        assert!(cols.contains(&("CIDR".into(), "string".into(), ".spec.cidrBlock".into())));
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        let spec = &schema["properties"]["spec"]["properties"];
        for field in [
            "vpc",
            "default",
            "protocol",
            "cidrBlock",
            "gateway",
            "excludeIps",
            "namespaces",
            "natOutgoing",
            "private",
            "allowSubnets",
            "provider",
            "gatewayType",
            "enableLb",
        ] {
            assert!(spec.get(field).is_some(), "spec.{field}: {spec:#}");
        }
        assert_eq!(spec["protocol"]["enum"], json!(["IPv4", "IPv6", "Dual"]));
        let status = &schema["properties"]["status"]["properties"];
        for field in [
            "v4availableIPs",
            "v4usingIPs",
            "v6availableIPs",
            "v6usingIPs",
        ] {
            assert_eq!(status[field]["type"], "number", "status.{field}");
        }
        for field in ["v4availableIPrange", "v4usingIPrange", "conditions"] {
            assert!(status.get(field).is_some(), "status.{field}");
        }
    }

    #[test]
    fn nat_crds_keep_upstream_json_names() {
        let crd = crd_json("iptables-snat-rules.kubeovn.io");
        let p = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        assert!(
            p["spec"]["properties"].get("internalCIDR").is_some(),
            "{p:#}"
        );
        assert!(p["status"]["properties"].get("internalCIDR").is_some());
        assert!(p["status"]["properties"].get("natGwDp").is_some());

        let crd = crd_json("iptables-eips.kubeovn.io");
        let cols = columns(&crd);
        let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["IP", "Mac", "Nat", "NatGwDp", "Ready"]);
        let p = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        for field in [
            "v4ip",
            "v6ip",
            "macAddress",
            "natGwDp",
            "externalSubnet",
            "qosPolicy",
        ] {
            assert!(p["spec"]["properties"].get(field).is_some(), "spec.{field}");
        }
        assert_eq!(p["status"]["properties"]["ready"]["type"], "boolean");

        let crd = crd_json("vpc-nat-gateways.kubeovn.io");
        let p = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        assert!(p["spec"]["properties"].get("lanIp").is_some());
        assert!(p["spec"]["properties"].get("externalSubnets").is_some());

        let crd = crd_json("vpcs.kubeovn.io");
        let p = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        let route = &p["spec"]["properties"]["staticRoutes"]["items"]["properties"];
        assert!(route.get("nextHopIP").is_some(), "{route:#}");
        assert_eq!(route["policy"]["enum"], json!(["policySrc", "policyDst"]));
    }

    #[test]
    fn upstream_objects_deserialize() {
        let subnet: Subnet = serde_json::from_value(json!({
            "apiVersion": "kubeovn.io/v1",
            "kind": "Subnet",
            "metadata": {"name": "vpc-nat-gw-subnet"},
            "spec": {
                "vpc": "vpc-nat-gw",
                "provider": "vpc-nat-pod-nad.vpc-nat-gw-ns.ovn",
                "cidrBlock": "10.101.0.0/24,fd00:10:101::/120",
                "protocol": "Dual",
                "excludeIps": ["10.101.0.1", "10.101.0.10..10.101.0.20"],
                "namespaces": ["vpc-nat-gw-ns"],
                "vlan": "ignored-by-mni",
            },
            "status": {
                "v4availableIPs": 242,
                "v4usingIPs": 0,
                "v4availableIPrange": "10.101.0.2-10.101.0.9,10.101.0.21-10.101.0.254",
                "conditions": [{
                    "type": "Ready",
                    "status": "True",
                    "reason": "ResetLogicalSwitchAclSuccess",
                    "lastUpdateTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }],
            },
        }))
        .expect("subnet");
        assert_eq!(subnet.spec.protocol, Some(Protocol::Dual));
        assert_eq!(subnet.spec.vpc.as_deref(), Some("vpc-nat-gw"));
        let status = subnet.status.expect("status");
        assert_eq!(status.v4available_ips, 242.0);
        assert!(is_condition_true(&status.conditions, READY));

        let route: StaticRoute = serde_json::from_value(json!({
            "cidr": "0.0.0.0/0", "nextHopIP": "10.101.0.254", "policy": "policyDst"
        }))
        .expect("route");
        assert_eq!(route.next_hop_ip, "10.101.0.254");
        assert_eq!(route.policy, Some(RoutePolicy::PolicyDst));

        let snat: IptablesSnatRule = serde_json::from_value(json!({
            "apiVersion": "kubeovn.io/v1",
            "kind": "IptablesSnatRule",
            "metadata": {"name": "snat01"},
            "spec": {"eip": "eip1", "internalCIDR": "10.101.0.3/32"},
        }))
        .expect("snat");
        assert_eq!(snat.spec.internal_cidr, "10.101.0.3/32");
        let back = serde_json::to_value(&snat.spec).expect("json");
        assert_eq!(
            back,
            json!({"eip": "eip1", "internalCIDR": "10.101.0.3/32"})
        );
    }
}
