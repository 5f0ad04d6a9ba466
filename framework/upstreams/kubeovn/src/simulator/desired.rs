//! The pure half of the fake controller: from a snapshot of every object, what each one's
//! spec defaults and status should be, as JSON merge patches of the differences only.
//!
//! [`plan`] is the whole of it; the runtime (`super`) lists, calls [`plan`] and sends the
//! patches. Nothing here does IO, so every rule has a unit test.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::ipam::{self, Cidr, IpRange};
use crate::v1::{
    Condition, EIP_V4_IP_LABEL, GatewayType, Ip, IptablesDnatRule, IptablesDnatRuleStatus,
    IptablesEIP, IptablesEIPStatus, IptablesSnatRule, IptablesSnatRuleStatus, READY, STATUS_FALSE,
    STATUS_TRUE, SUBNET_NAME_LABEL, Subnet, SubnetStatus, VALIDATED, VPC_NAT_GATEWAY_NAME_LABEL,
    Vpc, VpcNatGateway, VpcNatGatewayStatus, VpcStatus,
};

/// The VPC a Subnet without `spec.vpc` belongs to.
pub(crate) const DEFAULT_VPC: &str = "ovn-cluster";

/// The external subnet NAT gateways and EIPs use unless they name one.
pub(crate) const DEFAULT_EXTERNAL_SUBNET: &str = "ovn-vpc-external-network";

/// The provider of a Subnet without `spec.provider`.
const DEFAULT_PROVIDER: &str = "ovn";

/// Everything the fake controller reads in one pass.
#[derive(Debug, Default, Clone)]
pub(crate) struct Snapshot {
    pub(crate) vpcs: Vec<Vpc>,
    pub(crate) subnets: Vec<Subnet>,
    pub(crate) gateways: Vec<VpcNatGateway>,
    pub(crate) eips: Vec<IptablesEIP>,
    pub(crate) snats: Vec<IptablesSnatRule>,
    pub(crate) dnats: Vec<IptablesDnatRule>,
    /// The addresses in use (`ips.kubeovn.io`), written by whatever plays kube-ovn-controller
    /// for pods and VMs (e.g. `mni-kubevirt`'s simulator).
    pub(crate) ips: Vec<Ip>,
}

/// The kinds the fake controller writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Vpc,
    Subnet,
    VpcNatGateway,
    IptablesEip,
    IptablesSnatRule,
    IptablesDnatRule,
}

/// One write: a merge patch of an object's spec (main resource) or status (subresource).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Write {
    pub(crate) kind: Kind,
    pub(crate) name: String,
    /// `true`: the patch goes to the `status` subresource.
    pub(crate) status: bool,
    /// The merge patch, `{"spec": {...}}` or `{"status": {...}}`.
    pub(crate) patch: Value,
}

/// The fake controller's settings that change what it computes.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Where EIPs get addresses when their external subnet is not a Subnet object.
    pub(crate) external_pool: Cidr,
}

