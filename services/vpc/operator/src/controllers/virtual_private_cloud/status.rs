// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! A VirtualPrivateCloud's status from its Kube-OVN objects' own status, as pure functions.
//!
//! Each Kube-OVN object is [`Health::Ready`] (its `Ready` condition, or an EIP's and a rule's
//! `ready`, says so), [`Health::Failed`] (`Ready=False` with a message, or `Error=True`) or
//! [`Health::Pending`] (Kube-OVN has not reported yet). The VirtualPrivateCloud is `Ready`
//! when all are, `Progressing` while one is pending and `Degraded` while one fails, naming it.

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use mni_core::{Condition, ConditionStatus, Conditions, DEGRADED, PROGRESSING, READY, reasons};
use mni_kubeovn::v1 as ovn;

use super::upstream::{Upstream, spec_name};
use crate::api::network_v1alpha1::EipStatus;
use crate::api::network_v1alpha1::NatGatewayStatus;
use crate::api::network_v1alpha1::SubnetStatus;
use crate::api::network_v1alpha1::VirtualPrivateCloudStatus;
use crate::api::network_v1alpha1::validate::protocol;

/// The condition saying whether the spec passed validation.
pub const VALIDATED: &str = "Validated";

/// `Validated=True`: the address plan keeps every rule.
pub const VALID: &str = "AddressPlanValid";

/// `Ready=False`, `Progressing=True`: Kube-OVN has not reported every object ready yet.
pub const PROVISIONING: &str = "Provisioning";

/// `Degraded=True`: a Kube-OVN object reports a failure.
pub const UPSTREAM_FAILED: &str = "UpstreamFailed";

/// How one Kube-OVN object is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// Ready.
    Ready,
    /// Not reported yet.
    Pending,
    /// Failing, with Kube-OVN's message.
    Failed(String),
}

/// The health of an object from its Kube-OVN conditions and, for EIPs and rules, `ready`.
#[must_use]
pub fn health(conditions: &[ovn::Condition], ready: Option<bool>) -> Health {
    let failed = |c: &ovn::Condition| c.message.clone().unwrap_or_else(|| c.type_.clone());
    if let Some(error) =
        ovn::find_condition(conditions, ovn::ERROR).filter(|c| c.status == ovn::STATUS_TRUE)
    {
        return Health::Failed(failed(error));
    }
    match ovn::find_condition(conditions, ovn::READY) {
        Some(c) if c.status == ovn::STATUS_TRUE => Health::Ready,
        Some(c) if c.status == ovn::STATUS_FALSE && c.message.is_some() && ready != Some(true) => {
            Health::Failed(failed(c))
        }
        _ if ready == Some(true) => Health::Ready,
        _ => Health::Pending,
    }
}

fn vpc_health(vpc: &ovn::Vpc) -> Health {
    let status = vpc.status.clone().unwrap_or_default();
    match health(&status.conditions, None) {
        Health::Pending if status.standby => Health::Ready,
        other => other,
    }
}

fn subnet_health(subnet: &ovn::Subnet) -> Health {
    let status = subnet.status.clone().unwrap_or_default();
    health(&status.conditions, None)
}

