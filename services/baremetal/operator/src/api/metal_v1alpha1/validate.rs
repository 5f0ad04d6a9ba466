// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The rules a Server's spec must keep, in Rust, with the messages of the CEL rules in the
//! CRD schema: the controller runs [`validate`] before it touches Metal3 (CRDs installed
//! without the rules, API servers that do not evaluate them) and the backend runs it (and
//! [`validate_update`]) before it writes, so a client gets the same message from kubectl and
//! from the API. Each message starts with the field it is about.
//!
//! BMC addresses are parsed as Metal3 parses them ([`mni_redfish::BmcAddress`]): the Redfish
//! schemes are pre-flighted by the operator; `ipmi://` and Metal3's other non-Redfish schemes
//! are accepted and handed to Metal3 as they are. What needs other objects — the credentials
//! Secret, the user-data Secret, another server with the same BMC — is checked by the
//! controller and reported as a condition.

use mni_redfish::{AddressError, BmcAddress};

use super::{Image, RootDeviceHints, ServerSpec};

/// The checksum types Metal3 accepts.
pub const CHECKSUM_TYPES: &[&str] = &["md5", "sha256", "sha512", "auto"];

/// The image formats Metal3 accepts.
pub const IMAGE_FORMATS: &[&str] = &["raw", "qcow2", "vdi", "vmdk", "live-iso"];

/// One broken rule; its message names the field and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// A BMC address with a scheme Metal3 does not know.
    #[error(
        "bmc.address: {0} is not a BMC address Metal3 supports (SCHEME://HOST[:PORT][/PATH] with a scheme such as redfish, redfish+http, redfish-virtualmedia, idrac-redfish, ilo5-redfish or ipmi)"
    )]
    BmcScheme(String),
    /// A BMC address that does not parse.
    #[error("bmc.address: {address} is malformed: {reason}")]
    BmcMalformed {
        /// The address.
        address: String,
        /// What is wrong.
        reason: String,
    },
    /// An empty credentials Secret name.
    #[error("bmc.credentialsName: must name a Secret with the keys username and password")]
    NoCredentials,
    /// A boot MAC that is not one.
    #[error("bootMACAddress: {0} is not a MAC address (six hex pairs separated by colons)")]
    Mac(String),
    /// An image URL that is not http(s).
    #[error("image.url: {0} is not an http:// or https:// URL")]
    ImageUrl(String),
    /// An image without checksum.
    #[error(
        "image.checksum: required (the image's checksum, or the URL of a checksum file) unless format is live-iso"
    )]
    NoChecksum,
    /// An unknown checksum type.
    #[error(
        "image.checksumType: unknown checksum type {0}; choose one of md5, sha256, sha512, auto"
    )]
    ChecksumType(String),
    /// An unknown image format.
    #[error("image.format: unknown format {0}; choose one of raw, qcow2, vdi, vmdk, live-iso")]
    Format(String),
    /// A device name that is not a path.
    #[error("rootDeviceHints.deviceName: {0} is not a device path (/dev/…)")]
    DeviceName(String),
    /// An HCTL that is not one.
    #[error("rootDeviceHints.hctl: {0} is not Host:Channel:Target:Lun (e.g. 0:0:0:0)")]
    Hctl(String),
    /// A negative minimum size.
    #[error("rootDeviceHints.minSizeGigabytes: {0} is negative")]
    MinSize(i64),
    /// A host label that Kubernetes would not accept.
    #[error("hostLabels: {0}")]
    Label(String),
    /// The BMC address changed under an image.
    #[error(
        "bmc.address: cannot change while the server has an image; deprovision it first (remove spec.image)"
    )]
    AddressChanged,
    /// The image changed under a provisioned server.
    #[error(
        "image.url: cannot change the image of a provisioned server; deprovision it first (remove spec.image)"
    )]
    ImageChanged,
}

