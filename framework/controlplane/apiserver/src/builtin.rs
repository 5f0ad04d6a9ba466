//! The built-in kinds the server serves, and their per-kind hooks.
//!
//! Each kind is described once, from its k8s-openapi type: names and scope come from the
//! `k8s_openapi::Resource` traits, decoding checks use the typed struct, and the kind adds the
//! field selectors, defaults and validation kube-apiserver applies to it (see `defaults` and
//! `validation`). Events are stored once, in core/v1 form, and served at events.k8s.io/v1 too.
//!
//! Most kinds are stored as decoded, with no hooks of their own (`stored!`): volumes, quotas,
//! nodes, jobs, autoscalers, disruption budgets, storage, scheduling and admission policies;
//! the webhook configurations are defaulted and validated as upstream (see `webhooks`), and
//! so are the ValidatingAdmissionPolicies and their bindings (see `policies`).
//! HorizontalPodAutoscaler is stored at `autoscaling/v2` and served at `autoscaling/v1` too,
//! converted by `conversion`.

use std::any::TypeId;

use k8s_openapi::api::flowcontrol;
use k8s_openapi::api::{
    admissionregistration, apps, authentication, authorization, autoscaling, batch, certificates,
    coordination, core, discovery, events, networking, node, policy, rbac, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
use mni_apimachinery::FieldError;
use serde_json::Value;

use crate::registry::{BuiltinKind, Flavor, Registry, ResourceInfo, ScalePaths};
use crate::{defaults, validation};

impl Registry {
    /// A registry with every built-in resource.
    pub(crate) fn with_builtins() -> Self {
        let mut r = Registry::default();
        for info in resources() {
            r.insert(info, false);
        }
        r
    }
}

fn normalize<K: serde::de::DeserializeOwned + serde::Serialize>(
    v: &Value,
) -> Result<Value, String> {
    let typed = K::deserialize(v).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

fn no_defaults(_: &mut Value) {}

fn no_validation(_: &Value) -> Vec<FieldError> {
    Vec::new()
}

macro_rules! kind {
    ($name:ident, $ty:ty, $fields:expr, $default:expr, $validate:expr) => {
        static $name: BuiltinKind = BuiltinKind {
            kind: <$ty as k8s_openapi::Resource>::KIND,
            normalize: normalize::<$ty>,
            field_labels: $fields,
            default: $default,
            validate: $validate,
            doc: Some(mni_openapi::ResourceDoc::builtin::<$ty>),
        };
    };
}

const POD_FIELDS: &[(&str, &str)] = &[
    ("spec.nodeName", "spec.nodeName"),
    ("spec.restartPolicy", "spec.restartPolicy"),
    ("spec.schedulerName", "spec.schedulerName"),
    ("spec.serviceAccountName", "spec.serviceAccountName"),
    ("spec.hostNetwork", "spec.hostNetwork"),
    ("status.phase", "status.phase"),
    ("status.podIP", "status.podIP"),
    ("status.nominatedNodeName", "status.nominatedNodeName"),
];

/// Core events; events.k8s.io/v1 accepts its own spellings of the same fields too.
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("involvedObject.kind", "involvedObject.kind"),
    ("involvedObject.namespace", "involvedObject.namespace"),
    ("involvedObject.name", "involvedObject.name"),
    ("involvedObject.uid", "involvedObject.uid"),
    ("involvedObject.apiVersion", "involvedObject.apiVersion"),
    (
        "involvedObject.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("involvedObject.fieldPath", "involvedObject.fieldPath"),
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reason", "reason"),
    ("reportingComponent", "reportingComponent"),
    ("reportingController", "reportingComponent"),
    ("source", "source.component"),
    ("type", "type"),
];

kind!(
    NAMESPACE,
    core::v1::Namespace,
    &[("status.phase", "status.phase")],
    defaults::namespace,
    no_validation
);
kind!(
    CONFIG_MAP,
    core::v1::ConfigMap,
    &[],
    no_defaults,
    validation::config_map
);
kind!(
    SECRET,
    core::v1::Secret,
    &[("type", "type")],
    defaults::secret,
    validation::secret
);
kind!(
    SERVICE,
    core::v1::Service,
    &[
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type")
    ],
    defaults::service,
    validation::service
);
kind!(
    SERVICE_ACCOUNT,
    core::v1::ServiceAccount,
    &[],
    no_defaults,
    no_validation
);
kind!(
    POD,
    core::v1::Pod,
    POD_FIELDS,
    defaults::pod,
    validation::pod
);
kind!(
    EVENT,
    core::v1::Event,
    EVENT_FIELDS,
    no_defaults,
    no_validation
);
kind!(
    ENDPOINTS,
    core::v1::Endpoints,
    &[],
    no_defaults,
    no_validation
);
kind!(
    DEPLOYMENT,
    apps::v1::Deployment,
    &[],
    defaults::deployment,
    validation::workload
);
kind!(
    REPLICA_SET,
    apps::v1::ReplicaSet,
    &[("status.replicas", "status.replicas")],
    defaults::replica_set,
    validation::workload
);
kind!(
    STATEFUL_SET,
    apps::v1::StatefulSet,
    &[],
    defaults::stateful_set,
    validation::workload
);
kind!(
    DAEMON_SET,
    apps::v1::DaemonSet,
    &[],
    defaults::daemon_set,
    validation::workload
);
kind!(
    LEASE,
    coordination::v1::Lease,
    &[],
    no_defaults,
    no_validation
);
kind!(
    EVENTS_V1,
    events::v1::Event,
    EVENT_FIELDS,
    no_defaults,
    no_validation
);
kind!(
    ROLE,
    rbac::v1::Role,
    &[],
    no_defaults,
    validation::rbac_rules
);
kind!(
    CLUSTER_ROLE,
    rbac::v1::ClusterRole,
    &[],
    no_defaults,
    validation::rbac_rules
);
kind!(
    ROLE_BINDING,
    rbac::v1::RoleBinding,
    &[],
    no_defaults,
    validation::role_binding
);
kind!(
    CLUSTER_ROLE_BINDING,
    rbac::v1::ClusterRoleBinding,
    &[],
    no_defaults,
    validation::role_binding
);
kind!(
    NETWORK_POLICY,
    networking::v1::NetworkPolicy,
    &[],
    defaults::network_policy,
    no_validation
);
kind!(
    INGRESS,
    networking::v1::Ingress,
    &[],
    no_defaults,
    no_validation
);
kind!(
    CRD,
    apiext::CustomResourceDefinition,
    &[],
    no_defaults,
    no_validation
);

kind!(
    PERSISTENT_VOLUME,
    core::v1::PersistentVolume,
    &[],
    defaults::pending_phase,
    no_validation
);
kind!(
    PERSISTENT_VOLUME_CLAIM,
    core::v1::PersistentVolumeClaim,
    &[],
    defaults::persistent_volume_claim,
    validation::pvc
);

kind!(JOB, batch::v1::Job, &[], defaults::job, validation::job);
kind!(
    CRON_JOB,
    batch::v1::CronJob,
    &[],
    defaults::cron_job,
    validation::cron_job
);

kind!(
    HPA,
    autoscaling::v2::HorizontalPodAutoscaler,
    &[],
    defaults::hpa_v2,
    validation::hpa
);
kind!(
    HPA_V1,
    autoscaling::v1::HorizontalPodAutoscaler,
    &[],
    defaults::hpa_v1,
    validation::hpa_v1
);
kind!(
    LIMIT_RANGE,
    core::v1::LimitRange,
    &[],
    defaults::limit_range,
    validation::limit_range
);
kind!(
    RESOURCE_QUOTA,
    core::v1::ResourceQuota,
    &[],
    no_defaults,
    validation::resource_quota
);
kind!(
    PDB,
    policy::v1::PodDisruptionBudget,
    &[],
    no_defaults,
    validation::pdb
);
kind!(
    STORAGE_CLASS,
    storage::v1::StorageClass,
    &[],
    validation::default_storage_class,
    validation::storage_class
);
kind!(
    PRIORITY_CLASS,
    scheduling::v1::PriorityClass,
    &[],
    validation::default_priority_class,
    validation::priority_class
);

/// A kind stored as it is decoded: no field selectors, defaults or validation of its own.
macro_rules! stored {
    ($($name:ident: $ty:ty),* $(,)?) => {
        $(kind!($name, $ty, &[], no_defaults, no_validation);)*
    };
}

stored!(
    NODE: core::v1::Node,
    POD_TEMPLATE: core::v1::PodTemplate,
    REPLICATION_CONTROLLER: core::v1::ReplicationController,
    CONTROLLER_REVISION: apps::v1::ControllerRevision,
    ENDPOINT_SLICE: discovery::v1::EndpointSlice,
    CSI_DRIVER: storage::v1::CSIDriver,
    CSI_NODE: storage::v1::CSINode,
    VOLUME_ATTACHMENT: storage::v1::VolumeAttachment,
    CSI_STORAGE_CAPACITY: storage::v1::CSIStorageCapacity,
    RUNTIME_CLASS: node::v1::RuntimeClass,
    INGRESS_CLASS: networking::v1::IngressClass,
    IP_ADDRESS: networking::v1::IPAddress,
    SERVICE_CIDR: networking::v1::ServiceCIDR,
    CSR: certificates::v1::CertificateSigningRequest,
    COMPONENT_STATUS: core::v1::ComponentStatus,
    FLOW_SCHEMA: flowcontrol::v1::FlowSchema,
    PRIORITY_LEVEL: flowcontrol::v1::PriorityLevelConfiguration,
);
kind!(
    API_SERVICE,
    apiregistration::APIService,
    &[],
    no_defaults,
    validation::api_service
);

fn default_validating_webhooks(v: &mut Value) {
    crate::webhooks::default_configuration(v, false);
}

fn default_mutating_webhooks(v: &mut Value) {
    crate::webhooks::default_configuration(v, true);
}

kind!(
    VALIDATING_WEBHOOK,
    admissionregistration::v1::ValidatingWebhookConfiguration,
    &[],
    default_validating_webhooks,
    crate::webhooks::validate_configuration
);
kind!(
    MUTATING_WEBHOOK,
    admissionregistration::v1::MutatingWebhookConfiguration,
    &[],
    default_mutating_webhooks,
    crate::webhooks::validate_configuration
);

kind!(
    VALIDATING_POLICY,
    admissionregistration::v1::ValidatingAdmissionPolicy,
    &[],
    crate::policies::default_policy,
    crate::policies::validate_policy
);
kind!(
    VALIDATING_POLICY_BINDING,
    admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    &[],
    crate::policies::default_binding,
    crate::policies::validate_binding
);

macro_rules! review {
    ($name:ident, $ty:ty) => {
        static $name: BuiltinKind = BuiltinKind {
            kind: <$ty as k8s_openapi::Resource>::KIND,
            normalize: normalize::<$ty>,
            field_labels: &[],
            default: no_defaults,
            validate: no_validation,
            doc: None,
        };
    };
}

review!(SSAR, authorization::v1::SelfSubjectAccessReview);
review!(SAR, authorization::v1::SubjectAccessReview);
review!(LSAR, authorization::v1::LocalSubjectAccessReview);
review!(SSRR, authorization::v1::SelfSubjectRulesReview);
review!(TOKEN_REVIEW, authentication::v1::TokenReview);
review!(SELF_SUBJECT_REVIEW, authentication::v1::SelfSubjectReview);

/// A create-only kind (access and token reviews): computed, never stored.
fn review_info<K>(hooks: &'static BuiltinKind) -> ResourceInfo
where
    K: k8s_openapi::Resource,
    K::Scope: 'static,
{
    ResourceInfo {
        group: K::GROUP.to_string(),
        version: K::VERSION.to_string(),
        kind: K::KIND.to_string(),
        list_kind: String::new(),
        plural: K::URL_PATH_SEGMENT.to_string(),
        singular: K::KIND.to_lowercase(),
        short_names: Vec::new(),
        categories: Vec::new(),
        namespaced: TypeId::of::<K::Scope>() == TypeId::of::<k8s_openapi::NamespaceResourceScope>(),
        status: false,
        scale: None,
        generation: false,
        storage_prefix: format!("/virtual/{}/{}", K::GROUP, K::URL_PATH_SEGMENT),
        storage_version: K::VERSION.to_string(),
        verbs: &["create"],
        flavor: Flavor::Builtin(hooks),
    }
}

struct Extra {
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
    scale: bool,
    generation: bool,
}

const fn extra(short_names: &'static [&'static str], status: bool) -> Extra {
    Extra {
        short_names,
        categories: &[],
        status,
        scale: false,
        generation: false,
    }
}

/// A kind in the `api-extensions` category (CRDs, webhooks and admission policies).
const fn api_extension(status: bool) -> Extra {
    Extra {
        short_names: &[],
        categories: &["api-extensions"],
        status,
        scale: false,
        generation: status,
    }
}

const fn workload(short_names: &'static [&'static str], scale: bool) -> Extra {
    Extra {
        short_names,
        categories: &["all"],
        status: true,
        scale,
        generation: true,
    }
}

fn info<K>(hooks: &'static BuiltinKind, extra: Extra) -> ResourceInfo
where
    K: k8s_openapi::Resource + k8s_openapi::ListableResource,
    K::Scope: 'static,
{
    let storage_group = if K::GROUP.is_empty() {
        "core"
    } else {
        K::GROUP
    };
    ResourceInfo {
        group: K::GROUP.to_string(),
        version: K::VERSION.to_string(),
        kind: K::KIND.to_string(),
        list_kind: K::LIST_KIND.to_string(),
        plural: K::URL_PATH_SEGMENT.to_string(),
        singular: K::KIND.to_lowercase(),
        short_names: extra.short_names.iter().map(|s| s.to_string()).collect(),
        categories: extra.categories.iter().map(|s| s.to_string()).collect(),
        namespaced: TypeId::of::<K::Scope>() == TypeId::of::<k8s_openapi::NamespaceResourceScope>(),
        status: extra.status,
        scale: extra.scale.then(|| ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }),
        generation: extra.generation,
        storage_prefix: format!("/registry/{storage_group}/{}", K::URL_PATH_SEGMENT),
        storage_version: K::VERSION.to_string(),
        verbs: crate::registry::STANDARD_VERBS,
        flavor: Flavor::Builtin(hooks),
    }
}

/// Every built-in resource, in discovery order.
pub(crate) fn resources() -> Vec<ResourceInfo> {
    let mut events_v1 = info::<events::v1::Event>(&EVENTS_V1, extra(&["ev"], false));
    // Both event APIs share one store, in core/v1 form.
    events_v1.storage_prefix = "/registry/core/events".into();
    events_v1.storage_version = "v1".into();
    let mut svc = info::<core::v1::Service>(&SERVICE, extra(&["svc"], true));
    svc.categories = vec!["all".into()];
    let mut pod = info::<core::v1::Pod>(&POD, extra(&["po"], true));
    pod.categories = vec!["all".into()];
    let mut crd = info::<apiext::CustomResourceDefinition>(&CRD, extra(&["crd", "crds"], true));
    crd.generation = true;
    crd.categories = vec!["api-extensions".into()];
    let mut netpol =
        info::<networking::v1::NetworkPolicy>(&NETWORK_POLICY, extra(&["netpol"], false));
    netpol.generation = true;
    let mut ingress = info::<networking::v1::Ingress>(&INGRESS, extra(&["ing"], true));
    ingress.generation = true;
    // A replication controller has no `status.selector`: its scale shows none.
    let mut rc =
        info::<core::v1::ReplicationController>(&REPLICATION_CONTROLLER, workload(&["rc"], true));
    if let Some(scale) = rc.scale.as_mut() {
        scale.label_selector = None;
    }
    let mut pdb = info::<policy::v1::PodDisruptionBudget>(&PDB, extra(&["pdb"], true));
    pdb.generation = true;
    // Computed on each read (handlers::components), never stored.
    let mut component_status =
        info::<core::v1::ComponentStatus>(&COMPONENT_STATUS, extra(&["cs"], false));
    component_status.storage_prefix = "/virtual/componentstatuses".into();
    component_status.verbs = &["get", "list"];
    // Served after v2, so that v2 is the group's preferred version.
    let mut hpa_v1 =
        info::<autoscaling::v1::HorizontalPodAutoscaler>(&HPA_V1, workload(&["hpa"], false));
    hpa_v1.storage_version = "v2".into();
    let mut service_cidr = info::<networking::v1::ServiceCIDR>(&SERVICE_CIDR, extra(&[], true));
    service_cidr.generation = true;
    vec![
        info::<core::v1::Namespace>(&NAMESPACE, extra(&["ns"], true)),
        info::<core::v1::ConfigMap>(&CONFIG_MAP, extra(&["cm"], false)),
        info::<core::v1::Secret>(&SECRET, extra(&[], false)),
        svc,
        info::<core::v1::ServiceAccount>(&SERVICE_ACCOUNT, extra(&["sa"], false)),
        pod,
        info::<core::v1::Event>(&EVENT, extra(&["ev"], false)),
        info::<core::v1::Endpoints>(&ENDPOINTS, extra(&["ep"], false)),
        info::<apps::v1::Deployment>(&DEPLOYMENT, workload(&["deploy"], true)),
        info::<apps::v1::ReplicaSet>(&REPLICA_SET, workload(&["rs"], true)),
        info::<apps::v1::StatefulSet>(&STATEFUL_SET, workload(&["sts"], true)),
        info::<apps::v1::DaemonSet>(&DAEMON_SET, workload(&["ds"], false)),
        info::<coordination::v1::Lease>(&LEASE, extra(&[], false)),
        events_v1,
        info::<rbac::v1::Role>(&ROLE, extra(&[], false)),
        info::<rbac::v1::ClusterRole>(&CLUSTER_ROLE, extra(&[], false)),
        info::<rbac::v1::RoleBinding>(&ROLE_BINDING, extra(&[], false)),
        info::<rbac::v1::ClusterRoleBinding>(&CLUSTER_ROLE_BINDING, extra(&[], false)),
        info::<core::v1::PersistentVolume>(&PERSISTENT_VOLUME, extra(&["pv"], true)),
        info::<core::v1::PersistentVolumeClaim>(&PERSISTENT_VOLUME_CLAIM, extra(&["pvc"], true)),
        info::<core::v1::ResourceQuota>(&RESOURCE_QUOTA, extra(&["quota"], true)),
        info::<core::v1::LimitRange>(&LIMIT_RANGE, extra(&["limits"], false)),
        info::<core::v1::Node>(&NODE, extra(&["no"], true)),
        info::<core::v1::PodTemplate>(&POD_TEMPLATE, extra(&[], false)),
        component_status,
        rc,
        info::<apps::v1::ControllerRevision>(&CONTROLLER_REVISION, extra(&[], false)),
        info::<batch::v1::Job>(&JOB, workload(&[], false)),
        info::<batch::v1::CronJob>(&CRON_JOB, workload(&["cj"], false)),
        info::<autoscaling::v2::HorizontalPodAutoscaler>(&HPA, workload(&["hpa"], false)),
        hpa_v1,
        pdb,
        info::<discovery::v1::EndpointSlice>(&ENDPOINT_SLICE, extra(&[], false)),
        info::<storage::v1::StorageClass>(&STORAGE_CLASS, extra(&["sc"], false)),
        info::<storage::v1::CSIDriver>(&CSI_DRIVER, extra(&[], false)),
        info::<storage::v1::CSINode>(&CSI_NODE, extra(&[], false)),
        info::<storage::v1::VolumeAttachment>(&VOLUME_ATTACHMENT, extra(&[], true)),
        info::<storage::v1::CSIStorageCapacity>(&CSI_STORAGE_CAPACITY, extra(&[], false)),
        info::<scheduling::v1::PriorityClass>(&PRIORITY_CLASS, extra(&["pc"], false)),
        info::<node::v1::RuntimeClass>(&RUNTIME_CLASS, extra(&[], false)),
        netpol,
        ingress,
        info::<networking::v1::IngressClass>(&INGRESS_CLASS, extra(&[], false)),
        info::<networking::v1::IPAddress>(&IP_ADDRESS, extra(&["ip"], false)),
        service_cidr,
        info::<certificates::v1::CertificateSigningRequest>(&CSR, extra(&["csr"], true)),
        info::<admissionregistration::v1::ValidatingWebhookConfiguration>(
            &VALIDATING_WEBHOOK,
            api_extension(false),
        ),
        info::<admissionregistration::v1::MutatingWebhookConfiguration>(
            &MUTATING_WEBHOOK,
            api_extension(false),
        ),
        info::<admissionregistration::v1::ValidatingAdmissionPolicy>(
            &VALIDATING_POLICY,
            api_extension(true),
        ),
        info::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(
            &VALIDATING_POLICY_BINDING,
            api_extension(false),
        ),
        crd,
        info::<flowcontrol::v1::FlowSchema>(&FLOW_SCHEMA, extra(&[], true)),
        info::<flowcontrol::v1::PriorityLevelConfiguration>(&PRIORITY_LEVEL, extra(&[], true)),
        info::<apiregistration::APIService>(&API_SERVICE, api_extension(true)),
        review_info::<authorization::v1::SelfSubjectAccessReview>(&SSAR),
        review_info::<authorization::v1::SubjectAccessReview>(&SAR),
        review_info::<authorization::v1::LocalSubjectAccessReview>(&LSAR),
        review_info::<authorization::v1::SelfSubjectRulesReview>(&SSRR),
        review_info::<authentication::v1::TokenReview>(&TOKEN_REVIEW),
        review_info::<authentication::v1::SelfSubjectReview>(&SELF_SUBJECT_REVIEW),
    ]
}

/// Converts a stored core/v1 Event to events.k8s.io/v1.
pub(crate) fn event_to_events_v1(mut core: Value) -> Value {
    let Some(obj) = core.as_object_mut() else {
        return core;
    };
    let renames = [
        ("involvedObject", "regarding"),
        ("message", "note"),
        ("reportingComponent", "reportingController"),
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
    ];
    for (from, to) in renames {
        if let Some(v) = obj.remove(from) {
            obj.insert(to.into(), v);
        }
    }
    obj.insert("apiVersion".into(), "events.k8s.io/v1".into());
    core
}

/// Converts an events.k8s.io/v1 Event to the stored core/v1 form.
pub(crate) fn events_v1_to_event(mut ev: Value) -> Value {
    let Some(obj) = ev.as_object_mut() else {
        return ev;
    };
    let renames = [
        ("regarding", "involvedObject"),
        ("note", "message"),
        ("reportingController", "reportingComponent"),
        ("deprecatedSource", "source"),
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
        ("deprecatedCount", "count"),
    ];
    for (from, to) in renames {
        if let Some(v) = obj.remove(from) {
            obj.insert(to.into(), v);
        }
    }
    obj.insert("apiVersion".into(), "v1".into());
    ev
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_round_trip_between_versions() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "involvedObject": {"kind": "Pod", "name": "p"},
            "message": "hi", "reportingComponent": "ctl", "count": 2});
        let v1 = event_to_events_v1(core.clone());
        assert_eq!(v1["regarding"]["name"], "p");
        assert_eq!(v1["note"], "hi");
        assert_eq!(v1["reportingController"], "ctl");
        assert_eq!(v1["deprecatedCount"], 2);
        assert_eq!(events_v1_to_event(v1), core);
    }

    #[test]
    fn typed_check_rejects_wrong_shapes() {
        let bad =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "three"}});
        assert!((DEPLOYMENT.normalize)(&bad).is_err());
        let good =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}, "metadata": {}});
        let normalized = (CONFIG_MAP.normalize)(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}, "extra": 1}),
        )
        .expect("decodes");
        assert_eq!(normalized, good);
    }
}