/// Computes every write that brings the snapshot to the state Kube-OVN would give it.
pub(crate) fn plan(snapshot: &Snapshot, settings: &Settings, now: &Time) -> Vec<Write> {
    let mut writes = Vec::new();
    let vpcs: BTreeMap<&str, &Vpc> = by_name(&snapshot.vpcs);
    let subnets: BTreeMap<&str, &Subnet> = by_name(&snapshot.subnets);

    for vpc in &snapshot.vpcs {
        let desired = vpc_status(vpc, &snapshot.subnets, now);
        push_status(&mut writes, Kind::Vpc, vpc, vpc.status.as_ref(), &desired);
    }

    for subnet in &snapshot.subnets {
        if let Some(patch) = subnet_spec_defaults(subnet) {
            writes.push(Write {
                kind: Kind::Subnet,
                name: subnet.name_any(),
                status: false,
                patch,
            });
        }
        let desired = subnet_status(subnet, &vpcs, &snapshot.ips, now);
        push_status(
            &mut writes,
            Kind::Subnet,
            subnet,
            subnet.status.as_ref(),
            &desired,
        );
    }

    let mut gateways_ready = BTreeMap::new();
    for gw in &snapshot.gateways {
        let desired = gateway_status(gw, &vpcs, &subnets);
        gateways_ready.insert(gw.name_any(), desired.is_some());
        let desired = desired.unwrap_or_default();
        push_status(
            &mut writes,
            Kind::VpcNatGateway,
            gw,
            gw.status.as_ref(),
            &desired,
        );
    }

    let eips = eip_plan(snapshot, settings, &subnets, &gateways_ready, now);
    let mut eip_status: BTreeMap<String, IptablesEIPStatus> = BTreeMap::new();
    for eip in &snapshot.eips {
        let name = eip.name_any();
        let Some(planned) = eips.get(&name) else {
            continue;
        };
        if let Some(patch) = &planned.spec_patch {
            writes.push(Write {
                kind: Kind::IptablesEip,
                name: name.clone(),
                status: false,
                patch: patch.clone(),
            });
        }
        push_status(
            &mut writes,
            Kind::IptablesEip,
            eip,
            eip.status.as_ref(),
            &planned.status,
        );
        eip_status.insert(name, planned.status.clone());
    }
    let eip_specs: BTreeMap<&str, &IptablesEIP> = by_name(&snapshot.eips);

    for snat in &snapshot.snats {
        let target = rule_target(&snat.spec.eip, &eip_specs, &eip_status);
        let mut desired = IptablesSnatRuleStatus::default();
        let existing = snat.status.as_ref().map(|s| s.conditions.as_slice());
        match target {
            Ok((v4ip, v6ip, gw)) => {
                desired.ready = true;
                desired.v4ip = v4ip;
                desired.v6ip = v6ip;
                desired.nat_gw_dp = gw;
                desired.internal_cidr = snat.spec.internal_cidr.clone();
                desired.conditions = ready(existing, true, "SnatRuleReady", "", snat, now);
            }
            Err((reason, message)) => {
                desired.conditions = ready(existing, false, reason, &message, snat, now);
            }
        }
        push_status(
            &mut writes,
            Kind::IptablesSnatRule,
            snat,
            snat.status.as_ref(),
            &desired,
        );
    }

    let port_owners = dnat_port_owners(&snapshot.dnats);
    for dnat in &snapshot.dnats {
        let mut target = rule_target(&dnat.spec.eip, &eip_specs, &eip_status);
        let name = dnat.name_any();
        if let Some(owner) = port_owners
            .get(&dnat_port_key(dnat))
            .filter(|owner| **owner != name)
        {
            target = Err((
                "PortConflict",
                format!(
                    "{}/{} of IptablesEIP {:?} is already forwarded by IptablesDnatRule {owner:?}",
                    dnat.spec.protocol, dnat.spec.external_port, dnat.spec.eip
                ),
            ));
        }
        let mut desired = IptablesDnatRuleStatus::default();
        let existing = dnat.status.as_ref().map(|s| s.conditions.as_slice());
        match target {
            Ok((v4ip, v6ip, gw)) => {
                desired.ready = true;
                desired.v4ip = v4ip;
                desired.v6ip = v6ip;
                desired.nat_gw_dp = gw;
                desired.protocol = dnat.spec.protocol.clone();
                desired.internal_ip = dnat.spec.internal_ip.clone();
                desired.internal_port = dnat.spec.internal_port.clone();
                desired.external_port = dnat.spec.external_port.clone();
                desired.conditions = ready(existing, true, "DnatRuleReady", "", dnat, now);
            }
            Err((reason, message)) => {
                desired.conditions = ready(existing, false, reason, &message, dnat, now);
            }
        }
        push_status(
            &mut writes,
            Kind::IptablesDnatRule,
            dnat,
            dnat.status.as_ref(),
            &desired,
        );
    }
    writes
}

