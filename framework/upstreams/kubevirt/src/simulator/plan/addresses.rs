//! Addresses: which pool each interface of an instance draws from (the pod network or a
//! Kube-OVN Subnet), the addresses held in each, and Kube-OVN's `IP` records of them.

use super::*;

/// Where an interface's address comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Pool {
    /// The pod network.
    Pod,
    /// A Kube-OVN Subnet, by name.
    Subnet(String),
}

/// The pool and fixed address of each interface of an instance, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Attachment {
    pub(super) interface: String,
    /// `None`: a network the simulator gives no address (a non-Kube-OVN attachment).
    pub(super) pool: Option<Pool>,
    pub(super) fixed: Option<String>,
    /// The Kube-OVN provider (`ovn`, or `<nad>.<ns>.ovn` for a Multus attachment).
    pub(super) provider: String,
}

/// The attachments of an instance's interfaces, in order. An instance with neither
/// interfaces nor networks gets the pod network on `default`, as KubeVirt auto-attaches it.
pub(super) fn attachments(
    vmi: &VirtualMachineInstance,
    subnets: &[Subnet],
) -> Result<Vec<Attachment>, String> {
    let spec = &vmi.spec;
    let annotations = vmi.annotations();
    let namespace = vmi.namespace().unwrap_or_default();
    let names: Vec<String> = if !spec.domain.devices.interfaces.is_empty() {
        spec.domain
            .devices
            .interfaces
            .iter()
            .map(|i| i.name.clone())
            .collect()
    } else if !spec.networks.is_empty() {
        spec.networks.iter().map(|n| n.name.clone()).collect()
    } else {
        vec!["default".to_string()]
    };
    let default_pod = Network {
        name: "default".into(),
        pod: Some(Default::default()),
        ..Network::default()
    };
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let network = spec
            .networks
            .iter()
            .find(|n| &n.name == name)
            .or_else(|| (spec.networks.is_empty() && name == "default").then_some(&default_pod))
            .ok_or_else(|| {
                format!("spec.domain.devices.interfaces[{i}].name: no network named {name:?}")
            })?;
        let fixed = |key: &str| {
            annotations.get(key).map(|v| {
                let first = v.split(',').next().unwrap_or_default().trim();
                first.split('/').next().unwrap_or_default().to_string()
            })
        };
        let attachment = if let Some(multus) = &network.multus {
            let (ns, nad) = multus.attachment(&namespace);
            let provider = format!("{nad}.{ns}.ovn");
            let switch = annotations
                .get(&format!("{provider}.kubernetes.io/logical_switch"))
                .cloned()
                .or_else(|| {
                    subnets
                        .iter()
                        .find(|s| s.spec.provider.as_deref() == Some(provider.as_str()))
                        .map(ResourceExt::name_any)
                });
            Attachment {
                interface: name.clone(),
                pool: switch.map(Pool::Subnet),
                fixed: fixed(&format!("{provider}.kubernetes.io/ip_address")),
                provider,
            }
        } else {
            match annotations.get(LOGICAL_SWITCH) {
                Some(subnet) => Attachment {
                    interface: name.clone(),
                    pool: Some(Pool::Subnet(subnet.clone())),
                    fixed: fixed(IP_ADDRESS),
                    provider: "ovn".into(),
                },
                None => Attachment {
                    interface: name.clone(),
                    pool: Some(Pool::Pod),
                    fixed: None,
                    provider: "ovn".into(),
                },
            }
        };
        out.push(attachment);
    }
    Ok(out)
}

/// The addresses held in each pool, and by whom.
pub(super) struct Ipam<'a> {
    settings: &'a Settings,
    subnets: BTreeMap<String, &'a Subnet>,
    held: BTreeMap<Pool, BTreeMap<IpAddr, Key>>,
}

