//! `cdi.kubevirt.io/v1beta1`: the Containerized Data Importer's [`DataVolume`] — a
//! PersistentVolumeClaim filled from an HTTP(S) URL, a registry image, or left blank.
//!
//! Field names follow CDI's API (`source.http.url`, `storage.resources.requests.storage`,
//! `status.progress` as `"45.20%"`); only what mNi uses is modelled. Write with merge patches
//! or server-side apply, not `replace`, against a real CDI.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group of [`DataVolume`].
pub const GROUP: &str = "cdi.kubevirt.io";

/// The API version of [`DataVolume`].
pub const VERSION: &str = "v1beta1";

/// The DataVolume condition that mirrors its claim's phase.
pub const BOUND: &str = "Bound";

/// The DataVolume condition that is `True` once the data is in place.
pub const READY: &str = "Ready";

/// The DataVolume condition that is `True` while the importer runs.
pub const RUNNING: &str = "Running";

/// A DataVolume: a claim and where its data comes from (`cdi.kubevirt.io/v1beta1`,
/// namespaced). CDI creates the claim (same name, owned by the DataVolume) and imports.
#[allow(
    clippy::duplicated_attributes,
    reason = "kube-derive's printcolumn(...) lists repeat `type_ = \"string\"`"
)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cdi.kubevirt.io",
    version = "v1beta1",
    kind = "DataVolume",
    plural = "datavolumes",
    singular = "datavolume",
    shortname = "dv",
    shortname = "dvs",
    namespaced,
    status = "DataVolumeStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A CDI DataVolume (mNi's subset of cdi.kubevirt.io/v1beta1 DataVolume).",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Progress", type_ = "string", json_path = ".status.progress"),
    printcolumn(
        name = "Restarts",
        type_ = "integer",
        json_path = ".status.restartCount"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct DataVolumeSpec {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Where the data comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<DataVolumeSource>,
    /// The claim to create, with defaults filled in from the StorageClass (preferred).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageSpec>,
    /// The claim to create, exactly (the older form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvc: Option<StorageSpec>,
    /// `kubevirt` (a disk image, the default) or `archive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

impl DataVolumeSpec {
    /// `storage`, else `pvc`.
    pub fn claim(&self) -> Option<&StorageSpec> {
        self.storage.as_ref().or(self.pvc.as_ref())
    }
}

/// `v1beta1.DataVolumeSource`: one of `http`, `registry`, `blank`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct DataVolumeSource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// Import a disk image from an HTTP(S) URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpSource>,
    /// Import a disk image from a container registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistrySource>,
    /// An empty disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blank: Option<BlankSource>,
}

/// `v1beta1.DataVolumeSourceHTTP`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct HttpSource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The image's URL (`http://` or `https://`).
    pub url: String,
    /// A Secret with `accessKeyId` and `secretKey` for the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<String>,
    /// A ConfigMap with the CA bundle of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_config_map: Option<String>,
}

/// `v1beta1.DataVolumeSourceRegistry`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct RegistrySource {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// The image, `docker://registry/repo:tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `pod` or `node`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_method: Option<String>,
    /// A Secret with registry credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<String>,
}

/// `v1beta1.DataVolumeBlankImage`: no fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlankSource {}

/// `v1beta1.StorageSpec` (and the PVC spec subset of `pvc`): the claim's size, class, modes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct StorageSpec {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// `ReadWriteOnce`, `ReadWriteMany`, … (default `ReadWriteOnce`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    /// The size, `requests.storage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<StorageResources>,
    /// The StorageClass (default: the cluster's default class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    /// `Filesystem` or `Block`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
}

impl StorageSpec {
    /// `resources.requests.storage`.
    pub fn size(&self) -> Option<&Quantity> {
        self.resources.as_ref()?.requests.get("storage")
    }
}

/// The `resources` of a [`StorageSpec`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct StorageResources {
    /// Upstream fields mNi does not model, kept as they are (the CRD preserves them).
    #[serde(flatten)]
    #[schemars(skip)]
    pub unmodelled: BTreeMap<String, serde_json::Value>,
    /// `storage: 10Gi`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
}

/// What CDI reports about a DataVolume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataVolumeStatus {
    /// `Pending`, `ImportScheduled`, `ImportInProgress`, `Succeeded`, `Failed`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<DataVolumePhase>,
    /// Import progress, `"45.20%"`, or `"N/A"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// How often the importer pod restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_count: Option<i32>,
    /// The claim the DataVolume fills (its own name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_name: Option<String>,
    /// `Bound`, `Running` and `Ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<DataVolumeCondition>,
}

/// `status.phase` of a DataVolume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum DataVolumePhase {
    /// The claim is not bound yet.
    Pending,
    /// The claim is bound.
    #[serde(rename = "PVCBound")]
    PvcBound,
    /// The importer pod is scheduled.
    ImportScheduled,
    /// The importer runs; see `progress`.
    ImportInProgress,
    /// The claim waits for its first consumer.
    WaitForFirstConsumer,
    /// The data is in place.
    Succeeded,
    /// The import failed.
    Failed,
    /// Anything else (including values newer than this type).
    #[default]
    #[serde(other)]
    Unknown,
}

/// `v1beta1.DataVolumeCondition`: like KubeVirt's, with `lastHeartbeatTime`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataVolumeCondition {
    /// `Bound`, `Running` or `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A message for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the condition was last checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<Time>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// The condition of type `type_`, if there is one.
pub fn find_condition<'a>(
    conditions: &'a [DataVolumeCondition],
    type_: &str,
) -> Option<&'a DataVolumeCondition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// The DataVolume CRD.
pub fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    <DataVolume as kube::CustomResourceExt>::crd()
}