fn by_name<K: ResourceExt>(objects: &[K]) -> BTreeMap<&str, &K> {
    objects
        .iter()
        .filter_map(|o| o.meta().name.as_deref().map(|n| (n, o)))
        .collect()
}

/// A VPC's status: ready at once (the fake has no OVN to wait for).
fn vpc_status(vpc: &Vpc, subnets: &[Subnet], now: &Time) -> VpcStatus {
    let name = vpc.name_any();
    let mut members: Vec<String> = subnets
        .iter()
        .filter(|s| s.spec.vpc.as_deref().unwrap_or(DEFAULT_VPC) == name)
        .map(ResourceExt::name_any)
        .collect();
    members.sort();
    let existing = vpc.status.as_ref().map(|s| s.conditions.as_slice());
    VpcStatus {
        conditions: ready(existing, true, "VpcReady", "", vpc, now),
        standby: true,
        default: name == DEFAULT_VPC,
        default_logical_switch: vpc.spec.default_subnet.clone().filter(|s| !s.is_empty()),
        router: Some(name),
        subnets: members,
        enable_external: vpc.spec.enable_external.unwrap_or(false),
    }
}

/// The spec fields Kube-OVN fills in when they are empty (`formatSubnet`): protocol,
/// provider, gateway, gateway type and VPC. `excludeIps` is left alone (upstream appends
/// the gateway; the counts exclude it either way).
fn subnet_spec_defaults(subnet: &Subnet) -> Option<Value> {
    let spec = &subnet.spec;
    let block = ipam::CidrBlock::parse(&spec.cidr_block).ok()?;
    let mut patch = Map::new();
    if spec.protocol.is_none() {
        patch.insert("protocol".into(), to_json(&block.protocol()));
    }
    if spec.provider.as_deref().is_none_or(str::is_empty) {
        patch.insert("provider".into(), json!(DEFAULT_PROVIDER));
    }
    if spec.gateway.as_deref().is_none_or(str::is_empty) {
        patch.insert("gateway".into(), json!(ipam::default_gateway(&block)));
    }
    if spec.gateway_type.is_none() {
        patch.insert("gatewayType".into(), to_json(&GatewayType::Distributed));
    }
    if spec.vpc.as_deref().is_none_or(str::is_empty) {
        patch.insert("vpc".into(), json!(DEFAULT_VPC));
    }
    (!patch.is_empty()).then(|| json!({ "spec": patch }))
}