/// The status `applied` (the Kube-OVN objects as the API server returned them) amounts to,
/// with `conditions` (the current ones) updated for `generation`.
#[must_use]
pub fn desired(
    applied: &Upstream,
    conditions: &[Condition],
    generation: Option<i64>,
    now: Timestamp,
) -> VirtualPrivateCloudStatus {
    let mut tally = Tally::default();
    tally.note("Vpc", applied.vpc.name_any(), &vpc_health(&applied.vpc));

    let mut subnets = Vec::new();
    for subnet in &applied.subnets {
        let health = subnet_health(subnet);
        tally.note("Subnet", subnet.name_any(), &health);
        let status = subnet.status.clone().unwrap_or_default();
        let family = protocol(&subnet.spec.cidr_block);
        let reported = health == Health::Ready;
        subnets.push(SubnetStatus {
            name: spec_name(&subnet.metadata).unwrap_or_default().to_owned(),
            subnet: subnet.name_any(),
            cidr_block: subnet.spec.cidr_block.clone(),
            protocol: family.to_owned(),
            ready: reported,
            v4_available_ips: (reported && family != "IPv6").then_some(status.v4available_ips),
            v6_available_ips: (reported && family != "IPv4").then_some(status.v6available_ips),
        });
    }
    let ready_subnets = subnets.iter().filter(|s| s.ready).count();

    let nat_gateway = applied.nat_gateway.as_ref().map(|gateway| {
        let before = tally.len();
        let mut eips = Vec::new();
        for eip in &applied.eips {
            let status = eip.status.clone().unwrap_or_default();
            let health = health(&status.conditions, Some(status.ready));
            tally.note("IptablesEIP", eip.name_any(), &health);
            eips.push(EipStatus {
                name: spec_name(&eip.metadata).unwrap_or_default().to_owned(),
                ip: Some(status.ip).filter(|ip| !ip.is_empty()),
                ready: health == Health::Ready,
            });
        }
        for rule in &applied.snat_rules {
            let status = rule.status.clone().unwrap_or_default();
            let health = health(&status.conditions, Some(status.ready));
            tally.note("IptablesSnatRule", rule.name_any(), &health);
        }
        for rule in &applied.dnat_rules {
            let status = rule.status.clone().unwrap_or_default();
            let health = health(&status.conditions, Some(status.ready));
            tally.note("IptablesDnatRule", rule.name_any(), &health);
        }
        NatGatewayStatus {
            name: gateway.name_any(),
            ready: tally.len() == before,
            eips,
        }
    });

    let Tally { pending, failed } = tally;
    let mut list = conditions.to_vec();
    let mut set = |type_: &str, status: bool, reason: &str, message: &str| {
        list.set(
            type_,
            ConditionStatus::from(status),
            reason,
            message,
            generation,
            now,
        );
    };
    set(VALIDATED, true, VALID, "the address plan keeps every rule");
    if !failed.is_empty() {
        let message = failed.join("; ");
        set(READY, false, UPSTREAM_FAILED, &message);
        set(DEGRADED, true, UPSTREAM_FAILED, &message);
        set(
            PROGRESSING,
            !pending.is_empty(),
            PROVISIONING,
            &waiting(&pending),
        );
    } else if !pending.is_empty() {
        let message = waiting(&pending);
        set(READY, false, PROVISIONING, &message);
        set(PROGRESSING, true, PROVISIONING, &message);
        set(
            DEGRADED,
            false,
            reasons::AS_EXPECTED,
            "no Kube-OVN object reports a failure",
        );
    } else {
        let message = format!(
            "Kube-OVN reports the Vpc and {} subnet(s) ready",
            subnets.len()
        );
        set(READY, true, reasons::RECONCILED, &message);
        set(PROGRESSING, false, reasons::RECONCILED, &message);
        set(
            DEGRADED,
            false,
            reasons::AS_EXPECTED,
            "no Kube-OVN object reports a failure",
        );
    }
    VirtualPrivateCloudStatus {
        conditions: list,
        observed_generation: generation,
        vpc: Some(applied.vpc.name_any()),
        subnets_ready: Some(format!("{ready_subnets}/{}", subnets.len())),
        subnets,
        nat_gateway,
    }
}

/// The objects that are not ready, as `Kind name` (pending) and `Kind name: message` (failed).
#[derive(Default)]
struct Tally {
    pending: Vec<String>,
    failed: Vec<String>,
}

impl Tally {
    fn note(&mut self, kind: &str, name: String, health: &Health) {
        match health {
            Health::Ready => {}
            Health::Pending => self.pending.push(format!("{kind} {name}")),
            Health::Failed(message) => self.failed.push(format!("{kind} {name}: {message}")),
        }
    }

    fn len(&self) -> usize {
        self.pending.len() + self.failed.len()
    }
}

fn waiting(pending: &[String]) -> String {
    if pending.is_empty() {
        "nothing to wait for".to_owned()
    } else {
        format!(
            "waiting for Kube-OVN to report {} ready",
            pending.join(", ")
        )
    }
}

