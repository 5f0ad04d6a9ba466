//! Address arithmetic as Kube-OVN does it: CIDR blocks, `excludeIps`, gateways, counts.
//!
//! Plain `std::net` types with `u128` arithmetic on `mni_formats::net` (the CIDR parsing and
//! network arithmetic every layer of mNi shares): the subset needs parsing, containment,
//! counting and "next free address", which is too little to pull in an IP-network crate.
//!
//! Start with [`CidrBlock::parse`] (a Subnet's `cidrBlock`, one CIDR per family,
//! comma-separated) and [`subnet_addresses`], which computes what Kube-OVN reports in a
//! Subnet's status:
//!
//! ```
//! use mni_kubeovn::ipam::{Cidr, CidrBlock};
//!
//! let block = CidrBlock::parse("10.0.1.0/24,fd00:10:1::/120").unwrap();
//! assert_eq!(block.v4.unwrap().to_string(), "10.0.1.0/24");
//! assert_eq!(mni_kubeovn::ipam::default_gateway(&block), "10.0.1.1,fd00:10:1::1");
//! // Kube-OVN's count: 2^host-bits minus the network and broadcast addresses.
//! assert_eq!(Cidr::parse("10.0.1.0/24").unwrap().usable_count(), 254);
//! ```
//!
//! Kube-OVN's rules, kept here: a CIDR's usable addresses exclude the first (network) and
//! last (broadcast) address of both families (`util.AddressCount`; a /31 has 2, a /32 1);
//! the gateway is always excluded (upstream adds it to `excludeIps`); `excludeIps` entries
//! are single addresses or `first..last` ranges, clipped to the usable range
//! (`util.ExpandExcludeIPs`); available = usable − excluded − in use.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use mni_formats::net;

use crate::v1::{Protocol, SubnetSpec};

/// Errors of address parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A CIDR is not `address/prefix-length` with a valid address and length.
    #[error("invalid CIDR {value:?}: {reason} (expected e.g. 10.0.1.0/24 or fd00:10:1::/120)")]
    InvalidCidr {
        /// The text that failed to parse.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `cidrBlock` is not one CIDR, or one IPv4 and one IPv6 CIDR, comma-separated.
    #[error(
        "invalid cidrBlock {value:?}: {reason} (expected one CIDR, or an IPv4 and an IPv6 CIDR separated by a comma)"
    )]
    InvalidCidrBlock {
        /// The `cidrBlock`.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An address (a gateway, an `excludeIps` entry) is not an IP address.
    #[error("invalid IP address {value:?}")]
    InvalidAddress {
        /// The text that failed to parse.
        value: String,
    },
    /// An `excludeIps` range is reversed or mixes families.
    #[error(
        "invalid address range {value:?}: {reason} (expected first..last, same family, first <= last)"
    )]
    InvalidRange {
        /// The range as written.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// A CIDR: a network address (host bits cleared) and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cidr(net::Cidr);

impl Cidr {
    /// Parses `address/prefix-length` (as `mni_formats::net::Cidr::parse`, around surrounding
    /// white space); host bits are cleared (`10.0.1.5/24` is `10.0.1.0/24`, as Go's
    /// `net.ParseCIDR` reports the network).
    pub fn parse(value: &str) -> Result<Cidr, Error> {
        net::Cidr::parse(value.trim())
            .map(|cidr| Cidr(cidr.masked()))
            .map_err(|e| Error::InvalidCidr {
                value: value.to_string(),
                reason: e.reason().to_string(),
            })
    }

    /// The network address.
    pub fn network(&self) -> IpAddr {
        self.0.addr()
    }

    /// The prefix length.
    pub fn prefix_len(&self) -> u8 {
        self.0.prefix_len()
    }

    /// Whether this is an IPv4 CIDR.
    pub fn is_ipv4(&self) -> bool {
        self.0.is_ipv4()
    }

    /// The last address of the CIDR (the IPv4 broadcast address).
    pub fn last(&self) -> IpAddr {
        self.0.last()
    }

    /// Whether `ip` is in the CIDR (always false across families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(ip)
    }

    /// The range of addresses Kube-OVN hands out: without the first and last address,
    /// except in a /31 or /32 (or IPv6 /127, /128), which use all of theirs.
    pub fn usable(&self) -> IpRange {
        let network = self.network();
        let (first, last) = (to_u128(network), to_u128(self.last()));
        if last - first < 2 {
            IpRange::new(network, self.last())
        } else {
            IpRange::new(from_u128(network, first + 1), from_u128(network, last - 1))
        }
    }

    /// How many addresses Kube-OVN counts as usable (`util.AddressCount`): 2^host-bits − 2,
    /// a /31 2, a /32 1. Saturates at `u128::MAX` for an IPv6 /0.
    pub fn usable_count(&self) -> u128 {
        self.usable().len()
    }
}