impl<'a> Ipam<'a> {
    /// The addresses the instances' statuses already report.
    pub(super) fn new(snapshot: &'a Snapshot, settings: &'a Settings) -> Self {
        let mut ipam = Ipam {
            settings,
            subnets: snapshot.subnets.iter().map(|s| (s.name_any(), s)).collect(),
            held: BTreeMap::new(),
        };
        for vmi in &snapshot.vmis {
            let Some(status) = &vmi.status else { continue };
            let Ok(attachments) = attachments(vmi, &snapshot.subnets) else {
                continue;
            };
            for a in attachments {
                let Some(pool) = a.pool else { continue };
                let ip = status
                    .interfaces
                    .iter()
                    .find(|i| i.name.as_deref() == Some(a.interface.as_str()))
                    .and_then(|i| i.ip_address.as_deref())
                    .and_then(|ip| ip.parse::<IpAddr>().ok());
                if let Some(ip) = ip {
                    ipam.held.entry(pool).or_default().insert(ip, key(vmi));
                }
            }
        }
        // Addresses Kube-OVN records as in use by anything else (pods, other VMs).
        for record in &snapshot.ips {
            let owner = (record.spec.namespace.clone(), record.spec.pod_name.clone());
            for ip in record.addresses() {
                ipam.held
                    .entry(Pool::Subnet(record.spec.subnet.clone()))
                    .or_default()
                    .entry(ip)
                    .or_insert_with(|| owner.clone());
            }
        }
        // Fixed addresses are reserved before any dynamic allocation, oldest instance
        // first, so a pool never hands out an address an instance asked for by name.
        let mut order: Vec<&VirtualMachineInstance> = snapshot
            .vmis
            .iter()
            .filter(|v| v.metadata.deletion_timestamp.is_none())
            .collect();
        order.sort_by(|a, b| {
            (a.metadata.creation_timestamp.as_ref(), a.name_any())
                .cmp(&(b.metadata.creation_timestamp.as_ref(), b.name_any()))
        });
        for vmi in order {
            let Ok(attachments) = attachments(vmi, &snapshot.subnets) else {
                continue;
            };
            for a in attachments {
                let (Some(pool), Some(ip)) = (a.pool, a.fixed.and_then(|f| f.parse().ok())) else {
                    continue;
                };
                ipam.held
                    .entry(pool)
                    .or_default()
                    .entry(ip)
                    .or_insert_with(|| key(vmi));
            }
        }
        ipam
    }

    /// The CIDR and exclusions of a pool.
    pub(super) fn range(
        &self,
        pool: &Pool,
    ) -> Result<(Cidr, Vec<IpRange>), (&'static str, String)> {
        match pool {
            Pool::Pod => {
                let gw = ipam::first_usable(&self.settings.pod_cidr);
                Ok((self.settings.pod_cidr, vec![IpRange { start: gw, end: gw }]))
            }
            Pool::Subnet(name) => {
                let subnet = self.subnets.get(name).ok_or_else(|| {
                    (
                        "SubnetNotFound",
                        format!("Kube-OVN subnet {name:?} not found"),
                    )
                })?;
                let ready = subnet.status.as_ref().is_some_and(|s| {
                    mni_kubeovn::v1::is_condition_true(&s.conditions, mni_kubeovn::v1::READY)
                });
                if !ready {
                    return Err((
                        "SubnetNotReady",
                        format!("Kube-OVN subnet {name:?} is not ready"),
                    ));
                }
                let block = ipam::CidrBlock::parse(&subnet.spec.cidr_block)
                    .map_err(|e| ("SubnetInvalid", format!("subnet {name:?}: {e}")))?;
                let v4 = block.v4.ok_or_else(|| {
                    ("SubnetInvalid", format!("subnet {name:?} has no IPv4 CIDR"))
                })?;
                let mut excluded =
                    ipam::parse_exclude_ips(&subnet.spec.exclude_ips).unwrap_or_default();
                let gateway = subnet
                    .spec
                    .gateway
                    .clone()
                    .filter(|g| !g.is_empty())
                    .unwrap_or_else(|| ipam::default_gateway(&block));
                excluded.extend(gateway.split(',').filter_map(|g| IpRange::parse(g).ok()));
                Ok((v4, excluded))
            }
        }
    }

