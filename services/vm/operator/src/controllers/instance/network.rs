// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The VPC service's published API, as this operator reads it: `VirtualPrivateCloud`
//! (`network.mni.dev/v1alpha1`), through its own typed copy of the fields it needs.
//!
//! The VM service depends on the VPC service through the Kubernetes API only: it never links
//! the VPC service's crates. This copy models the part of the published schema it reads
//! (`spec.subnets[].name`, `cidrBlock`; `status.subnets[]` with the Kube-OVN Subnet's name and
//! readiness; `status.conditions`) and keeps everything else it is given in `unmodelled`, so a
//! newer VPC service's objects still deserialize. PROJECT records the dependency (`requires:`).
//!
//! [`resolve`] turns a VirtualPrivateCloud (or its absence) and an instance's
//! [`VpcAttachment`] into what the controller does: attach, wait, or report the mistake.

use std::collections::BTreeMap;

use kube::CustomResource;
use mni_core::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::compute_v1alpha1::VpcAttachment;
use crate::api::compute_v1alpha1::validate::check_address;

/// The VPC service's API group.
pub const GROUP: &str = "network.mni.dev";

/// The VPC service's API version this operator reads.
pub const VERSION: &str = "v1alpha1";

/// A tenant's virtual private cloud, as far as the VM service reads it.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "network.mni.dev",
    version = "v1alpha1",
    kind = "VirtualPrivateCloud",
    plural = "virtualprivateclouds",
    shortname = "tvpc",
    namespaced,
    status = "VirtualPrivateCloudStatus"
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct VirtualPrivateCloudSpec {
    /// The fields this operator does not read.
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The VPC's subnets.
    #[serde(default)]
    pub subnets: Vec<SubnetSpec>,
}

/// One subnet of a VPC's spec.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct SubnetSpec {
    /// The fields this operator does not read.
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The subnet's name in the VPC.
    pub name: String,
    /// Its address range (`v4`, `v6` or `v4,v6`).
    pub cidr_block: String,
}

/// What the VPC service reports.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct VirtualPrivateCloudStatus {
    /// The fields this operator does not read.
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// `Ready`, `Progressing`, `Degraded`, ….
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Each subnet as Kube-OVN reports it.
    #[serde(default)]
    pub subnets: Vec<SubnetStatus>,
}

/// One subnet as the VPC service reports it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct SubnetStatus {
    /// The fields this operator does not read.
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The subnet's name in the spec.
    pub name: String,
    /// The Kube-OVN Subnet's name: what a pod's `ovn.kubernetes.io/logical_switch` names.
    pub subnet: String,
    /// Whether Kube-OVN reports the Subnet ready.
    #[serde(default)]
    pub ready: bool,
}

/// What an instance's VPC attachment amounts to right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The subnet is ready: attach to the Kube-OVN Subnet `logical_switch`.
    Ready {
        /// The Kube-OVN Subnet's name.
        logical_switch: String,
    },
    /// Not yet: the VPC or its subnet is not there or not ready (`Progressing`,
    /// `WaitingForNetwork`).
    Waiting(String),
    /// The attachment cannot work as written (`Degraded`): the reason and a message naming
    /// the field.
    Invalid(&'static str, String),
}

/// `Degraded` reason: the VPC has no such subnet (any more).
pub const SUBNET_NOT_FOUND: &str = "SubnetNotFound";

/// `Degraded` reason: the fixed address is not an address of the subnet.
pub const ADDRESS_INVALID: &str = "AddressInvalid";

