// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The Metal3 objects of a Server, as pure functions: one BareMetalHost named like the
//! Server and one BMC Secret named `<server>-bmc`, both labelled [`SERVER_LABEL`]` = <server>`
//! and owned by the Server.
//!
//! The BMC Secret is a copy of the tenant's credentials Secret (`username`, `password`) that
//! the operator owns: Metal3 takes ownership of the Secret a host names (it adds an owner
//! reference and a finalizer of its own), so the tenant's Secret stays the tenant's. It carries
//! `environment.metal3.io: baremetal`, the label baremetal-operator's cache selects Secrets by.
//!
//! A reboot is handed to Metal3 as two annotations on the host, written with a merge patch
//! (not the server-side apply of the host, so Metal3 can remove its own and the next apply does
//! not put it back): [`METAL3_REBOOT_ANNOTATION`], which Metal3 removes once it has powered
//! the host off and on again, and [`REBOOT_ID_ANNOTATION`], which says which request that was
//! ([`reboot_progress`] reads both).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::ObjectMeta;
use mni_metal3::v1alpha1::{
    BareMetalHost, BareMetalHostSpec, Bmc, ChecksumType, Image, ImageFormat, RootDeviceHints,
    SecretReference,
};

use crate::api::metal_v1alpha1::RebootRequest;
use crate::api::metal_v1alpha1::Server;

/// The label on every object the operator makes for a Server: the Server's name.
pub const SERVER_LABEL: &str = "metal.mni.dev/server";

/// The label baremetal-operator selects BMC Secrets by.
pub const METAL3_SECRET_LABEL: &str = "environment.metal3.io";

/// The name of a Server's BareMetalHost.
#[must_use]
pub fn host_name(server: &str) -> String {
    server.to_owned()
}

/// The name of a Server's BMC Secret.
#[must_use]
pub fn bmc_secret_name(server: &str) -> String {
    format!("{server}-bmc")
}

fn labels(obj: &Server) -> BTreeMap<String, String> {
    BTreeMap::from([(SERVER_LABEL.to_owned(), obj.name_any())])
}

/// The BMC Secret Metal3 reads the credentials from.
#[must_use]
pub fn bmc_secret(obj: &Server, username: &[u8], password: &[u8]) -> Secret {
    let mut labels = labels(obj);
    labels.insert(METAL3_SECRET_LABEL.to_owned(), "baremetal".to_owned());
    Secret {
        metadata: ObjectMeta {
            name: Some(bmc_secret_name(&obj.name_any())),
            namespace: obj.namespace(),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(BTreeMap::from([
            ("username".to_owned(), ByteString(username.to_vec())),
            ("password".to_owned(), ByteString(password.to_vec())),
        ])),
        ..Secret::default()
    }
}

/// The BareMetalHost: the Server's BMC (through the BMC Secret), boot MAC, power, image,
/// user data and root device hints, labelled with the host labels and [`SERVER_LABEL`].
#[must_use]
pub fn bare_metal_host(obj: &Server) -> BareMetalHost {
    let name = obj.name_any();
    let spec = &obj.spec;
    let mut labels: BTreeMap<String, String> = spec.host_labels.clone();
    labels.extend(self::labels(obj));
    let mut host = BareMetalHost::new(
        &host_name(&name),
        BareMetalHostSpec {
            bmc: Some(Bmc {
                address: spec.bmc.address.clone(),
                credentials_name: bmc_secret_name(&name),
                disable_certificate_verification: spec
                    .bmc
                    .disable_certificate_verification
                    .then_some(true),
            }),
            boot_mac_address: Some(spec.boot_mac_address.to_ascii_lowercase()),
            online: spec.online,
            image: spec.image.as_ref().map(|i| Image {
                url: i.url.clone(),
                checksum: i.checksum.clone(),
                checksum_type: i.checksum_type.as_deref().and_then(checksum_type),
                format: i.format.as_deref().and_then(image_format),
            }),
            user_data: spec.user_data.as_ref().map(|s| SecretReference {
                name: Some(s.name.clone()),
                namespace: obj.namespace(),
            }),
            root_device_hints: spec.root_device_hints.as_ref().map(|h| RootDeviceHints {
                device_name: h.device_name.clone(),
                hctl: h.hctl.clone(),
                model: h.model.clone(),
                vendor: h.vendor.clone(),
                serial_number: h.serial_number.clone(),
                min_size_gigabytes: h.min_size_gigabytes,
                wwn: h.wwn.clone(),
                wwn_with_extension: h.wwn_with_extension.clone(),
                wwn_vendor_extension: h.wwn_vendor_extension.clone(),
                rotational: h.rotational,
            }),
            description: Some(format!("Server {name} of mNi's bare-metal service")),
            ..BareMetalHostSpec::default()
        },
    );
    host.metadata.namespace = obj.namespace();
    host.metadata.labels = Some(labels);
    host
}

/// Metal3's reboot annotation: present, the host is powered off and on again; Metal3 removes
/// it once power is restored. Its value is `{"mode":"soft"}`, `{"mode":"hard"}` or empty.
pub const METAL3_REBOOT_ANNOTATION: &str = "reboot.metal3.io";

/// The id of the reboot request the host's [`METAL3_REBOOT_ANNOTATION`] was set for; kept
/// after Metal3 removed that, so a request is handed over once.
pub const REBOOT_ID_ANNOTATION: &str = "metal.mni.dev/reboot-id";

/// The merge patch that hands `request` to Metal3.
#[must_use]
pub fn reboot_patch(request: &RebootRequest) -> serde_json::Value {
    let value = request
        .mode
        .map(|m| serde_json::json!({ "mode": m.as_str() }).to_string())
        .unwrap_or_default();
    serde_json::json!({ "metadata": { "annotations": {
        METAL3_REBOOT_ANNOTATION: value,
        REBOOT_ID_ANNOTATION: request.id,
    } } })
}

/// How far Metal3 got with the reboot request `id`, as `host` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RebootProgress {
    /// Not handed to Metal3 yet.
    NotStarted,
    /// Metal3 has it: the annotation is still there.
    Rebooting,
    /// Metal3 powered the host off and on again and removed the annotation.
    Done,
}

