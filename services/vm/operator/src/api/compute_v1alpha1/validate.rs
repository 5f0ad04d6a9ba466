// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The rules an Instance's spec must keep, in Rust, with the messages of the CEL rules in the
//! CRD schema: the controller runs [`validate`] before it touches KubeVirt (CRDs installed
//! without the rules, API servers that do not evaluate them) and the backend runs it before it
//! writes, so a client gets the same message from kubectl and from the API. Each message
//! starts with the field it is about.
//!
//! What needs other objects — the SSH-key Secret, the VirtualPrivateCloud and its subnet, a
//! fixed address inside that subnet — is checked by the controller and reported as a
//! condition ([`check_address`] is the address rule).

use mni_core::formats::net::{Cidr, parse_ip};

use super::catalogue::{self, MAX_CORES, MAX_MEMORY_MIB};
use super::{BootDisk, HttpImport, InstanceSpec};

/// The run strategies an Instance may ask for.
pub const RUN_STRATEGIES: &[&str] = &["Always", "Halted", "Manual", "RerunOnFailure"];

/// The run strategy when the spec names none.
pub const DEFAULT_RUN_STRATEGY: &str = "Always";

/// One broken rule; its message names the field and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// Both an instance type and explicit resources.
    #[error("instanceType: set an instance type or resources, not both")]
    TypeAndResources,
    /// Neither an instance type nor explicit resources.
    #[error("instanceType: set an instance type (e.g. s1.small) or resources (cores and memory)")]
    NoSize,
    /// An instance type the catalogue does not have.
    #[error("instanceType: unknown instance type {name}; choose one of {choices}")]
    UnknownType {
        /// The name asked for.
        name: String,
        /// The catalogue's names.
        choices: String,
    },
    /// A run strategy KubeVirt does not have (or mNi does not offer).
    #[error(
        "runStrategy: unknown run strategy {0}; choose one of Always, Halted, Manual, RerunOnFailure"
    )]
    RunStrategy(String),
    /// Cores out of range.
    #[error("resources.cores: {0} is not between 1 and 32")]
    Cores(i64),
    /// Memory that is not a quantity of the allowed form.
    #[error("resources.memory: {0} is not a quantity in Mi or Gi (e.g. 4Gi)")]
    Memory(String),
    /// Memory above the limit.
    #[error("resources.memory: {0} is above the limit of 128Gi")]
    MemoryLimit(String),
    /// Both a container disk image and an import.
    #[error("bootDisk: set image or http, not both")]
    ImageAndImport,
    /// Neither a container disk image nor an import.
    #[error("bootDisk: set image (a container disk image) or http (an HTTP(S) URL to import)")]
    NoBootDisk,
    /// An empty image reference.
    #[error("bootDisk.image: must not be empty")]
    EmptyImage,
    /// An image reference that is not one.
    #[error("bootDisk.image: {0} is not a container image reference (REGISTRY/REPOSITORY:TAG)")]
    Image(String),
    /// An import URL that is not http(s).
    #[error("bootDisk.http.url: {0} is not an http:// or https:// URL")]
    ImportUrl(String),
    /// An import size that is not a quantity of the allowed form.
    #[error("bootDisk.http.size: {0} is not a quantity in Mi, Gi or Ti (e.g. 10Gi)")]
    ImportSize(String),
    /// A data disk name that is not a short DNS label.
    #[error("dataDisks: name {0} is not a DNS label of at most 40 characters")]
    DiskName(String),
    /// A data disk size that is not a quantity of the allowed form.
    #[error("dataDisks: disk {disk}: size {size} is not a quantity in Mi, Gi or Ti (e.g. 10Gi)")]
    DiskSize {
        /// The disk.
        disk: String,
        /// The size.
        size: String,
    },
    /// Two data disks with one name.
    #[error("dataDisks: name {0} is used more than once")]
    DuplicateDisk(String),
    /// A fixed address that is not an IP address.
    #[error("network.vpc.ip: {0} is not an IP address")]
    Ip(String),
    /// A fixed address outside the subnet.
    #[error("network.vpc.ip: {ip} is outside subnet {subnet} ({cidr})")]
    IpOutside {
        /// The address.
        ip: String,
        /// The subnet's name.
        subnet: String,
        /// The subnet's cidrBlock.
        cidr: String,
    },
}