/// A subnet's status: `Validated` from its spec, `Ready` once its VPC exists, and the
/// address counts (in use: the addresses of the `IP` objects on the subnet).
fn subnet_status(
    subnet: &Subnet,
    vpcs: &BTreeMap<&str, &Vpc>,
    ips: &[Ip],
    now: &Time,
) -> SubnetStatus {
    let existing = subnet.status.as_ref().map(|s| s.conditions.as_slice());
    let mut status = SubnetStatus::default();
    let name = subnet.name_any();
    let in_use: BTreeSet<IpAddr> = ips
        .iter()
        .filter(|ip| ip.spec.subnet == name)
        .flat_map(Ip::addresses)
        .collect();
    let addresses = match ipam::subnet_addresses(&subnet.spec, &in_use) {
        Ok(a) => a,
        Err(error) => {
            let message = error.to_string();
            let mut conditions = set_condition(
                existing,
                VALIDATED,
                false,
                "ValidateLogicalSwitchFailed",
                &message,
                subnet,
                now,
            );
            conditions = set_condition(
                Some(&conditions),
                READY,
                false,
                "ValidateLogicalSwitchFailed",
                &message,
                subnet,
                now,
            );
            status.conditions = conditions;
            return status;
        }
    };
    let validated = set_condition(
        existing,
        VALIDATED,
        true,
        "ValidateLogicalSwitchSuccess",
        "",
        subnet,
        now,
    );
    let vpc = subnet
        .spec
        .vpc
        .as_deref()
        .filter(|v| !v.is_empty())
        .unwrap_or(DEFAULT_VPC);
    if !vpcs.contains_key(vpc) {
        let message = format!("vpc {vpc:?} not found: create the Vpc, or fix spec.vpc");
        status.conditions = set_condition(
            Some(&validated),
            READY,
            false,
            "VpcNotFound",
            &message,
            subnet,
            now,
        );
        return status;
    }
    status.conditions = set_condition(
        Some(&validated),
        READY,
        true,
        "SubnetReady",
        "",
        subnet,
        now,
    );
    for (cidr, using, range) in [
        (
            addresses.v4.cidr,
            &mut status.v4using_ips,
            &mut status.v4using_ip_range,
        ),
        (
            addresses.v6.cidr,
            &mut status.v6using_ips,
            &mut status.v6using_ip_range,
        ),
    ] {
        let Some(cidr) = cidr else { continue };
        let used: Vec<IpAddr> = in_use
            .iter()
            .copied()
            .filter(|ip| cidr.contains(*ip))
            .collect();
        *using = count(used.len() as u128);
        *range = used
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",");
    }
    status.v4available_ips = count(addresses.v4.available);
    status.v6available_ips = count(addresses.v6.available);
    status.v4available_ip_range = addresses.v4.available_range;
    status.v6available_ip_range = addresses.v6.available_range;
    status
}

/// A NAT gateway's status once its VPC and subnet exist and `lanIp` is in the subnet:
/// the configuration its (simulated) pod runs with. `None` while it cannot run.
fn gateway_status(
    gw: &VpcNatGateway,
    vpcs: &BTreeMap<&str, &Vpc>,
    subnets: &BTreeMap<&str, &Subnet>,
) -> Option<VpcNatGatewayStatus> {
    vpcs.get(gw.spec.vpc.as_str())?;
    let subnet = subnets.get(gw.spec.subnet.as_str())?;
    let lan_ip: IpAddr = gw.spec.lan_ip.parse().ok()?;
    let block = ipam::CidrBlock::parse(&subnet.spec.cidr_block).ok()?;
    if !block.cidrs().any(|c| c.contains(lan_ip)) {
        return None;
    }
    let mut external = gw.spec.external_subnets.clone();
    if external.is_empty() {
        external.push(DEFAULT_EXTERNAL_SUBNET.to_string());
    }
    Some(VpcNatGatewayStatus {
        external_subnets: external,
        selector: gw.spec.selector.clone(),
        qos_policy: gw.spec.qos_policy.clone().filter(|q| !q.is_empty()),
    })
}

/// What one EIP gets: a spec patch (allocated `v4ip`, generated `macAddress`) and a status.
#[derive(Debug, Default)]
struct PlannedEip {
    spec_patch: Option<Value>,
    status: IptablesEIPStatus,
}