impl FromStr for Cidr {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Cidr::parse(s)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The first address Kube-OVN would use in `cidr`: its default gateway (`10.0.1.1` in
/// `10.0.1.0/24`; the network address itself in a /31 or /32).
pub fn first_usable(cidr: &Cidr) -> IpAddr {
    cidr.usable().start
}

/// A Subnet's `cidrBlock`: at most one CIDR per family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CidrBlock {
    /// The IPv4 CIDR.
    pub v4: Option<Cidr>,
    /// The IPv6 CIDR.
    pub v6: Option<Cidr>,
}

impl CidrBlock {
    /// Parses `10.0.1.0/24`, `fd00::/120` or `10.0.1.0/24,fd00::/120` (either order).
    pub fn parse(value: &str) -> Result<CidrBlock, Error> {
        let invalid = |reason: String| Error::InvalidCidrBlock {
            value: value.to_string(),
            reason,
        };
        let mut block = CidrBlock::default();
        let parts: Vec<&str> = value.split(',').map(str::trim).collect();
        if parts.len() > 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(invalid("not one or two CIDRs".to_string()));
        }
        for part in parts {
            let cidr = Cidr::parse(part).map_err(|e| invalid(e.to_string()))?;
            let slot = if cidr.is_ipv4() {
                &mut block.v4
            } else {
                &mut block.v6
            };
            if slot.replace(cidr).is_some() {
                return Err(invalid("two CIDRs of the same family".to_string()));
            }
        }
        Ok(block)
    }

    /// `IPv4`, `IPv6` or `Dual`, as Kube-OVN derives `spec.protocol`.
    pub fn protocol(&self) -> Protocol {
        match (self.v4, self.v6) {
            (Some(_), Some(_)) => Protocol::Dual,
            (None, Some(_)) => Protocol::IPv6,
            _ => Protocol::IPv4,
        }
    }

    /// The CIDRs, IPv4 first.
    pub fn cidrs(&self) -> impl Iterator<Item = Cidr> + '_ {
        self.v4.iter().chain(self.v6.iter()).copied()
    }
}

impl fmt::Display for CidrBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.cidrs().map(|c| c.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

/// The default `gateway` of a `cidrBlock`: the first usable address of each CIDR, IPv4
/// first, comma-separated.
pub fn default_gateway(block: &CidrBlock) -> String {
    let gateways: Vec<String> = block
        .cidrs()
        .map(|c| first_usable(&c).to_string())
        .collect();
    gateways.join(",")
}

/// An inclusive range of addresses of one family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IpRange {
    /// The first address.
    pub start: IpAddr,
    /// The last address (inclusive).
    pub end: IpAddr,
}

impl IpRange {
    fn new(start: IpAddr, end: IpAddr) -> IpRange {
        IpRange { start, end }
    }

    /// Parses an `excludeIps` entry: `10.0.1.7` or `10.0.1.10..10.0.1.20`.
    pub fn parse(value: &str) -> Result<IpRange, Error> {
        let address = |s: &str| -> Result<IpAddr, Error> {
            s.trim().parse().map_err(|_| Error::InvalidAddress {
                value: s.trim().to_string(),
            })
        };
        let invalid = |reason: &str| Error::InvalidRange {
            value: value.to_string(),
            reason: reason.to_string(),
        };
        match value.split_once("..") {
            None => {
                let ip = address(value)?;
                Ok(IpRange::new(ip, ip))
            }
            Some((a, b)) => {
                let (start, end) = (address(a)?, address(b)?);
                if start.is_ipv4() != end.is_ipv4() {
                    return Err(invalid("mixes IPv4 and IPv6"));
                }
                if to_u128(start) > to_u128(end) {
                    return Err(invalid("first is after last"));
                }
                Ok(IpRange::new(start, end))
            }
        }
    }

