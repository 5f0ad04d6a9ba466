//! The kinds this crate can decode and encode: `apiVersion` + `kind` → root [`Message`].

use super::*;

/// A supported kind.
pub(crate) struct Kind {
    /// The `apiVersion` (`v1`, `apps/v1`...); `None` for meta types accepted in every group
    /// version (`DeleteOptions`).
    pub(crate) api_version: Option<&'static str>,
    /// The `kind`.
    pub(crate) kind: &'static str,
    /// The protobuf message of the object.
    pub(crate) message: &'static Message,
}

const fn k(api_version: &'static str, kind: &'static str, message: &'static Message) -> Kind {
    Kind {
        api_version: Some(api_version),
        kind,
        message,
    }
}

/// Every supported kind.
pub(crate) static KINDS: &[Kind] = &[
    k("v1", "Namespace", &CORE_V1_NAMESPACE),
    k("v1", "ConfigMap", &CORE_V1_CONFIG_MAP),
    k("v1", "Secret", &CORE_V1_SECRET),
    k("v1", "Service", &CORE_V1_SERVICE),
    k("v1", "ServiceAccount", &CORE_V1_SERVICE_ACCOUNT),
    k("v1", "Pod", &CORE_V1_POD),
    k("v1", "Event", &CORE_V1_EVENT),
    k("v1", "Endpoints", &CORE_V1_ENDPOINTS),
    k(
        "v1",
        "PersistentVolumeClaim",
        &CORE_V1_PERSISTENT_VOLUME_CLAIM,
    ),
    k("v1", "Binding", &CORE_V1_BINDING),
    k("apps/v1", "Deployment", &APPS_V1_DEPLOYMENT),
    k("apps/v1", "ReplicaSet", &APPS_V1_REPLICA_SET),
    k("apps/v1", "StatefulSet", &APPS_V1_STATEFUL_SET),
    k("apps/v1", "DaemonSet", &APPS_V1_DAEMON_SET),
    k(
        "apps/v1",
        "ControllerRevision",
        &APPS_V1_CONTROLLER_REVISION,
    ),
    k("batch/v1", "Job", &BATCH_V1_JOB),
    k("batch/v1", "CronJob", &BATCH_V1_CRON_JOB),
    k("coordination.k8s.io/v1", "Lease", &COORDINATION_V1_LEASE),
    k("events.k8s.io/v1", "Event", &EVENTS_V1_EVENT),
    k("rbac.authorization.k8s.io/v1", "Role", &RBAC_V1_ROLE),
    k(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        &RBAC_V1_CLUSTER_ROLE,
    ),
    k(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        &RBAC_V1_ROLE_BINDING,
    ),
    k(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        &RBAC_V1_CLUSTER_ROLE_BINDING,
    ),
    k(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        &NETWORKING_V1_NETWORK_POLICY,
    ),
    k("networking.k8s.io/v1", "Ingress", &NETWORKING_V1_INGRESS),
    k(
        "networking.k8s.io/v1",
        "IngressClass",
        &NETWORKING_V1_INGRESS_CLASS,
    ),
    k(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &APIEXTENSIONS_V1_CUSTOM_RESOURCE_DEFINITION,
    ),
    k(
        "authentication.k8s.io/v1",
        "TokenRequest",
        &AUTHENTICATION_V1_TOKEN_REQUEST,
    ),
    k(
        "authentication.k8s.io/v1",
        "TokenReview",
        &AUTHENTICATION_V1_TOKEN_REVIEW,
    ),
    k(
        "authentication.k8s.io/v1",
        "SelfSubjectReview",
        &AUTHENTICATION_V1_SELF_SUBJECT_REVIEW,
    ),
    k(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &AUTHORIZATION_V1_SELF_SUBJECT_ACCESS_REVIEW,
    ),
    k(
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        &AUTHORIZATION_V1_SUBJECT_ACCESS_REVIEW,
    ),
    k(
        "authorization.k8s.io/v1",
        "LocalSubjectAccessReview",
        &AUTHORIZATION_V1_LOCAL_SUBJECT_ACCESS_REVIEW,
    ),
    k(
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
        &AUTHORIZATION_V1_SELF_SUBJECT_RULES_REVIEW,
    ),
    k("v1", "PersistentVolume", &CORE_V1_PERSISTENT_VOLUME),
    k("v1", "ResourceQuota", &CORE_V1_RESOURCE_QUOTA),
    k("v1", "LimitRange", &CORE_V1_LIMIT_RANGE),
    k("v1", "Node", &CORE_V1_NODE),
    k("v1", "PodTemplate", &CORE_V1_POD_TEMPLATE),
    k(
        "v1",
        "ReplicationController",
        &CORE_V1_REPLICATION_CONTROLLER,
    ),
    k(
        "networking.k8s.io/v1",
        "IPAddress",
        &NETWORKING_V1_IPADDRESS,
    ),
    k(
        "networking.k8s.io/v1",
        "ServiceCIDR",
        &NETWORKING_V1_SERVICE_CIDR,
    ),
    k(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        &AUTOSCALING_V2_HORIZONTAL_POD_AUTOSCALER,
    ),
    k(
        "autoscaling/v1",
        "HorizontalPodAutoscaler",
        &AUTOSCALING_V1_HORIZONTAL_POD_AUTOSCALER,
    ),
    k(
        "flowcontrol.apiserver.k8s.io/v1",
        "FlowSchema",
        &FLOWCONTROL_V1_FLOW_SCHEMA,
    ),
    k(
        "flowcontrol.apiserver.k8s.io/v1",
        "PriorityLevelConfiguration",
        &FLOWCONTROL_V1_PRIORITY_LEVEL_CONFIGURATION,
    ),
    k(
        "policy/v1",
        "PodDisruptionBudget",
        &POLICY_V1_POD_DISRUPTION_BUDGET,
    ),
    k(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        &DISCOVERY_V1_ENDPOINT_SLICE,
    ),
    k(
        "storage.k8s.io/v1",
        "StorageClass",
        &STORAGE_V1_STORAGE_CLASS,
    ),
    k("storage.k8s.io/v1", "CSIDriver", &STORAGE_V1_CSIDRIVER),
    k("storage.k8s.io/v1", "CSINode", &STORAGE_V1_CSINODE),
    k(
        "storage.k8s.io/v1",
        "VolumeAttachment",
        &STORAGE_V1_VOLUME_ATTACHMENT,
    ),
    k(
        "storage.k8s.io/v1",
        "CSIStorageCapacity",
        &STORAGE_V1_CSISTORAGE_CAPACITY,
    ),
    k(
        "scheduling.k8s.io/v1",
        "PriorityClass",
        &SCHEDULING_V1_PRIORITY_CLASS,
    ),
    k("node.k8s.io/v1", "RuntimeClass", &NODE_V1_RUNTIME_CLASS),
    k(
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        &CERTIFICATES_V1_CERTIFICATE_SIGNING_REQUEST,
    ),
    k(
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        &ADMISSIONREGISTRATION_V1_VALIDATING_WEBHOOK_CONFIGURATION,
    ),
    k(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        &ADMISSIONREGISTRATION_V1_MUTATING_WEBHOOK_CONFIGURATION,
    ),
    k(
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        &ADMISSIONREGISTRATION_V1_VALIDATING_ADMISSION_POLICY,
    ),
    k(
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
        &ADMISSIONREGISTRATION_V1_VALIDATING_ADMISSION_POLICY_BINDING,
    ),
    k("autoscaling/v1", "Scale", &AUTOSCALING_V1_SCALE),
    k("policy/v1", "Eviction", &POLICY_V1_EVICTION),
    Kind {
        api_version: None,
        kind: "DeleteOptions",
        message: &META_V1_DELETE_OPTIONS,
    },
];

/// The root message for `apiVersion` + `kind`, if supported.
pub(crate) fn lookup(api_version: &str, kind: &str) -> Option<&'static Message> {
    KINDS
        .iter()
        .find(|k| k.kind == kind && k.api_version.is_none_or(|v| v == api_version))
        .map(|k| k.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_api_version_and_kind() {
        assert!(lookup("v1", "ConfigMap").is_some());
        assert!(lookup("apps/v1", "ConfigMap").is_none());
        assert!(lookup("v1", "Deployment").is_none());
        assert!(lookup("apps/v1beta1", "Deployment").is_none());
        assert!(lookup("apps/v1", "DeleteOptions").is_some());
        assert!(lookup("meta.k8s.io/v1", "DeleteOptions").is_some());
        assert!(lookup("autoscaling/v2", "HorizontalPodAutoscaler").is_some());
        assert!(lookup("storage.k8s.io/v1", "CSIStorageCapacity").is_some());
    }
}