/// Every rule `spec` breaks, in the order of the spec (empty when it is valid).
#[must_use]
pub fn validate(spec: &ServerSpec) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    if let Err(e) = check_address(&spec.bmc.address) {
        errors.push(e);
    }
    if spec.bmc.credentials_name.trim().is_empty() {
        errors.push(ValidationError::NoCredentials);
    }
    if !is_mac(&spec.boot_mac_address) {
        errors.push(ValidationError::Mac(spec.boot_mac_address.clone()));
    }
    if let Some(image) = &spec.image {
        check_image(image, &mut errors);
    }
    if let Some(hints) = &spec.root_device_hints {
        check_hints(hints, &mut errors);
    }
    for (key, value) in &spec.host_labels {
        if let Err(e) = check_label(key, value) {
            errors.push(ValidationError::Label(e));
        }
    }
    errors
}

/// The rules of a change from `old` to `new`: neither the BMC address nor the image URL of a
/// server with an image changes (deprovision first), as the CRD's transition rules say.
#[must_use]
pub fn validate_update(old: &ServerSpec, new: &ServerSpec) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    if let Some(old_image) = &old.image {
        if old.bmc.address != new.bmc.address {
            errors.push(ValidationError::AddressChanged);
        }
        if new.image.as_ref().is_some_and(|i| i.url != old_image.url) {
            errors.push(ValidationError::ImageChanged);
        }
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

/// The parsed address when it is a Redfish one, `None` for Metal3's other schemes (`ipmi://`
/// and the like), `Err` when Metal3 would not accept it.
pub fn parse_address(address: &str) -> Result<Option<BmcAddress>, ValidationError> {
    match BmcAddress::parse(address) {
        Ok(parsed) => Ok(Some(parsed)),
        Err(AddressError::NotRedfish { .. }) if address.contains("://") => Ok(None),
        Err(AddressError::NotRedfish { .. } | AddressError::UnknownScheme { .. }) => {
            Err(ValidationError::BmcScheme(address.to_owned()))
        }
        Err(AddressError::Missing) => Err(ValidationError::BmcScheme(address.to_owned())),
        Err(e) => Err(ValidationError::BmcMalformed {
            address: address.to_owned(),
            reason: e.to_string(),
        }),
    }
}

fn check_address(address: &str) -> Result<(), ValidationError> {
    parse_address(address).map(|_| ())
}

/// Whether `mac` is six hex pairs separated by colons.
#[must_use]
pub fn is_mac(mac: &str) -> bool {
    let parts: Vec<&str> = mac.split(':').collect();
    parts.len() == 6
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

fn check_image(image: &Image, errors: &mut Vec<ValidationError>) {
    let url_ok = ["http://", "https://"].iter().any(|s| {
        image
            .url
            .strip_prefix(s)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
    });
    if !url_ok {
        errors.push(ValidationError::ImageUrl(image.url.clone()));
    }
    let live = image.format.as_deref() == Some("live-iso");
    if !live && image.checksum.as_deref().unwrap_or_default().is_empty() {
        errors.push(ValidationError::NoChecksum);
    }
    if let Some(t) = &image.checksum_type
        && !CHECKSUM_TYPES.contains(&t.as_str())
    {
        errors.push(ValidationError::ChecksumType(t.clone()));
    }
    if let Some(f) = &image.format
        && !IMAGE_FORMATS.contains(&f.as_str())
    {
        errors.push(ValidationError::Format(f.clone()));
    }
}

fn check_hints(hints: &RootDeviceHints, errors: &mut Vec<ValidationError>) {
    if let Some(name) = &hints.device_name
        && !name.starts_with("/dev/")
    {
        errors.push(ValidationError::DeviceName(name.clone()));
    }
    if let Some(hctl) = &hints.hctl {
        let parts: Vec<&str> = hctl.split(':').collect();
        let ok = parts.len() == 4
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if !ok {
            errors.push(ValidationError::Hctl(hctl.clone()));
        }
    }
    if let Some(size) = hints.min_size_gigabytes
        && size < 0
    {
        errors.push(ValidationError::MinSize(size));
    }
}

/// A label key (`[prefix/]name`) and value as Kubernetes accepts them.
fn check_label(key: &str, value: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty()
            || prefix.len() > 253
            || !prefix
                .split('.')
                .all(|l| is_name(l, 63) && l.chars().all(|c| !c.is_ascii_uppercase())))
    {
        return Err(format!("key {key}: prefix {prefix} is not a DNS subdomain"));
    }
    if !is_name(name, 63) {
        return Err(format!(
            "key {key}: name part must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ));
    }
    if !value.is_empty() && !is_name(value, 63) {
        return Err(format!(
            "value {value} of {key}: must be at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ));
    }
    Ok(())
}

fn is_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::metal_v1alpha1::Bmc;

    fn spec() -> ServerSpec {
        ServerSpec {
            bmc: Bmc {
                address: "redfish+http://127.0.0.1:8000/redfish/v1/Systems/1".to_owned(),
                credentials_name: "bmc".to_owned(),
                disable_certificate_verification: false,
            },
            boot_mac_address: "52:54:00:00:00:01".to_owned(),
            ..ServerSpec::default()
        }
    }

    #[test]
    fn a_plain_server_is_valid_and_every_metal3_scheme_parses() {
        assert_eq!(validate(&spec()), vec![]);
        for address in [
            "redfish://bmc.example.com/redfish/v1/Systems/1",
            "redfish+https://10.0.0.5:8443/redfish/v1/Systems/1",
            "redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1",
            "idrac-redfish://10.0.0.5/redfish/v1/Systems/System.Embedded.1",
            "ilo5-redfish://10.0.0.5/redfish/v1/Systems/1",
            "ipmi://192.168.122.1:6233",
        ] {
            let mut s = spec();
            s.bmc.address = address.to_owned();
            assert_eq!(validate(&s), vec![], "{address}");
        }
    }

    #[test]
    fn bad_input_names_the_field() {
        let mut s = spec();
        s.bmc.address = "ftp://10.0.0.5".to_owned();
        s.boot_mac_address = "52:54:00:00:00".to_owned();
        s.image = Some(Image {
            url: "file:///image.qcow2".to_owned(),
            checksum: None,
            checksum_type: Some("crc32".to_owned()),
            format: Some("iso".to_owned()),
        });
        s.root_device_hints = Some(RootDeviceHints {
            device_name: Some("sda".to_owned()),
            hctl: Some("0:0:0".to_owned()),
            min_size_gigabytes: Some(-1),
            ..RootDeviceHints::default()
        });
        s.host_labels.insert("bad key!".to_owned(), "x".to_owned());
        let text = message(&validate(&s));
        for field in [
            "bmc.address: ftp://10.0.0.5",
            "bootMACAddress: 52:54:00:00:00 ",
            "image.url:",
            "image.checksum: required",
            "image.checksumType: unknown checksum type crc32",
            "image.format: unknown format iso",
            "rootDeviceHints.deviceName: sda",
            "rootDeviceHints.hctl: 0:0:0 ",
            "rootDeviceHints.minSizeGigabytes: -1",
            "hostLabels: key bad key!",
        ] {
            assert!(text.contains(field), "{field} in {text}");
        }
    }

    #[test]
    fn a_provisioned_server_keeps_its_bmc_and_image() {
        let mut old = spec();
        old.image = Some(Image {
            url: "http://images/a.qcow2".to_owned(),
            checksum: Some("abc".to_owned()),
            ..Image::default()
        });
        let mut new = old.clone();
        new.bmc.address = "redfish://10.0.0.9/redfish/v1/Systems/1".to_owned();
        new.image.as_mut().unwrap().url = "http://images/b.qcow2".to_owned();
        assert_eq!(
            validate_update(&old, &new),
            vec![
                ValidationError::AddressChanged,
                ValidationError::ImageChanged
            ]
        );
        // Deprovisioning (removing the image) is allowed, and then the address may change.
        new.image = None;
        assert_eq!(
            validate_update(&old, &new),
            vec![ValidationError::AddressChanged]
        );
        assert_eq!(validate_update(&new, &spec()), vec![]);
    }
}