    /// How many addresses the range holds (saturating).
    pub fn len(&self) -> u128 {
        (to_u128(self.end) - to_u128(self.start)).saturating_add(1)
    }

    /// Always false: a range holds at least one address.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `ip` is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.start.is_ipv4()
            && to_u128(ip) >= to_u128(self.start)
            && to_u128(ip) <= to_u128(self.end)
    }

    /// The part of the range inside `other`, if any.
    fn clip(&self, other: &IpRange) -> Option<IpRange> {
        if self.start.is_ipv4() != other.start.is_ipv4() {
            return None;
        }
        let start = to_u128(self.start).max(to_u128(other.start));
        let end = to_u128(self.end).min(to_u128(other.end));
        (start <= end)
            .then(|| IpRange::new(from_u128(self.start, start), from_u128(self.start, end)))
    }
}

impl fmt::Display for IpRange {
    /// `a` for one address, `a-b` otherwise (Kube-OVN's `v4availableIPrange` notation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// Parses every `excludeIps` entry.
pub fn parse_exclude_ips<S: AsRef<str>>(entries: &[S]) -> Result<Vec<IpRange>, Error> {
    entries.iter().map(|e| IpRange::parse(e.as_ref())).collect()
}

/// What is left of `cidr`'s usable range once `excluded` and `in_use` are taken out: the
/// free ranges, sorted, merged, clipped to the CIDR.
pub fn free_ranges(cidr: &Cidr, excluded: &[IpRange], in_use: &BTreeSet<IpAddr>) -> Vec<IpRange> {
    let usable = cidr.usable();
    let mut taken: Vec<(u128, u128)> = excluded
        .iter()
        .filter_map(|r| r.clip(&usable))
        .map(|r| (to_u128(r.start), to_u128(r.end)))
        .chain(
            in_use
                .iter()
                .filter(|ip| usable.contains(**ip))
                .map(|ip| (to_u128(*ip), to_u128(*ip))),
        )
        .collect();
    taken.sort_unstable();
    let mut free = Vec::new();
    let mut next = to_u128(usable.start);
    let end = to_u128(usable.end);
    let mut done = false;
    for (s, e) in taken {
        if e < next {
            continue;
        }
        if s > next {
            free.push((next, s - 1));
        }
        if e >= end {
            done = true;
            break;
        }
        next = e + 1;
    }
    if !done {
        free.push((next, end));
    }
    free.into_iter()
        .map(|(s, e)| IpRange::new(from_u128(cidr.network(), s), from_u128(cidr.network(), e)))
        .collect()
}

/// The first free address of `cidr` (see [`free_ranges`]), for allocations.
pub fn next_free(cidr: &Cidr, excluded: &[IpRange], in_use: &BTreeSet<IpAddr>) -> Option<IpAddr> {
    free_ranges(cidr, excluded, in_use).first().map(|r| r.start)
}

/// The address accounting of one family of a subnet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FamilyAddresses {
    /// The CIDR.
    pub cidr: Option<Cidr>,
    /// Free addresses: usable − gateway − `excludeIps` − in use.
    pub available: u128,
    /// The free addresses as ranges, `a-b,c-d`.
    pub available_range: String,
}

/// The address accounting of a subnet, per family (absent families are all zero).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubnetAddresses {
    /// `IPv4`, `IPv6` or `Dual`, from the CIDR block.
    pub protocol: Option<Protocol>,
    /// The gateway(s): `spec.gateway`, or the default.
    pub gateway: String,
    /// IPv4.
    pub v4: FamilyAddresses,
    /// IPv6.
    pub v6: FamilyAddresses,
}