/// Allocates EIP addresses and computes EIP statuses.
///
/// Addresses already held (`spec.v4ip`, else `status.ip`) are kept, oldest EIP first; a
/// second EIP asking for a held address is not ready (`IPConflict`). EIPs without one get
/// the first free address of their pool, oldest first. The pool is the external Subnet the
/// EIP names (`spec.externalSubnet`, else its gateway's first external subnet) when such a
/// Subnet exists — its IPv4 CIDR minus gateway and `excludeIps` — else
/// [`Settings::external_pool`] minus its first address (the pool's gateway).
fn eip_plan(
    snapshot: &Snapshot,
    settings: &Settings,
    subnets: &BTreeMap<&str, &Subnet>,
    gateways_ready: &BTreeMap<String, bool>,
    now: &Time,
) -> BTreeMap<String, PlannedEip> {
    let mut order: Vec<&IptablesEIP> = snapshot.eips.iter().collect();
    order.sort_by(|a, b| {
        (a.metadata.creation_timestamp.as_ref(), a.name_any())
            .cmp(&(b.metadata.creation_timestamp.as_ref(), b.name_any()))
    });
    let gateways: BTreeMap<&str, &VpcNatGateway> = by_name(&snapshot.gateways);
    let mut nat_use: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for snat in &snapshot.snats {
        nat_use
            .entry(snat.spec.eip.as_str())
            .or_default()
            .insert("snat");
    }
    for dnat in &snapshot.dnats {
        nat_use
            .entry(dnat.spec.eip.as_str())
            .or_default()
            .insert("dnat");
    }

    // Held addresses first, so an allocation never takes one.
    let mut held: BTreeMap<IpAddr, String> = BTreeMap::new();
    let mut conflicts: BTreeMap<String, String> = BTreeMap::new();
    for eip in &order {
        let wanted = held_address(eip);
        if let Some(ip) = wanted {
            match held.get(&ip) {
                Some(owner) => {
                    conflicts.insert(eip.name_any(), owner.clone());
                }
                None => {
                    held.insert(ip, eip.name_any());
                }
            }
        }
    }

    let mut planned = BTreeMap::new();
    for eip in order {
        let name = eip.name_any();
        let existing = eip.status.as_ref().map(|s| s.conditions.as_slice());
        let mut plan = PlannedEip::default();
        let external = eip
            .spec
            .external_subnet
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| {
                gateways
                    .get(eip.spec.nat_gw_dp.as_str())
                    .and_then(|gw| gw.spec.external_subnets.first().cloned())
            })
            .unwrap_or_else(|| DEFAULT_EXTERNAL_SUBNET.to_string());
        let (pool, excluded) = pool_of(&external, subnets, settings);

        let address = if let Some(owner) = conflicts.get(&name) {
            let message = format!(
                "address {} is already used by IptablesEIP {owner:?}",
                held_address(eip).map(|i| i.to_string()).unwrap_or_default()
            );
            plan.status.conditions = ready(existing, false, "IPConflict", &message, eip, now);
            planned.insert(name, plan);
            continue;
        } else if let Some(ip) = held_address(eip) {
            Some(ip)
        } else {
            let in_use: BTreeSet<IpAddr> = held.keys().copied().collect();
            let next = ipam::next_free(&pool, &excluded, &in_use);
            if let Some(ip) = next {
                held.insert(ip, name.clone());
            }
            next
        };
        let Some(address) = address else {
            let message = format!("no free address left in external subnet {external:?} ({pool})");
            plan.status.conditions =
                ready(existing, false, "NoAvailableAddress", &message, eip, now);
            planned.insert(name, plan);
            continue;
        };

        // Upstream writes the allocation into the spec and labels the EIP.
        let mut spec = Map::new();
        if eip.spec.v4ip.is_empty() {
            spec.insert("v4ip".into(), json!(address.to_string()));
        }
        if eip.spec.mac_address.is_empty() {
            spec.insert("macAddress".into(), json!(mac_for(address)));
        }
        if eip
            .spec
            .external_subnet
            .as_deref()
            .is_none_or(str::is_empty)
        {
            spec.insert("externalSubnet".into(), json!(external));
        }
        let mut labels = Map::new();
        for (key, value) in [
            (SUBNET_NAME_LABEL, external.clone()),
            (VPC_NAT_GATEWAY_NAME_LABEL, eip.spec.nat_gw_dp.clone()),
            (EIP_V4_IP_LABEL, address.to_string()),
        ] {
            if eip.labels().get(key) != Some(&value) {
                labels.insert(key.into(), json!(value));
            }
        }
        let mut patch = Map::new();
        if !spec.is_empty() {
            patch.insert("spec".into(), Value::Object(spec));
        }
        if !labels.is_empty() {
            patch.insert("metadata".into(), json!({ "labels": labels }));
        }
        if !patch.is_empty() {
            plan.spec_patch = Some(Value::Object(patch));
        }

        let gw = eip.spec.nat_gw_dp.as_str();
        if !gateways_ready.get(gw).copied().unwrap_or(false) {
            let message = if gateways_ready.contains_key(gw) {
                format!("VpcNatGateway {gw:?} is not running yet (its vpc or subnet is missing)")
            } else {
                format!("VpcNatGateway {gw:?} not found: create it, or fix spec.natGwDp")
            };
            plan.status.conditions = ready(existing, false, "NatGwNotReady", &message, eip, now);
            planned.insert(name, plan);
            continue;
        }
        plan.status.ready = true;
        plan.status.ip = address.to_string();
        plan.status.nat = nat_use
            .get(name.as_str())
            .map(|uses| uses.iter().copied().collect::<Vec<_>>().join(","))
            .unwrap_or_default();
        plan.status.qos_policy = eip.spec.qos_policy.clone().unwrap_or_default();
        plan.status.conditions = ready(existing, true, "EipReady", "", eip, now);
        planned.insert(name, plan);
    }
    planned
}