/// Every rule `spec` breaks, in the order of the spec (empty when it is valid).
#[must_use]
pub fn validate(spec: &InstanceSpec) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    match (&spec.instance_type, &spec.resources) {
        (Some(_), Some(_)) => errors.push(ValidationError::TypeAndResources),
        (None, None) => errors.push(ValidationError::NoSize),
        _ => {}
    }
    if let Some(name) = &spec.instance_type
        && catalogue::find(name).is_none()
    {
        errors.push(ValidationError::UnknownType {
            name: name.clone(),
            choices: catalogue::names(),
        });
    }
    if let Some(strategy) = &spec.run_strategy
        && !RUN_STRATEGIES.contains(&strategy.as_str())
    {
        errors.push(ValidationError::RunStrategy(strategy.clone()));
    }
    if let Some(resources) = &spec.resources {
        if !(1..=MAX_CORES).contains(&resources.cores) {
            errors.push(ValidationError::Cores(resources.cores));
        }
        match catalogue::parse_mib(&resources.memory, &["Mi", "Gi"]) {
            None => errors.push(ValidationError::Memory(resources.memory.clone())),
            Some(mib) if mib > MAX_MEMORY_MIB => {
                errors.push(ValidationError::MemoryLimit(resources.memory.clone()));
            }
            Some(_) => {}
        }
    }
    check_boot_disk(&spec.boot_disk, &mut errors);
    let mut seen = Vec::new();
    for disk in &spec.data_disks {
        if !is_disk_name(&disk.name) {
            errors.push(ValidationError::DiskName(disk.name.clone()));
        }
        if catalogue::parse_mib(&disk.size, &["Mi", "Gi", "Ti"]).is_none() {
            errors.push(ValidationError::DiskSize {
                disk: disk.name.clone(),
                size: disk.size.clone(),
            });
        }
        if seen.contains(&&disk.name) {
            errors.push(ValidationError::DuplicateDisk(disk.name.clone()));
        }
        seen.push(&disk.name);
    }
    if let Some(ip) = spec
        .network
        .as_ref()
        .and_then(|n| n.vpc.as_ref())
        .and_then(|v| v.ip.as_ref())
        && parse_ip(ip).is_none()
    {
        errors.push(ValidationError::Ip(ip.clone()));
    }
    errors
}

/// The errors as one message, `; `-separated.
#[must_use]
pub fn message(errors: &[ValidationError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether fixed address `ip` is inside subnet `subnet` (`cidr_block`: a CIDR, or a v4 and a
/// v6 CIDR separated by a comma); `Err` names the field.
pub fn check_address(ip: &str, subnet: &str, cidr_block: &str) -> Result<(), ValidationError> {
    let Some(addr) = parse_ip(ip) else {
        return Err(ValidationError::Ip(ip.to_owned()));
    };
    let inside = cidr_block
        .split(',')
        .filter_map(|c| Cidr::parse(c).ok())
        .any(|c| c.contains(addr));
    if inside {
        Ok(())
    } else {
        Err(ValidationError::IpOutside {
            ip: ip.to_owned(),
            subnet: subnet.to_owned(),
            cidr: cidr_block.to_owned(),
        })
    }
}

fn check_boot_disk(disk: &BootDisk, errors: &mut Vec<ValidationError>) {
    match (&disk.image, &disk.http) {
        (Some(_), Some(_)) => errors.push(ValidationError::ImageAndImport),
        (None, None) => errors.push(ValidationError::NoBootDisk),
        _ => {}
    }
    match disk.image.as_deref() {
        Some("") => errors.push(ValidationError::EmptyImage),
        Some(image) if !is_image_reference(image) => {
            errors.push(ValidationError::Image(image.to_owned()));
        }
        _ => {}
    }
    if let Some(import) = &disk.http {
        check_import(import, errors);
    }
}

fn check_import(import: &HttpImport, errors: &mut Vec<ValidationError>) {
    if !is_http_url(&import.url) {
        errors.push(ValidationError::ImportUrl(import.url.clone()));
    }
    if catalogue::parse_mib(&import.size, &["Mi", "Gi", "Ti"]).is_none() {
        errors.push(ValidationError::ImportSize(import.size.clone()));
    }
}

/// `^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`.
fn is_disk_name(name: &str) -> bool {
    let b = name.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=40).contains(&b.len())
        && b.first().is_some_and(inner)
        && b.last().is_some_and(inner)
        && b.iter().all(|c| inner(c) || *c == b'-')
}

/// `^https?://[^/?#@ ]+([/?#].*)?$`: an http(s) URL with a host.
#[must_use]
pub fn is_http_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return false;
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..host_end];
    !host.is_empty() && !host.contains(['@', ' '])
}