    /// Allocates (or confirms) an address for `owner` in `pool`.
    pub(super) fn allocate(
        &mut self,
        owner: &Key,
        pool: &Pool,
        fixed: Option<&str>,
    ) -> Result<IpAddr, (&'static str, String)> {
        let (cidr, excluded) = self.range(pool)?;
        let held = self.held.entry(pool.clone()).or_default();
        let ip = match fixed {
            Some(text) => {
                let ip: IpAddr = text.parse().map_err(|_| {
                    (
                        "InvalidIPAddress",
                        format!("{IP_ADDRESS}: {text:?} is not an IP address"),
                    )
                })?;
                if !cidr.contains(ip) {
                    return Err((
                        "IPOutOfRange",
                        format!("IP {ip} is not in the CIDR {cidr} of {pool:?}"),
                    ));
                }
                if excluded.iter().any(|r| r.contains(ip)) {
                    return Err((
                        "IPExcluded",
                        format!("IP {ip} is excluded (gateway or excludeIps) in {pool:?}"),
                    ));
                }
                if let Some(other) = held.get(&ip).filter(|o| *o != owner) {
                    return Err((
                        "IPConflict",
                        format!(
                            "IP {ip} is already in use by VirtualMachineInstance {}/{}",
                            other.0, other.1
                        ),
                    ));
                }
                ip
            }
            None => {
                if let Some((ip, _)) = held.iter().find(|(_, o)| *o == owner) {
                    *ip
                } else {
                    let in_use: BTreeSet<IpAddr> = held.keys().copied().collect();
                    ipam::next_free(&cidr, &excluded, &in_use).ok_or_else(|| {
                        (
                            "NoAvailableAddress",
                            format!("no free address left in {pool:?} ({cidr})"),
                        )
                    })?
                }
            }
        };
        held.insert(ip, owner.clone());
        Ok(ip)
    }
}

/// The label on the `IP` records the simulator writes (and alone deletes).
const IP_RECORD_LABEL: (&str, &str) = ("mni.dev/simulated-by", "kubevirt");

/// Kube-OVN's `IP` records of the subnet addresses running instances hold — named
/// `<vm>.<namespace>` (plus `.<provider>` for a Multus attachment), as Kube-OVN names a
/// KubeVirt VM's — so the fake Kube-OVN counts them in the Subnet's `v4usingIPs`; records of
/// instances that are gone are deleted.
pub(super) fn plan_ip_records(snapshot: &Snapshot, settings: &Settings, writes: &mut Vec<Write>) {
    let existing: BTreeMap<String, &Ip> =
        snapshot.ips.iter().map(|ip| (ip.name_any(), ip)).collect();
    let mut wanted = BTreeSet::new();
    for vmi in &snapshot.vmis {
        if vmi.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(status) = &vmi.status else { continue };
        let Ok(attachments) = attachments(vmi, &snapshot.subnets) else {
            continue;
        };
        let (namespace, name) = key(vmi);
        for a in attachments {
            let Some(Pool::Subnet(subnet)) = &a.pool else {
                continue;
            };
            let Some(iface) = status
                .interfaces
                .iter()
                .find(|i| i.name.as_deref() == Some(a.interface.as_str()))
            else {
                continue;
            };
            let Some(ip) = iface.ip_address.clone() else {
                continue;
            };
            let record = if a.provider == "ovn" {
                format!("{name}.{namespace}")
            } else {
                format!("{name}.{namespace}.{}", a.provider)
            };
            wanted.insert(record.clone());
            if existing.contains_key(&record) {
                continue;
            }
            writes.push(Write::Create {
                kind: Kind::Ip,
                namespace: String::new(),
                body: json!({
                    "apiVersion": "kubeovn.io/v1",
                    "kind": "IP",
                    "metadata": {
                        "name": record,
                        "labels": {
                            IP_RECORD_LABEL.0: IP_RECORD_LABEL.1,
                            "ovn.kubernetes.io/subnet": subnet,
                        },
                    },
                    "spec": {
                        "podName": name,
                        "namespace": namespace,
                        "subnet": subnet,
                        "nodeName": status.node_name.clone().unwrap_or_else(|| settings.node_name.clone()),
                        "ipAddress": ip,
                        "v4IpAddress": ip,
                        "macAddress": iface.mac.clone().unwrap_or_default(),
                        "podType": "VirtualMachine",
                    },
                }),
            });
        }
    }
    for (name, record) in existing {
        let ours =
            record.labels().get(IP_RECORD_LABEL.0).map(String::as_str) == Some(IP_RECORD_LABEL.1);
        if ours && !wanted.contains(&name) && record.metadata.deletion_timestamp.is_none() {
            writes.push(Write::Delete {
                kind: Kind::Ip,
                namespace: String::new(),
                name,
            });
        }
    }
}

/// A stable, locally administered MAC address for an address: `02:00:` and its last four
/// bytes.
pub(super) fn mac_for(ip: IpAddr) -> String {
    let bytes: Vec<u8> = match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets()[12..].to_vec(),
    };
    format!(
        "02:00:{:02x}:{:02x}:{:02x}:{:02x}",
        bytes[0], bytes[1], bytes[2], bytes[3]
    )
}