/// The address an EIP already holds: its `spec.v4ip`, else the `status.ip` a previous
/// pass gave it.
fn held_address(eip: &IptablesEIP) -> Option<IpAddr> {
    let spec = eip.spec.v4ip.trim();
    if !spec.is_empty() {
        return spec.parse().ok();
    }
    eip.status.as_ref().and_then(|s| s.ip.parse().ok())
}

/// The CIDR and exclusions EIPs of `external` are allocated from.
fn pool_of(
    external: &str,
    subnets: &BTreeMap<&str, &Subnet>,
    settings: &Settings,
) -> (Cidr, Vec<IpRange>) {
    if let Some(subnet) = subnets.get(external)
        && let Ok(block) = ipam::CidrBlock::parse(&subnet.spec.cidr_block)
        && let Some(v4) = block.v4
    {
        let mut excluded = ipam::parse_exclude_ips(&subnet.spec.exclude_ips).unwrap_or_default();
        let gateway = subnet
            .spec
            .gateway
            .clone()
            .filter(|g| !g.is_empty())
            .unwrap_or_else(|| ipam::default_gateway(&block));
        excluded.extend(gateway.split(',').filter_map(|g| IpRange::parse(g).ok()));
        return (v4, excluded);
    }
    let pool = settings.external_pool;
    let gateway = ipam::first_usable(&pool);
    (
        pool,
        vec![IpRange {
            start: gateway,
            end: gateway,
        }],
    )
}

/// A stable, locally administered MAC address for an EIP: `02:00:` and the address's last
/// four bytes.
fn mac_for(ip: IpAddr) -> String {
    let bytes: Vec<u8> = match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets()[12..].to_vec(),
    };
    format!(
        "02:00:{:02x}:{:02x}:{:02x}:{:02x}",
        bytes[0], bytes[1], bytes[2], bytes[3]
    )
}

/// The DNAT rule that owns each (EIP, protocol, external port): the oldest one.
fn dnat_port_owners(dnats: &[IptablesDnatRule]) -> BTreeMap<(String, String, String), String> {
    let mut order: Vec<&IptablesDnatRule> = dnats.iter().collect();
    order.sort_by(|a, b| {
        (a.metadata.creation_timestamp.as_ref(), a.name_any())
            .cmp(&(b.metadata.creation_timestamp.as_ref(), b.name_any()))
    });
    let mut owners = BTreeMap::new();
    for dnat in order {
        owners
            .entry(dnat_port_key(dnat))
            .or_insert_with(|| dnat.name_any());
    }
    owners
}

fn dnat_port_key(dnat: &IptablesDnatRule) -> (String, String, String) {
    (
        dnat.spec.eip.clone(),
        dnat.spec.protocol.to_ascii_lowercase(),
        dnat.spec.external_port.trim().to_string(),
    )
}