/// What `attachment` amounts to, given its VirtualPrivateCloud as the API server has it.
#[must_use]
pub fn resolve(vpc: Option<&VirtualPrivateCloud>, attachment: &VpcAttachment) -> Resolved {
    let (name, subnet) = (&attachment.name, &attachment.subnet);
    let Some(vpc) = vpc else {
        return Resolved::Waiting(format!(
            "network.vpc.name: VirtualPrivateCloud {name} does not exist (yet)"
        ));
    };
    if vpc.metadata.deletion_timestamp.is_some() {
        return Resolved::Invalid(
            SUBNET_NOT_FOUND,
            format!("network.vpc.name: VirtualPrivateCloud {name} is being deleted"),
        );
    }
    let Some(spec) = vpc.spec.subnets.iter().find(|s| &s.name == subnet) else {
        let known: Vec<&str> = vpc.spec.subnets.iter().map(|s| s.name.as_str()).collect();
        return Resolved::Invalid(
            SUBNET_NOT_FOUND,
            format!(
                "network.vpc.subnet: VirtualPrivateCloud {name} has no subnet {subnet} (it has: {})",
                known.join(", ")
            ),
        );
    };
    if let Some(ip) = &attachment.ip
        && let Err(e) = check_address(ip, subnet, &spec.cidr_block)
    {
        return Resolved::Invalid(ADDRESS_INVALID, e.to_string());
    }
    let reported = vpc
        .status
        .as_ref()
        .and_then(|s| s.subnets.iter().find(|s| &s.name == subnet));
    match reported {
        Some(s) if s.ready && !s.subnet.is_empty() => Resolved::Ready {
            logical_switch: s.subnet.clone(),
        },
        _ => Resolved::Waiting(format!(
            "network.vpc.subnet: subnet {subnet} of VirtualPrivateCloud {name} is not Ready yet"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vpc(ready: bool) -> VirtualPrivateCloud {
        let mut vpc = VirtualPrivateCloud::new(
            "tenant",
            VirtualPrivateCloudSpec {
                subnets: vec![SubnetSpec {
                    name: "web".to_owned(),
                    cidr_block: "10.0.1.0/24".to_owned(),
                    ..SubnetSpec::default()
                }],
                ..VirtualPrivateCloudSpec::default()
            },
        );
        vpc.status = Some(VirtualPrivateCloudStatus {
            subnets: vec![SubnetStatus {
                name: "web".to_owned(),
                subnet: "tenant-web-1a2b3c".to_owned(),
                ready,
                ..SubnetStatus::default()
            }],
            ..VirtualPrivateCloudStatus::default()
        });
        vpc
    }

    fn attachment(subnet: &str, ip: Option<&str>) -> VpcAttachment {
        VpcAttachment {
            name: "tenant".to_owned(),
            subnet: subnet.to_owned(),
            ip: ip.map(ToOwned::to_owned),
        }
    }

    #[test]
    fn attaches_once_the_subnet_is_ready() {
        assert!(matches!(
            resolve(None, &attachment("web", None)),
            Resolved::Waiting(_)
        ));
        assert!(matches!(
            resolve(Some(&vpc(false)), &attachment("web", None)),
            Resolved::Waiting(_)
        ));
        assert_eq!(
            resolve(Some(&vpc(true)), &attachment("web", Some("10.0.1.20"))),
            Resolved::Ready {
                logical_switch: "tenant-web-1a2b3c".to_owned()
            }
        );
    }

    #[test]
    fn a_wrong_subnet_or_address_names_the_field() {
        assert_eq!(
            resolve(Some(&vpc(true)), &attachment("db", None)),
            Resolved::Invalid(
                SUBNET_NOT_FOUND,
                "network.vpc.subnet: VirtualPrivateCloud tenant has no subnet db (it has: web)"
                    .to_owned()
            )
        );
        assert_eq!(
            resolve(Some(&vpc(true)), &attachment("web", Some("10.0.9.1"))),
            Resolved::Invalid(
                ADDRESS_INVALID,
                "network.vpc.ip: 10.0.9.1 is outside subnet web (10.0.1.0/24)".to_owned()
            )
        );
    }

    #[test]
    fn newer_fields_of_the_vpc_service_are_kept() {
        let json = serde_json::json!({
            "apiVersion": "network.mni.dev/v1alpha1",
            "kind": "VirtualPrivateCloud",
            "metadata": { "name": "tenant" },
            "spec": { "subnets": [{ "name": "web", "cidrBlock": "10.0.1.0/24", "natOutgoing": true }],
                      "namespaces": ["a"] },
        });
        let vpc: VirtualPrivateCloud = serde_json::from_value(json).expect("parses");
        assert!(vpc.spec.unmodelled.contains_key("namespaces"));
        assert!(vpc.spec.subnets[0].unmodelled.contains_key("natOutgoing"));
    }
}
