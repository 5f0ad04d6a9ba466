//! Kubernetes' IP and CIDR CEL library (`k8s.io/apiserver/pkg/cel/library/ip.go`, `cidr.go`):
//! the `net.IP` and `net.CIDR` types and their functions.
//!
//! Parsing follows Go's `netip`: no zones, no IPv4-mapped IPv6 addresses, no leading zeros in
//! IPv4 octets or in prefix lengths; a CIDR may have host bits set (`cidr.masked()` clears them).

use std::any::Any;
use std::net::IpAddr;

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use mni_formats::net;

static IP_TYPE: Type = Type::new_unspecified_type("net.IP");
static CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");

/// A `net.IP` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ip(IpAddr);

/// A `net.CIDR` value: an address (host bits kept) and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr(net::Cidr);

impl Val for Ip {
    fn get_type(&self) -> &Type {
        &IP_TYPE
    }
    fn cel_type() -> &'static Type {
        &IP_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Ip>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Ip {}

impl Val for Cidr {
    fn get_type(&self) -> &Type {
        &CIDR_TYPE
    }
    fn cel_type() -> &'static Type {
        &CIDR_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Cidr>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Cidr {}

/// Parses an IP address like Go's `netip.ParseAddr`, minus zones and IPv4-mapped IPv6.
pub(crate) fn parse_ip(s: &str) -> Result<IpAddr, String> {
    let addr = net::parse_ip(s).ok_or_else(|| format!("ParseAddr({s:?}): unable to parse IP"))?;
    not_mapped(addr)
}

/// `addr`, unless it is an IPv4-mapped IPv6 address.
fn not_mapped(addr: IpAddr) -> Result<IpAddr, String> {
    match addr {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => {
            Err("IPv4-mapped IPv6 address is not allowed".to_string())
        }
        _ => Ok(addr),
    }
}

/// Parses a CIDR like Go's `netip.ParsePrefix`, minus IPv4-mapped IPv6 addresses.
pub(crate) fn parse_cidr(s: &str) -> Result<net::Cidr, String> {
    match net::Cidr::parse(s) {
        Ok(cidr) => not_mapped(cidr.addr()).map(|_| cidr),
        Err(net::CidrError::Address { .. }) => {
            let addr = s.split_once('/').map_or(s, |(addr, _)| addr);
            Err(parse_ip(addr)
                .err()
                .unwrap_or_else(|| format!("netip.ParsePrefix({s:?}): invalid prefix")))
        }
        Err(_) => Err(format!("netip.ParsePrefix({s:?}): invalid prefix")),
    }
}

fn err(function: &str, msg: String) -> ExecutionError {
    ExecutionError::function_error(function, msg)
}

fn is_ip(s: &CelString<'_>) -> CelBool {
    parse_ip(s.inner()).is_ok().into()
}

fn ip(s: &CelString<'_>) -> Result<Ip, ExecutionError> {
    parse_ip(s.inner()).map(Ip).map_err(|e| {
        err(
            "ip",
            format!(
                "IP Address {:?} parse error during conversion from string: {e}",
                s.inner()
            ),
        )
    })
}

fn ip_is_canonical(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip(s.inner()).map_err(|e| {
        err(
            "ip.isCanonical",
            format!(
                "IP Address {:?} parse error during conversion from string: {e}",
                s.inner()
            ),
        )
    })?;
    Ok((addr.to_string() == s.inner()).into())
}

fn family(ip: &Ip) -> CelInt {
    (if ip.0.is_ipv4() { 4 } else { 6 }).into()
}

fn is_unspecified(ip: &Ip) -> CelBool {
    ip.0.is_unspecified().into()
}

fn is_loopback(ip: &Ip) -> CelBool {
    ip.0.is_loopback().into()
}

fn is_link_local_multicast(ip: &Ip) -> CelBool {
    match ip.0 {
        IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
        IpAddr::V6(a) => a.octets()[0] == 0xff && a.octets()[1] & 0x0f == 0x02,
    }
    .into()
}

fn is_link_local_unicast(ip: &Ip) -> CelBool {
    match ip.0 {
        IpAddr::V4(a) => a.is_link_local(),
        IpAddr::V6(a) => a.is_unicast_link_local(),
    }
    .into()
}

/// Go's `IsGlobalUnicast`: not unspecified, loopback, multicast, link-local or broadcast.
fn is_global_unicast(ip: &Ip) -> CelBool {
    let a = ip.0;
    let link_local = *is_link_local_unicast(ip).inner();
    let broadcast = matches!(a, IpAddr::V4(v) if v.is_broadcast());
    (!a.is_unspecified() && !a.is_loopback() && !a.is_multicast() && !link_local && !broadcast)
        .into()
}

fn ip_to_string(ip: &Ip) -> CelString<'static> {
    ip.0.to_string().into()
}

fn is_cidr(s: &CelString<'_>) -> CelBool {
    parse_cidr(s.inner()).is_ok().into()
}

fn cidr_of(function: &str, s: &str) -> Result<Cidr, ExecutionError> {
    parse_cidr(s).map(Cidr).map_err(|e| {
        err(
            function,
            format!("network address parse error during conversion from string: {e}"),
        )
    })
}

fn cidr(s: &CelString<'_>) -> Result<Cidr, ExecutionError> {
    cidr_of("cidr", s.inner())
}

fn contains_ip(c: &Cidr, ip: &Ip) -> CelBool {
    c.0.contains(ip.0).into()
}

fn contains_ip_string(c: &Cidr, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip(s.inner()).map_err(|e| {
        err(
            "containsIP",
            format!(
                "IP Address {:?} parse error during conversion from string: {e}",
                s.inner()
            ),
        )
    })?;
    Ok(c.0.contains(addr).into())
}

fn contains_cidr(c: &Cidr, other: &Cidr) -> CelBool {
    c.0.contains_cidr(&other.0).into()
}

fn contains_cidr_string(c: &Cidr, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    Ok(c.0
        .contains_cidr(&cidr_of("containsCIDR", s.inner())?.0)
        .into())
}

fn cidr_ip(c: &Cidr) -> Ip {
    Ip(c.0.addr())
}

fn cidr_masked(c: &Cidr) -> Cidr {
    Cidr(c.0.masked())
}

fn prefix_length(c: &Cidr) -> CelInt {
    i64::from(c.0.prefix_len()).into()
}

fn cidr_to_string(c: &Cidr) -> CelString<'static> {
    c.0.to_string().into()
}

