//! IP addresses and CIDRs, and the arithmetic of networks.
//!
//! Addresses parse as Go's `netip.ParseAddr` reads them (no zones, no leading zeros in IPv4
//! octets); a [`Cidr`] keeps the address as written (`10.0.1.5/24`) and offers its network
//! ([`Cidr::masked`]), last address and containment. [`Cidr::parse`] follows Go's
//! `netip.ParsePrefix` (the prefix length is a decimal without leading zeros);
//! [`Cidr::parse_lenient`] follows `net.ParseCIDR`, which also takes `/024`.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a string is not a CIDR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CidrError {
    /// There is no `/prefix-length`.
    NoPrefixLength {
        /// The string as given.
        value: String,
    },
    /// The part before `/` is not an IP address.
    Address {
        /// The string as given.
        value: String,
    },
    /// The prefix length is not a decimal number, or longer than the address family allows.
    PrefixLength {
        /// The string as given.
        value: String,
    },
}

impl CidrError {
    /// The string that failed to parse.
    #[must_use]
    pub fn value(&self) -> &str {
        match self {
            Self::NoPrefixLength { value }
            | Self::Address { value }
            | Self::PrefixLength { value } => value,
        }
    }

    /// What is wrong, without the value.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NoPrefixLength { .. } => "no /prefix-length",
            Self::Address { .. } => "not an IP address",
            Self::PrefixLength { .. } => {
                "the prefix length must be a number of bits the address family has (0-32, 0-128)"
            }
        }
    }
}

impl fmt::Display for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a CIDR: {}", self.value(), self.reason())
    }
}

impl std::error::Error for CidrError {}

/// Parses an IP address as Go's `netip.ParseAddr` does (without zones).
#[must_use]
pub fn parse_ip(value: &str) -> Option<IpAddr> {
    value.parse().ok()
}

/// The number of bits of `ip`'s family: 32 or 128.
#[must_use]
pub fn width(ip: IpAddr) -> u8 {
    if ip.is_ipv4() { 32 } else { 128 }
}

/// `ip` as a number.
#[must_use]
pub fn to_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// The address of `width` bits (32: IPv4, else IPv6) whose number is `bits`.
#[must_use]
pub fn from_bits(bits: u128, width: u8) -> IpAddr {
    if width == 32 {
        // The low 32 bits: an IPv4 address has no others.
        IpAddr::V4(Ipv4Addr::from((bits & u128::from(u32::MAX)) as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(bits))
    }
}

/// Every bit of a `width`-bit address set.
#[must_use]
pub fn all_ones(width: u8) -> u128 {
    if width == 32 {
        u128::from(u32::MAX)
    } else {
        u128::MAX
    }
}

/// The network mask of a `prefix_len`-bit prefix of a `width`-bit address.
#[must_use]
pub fn mask(width: u8, prefix_len: u8) -> u128 {
    let host_bits = u32::from(width.saturating_sub(prefix_len));
    all_ones(width)
        .checked_shl(host_bits)
        .map_or(0, |m| m & all_ones(width))
}

/// An IP address and a prefix length (`10.0.1.5/24`), the address kept as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cidr {
    addr: IpAddr,
    prefix_len: u8,
}

impl Cidr {
    /// `addr/prefix_len`, or `None` when the family has fewer bits than `prefix_len`.
    #[must_use]
    pub fn new(addr: IpAddr, prefix_len: u8) -> Option<Cidr> {
        (prefix_len <= width(addr)).then_some(Cidr { addr, prefix_len })
    }

    /// Parses `ADDRESS/BITS` as Go's `netip.ParsePrefix`: BITS is a decimal without leading
    /// zeros.
    ///
    /// # Errors
    ///
    /// [`CidrError`], naming what is wrong.
    pub fn parse(value: &str) -> Result<Cidr, CidrError> {
        Self::parse_with(value, false)
    }

    /// Parses `ADDRESS/BITS` as Go's `net.ParseCIDR` (the OpenAPI `cidr` format): BITS may
    /// have leading zeros.
    ///
    /// # Errors
    ///
    /// [`CidrError`], naming what is wrong.
    pub fn parse_lenient(value: &str) -> Result<Cidr, CidrError> {
        Self::parse_with(value, true)
    }

    fn parse_with(value: &str, leading_zeros: bool) -> Result<Cidr, CidrError> {
        let owned = || value.to_owned();
        let (addr, bits) = value
            .split_once('/')
            .ok_or_else(|| CidrError::NoPrefixLength { value: owned() })?;
        let addr = parse_ip(addr).ok_or_else(|| CidrError::Address { value: owned() })?;
        let bad_bits = || CidrError::PrefixLength { value: owned() };
        if bits.is_empty()
            || !bits.bytes().all(|b| b.is_ascii_digit())
            || (!leading_zeros && bits.len() > 1 && bits.starts_with('0'))
        {
            return Err(bad_bits());
        }
        let prefix_len = bits.parse::<u8>().map_err(|_| bad_bits())?;
        Cidr::new(addr, prefix_len).ok_or_else(bad_bits)
    }