/// The schema's image pattern, `^([a-z0-9.-]+(:[0-9]+)?/)?COMPONENT(/COMPONENT)*(:TAG)?(@sha256:HEX64)?$`
/// with COMPONENT `[a-z0-9]+([._-][a-z0-9]+)*` and TAG `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
#[must_use]
pub fn is_image_reference(image: &str) -> bool {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        let Some(hex) = digest.strip_prefix("sha256:") else {
            return false;
        };
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return false;
        }
    }
    let last_slash = rest.rfind('/');
    let (path, tag) = match rest.rfind(':') {
        Some(colon) if last_slash.is_none_or(|s| colon > s) => {
            (&rest[..colon], Some(&rest[colon + 1..]))
        }
        _ => (rest, None),
    };
    if let Some(tag) = tag {
        let b = tag.as_bytes();
        let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
        if b.is_empty()
            || b.len() > 128
            || !word(&b[0])
            || !b.iter().all(|c| word(c) || *c == b'.' || *c == b'-')
        {
            return false;
        }
    }
    let parts: Vec<&str> = path.split('/').collect();
    let (first, rest) = match parts.split_first() {
        Some(split) => split,
        None => return false,
    };
    let first_ok = is_component(first) || (!rest.is_empty() && is_registry(first));
    first_ok && rest.iter().all(|c| is_component(c))
}

/// `[a-z0-9]+([._-][a-z0-9]+)*`.
fn is_component(c: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let b = c.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter()
            .all(|&x| alnum(x) || matches!(x, b'.' | b'_' | b'-'))
        && !b
            .windows(2)
            .any(|w| matches!(w[0], b'.' | b'_' | b'-') && matches!(w[1], b'.' | b'_' | b'-'))
}