/// Computes a subnet's address accounting from its spec, with `in_use` addresses taken
/// (the fake controller runs no pods: empty).
pub fn subnet_addresses(
    spec: &SubnetSpec,
    in_use: &BTreeSet<IpAddr>,
) -> Result<SubnetAddresses, Error> {
    let block = CidrBlock::parse(&spec.cidr_block)?;
    let gateway = match spec.gateway.as_deref().map(str::trim) {
        Some(g) if !g.is_empty() => g.to_string(),
        _ => default_gateway(&block),
    };
    let mut excluded = parse_exclude_ips(&spec.exclude_ips)?;
    for g in gateway.split(',') {
        excluded.push(IpRange::parse(g)?);
    }
    let family = |cidr: Option<Cidr>| -> FamilyAddresses {
        let Some(cidr) = cidr else {
            return FamilyAddresses::default();
        };
        let free = free_ranges(&cidr, &excluded, in_use);
        FamilyAddresses {
            cidr: Some(cidr),
            available: free.iter().map(IpRange::len).fold(0, u128::saturating_add),
            available_range: free
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
        }
    };
    Ok(SubnetAddresses {
        protocol: Some(block.protocol()),
        gateway,
        v4: family(block.v4),
        v6: family(block.v6),
    })
}

fn to_u128(ip: IpAddr) -> u128 {
    net::to_bits(ip)
}