/// What a NAT rule's EIP gives it: `(v4ip, v6ip, natGwDp)`, or why it is not ready.
fn rule_target(
    eip: &str,
    specs: &BTreeMap<&str, &IptablesEIP>,
    statuses: &BTreeMap<String, IptablesEIPStatus>,
) -> Result<(String, String, String), (&'static str, String)> {
    let Some(spec) = specs.get(eip) else {
        return Err((
            "EipNotFound",
            format!("IptablesEIP {eip:?} not found: create it, or fix spec.eip"),
        ));
    };
    match statuses.get(eip) {
        Some(status) if status.ready => Ok((
            status.ip.clone(),
            spec.spec.v6ip.clone(),
            spec.spec.nat_gw_dp.clone(),
        )),
        _ => Err((
            "EipNotReady",
            format!("IptablesEIP {eip:?} is not ready yet"),
        )),
    }
}

/// The conditions with `Ready` set.
fn ready<K: ResourceExt>(
    existing: Option<&[Condition]>,
    is_ready: bool,
    reason: &str,
    message: &str,
    object: &K,
    now: &Time,
) -> Vec<Condition> {
    set_condition(existing, READY, is_ready, reason, message, object, now)
}

/// `existing` with the condition `type_` set; untouched (timestamps included) when nothing
/// about it changed, `lastTransitionTime` kept unless the status flips.
fn set_condition<K: ResourceExt>(
    existing: Option<&[Condition]>,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    object: &K,
    now: &Time,
) -> Vec<Condition> {
    let mut conditions: Vec<Condition> = existing.map(<[Condition]>::to_vec).unwrap_or_default();
    let status = if status { STATUS_TRUE } else { STATUS_FALSE };
    let generation = object.meta().generation;
    let wanted = |c: &Condition| {
        c.status == status
            && c.reason.as_deref().unwrap_or("") == reason
            && c.message.as_deref().unwrap_or("") == message
            && c.observed_generation == generation
    };
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if wanted(c) => {}
        Some(c) => {
            if c.status != status || c.last_transition_time.is_none() {
                c.last_transition_time = Some(now.clone());
            }
            c.status = status.to_string();
            c.reason = Some(reason.to_string());
            c.message = (!message.is_empty()).then(|| message.to_string());
            c.observed_generation = generation;
            c.last_update_time = Some(now.clone());
        }
        None => conditions.push(Condition {
            type_: type_.to_string(),
            status: status.to_string(),
            reason: Some(reason.to_string()),
            message: (!message.is_empty()).then(|| message.to_string()),
            observed_generation: generation,
            last_update_time: Some(now.clone()),
            last_transition_time: Some(now.clone()),
        }),
    }
    conditions
}

/// Adds a status write when `desired` differs from `current`: a merge patch of the changed
/// top-level status fields, with `null` for fields that should go.
fn push_status<K: ResourceExt, S: Serialize + Default>(
    writes: &mut Vec<Write>,
    kind: Kind,
    object: &K,
    current: Option<&S>,
    desired: &S,
) {
    let default = S::default();
    let current = to_json(current.unwrap_or(&default));
    let desired = to_json(desired);
    let (Value::Object(current), Value::Object(desired)) = (current, desired) else {
        return;
    };
    let mut patch = Map::new();
    for (key, value) in &desired {
        if current.get(key) != Some(value) {
            patch.insert(key.clone(), value.clone());
        }
    }
    for key in current.keys() {
        if !desired.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    if !patch.is_empty() {
        writes.push(Write {
            kind,
            name: object.name_any(),
            status: true,
            patch: json!({ "status": patch }),
        });
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A count as the JSON number upstream reports (`float64`).
#[allow(
    clippy::cast_precision_loss,
    reason = "upstream reports counts as float64 too"
)]
fn count(n: u128) -> f64 {
    n as f64
}

#[cfg(test)]
mod tests;