/// The status of a VirtualPrivateCloud whose spec breaks `message`'s rules: `Validated` and
/// `Ready` false, nothing applied upstream.
#[must_use]
pub fn invalid(
    current: Option<&VirtualPrivateCloudStatus>,
    message: &str,
    generation: Option<i64>,
    now: Timestamp,
) -> VirtualPrivateCloudStatus {
    let mut status = current.cloned().unwrap_or_default();
    let list = &mut status.conditions;
    list.set(
        VALIDATED,
        ConditionStatus::False,
        reasons::INVALID_SPEC,
        message,
        generation,
        now,
    );
    list.set(
        READY,
        ConditionStatus::False,
        reasons::INVALID_SPEC,
        message,
        generation,
        now,
    );
    list.set(
        PROGRESSING,
        ConditionStatus::False,
        reasons::INVALID_SPEC,
        "fix the spec: nothing is applied to Kube-OVN while it is invalid",
        generation,
        now,
    );
    status.observed_generation = generation;
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::network_v1alpha1::SubnetSpec;
    use crate::api::network_v1alpha1::VirtualPrivateCloud;
    use crate::api::network_v1alpha1::VirtualPrivateCloudSpec;

    fn condition(type_: &str, status: &str, message: Option<&str>) -> ovn::Condition {
        ovn::Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            message: message.map(ToOwned::to_owned),
            ..ovn::Condition::default()
        }
    }

    fn upstream() -> Upstream {
        let spec = VirtualPrivateCloudSpec {
            subnets: vec![
                SubnetSpec {
                    name: "web".to_owned(),
                    cidr_block: "10.0.1.0/24,fd00::/64".to_owned(),
                    ..SubnetSpec::default()
                },
                SubnetSpec {
                    name: "db".to_owned(),
                    cidr_block: "10.0.2.0/24".to_owned(),
                    ..SubnetSpec::default()
                },
            ],
            ..VirtualPrivateCloudSpec::default()
        };
        let mut obj = VirtualPrivateCloud::new("prod", spec);
        obj.metadata.namespace = Some("tenant".to_owned());
        super::super::upstream::desired(&obj)
    }

    fn ready_subnet(subnet: &mut ovn::Subnet, v4: f64, v6: f64) {
        subnet.status = Some(ovn::SubnetStatus {
            conditions: vec![condition("Ready", "True", None)],
            v4available_ips: v4,
            v6available_ips: v6,
            ..ovn::SubnetStatus::default()
        });
    }

    fn find<'a>(status: &'a VirtualPrivateCloudStatus, type_: &str) -> &'a Condition {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .expect(type_)
    }

    #[test]
    fn the_status_adds_up_what_kube_ovn_reports() {
        let now = Timestamp::UNIX_EPOCH;
        let mut applied = upstream();
        let pending = desired(&applied, &[], Some(1), now);
        assert_eq!(pending.subnets_ready.as_deref(), Some("0/2"));
        assert_eq!(find(&pending, READY).reason, PROVISIONING);
        assert_eq!(find(&pending, PROGRESSING).status, ConditionStatus::True);
        assert!(
            find(&pending, READY)
                .message
                .contains("Subnet tenant-prod-web")
        );

        applied.vpc.status = Some(ovn::VpcStatus {
            standby: true,
            ..ovn::VpcStatus::default()
        });
        ready_subnet(&mut applied.subnets[0], 253.0, 1.8e19);
        applied.subnets[1].status = Some(ovn::SubnetStatus {
            conditions: vec![condition("Ready", "False", Some("VPC not found"))],
            ..ovn::SubnetStatus::default()
        });
        let degraded = desired(&applied, &pending.conditions, Some(1), now);
        assert_eq!(degraded.subnets_ready.as_deref(), Some("1/2"));
        let message = &find(&degraded, DEGRADED).message;
        assert_eq!(message, "Subnet tenant-prod-db: VPC not found");
        assert_eq!(find(&degraded, READY).reason, UPSTREAM_FAILED);
        let web = &degraded.subnets[0];
        assert_eq!(
            (web.protocol.as_str(), web.v4_available_ips),
            ("Dual", Some(253.0))
        );
        assert_eq!(web.v6_available_ips, Some(1.8e19));
        assert_eq!(degraded.subnets[1].v4_available_ips, None);

        ready_subnet(&mut applied.subnets[1], 250.0, 0.0);
        let ready = desired(&applied, &degraded.conditions, Some(2), now);
        assert_eq!(find(&ready, READY).status, ConditionStatus::True);
        assert_eq!(find(&ready, DEGRADED).status, ConditionStatus::False);
        assert_eq!(find(&ready, VALIDATED).observed_generation, Some(2));
        assert_eq!(ready.subnets[1].v6_available_ips, None, "IPv4 only");
        assert_eq!(ready, desired(&applied, &ready.conditions, Some(2), now));
    }

    #[test]
    fn health_follows_kube_ovn_conditions() {
        assert_eq!(health(&[], None), Health::Pending);
        assert_eq!(health(&[], Some(true)), Health::Ready);
        assert_eq!(
            health(&[condition("Ready", "True", None)], None),
            Health::Ready
        );
        assert_eq!(
            health(
                &[condition("Ready", "False", Some("no address left"))],
                None
            ),
            Health::Failed("no address left".to_owned())
        );
        assert_eq!(
            health(
                &[condition("Error", "True", Some("bad gateway"))],
                Some(true)
            ),
            Health::Failed("bad gateway".to_owned())
        );
    }
}