/// Registers the IP and CIDR functions.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(IP_TYPE.to_owned())?;
    env.add_type(CIDR_TYPE.to_owned())?;
    cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP")?;
    cel::add_overload!(env, fn ip: (CelString) -> Result<Ip>)?;
    cel::add_overload!(env, fn ip_is_canonical: (CelString) -> Result<CelBool>,
        name = "ip.isCanonical")?;
    cel::add_member_overload!(env, fn family: (Ip) -> CelInt)?;
    cel::add_member_overload!(env, fn is_unspecified: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_loopback: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_multicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_unicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_global_unicast: (Ip) -> CelBool)?;
    cel::add_overload!(env, fn ip_to_string: (Ip) -> CelString, name = "string",
        id = "ip_to_string")?;
    cel::add_overload!(env, fn is_cidr: (CelString) -> CelBool, name = "isCIDR")?;
    cel::add_overload!(env, fn cidr: (CelString) -> Result<Cidr>)?;
    cel::add_member_overload!(env, fn contains_ip: (Cidr, Ip) -> CelBool, name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_ip_string: (Cidr, CelString) -> Result<CelBool>,
        name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_cidr: (Cidr, Cidr) -> CelBool,
        name = "containsCIDR")?;
    cel::add_member_overload!(env, fn contains_cidr_string: (Cidr, CelString) -> Result<CelBool>,
        name = "containsCIDR")?;
    cel::add_member_overload!(env, fn cidr_ip: (Cidr) -> Ip, name = "ip")?;
    cel::add_member_overload!(env, fn cidr_masked: (Cidr) -> Cidr, name = "masked")?;
    cel::add_member_overload!(env, fn prefix_length: (Cidr) -> CelInt)?;
    cel::add_overload!(env, fn cidr_to_string: (Cidr) -> CelString, name = "string",
        id = "cidr_to_string")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::{check, check_err};

    #[test]
    fn ips() {
        check("isIP('192.168.0.1') && isIP('fd00::1')", true);
        check(
            "isIP('1.2.3') || isIP('01.2.3.4') || isIP('fe80::1%eth0')",
            false,
        );
        check("isIP('::ffff:1.2.3.4')", false);
        check(
            "ip('10.0.0.1').family() == 4 && ip('2001:db8::1').family() == 6",
            true,
        );
        check(
            "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
            true,
        );
        check(
            "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()",
            true,
        );
        check(
            "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()",
            true,
        );
        check(
            "ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()",
            true,
        );
        check(
            "ip('10.1.2.3').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
            true,
        );
        check(
            "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
            true,
        );
        check("string(ip('2001:db8:0:0::1')) == '2001:db8::1'", true);
        check(
            "ip('10.0.0.1') == ip('10.0.0.1') && ip('10.0.0.1') != ip('10.0.0.2')",
            true,
        );
        check_err(
            "ip('nope').family() == 4",
            "IP Address \"nope\" parse error during conversion from string: ParseAddr(\"nope\"): unable to parse IP",
        );
    }

    #[test]
    fn cidrs() {
        check(
            "isCIDR('10.0.0.0/8') && isCIDR('fd00::/64') && isCIDR('10.0.0.1/8')",
            true,
        );
        check(
            "isCIDR('10.0.0.0') || isCIDR('10.0.0.0/33') || isCIDR('10.0.0.0/08')",
            false,
        );
        check("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", true);
        check("cidr('10.0.0.0/8').containsIP('11.0.0.1')", false);
        check("cidr('10.0.0.0/8').containsIP('fd00::1')", false);
        check("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", true);
        check(
            "cidr('10.0.0.0/16').containsCIDR(cidr('10.0.0.0/8'))",
            false,
        );
        check("cidr('10.0.0.0/8').containsCIDR('10.0.0.0/8')", true);
        check("cidr('10.1.2.3/8').ip() == ip('10.1.2.3')", true);
        check("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", true);
        check("string(cidr('fd00:0::1/64').masked()) == 'fd00::/64'", true);
        check("cidr('10.0.0.0/24').prefixLength() == 24", true);
        check("cidr('0.0.0.0/0').containsIP('1.2.3.4')", true);
        check("cidr('10.0.0.0/8') == cidr('10.0.0.0/8')", true);
        check_err(
            "cidr('10.0.0.0').prefixLength() == 8",
            "network address parse error during conversion from string: netip.ParsePrefix(\"10.0.0.0\"): invalid prefix",
        );
    }
}