/// An address of `like`'s family from its integer value.
fn from_u128(like: IpAddr, value: u128) -> IpAddr {
    net::from_bits(value, net::width(like))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn spec(cidr: &str, gateway: Option<&str>, exclude: &[&str]) -> SubnetSpec {
        SubnetSpec {
            cidr_block: cidr.to_string(),
            gateway: gateway.map(str::to_string),
            exclude_ips: exclude.iter().map(|s| s.to_string()).collect(),
            ..SubnetSpec::default()
        }
    }

    #[test]
    fn parses_cidrs_and_clears_host_bits() {
        let c = Cidr::parse("10.0.1.5/24").expect("cidr");
        assert_eq!(c.to_string(), "10.0.1.0/24");
        assert_eq!(c.last(), ip("10.0.1.255"));
        assert!(c.contains(ip("10.0.1.200")));
        assert!(!c.contains(ip("10.0.2.0")));
        assert!(!c.contains(ip("::1")));
        let v6 = Cidr::parse("fd00:10:1::7/120").expect("v6");
        assert_eq!(v6.to_string(), "fd00:10:1::/120");
        assert_eq!(v6.last(), ip("fd00:10:1::ff"));
        assert_eq!(
            Cidr::parse("0.0.0.0/0").expect("all").last(),
            ip("255.255.255.255")
        );
        assert_eq!(
            Cidr::parse("::/0").expect("all6").last(),
            ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
        );
        for bad in ["10.0.1.0", "10.0.1.0/33", "fd00::/129", "x/24", "10.0.1.0/"] {
            assert!(
                matches!(Cidr::parse(bad), Err(Error::InvalidCidr { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn counts_like_kube_ovn() {
        let count = |s: &str| Cidr::parse(s).expect("cidr").usable_count();
        assert_eq!(count("10.0.1.0/24"), 254);
        assert_eq!(count("10.0.1.0/30"), 2);
        assert_eq!(count("10.0.1.0/31"), 2);
        assert_eq!(count("10.0.1.0/32"), 1);
        assert_eq!(count("fd00::/120"), 254);
        assert_eq!(count("fd00::/64"), (1u128 << 64) - 2);
        assert_eq!(count("::/0"), u128::MAX - 1);
    }

    #[test]
    fn parses_cidr_blocks() {
        let dual = CidrBlock::parse("fd00::/120, 10.0.1.0/24").expect("dual");
        assert_eq!(dual.protocol(), Protocol::Dual);
        assert_eq!(dual.to_string(), "10.0.1.0/24,fd00::/120");
        assert_eq!(default_gateway(&dual), "10.0.1.1,fd00::1");
        assert_eq!(
            CidrBlock::parse("fd00::/64").expect("v6").protocol(),
            Protocol::IPv6
        );
        assert_eq!(
            CidrBlock::parse("10.0.0.0/8").expect("v4").protocol(),
            Protocol::IPv4
        );
        for bad in [
            "",
            "10.0.1.0/24,10.0.2.0/24",
            "10.0.1.0/24,",
            "a,b,c",
            "10.0.1.0/24,fd00::/64,fd01::/64",
        ] {
            assert!(
                matches!(CidrBlock::parse(bad), Err(Error::InvalidCidrBlock { .. })),
                "{bad}"
            );
        }
        assert_eq!(
            first_usable(&Cidr::parse("10.0.1.8/31").expect("31")),
            ip("10.0.1.8")
        );
    }

    #[test]
    fn parses_exclude_ips() {
        let r = parse_exclude_ips(&["10.0.1.7", "10.0.1.10..10.0.1.20", "fd00::5..fd00::6"])
            .expect("ranges");
        assert_eq!(r[0].len(), 1);
        assert_eq!(r[1].len(), 11);
        assert_eq!(r[1].to_string(), "10.0.1.10-10.0.1.20");
        assert_eq!(r[2].len(), 2);
        assert!(r[1].contains(ip("10.0.1.15")));
        assert!(matches!(
            IpRange::parse("10.0.1.20..10.0.1.10"),
            Err(Error::InvalidRange { .. })
        ));
        assert!(matches!(
            IpRange::parse("10.0.1.1..fd00::1"),
            Err(Error::InvalidRange { .. })
        ));
        assert_eq!(
            IpRange::parse("10.0.1.x"),
            Err(Error::InvalidAddress {
                value: "10.0.1.x".to_string()
            })
        );
    }

    #[test]
    fn free_ranges_clip_merge_and_skip_in_use() {
        let c = Cidr::parse("10.0.1.0/24").expect("cidr");
        let ex = parse_exclude_ips(&[
            "10.0.0.0..10.0.1.3", // overlaps the network address: clipped
            "10.0.1.2",           // duplicate
            "10.0.1.250..10.0.2.10",
            "fd00::1", // other family: ignored
        ])
        .expect("ranges");
        let used: BTreeSet<IpAddr> = [ip("10.0.1.4"), ip("10.0.1.6")].into();
        let free = free_ranges(&c, &ex, &used);
        let text: Vec<String> = free.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["10.0.1.5", "10.0.1.7-10.0.1.249"]);
        assert_eq!(next_free(&c, &ex, &used), Some(ip("10.0.1.5")));
        let all = parse_exclude_ips(&["10.0.1.0..10.0.1.255"]).expect("all");
        assert!(free_ranges(&c, &all, &BTreeSet::new()).is_empty());
        assert_eq!(next_free(&c, &all, &BTreeSet::new()), None);
    }

    #[test]
    fn subnet_addresses_exclude_gateway_and_exclude_ips() {
        let none = BTreeSet::new();
        let a = subnet_addresses(&spec("10.0.1.0/24", None, &[]), &none).expect("v4");
        assert_eq!(a.gateway, "10.0.1.1");
        assert_eq!(a.v4.available, 253);
        assert_eq!(a.v4.available_range, "10.0.1.2-10.0.1.254");
        assert_eq!(a.v6, FamilyAddresses::default());
        assert_eq!(a.protocol, Some(Protocol::IPv4));

        // The gateway listed in excludeIps too is counted once, as upstream.
        let a = subnet_addresses(
            &spec(
                "10.0.1.0/24,fd00:10:1::/120",
                Some("10.0.1.254,fd00:10:1::1"),
                &[
                    "10.0.1.254",
                    "10.0.1.10..10.0.1.19",
                    "fd00:10:1::2..fd00:10:1::f",
                ],
            ),
            &none,
        )
        .expect("dual");
        assert_eq!(a.protocol, Some(Protocol::Dual));
        assert_eq!(a.v4.available, 254 - 1 - 10);
        assert_eq!(
            a.v4.available_range,
            "10.0.1.1-10.0.1.9,10.0.1.20-10.0.1.253"
        );
        assert_eq!(a.v6.available, 254 - 1 - 14);
        assert_eq!(a.v6.available_range, "fd00:10:1::10-fd00:10:1::fe");

        let used: BTreeSet<IpAddr> = [ip("10.0.1.2")].into();
        let a = subnet_addresses(&spec("10.0.1.0/24", None, &[]), &used).expect("used");
        assert_eq!(a.v4.available, 252);

        assert!(subnet_addresses(&spec("10.0.1.0/24", None, &["nope"]), &none).is_err());
        assert!(subnet_addresses(&spec("nope", None, &[]), &none).is_err());
    }
}