/// How far Metal3 got with the reboot request `id` on `host`.
#[must_use]
pub fn reboot_progress(host: &BareMetalHost, id: &str) -> RebootProgress {
    let annotations = host.annotations();
    if annotations.get(REBOOT_ID_ANNOTATION).map(String::as_str) != Some(id) {
        RebootProgress::NotStarted
    } else if annotations.contains_key(METAL3_REBOOT_ANNOTATION) {
        RebootProgress::Rebooting
    } else {
        RebootProgress::Done
    }
}

fn checksum_type(value: &str) -> Option<ChecksumType> {
    Some(match value {
        "md5" => ChecksumType::Md5,
        "sha256" => ChecksumType::Sha256,
        "sha512" => ChecksumType::Sha512,
        "auto" => ChecksumType::Auto,
        _ => return None,
    })
}

fn image_format(value: &str) -> Option<ImageFormat> {
    Some(match value {
        "raw" => ImageFormat::Raw,
        "qcow2" => ImageFormat::Qcow2,
        "vdi" => ImageFormat::Vdi,
        "vmdk" => ImageFormat::Vmdk,
        "live-iso" => ImageFormat::LiveIso,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::metal_v1alpha1::Bmc as ServerBmc;
    use crate::api::metal_v1alpha1::Image as ServerImage;
    use crate::api::metal_v1alpha1::ServerSpec;

    fn server() -> Server {
        let mut obj = Server::new(
            "rack1-7",
            ServerSpec {
                bmc: ServerBmc {
                    address: "redfish://10.0.0.7/redfish/v1/Systems/1".to_owned(),
                    credentials_name: "rack1-7-credentials".to_owned(),
                    disable_certificate_verification: true,
                },
                boot_mac_address: "52:54:00:AA:BB:CC".to_owned(),
                online: true,
                image: Some(ServerImage {
                    url: "http://images/os.qcow2".to_owned(),
                    checksum: Some("http://images/os.qcow2.sha256sum".to_owned()),
                    checksum_type: Some("sha256".to_owned()),
                    format: Some("qcow2".to_owned()),
                }),
                host_labels: BTreeMap::from([("rack".to_owned(), "r1".to_owned())]),
                ..ServerSpec::default()
            },
        );
        obj.metadata.namespace = Some("tenant".to_owned());
        obj
    }

    #[test]
    fn a_reboot_is_handed_over_once_and_done_when_metal3_removes_its_annotation() {
        use crate::api::metal_v1alpha1::RebootMode;
        let request = RebootRequest {
            id: "2026-01-01T00:00:00Z".to_owned(),
            mode: Some(RebootMode::Hard),
        };
        let patch = reboot_patch(&request);
        let annotations = &patch["metadata"]["annotations"];
        assert_eq!(annotations[METAL3_REBOOT_ANNOTATION], r#"{"mode":"hard"}"#);
        assert_eq!(annotations[REBOOT_ID_ANNOTATION], request.id.as_str());
        let soft_then_hard = reboot_patch(&RebootRequest {
            mode: None,
            ..request.clone()
        });
        assert_eq!(
            soft_then_hard["metadata"]["annotations"][METAL3_REBOOT_ANNOTATION],
            ""
        );

        let mut host = bare_metal_host(&server());
        assert_eq!(
            reboot_progress(&host, &request.id),
            RebootProgress::NotStarted
        );
        let set = |host: &mut BareMetalHost, k: &str, v: &str| {
            host.annotations_mut().insert(k.to_owned(), v.to_owned());
        };
        set(&mut host, REBOOT_ID_ANNOTATION, "an older one");
        set(&mut host, METAL3_REBOOT_ANNOTATION, "");
        assert_eq!(
            reboot_progress(&host, &request.id),
            RebootProgress::NotStarted
        );
        set(&mut host, REBOOT_ID_ANNOTATION, &request.id);
        assert_eq!(
            reboot_progress(&host, &request.id),
            RebootProgress::Rebooting
        );
        host.annotations_mut().remove(METAL3_REBOOT_ANNOTATION);
        assert_eq!(reboot_progress(&host, &request.id), RebootProgress::Done);
    }

    #[test]
    fn the_host_carries_the_spec_the_labels_and_the_bmc_secret() {
        let host = bare_metal_host(&server());
        assert_eq!(host.name_any(), "rack1-7");
        assert_eq!(host.labels()["rack"], "r1");
        assert_eq!(host.labels()[SERVER_LABEL], "rack1-7");
        let json = serde_json::to_value(&host.spec).unwrap();
        assert_eq!(json["bmc"]["credentialsName"], "rack1-7-bmc");
        assert_eq!(json["bmc"]["disableCertificateVerification"], true);
        assert_eq!(json["bootMACAddress"], "52:54:00:aa:bb:cc");
        assert_eq!(json["online"], true);
        assert_eq!(json["image"]["checksumType"], "sha256");
        assert_eq!(json["image"]["format"], "qcow2");
        let secret = bmc_secret(&server(), b"admin", b"pw");
        assert_eq!(secret.name_any(), "rack1-7-bmc");
        assert_eq!(secret.labels()[METAL3_SECRET_LABEL], "baremetal");
        assert_eq!(
            secret.data.unwrap()["username"],
            ByteString(b"admin".to_vec())
        );
    }
}