    /// The address as written.
    #[must_use]
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The prefix length.
    #[must_use]
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// Whether this is an IPv4 CIDR.
    #[must_use]
    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }

    /// The number of bits of the family: 32 or 128.
    #[must_use]
    pub fn width(&self) -> u8 {
        width(self.addr)
    }

    /// The network mask as a number.
    #[must_use]
    pub fn mask(&self) -> u128 {
        mask(self.width(), self.prefix_len)
    }

    /// The network address (host bits cleared).
    #[must_use]
    pub fn network(&self) -> IpAddr {
        from_bits(to_bits(self.addr) & self.mask(), self.width())
    }

    /// The same prefix with the host bits cleared (`10.0.1.0/24` for `10.0.1.5/24`).
    #[must_use]
    pub fn masked(&self) -> Cidr {
        Cidr {
            addr: self.network(),
            prefix_len: self.prefix_len,
        }
    }

    /// The last address (the IPv4 broadcast address).
    #[must_use]
    pub fn last(&self) -> IpAddr {
        let host = !self.mask() & all_ones(self.width());
        from_bits(to_bits(self.addr) | host, self.width())
    }

    /// Whether `ip` is in the network (never across families).
    #[must_use]
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.is_ipv4() && to_bits(ip) & self.mask() == to_bits(self.network())
    }

    /// Whether every address of `other` is in this network (never across families).
    #[must_use]
    pub fn contains_cidr(&self, other: &Cidr) -> bool {
        other.is_ipv4() == self.is_ipv4()
            && other.prefix_len >= self.prefix_len
            && self.contains(other.addr)
    }

    /// Whether the two networks share an address.
    #[must_use]
    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.contains_cidr(other) || other.contains_cidr(self)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn parses_as_netip_parse_prefix() {
        let c = Cidr::parse("10.0.1.5/24").expect("cidr");
        assert_eq!((c.addr(), c.prefix_len()), (ip("10.0.1.5"), 24));
        assert_eq!(c.to_string(), "10.0.1.5/24");
        assert!(Cidr::parse("fd00::/64").is_ok());
        assert!(Cidr::parse("0.0.0.0/0").is_ok());
        for (bad, why) in [
            ("10.0.0.0", "no /prefix-length"),
            ("10.0.0/8", "not an IP address"),
            ("010.0.0.0/8", "not an IP address"),
            ("fe80::1%eth0/64", "not an IP address"),
            ("10.0.0.0/33", "prefix length"),
            ("fd00::/129", "prefix length"),
            ("10.0.0.0/", "prefix length"),
            ("10.0.0.0/+8", "prefix length"),
            ("10.0.0.0/08", "prefix length"),
            ("10.0.0.0/ 8", "prefix length"),
        ] {
            let err = Cidr::parse(bad).expect_err(bad);
            assert!(err.to_string().contains(why), "{bad}: {err}");
            assert!(err.to_string().contains(bad), "{err} names the value");
        }
    }

    #[test]
    fn lenient_parse_takes_leading_zeros_in_the_length() {
        assert_eq!(
            Cidr::parse_lenient("10.0.0.0/008")
                .expect("lenient")
                .prefix_len(),
            8
        );
        assert!(Cidr::parse_lenient("10.0.0.0/033").is_err());
    }

    #[test]
    fn networks() {
        let c = Cidr::parse("10.0.1.5/24").expect("cidr");
        assert_eq!(c.network(), ip("10.0.1.0"));
        assert_eq!(c.masked().to_string(), "10.0.1.0/24");
        assert_eq!(c.last(), ip("10.0.1.255"));
        assert!(c.contains(ip("10.0.1.255")) && !c.contains(ip("10.0.2.0")));
        assert!(!c.contains(ip("::a00:105")), "never across families");
        let v6 = Cidr::parse("fd00:10:1::7/120").expect("v6");
        assert_eq!(v6.network(), ip("fd00:10:1::"));
        assert_eq!(v6.last(), ip("fd00:10:1::ff"));
        let all = Cidr::parse("0.0.0.0/0").expect("all");
        assert_eq!(all.last(), ip("255.255.255.255"));
        assert!(all.contains(ip("1.2.3.4")));
        assert_eq!(
            Cidr::parse("::/0").expect("all6").last(),
            ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
        );
        let host = Cidr::parse("10.0.1.5/32").expect("host");
        assert_eq!(
            (host.network(), host.last()),
            (ip("10.0.1.5"), ip("10.0.1.5"))
        );
    }

    #[test]
    fn containment_and_overlap() {
        let big = Cidr::parse("10.0.0.0/16").expect("big");
        let small = Cidr::parse("10.0.3.0/24").expect("small");
        let other = Cidr::parse("10.1.0.0/24").expect("other");
        assert!(big.contains_cidr(&small) && !small.contains_cidr(&big));
        assert!(big.overlaps(&small) && small.overlaps(&big));
        assert!(!big.overlaps(&other));
    }
}
