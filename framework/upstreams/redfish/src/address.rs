//! BMC addresses as Metal3 writes them (`BareMetalHost.spec.bmc.address`), parsed into what a
//! Redfish client needs: the base URL of the Redfish service and the path of one system.
//!
//! The rules follow baremetal-operator's `pkg/hardwareutils/bmc`: the scheme names the BMC type,
//! optionally with `+http` or `+https` for the transport (HTTPS when it is left out); the path,
//! when it is not empty and not just `/redfish/v1`, is the system's resource path
//! (`redfish_system_id` in Ironic). A bare `host` or `host:port` is IPMI, as in Metal3. IPMI and
//! the other non-Redfish BMC types are recognised and refused with an error naming the scheme.
//!
//! Start with [`BmcAddress::parse`].

use std::fmt;
use std::net::IpAddr;

/// Why a BMC address cannot be used for Redfish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddressError {
    /// The address is empty.
    #[error("missing BMC address")]
    Missing,
    /// The address is not a URL (nor `host[:port]`).
    #[error("failed to parse BMC address {address:?}: {reason}")]
    Malformed {
        /// The address as given.
        address: String,
        /// What the URL parser said.
        reason: String,
    },
    /// The host is neither an IP address nor a valid DNS name.
    #[error("BMC address {address:?}: hostname/IP {host:?} is invalid")]
    InvalidHost {
        /// The address as given.
        address: String,
        /// The host part.
        host: String,
    },
    /// A BMC type Metal3 knows but which is not Redfish (IPMI, iRMC, iLO 4, libvirt, …).
    #[error(
        "BMC address {address:?} uses {scheme}://, which is not Redfish; use redfish://, \
         redfish+http://, redfish+https://, redfish-virtualmedia://, idrac-redfish:// or \
         ilo5-redfish:// for a Redfish BMC"
    )]
    NotRedfish {
        /// The address as given.
        address: String,
        /// Its scheme (BMC type).
        scheme: String,
    },
    /// A scheme that names no BMC type at all.
    #[error("BMC address {address:?}: unknown BMC type {scheme:?}")]
    UnknownScheme {
        /// The address as given.
        address: String,
        /// Its scheme.
        scheme: String,
    },
}

/// The Redfish flavours Metal3 knows, by the scheme without its `+http`/`+https` suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BmcType {
    /// `redfish://`: generic Redfish, iPXE boot.
    Redfish,
    /// `redfish-virtualmedia://`: generic Redfish, booting from virtual media.
    RedfishVirtualMedia,
    /// `redfish-uefihttp://`: generic Redfish, UEFI HTTP boot.
    RedfishUefiHttp,
    /// `idrac-redfish://`: Dell iDRAC over Redfish.
    IdracRedfish,
    /// `idrac-virtualmedia://`: Dell iDRAC, booting from virtual media.
    IdracVirtualMedia,
    /// `ilo5-redfish://`: HPE iLO 5 over Redfish.
    Ilo5Redfish,
    /// `ilo5-virtualmedia://`: HPE iLO 5, booting from virtual media.
    Ilo5VirtualMedia,
}

impl BmcType {
    /// The scheme name Metal3 uses, without transport suffix.
    pub fn scheme(self) -> &'static str {
        match self {
            Self::Redfish => "redfish",
            Self::RedfishVirtualMedia => "redfish-virtualmedia",
            Self::RedfishUefiHttp => "redfish-uefihttp",
            Self::IdracRedfish => "idrac-redfish",
            Self::IdracVirtualMedia => "idrac-virtualmedia",
            Self::Ilo5Redfish => "ilo5-redfish",
            Self::Ilo5VirtualMedia => "ilo5-virtualmedia",
        }
    }

    /// Whether Metal3 boots this type from virtual media (and so needs the boot MAC up front).
    pub fn uses_virtual_media(self) -> bool {
        matches!(
            self,
            Self::RedfishVirtualMedia | Self::IdracVirtualMedia | Self::Ilo5VirtualMedia
        )
    }

    fn from_scheme(scheme: &str) -> Option<Self> {
        Some(match scheme {
            "redfish" => Self::Redfish,
            "redfish-virtualmedia" => Self::RedfishVirtualMedia,
            "redfish-uefihttp" => Self::RedfishUefiHttp,
            "idrac-redfish" => Self::IdracRedfish,
            "idrac-virtualmedia" => Self::IdracVirtualMedia,
            "ilo5-redfish" => Self::Ilo5Redfish,
            "ilo5-virtualmedia" => Self::Ilo5VirtualMedia,
            _ => return None,
        })
    }
}