/// `[a-z0-9.-]+(:[0-9]+)?`.
fn is_registry(r: &str) -> bool {
    let (host, port) = match r.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (r, None),
    };
    !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::super::{DataDisk, InstanceNetwork, Resources, VpcAttachment};
    use super::*;

    fn valid() -> InstanceSpec {
        InstanceSpec {
            instance_type: Some("s1.small".to_owned()),
            boot_disk: BootDisk {
                image: Some("quay.io/containerdisks/fedora:41".to_owned()),
                http: None,
            },
            ..InstanceSpec::default()
        }
    }

    fn check(edit: impl FnOnce(&mut InstanceSpec), expected: &str) {
        let mut spec = valid();
        edit(&mut spec);
        assert_eq!(message(&validate(&spec)), expected);
    }

    #[test]
    fn a_valid_spec_passes() {
        check(|_| {}, "");
        check(
            |s| {
                s.instance_type = None;
                s.resources = Some(Resources {
                    cores: 2,
                    memory: "3072Mi".to_owned(),
                });
                s.boot_disk = BootDisk {
                    image: None,
                    http: Some(HttpImport {
                        url: "https://cloud.example.com/images/debian-12.qcow2".to_owned(),
                        size: "10Gi".to_owned(),
                        storage_class: None,
                    }),
                };
                s.data_disks = vec![DataDisk {
                    name: "data".to_owned(),
                    size: "1Ti".to_owned(),
                    storage_class: None,
                }];
                s.run_strategy = Some("Manual".to_owned());
            },
            "",
        );
    }

    #[test]
    fn bad_input_names_the_field() {
        check(
            |s| s.instance_type = Some("t2.micro".to_owned()),
            "instanceType: unknown instance type t2.micro; choose one of s1.small, s1.medium, s1.large, m1.large, m1.xlarge",
        );
        check(
            |s| {
                s.resources = Some(Resources {
                    cores: 0,
                    memory: "4GB".to_owned(),
                });
            },
            "instanceType: set an instance type or resources, not both; resources.cores: 0 is not between 1 and 32; resources.memory: 4GB is not a quantity in Mi or Gi (e.g. 4Gi)",
        );
        check(
            |s| {
                s.instance_type = None;
                s.resources = Some(Resources {
                    cores: 2,
                    memory: "129Gi".to_owned(),
                });
            },
            "resources.memory: 129Gi is above the limit of 128Gi",
        );
        check(
            |s| s.instance_type = None,
            "instanceType: set an instance type (e.g. s1.small) or resources (cores and memory)",
        );
        check(
            |s| s.boot_disk.image = Some(String::new()),
            "bootDisk.image: must not be empty",
        );
        check(
            |s| s.boot_disk.image = Some("Fedora Latest".to_owned()),
            "bootDisk.image: Fedora Latest is not a container image reference (REGISTRY/REPOSITORY:TAG)",
        );
        check(
            |s| {
                s.boot_disk.http = Some(HttpImport {
                    url: "ftp://example.com/x.img".to_owned(),
                    size: "10GB".to_owned(),
                    storage_class: None,
                });
            },
            "bootDisk: set image or http, not both; bootDisk.http.url: ftp://example.com/x.img is not an http:// or https:// URL; bootDisk.http.size: 10GB is not a quantity in Mi, Gi or Ti (e.g. 10Gi)",
        );
        check(
            |s| s.run_strategy = Some("Sometimes".to_owned()),
            "runStrategy: unknown run strategy Sometimes; choose one of Always, Halted, Manual, RerunOnFailure",
        );
        check(
            |s| {
                s.network = Some(InstanceNetwork {
                    vpc: Some(VpcAttachment {
                        name: "tenant".to_owned(),
                        subnet: "web".to_owned(),
                        ip: Some("10.0.1.300".to_owned()),
                    }),
                });
            },
            "network.vpc.ip: 10.0.1.300 is not an IP address",
        );
    }

    #[test]
    fn image_references() {
        for good in [
            "fedora",
            "quay.io/containerdisks/fedora:41",
            "localhost:5000/disks/cirros",
            "registry.example.com/a/b_c/d-e:v1.2",
            "cirros@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(is_image_reference(good), "{good}");
        }
        for bad in [
            "",
            "Fedora",
            "docker://fedora",
            "fedora:",
            "a//b",
            "fedora:tag with space",
            "fedora@sha256:12",
        ] {
            assert!(!is_image_reference(bad), "{bad}");
        }
    }

    #[test]
    fn fixed_addresses_must_be_in_the_subnet() {
        assert_eq!(check_address("10.0.1.20", "web", "10.0.1.0/24"), Ok(()));
        assert_eq!(
            check_address("fd00::5", "web", "10.0.1.0/24,fd00::/64"),
            Ok(())
        );
        assert_eq!(
            check_address("10.0.2.20", "web", "10.0.1.0/24").map_err(|e| e.to_string()),
            Err("network.vpc.ip: 10.0.2.20 is outside subnet web (10.0.1.0/24)".to_owned())
        );
    }
}