/// BMC types Metal3 accepts that do not speak Redfish.
const NON_REDFISH: &[&str] = &["ipmi", "libvirt", "idrac", "irmc", "ilo4", "ilo5", "ibmc"];

/// A parsed Redfish BMC address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BmcAddress {
    original: String,
    bmc_type: BmcType,
    https: bool,
    host: String,
    port: Option<u16>,
    system_path: Option<String>,
}

impl BmcAddress {
    /// Parses an address as Metal3 does and keeps it only if it is a Redfish one.
    pub fn parse(address: &str) -> Result<Self, AddressError> {
        let address = address.trim();
        if address.is_empty() {
            return Err(AddressError::Missing);
        }
        let malformed = |reason: String| AddressError::Malformed {
            address: address.to_owned(),
            reason,
        };
        // Metal3: no scheme at all means IPMI (`host` or `host:port`).
        let Some((scheme, _)) = address.split_once("://") else {
            if is_host_port(address) {
                return Err(AddressError::NotRedfish {
                    address: address.to_owned(),
                    scheme: "ipmi".into(),
                });
            }
            return Err(malformed("expected SCHEME://HOST[:PORT][/PATH]".into()));
        };
        let scheme = scheme.to_ascii_lowercase();
        let (kind, transport) = match scheme.split_once('+') {
            Some((kind, transport)) => (kind, Some(transport)),
            None => (scheme.as_str(), None),
        };
        let Some(bmc_type) = BmcType::from_scheme(kind) else {
            if NON_REDFISH.contains(&kind) {
                return Err(AddressError::NotRedfish {
                    address: address.to_owned(),
                    scheme,
                });
            }
            return Err(AddressError::UnknownScheme {
                address: address.to_owned(),
                scheme,
            });
        };
        let https = match transport {
            None | Some("https") => true,
            Some("http") => false,
            Some(_) => {
                return Err(AddressError::UnknownScheme {
                    address: address.to_owned(),
                    scheme,
                });
            }
        };
        // Re-parse with a scheme the URL crate treats as special, so hosts are normalised.
        let rest = &address[scheme.len() + 3..];
        let url =
            url::Url::parse(&format!("http://{rest}")).map_err(|e| malformed(e.to_string()))?;
        let host = match url.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(host) => host.to_string(),
            None => return Err(malformed("no host".into())),
        };
        check_host(&host).map_err(|()| AddressError::InvalidHost {
            address: address.to_owned(),
            host: host.clone(),
        })?;
        // `url` drops the port when it is the scheme's default; keep what was written.
        let port = url.port().or_else(|| {
            let authority = rest.split('/').next().unwrap_or_default();
            authority
                .rsplit_once(':')
                .filter(|(_, p)| !p.contains(']'))
                .and_then(|(_, p)| p.parse().ok())
        });
        let path = url.path().trim_end_matches('/');
        let system_path =
            (!path.is_empty() && path.trim_matches('/') != "redfish/v1").then(|| path.to_owned());
        Ok(Self {
            original: address.to_owned(),
            bmc_type,
            https,
            host,
            port,
            system_path,
        })
    }

    /// The Redfish flavour.
    pub fn bmc_type(&self) -> BmcType {
        self.bmc_type
    }

    /// Whether the transport is HTTPS (the default) rather than plain HTTP.
    pub fn is_https(&self) -> bool {
        self.https
    }

    /// The host name or IP address (IPv6 without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, when the address names one.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The system's resource path (e.g. `/redfish/v1/Systems/1`), when the address names one.
    pub fn system_path(&self) -> Option<&str> {
        self.system_path.as_deref()
    }

    /// The base URL of the Redfish service, e.g. `https://10.0.0.5:8000` (what Ironic calls
    /// `redfish_address`).
    pub fn base_url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        let host = if self.host.parse::<std::net::Ipv6Addr>().is_ok() {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(port) => format!("{scheme}://{host}:{port}"),
            None => format!("{scheme}://{host}"),
        }
    }
}

impl fmt::Display for BmcAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.original)
    }
}

impl std::str::FromStr for BmcAddress {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// `host`, `host:port`, `[v6]:port` or a bare IP: what Metal3 takes for an IPMI address.
fn is_host_port(address: &str) -> bool {
    if address.parse::<IpAddr>().is_ok() || address.parse::<std::net::SocketAddr>().is_ok() {
        return true;
    }
    let (host, port) = match address.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (address, None),
    };
    port.is_none_or(|p| p.parse::<u16>().is_ok()) && check_host(host).is_ok()
}

/// Metal3's check: an IP address or a DNS name of valid labels.
fn check_host(host: &str) -> Result<(), ()> {
    if host.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if host.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (address, type, https, host, port, system path)
    fn check(address: &str, expected: (BmcType, bool, &str, Option<u16>, Option<&str>)) {
        let parsed = BmcAddress::parse(address).unwrap_or_else(|e| panic!("{address}: {e}"));
        let got = (
            parsed.bmc_type(),
            parsed.is_https(),
            parsed.host(),
            parsed.port(),
            parsed.system_path(),
        );
        assert_eq!(got, expected, "{address}");
    }

    #[test]
    fn redfish_schemes_as_metal3_parses_them() {
        use BmcType::*;
        check(
            "redfish://192.168.122.1:8000/redfish/v1/Systems/1",
            (
                Redfish,
                true,
                "192.168.122.1",
                Some(8000),
                Some("/redfish/v1/Systems/1"),
            ),
        );
        check(
            "redfish+http://bmc.example.com",
            (Redfish, false, "bmc.example.com", None, None),
        );
        check(
            "redfish+https://bmc:443/redfish/v1/",
            (Redfish, true, "bmc", Some(443), None),
        );
        check(
            "redfish-virtualmedia://[fe80::fc33:62ff:fe83:8a76]:8000/redfish/v1/Systems/abc",
            (
                RedfishVirtualMedia,
                true,
                "fe80::fc33:62ff:fe83:8a76",
                Some(8000),
                Some("/redfish/v1/Systems/abc"),
            ),
        );
        check(
            "idrac-redfish://10.0.0.5/redfish/v1/Systems/System.Embedded.1",
            (
                IdracRedfish,
                true,
                "10.0.0.5",
                None,
                Some("/redfish/v1/Systems/System.Embedded.1"),
            ),
        );
        check(
            "ilo5-redfish+http://ilo:80/redfish/v1/Systems/1",
            (
                Ilo5Redfish,
                false,
                "ilo",
                Some(80),
                Some("/redfish/v1/Systems/1"),
            ),
        );
        check("REDFISH+HTTP://h:1", (Redfish, false, "h", Some(1), None));
    }

    #[test]
    fn base_url_keeps_the_transport_and_port() {
        let a = BmcAddress::parse("redfish+http://127.0.0.1:8000/redfish/v1/Systems/x").unwrap();
        assert_eq!(a.base_url(), "http://127.0.0.1:8000");
        let a = BmcAddress::parse("redfish-virtualmedia://[::1]:8443/x").unwrap();
        assert_eq!(a.base_url(), "https://[::1]:8443");
        assert!(a.bmc_type().uses_virtual_media());
        let a = BmcAddress::parse("redfish://bmc").unwrap();
        assert_eq!(a.base_url(), "https://bmc");
        assert_eq!(a.to_string(), "redfish://bmc");
    }

    #[test]
    fn ipmi_and_other_types_are_refused_naming_the_scheme() {
        for (address, scheme) in [
            ("ipmi://192.168.122.1:6233", "ipmi"),
            ("192.168.122.1", "ipmi"),
            ("192.168.122.1:623", "ipmi"),
            ("[fe80::1]:623", "ipmi"),
            ("bmc.example.com", "ipmi"),
            ("libvirt://192.168.122.1", "libvirt"),
            ("irmc://bmc", "irmc"),
            ("idrac://bmc", "idrac"),
        ] {
            let err = BmcAddress::parse(address).unwrap_err();
            assert_eq!(
                err,
                AddressError::NotRedfish {
                    address: address.into(),
                    scheme: scheme.into()
                }
            );
            assert!(err.to_string().contains(&format!("{scheme}://")), "{err}");
        }
    }

    #[test]
    fn bad_addresses_say_what_is_wrong() {
        assert_eq!(BmcAddress::parse("  "), Err(AddressError::Missing));
        assert!(matches!(
            BmcAddress::parse("gopher://bmc"),
            Err(AddressError::UnknownScheme { scheme, .. }) if scheme == "gopher"
        ));
        assert!(matches!(
            BmcAddress::parse("redfish+ftp://bmc"),
            Err(AddressError::UnknownScheme { scheme, .. }) if scheme == "redfish+ftp"
        ));
        assert!(matches!(
            BmcAddress::parse("redfish://bad_host!/x"),
            Err(AddressError::InvalidHost { .. } | AddressError::Malformed { .. })
        ));
        assert!(matches!(
            BmcAddress::parse("redfish:/bmc"),
            Err(AddressError::Malformed { .. })
        ));
        assert!(matches!(
            BmcAddress::parse("redfish://"),
            Err(AddressError::Malformed { .. })
        ));
        assert!(matches!(
            BmcAddress::parse("redfish://h:99999"),
            Err(AddressError::Malformed { .. })
        ));
    }
}
