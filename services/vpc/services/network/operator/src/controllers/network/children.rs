// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The objects a Network owns, as pure functions of it, so that they are easy to read, to
//! unit-test and to change. `NetworkReconciler` applies them with server-side apply; the
//! owner reference is added there.
//!
//! Both Deployments run under the restricted Pod Security profile (non-root user, seccomp
//! `RuntimeDefault`, every capability dropped, no privilege escalation, read-only root file
//! system) with probes on `/healthz` and `/readyz`.

use std::collections::BTreeMap;

use k8s_openapi::api::{
    apps::v1 as apps, core::v1 as corev1, networking::v1 as networking, rbac::v1 as rbac,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;
use mni_core::WorkloadSpec;
use sha2::{Digest, Sha256};

use crate::api::network_v1alpha1::Network;

/// The service these objects belong to (`app.kubernetes.io/name` and `part-of`).
pub const SERVICE: &str = "network";

/// Who manages these objects (`app.kubernetes.io/managed-by`).
pub const MANAGED_BY: &str = "network-operator";

/// The API group of the backend's VirtualPrivateClouds.
pub const GROUP: &str = "network.mni.dev";

/// The backend pod template's annotation holding the checksum of its settings.
pub const CHECKSUM: &str = "network.mni.dev/settings-checksum";

/// The longest Network name: `NAME-frontend` must still be a Service name (a DNS label).
pub const MAX_NAME_LENGTH: usize = 63 - "-frontend".len();

/// The user and group the containers run as (distroless `nonroot`).
pub const RUN_AS: i64 = 65532;

/// The port name of both containers, which probes and Services refer to.
const HTTP: &str = "http";

/// The verbs the backend has on VirtualPrivateClouds: CRUD, and list/watch to serve lists.
pub const BACKEND_VERBS: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// Labels, or a label selector's `matchLabels`.
pub type Labels = BTreeMap<String, String>;

/// One of a service's two workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// The web UI.
    Frontend,
    /// The HTTP API.
    Backend,
}

impl Workload {
    /// The `app.kubernetes.io/component` label and name suffix: `frontend` or `backend`.
    #[must_use]
    pub fn component(self) -> &'static str {
        match self {
            Self::Frontend => "frontend",
            Self::Backend => "backend",
        }
    }

    /// What `obj` asks of this workload.
    #[must_use]
    pub fn spec(self, obj: &Network) -> &WorkloadSpec {
        match self {
            Self::Frontend => &obj.spec.frontend,
            Self::Backend => &obj.spec.backend,
        }
    }

    /// The name of `obj`'s Deployment, Service (and for the backend, ServiceAccount, Role,
    /// RoleBinding and NetworkPolicy) of this workload, e.g. `sample-backend`.
    #[must_use]
    pub fn name(self, obj: &Network) -> String {
        format!("{}-{}", obj.name_any(), self.component())
    }
}

/// Why a Network cannot be turned into objects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSpec {
    /// The name is too long for the Services it names.
    #[error(
        "metadata.name {0:?} is longer than {MAX_NAME_LENGTH} characters: it names the Services NAME-frontend and NAME-backend, which must be DNS labels"
    )]
    NameTooLong(String),
}

/// Everything a Network owns. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Children {
    /// The backend's identity.
    pub service_account: corev1::ServiceAccount,
    /// CRUD on VirtualPrivateClouds in the namespace, and nothing else.
    pub role: rbac::Role,
    /// Grants `role` to `service_account`.
    pub role_binding: rbac::RoleBinding,
    /// The backend's settings, as environment variables.
    pub settings: corev1::ConfigMap,
    /// Routes to the frontend's pods.
    pub frontend_service: corev1::Service,
    /// Routes to the backend's pods.
    pub backend_service: corev1::Service,
    /// Lets only the frontend's pods reach the backend's.
    pub network_policy: networking::NetworkPolicy,
    /// The web UI.
    pub frontend: apps::Deployment,
    /// The HTTP API.
    pub backend: apps::Deployment,
}

impl Children {
    /// The objects `obj` owns.
    pub fn new(obj: &Network) -> Result<Self, InvalidSpec> {
        let name = obj.name_any();
        if name.len() > MAX_NAME_LENGTH {
            return Err(InvalidSpec::NameTooLong(name));
        }
        let backend = Workload::Backend.name(obj);
        let mut settings = metadata(obj, Workload::Backend);
        settings.name = Some(settings_name(obj));
        Ok(Self {
            service_account: corev1::ServiceAccount {
                metadata: metadata(obj, Workload::Backend),
                automount_service_account_token: Some(true),
                ..Default::default()
            },
            role: rbac::Role {
                metadata: metadata(obj, Workload::Backend),
                rules: Some(backend_rules()),
            },
            role_binding: rbac::RoleBinding {
                metadata: metadata(obj, Workload::Backend),
                role_ref: rbac::RoleRef {
                    api_group: Some("rbac.authorization.k8s.io".to_owned()),
                    kind: "Role".to_owned(),
                    name: backend.clone(),
                },
                subjects: Some(vec![rbac::Subject {
                    kind: "ServiceAccount".to_owned(),
                    name: backend,
                    namespace: obj.namespace(),
                    ..Default::default()
                }]),
            },
            settings: corev1::ConfigMap {
                metadata: settings,
                data: Some(settings_data(obj)),
                ..Default::default()
            },
            frontend_service: service(obj, Workload::Frontend),
            backend_service: service(obj, Workload::Backend),
            network_policy: network_policy(obj),
            frontend: deployment(obj, Workload::Frontend),
            backend: deployment(obj, Workload::Backend),
        })
    }
}

/// The name of the backend's settings ConfigMap, e.g. `sample-backend-settings`.
#[must_use]
pub fn settings_name(obj: &Network) -> String {
    format!("{}-settings", Workload::Backend.name(obj))
}

/// The labels that select `workload`'s pods (never change them: a Deployment's selector is
/// immutable).
#[must_use]
pub fn selector_labels(obj: &Network, workload: Workload) -> Labels {
    Labels::from([
        ("app.kubernetes.io/name".to_owned(), SERVICE.to_owned()),
        ("app.kubernetes.io/instance".to_owned(), obj.name_any()),
        (
            "app.kubernetes.io/component".to_owned(),
            workload.component().to_owned(),
        ),
    ])
}

/// The labels of every object `obj` owns for `workload`.
#[must_use]
pub fn labels(obj: &Network, workload: Workload) -> Labels {
    let mut labels = selector_labels(obj, workload);
    labels.insert("app.kubernetes.io/part-of".to_owned(), SERVICE.to_owned());
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        MANAGED_BY.to_owned(),
    );
    labels
}

/// Name, namespace and labels of `obj`'s object for `workload`.
fn metadata(obj: &Network, workload: Workload) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: Some(workload.name(obj)),
        namespace: obj.namespace(),
        labels: Some(labels(obj, workload)),
        ..Default::default()
    }
}

/// What the backend may do: CRUD on VirtualPrivateClouds (in its own namespace, through a Role).
#[must_use]
pub fn backend_rules() -> Vec<rbac::PolicyRule> {
    vec![rbac::PolicyRule {
        api_groups: Some(vec![GROUP.to_owned()]),
        resources: Some(vec!["virtualprivateclouds".to_owned()]),
        verbs: BACKEND_VERBS.iter().map(|v| (*v).to_owned()).collect(),
        ..Default::default()
    }]
}

/// The backend's environment: `spec.settings`, then what the operator decides (the address to
/// listen on, the namespace to serve).
#[must_use]
pub fn settings_data(obj: &Network) -> BTreeMap<String, String> {
    let mut data = BTreeMap::from([
        ("LOG_FORMAT".to_owned(), "json".to_owned()),
        ("RUST_LOG".to_owned(), "info".to_owned()),
    ]);
    data.extend(obj.spec.settings.clone());
    data.insert(
        "LISTEN_ADDRESS".to_owned(),
        format!("0.0.0.0:{}", obj.spec.backend.port),
    );
    data.insert("NAMESPACE".to_owned(), obj.namespace().unwrap_or_default());
    data
}

/// A SHA-256 of the settings, stable across operator versions, so that a change of the
/// settings (and only that) changes the backend's pod template and rolls it.
#[must_use]
pub fn checksum(data: &BTreeMap<String, String>) -> String {
    let mut hash = Sha256::new();
    for (key, value) in data {
        hash.update(key.as_bytes());
        hash.update([0]);
        hash.update(value.as_bytes());
        hash.update([0]);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The frontend's address inside the cluster.
#[must_use]
pub fn url(obj: &Network) -> String {
    format!(
        "http://{}.{}.svc:{}",
        Workload::Frontend.name(obj),
        obj.namespace().unwrap_or_default(),
        obj.spec.frontend.port
    )
}

fn env(name: &str, value: &str) -> corev1::EnvVar {
    corev1::EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        ..Default::default()
    }
}

/// `ours`, with each variable of `theirs` replacing the one of the same name or appended:
/// server-side apply refuses two entries with one name.
fn merge_env(ours: Vec<corev1::EnvVar>, theirs: &[corev1::EnvVar]) -> Vec<corev1::EnvVar> {
    let mut merged = ours;
    for var in theirs {
        match merged.iter_mut().find(|v| v.name == var.name) {
            Some(existing) => *existing = var.clone(),
            None => merged.push(var.clone()),
        }
    }
    merged
}

/// Requests and limits when the spec sets none: small, with a memory limit.
fn default_resources() -> corev1::ResourceRequirements {
    corev1::ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_owned(), Quantity("10m".to_owned())),
            ("memory".to_owned(), Quantity("32Mi".to_owned())),
        ])),
        limits: Some(BTreeMap::from([(
            "memory".to_owned(),
            Quantity("128Mi".to_owned()),
        )])),
        ..Default::default()
    }
}

fn probe(path: &str, period_seconds: i32) -> corev1::Probe {
    corev1::Probe {
        http_get: Some(corev1::HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::String(HTTP.to_owned()),
            ..Default::default()
        }),
        period_seconds: Some(period_seconds),
        ..Default::default()
    }
}

/// The container of `workload`, restricted, with its environment: the frontend learns where
/// the backend is; the backend gets its settings from the ConfigMap.
fn container(obj: &Network, workload: Workload) -> corev1::Container {
    let spec = workload.spec(obj);
    let listen = format!("0.0.0.0:{}", spec.port);
    let (env, env_from) = match workload {
        Workload::Frontend => {
            let backend = Workload::Backend;
            let url = format!("http://{}:{}", backend.name(obj), backend.spec(obj).port);
            let env = vec![
                env("LISTEN_ADDRESS", &listen),
                env("BACKEND_URL", &url),
                env("LOG_FORMAT", "json"),
            ];
            (env, None)
        }
        Workload::Backend => {
            let source = corev1::EnvFromSource {
                config_map_ref: Some(corev1::ConfigMapEnvSource {
                    name: settings_name(obj),
                    optional: Some(false),
                }),
                ..Default::default()
            };
            (Vec::new(), Some(vec![source]))
        }
    };
    corev1::Container {
        name: workload.component().to_owned(),
        image: Some(spec.image.clone()),
        ports: Some(vec![corev1::ContainerPort {
            name: Some(HTTP.to_owned()),
            container_port: spec.port,
            protocol: Some("TCP".to_owned()),
            ..Default::default()
        }]),
        env: Some(merge_env(env, &spec.env)).filter(|env| !env.is_empty()),
        env_from,
        resources: Some(spec.resources.clone().unwrap_or_else(default_resources)),
        liveness_probe: Some(probe("/healthz", 10)),
        readiness_probe: Some(probe("/readyz", 5)),
        security_context: Some(corev1::SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            capabilities: Some(corev1::Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The Deployment of `workload`. Only the backend runs as its own ServiceAccount (with an API
/// token); only its pod template carries the settings checksum.
fn deployment(obj: &Network, workload: Workload) -> apps::Deployment {
    let spec = workload.spec(obj);
    let backend = workload == Workload::Backend;
    let annotations = backend.then(|| {
        let checksum = checksum(&settings_data(obj));
        BTreeMap::from([(CHECKSUM.to_owned(), checksum)])
    });
    apps::Deployment {
        metadata: metadata(obj, workload),
        spec: apps::DeploymentSpec {
            replicas: Some(spec.replicas),
            selector: meta::LabelSelector {
                match_labels: Some(selector_labels(obj, workload)),
                ..Default::default()
            },
            template: corev1::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: Some(labels(obj, workload)),
                    annotations,
                    ..Default::default()
                }),
                spec: Some(corev1::PodSpec {
                    automount_service_account_token: Some(backend),
                    service_account_name: backend.then(|| workload.name(obj)),
                    containers: vec![container(obj, workload)],
                    node_selector: (!spec.node_selector.is_empty())
                        .then(|| spec.node_selector.clone()),
                    tolerations: (!spec.tolerations.is_empty()).then(|| spec.tolerations.clone()),
                    security_context: Some(corev1::PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(RUN_AS),
                        run_as_group: Some(RUN_AS),
                        seccomp_profile: Some(corev1::SeccompProfile {
                            type_: "RuntimeDefault".to_owned(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The Service of `workload`: its port, to the container's `http` port.
fn service(obj: &Network, workload: Workload) -> corev1::Service {
    corev1::Service {
        metadata: metadata(obj, workload),
        spec: Some(corev1::ServiceSpec {
            selector: Some(selector_labels(obj, workload)),
            ports: Some(vec![corev1::ServicePort {
                name: Some(HTTP.to_owned()),
                port: workload.spec(obj).port,
                target_port: Some(IntOrString::String(HTTP.to_owned())),
                protocol: Some("TCP".to_owned()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Only the frontend's pods may reach the backend's, and only on its port.
fn network_policy(obj: &Network) -> networking::NetworkPolicy {
    let pods = |workload| meta::LabelSelector {
        match_labels: Some(selector_labels(obj, workload)),
        ..Default::default()
    };
    networking::NetworkPolicy {
        metadata: metadata(obj, Workload::Backend),
        spec: Some(networking::NetworkPolicySpec {
            pod_selector: Some(pods(Workload::Backend)),
            policy_types: Some(vec!["Ingress".to_owned()]),
            ingress: Some(vec![networking::NetworkPolicyIngressRule {
                from: Some(vec![networking::NetworkPolicyPeer {
                    pod_selector: Some(pods(Workload::Frontend)),
                    ..Default::default()
                }]),
                ports: Some(vec![networking::NetworkPolicyPort {
                    port: Some(IntOrString::Int(obj.spec.backend.port)),
                    protocol: Some("TCP".to_owned()),
                    ..Default::default()
                }]),
            }]),
            ..Default::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::network_v1alpha1::NetworkSpec;

    fn sample() -> Network {
        let spec = NetworkSpec::default();
        let mut obj = Network::new("sample", spec);
        obj.metadata.namespace = Some("shop".to_owned());
        obj
    }

    #[test]
    fn pods_run_under_the_restricted_profile() {
        let children = Children::new(&sample()).expect("valid");
        for deployment in [&children.frontend, &children.backend] {
            let pod = deployment.spec.template.spec.as_ref().expect("pod spec");
            let pod_security = pod.security_context.as_ref().expect("pod security");
            assert_eq!(pod_security.run_as_non_root, Some(true));
            let seccomp = pod_security.seccomp_profile.as_ref().expect("seccomp");
            assert_eq!(seccomp.type_, "RuntimeDefault");
            let container = &pod.containers[0];
            let security = container.security_context.as_ref().expect("security");
            assert_eq!(security.allow_privilege_escalation, Some(false));
            assert_eq!(security.read_only_root_filesystem, Some(true));
            assert_eq!(
                security.capabilities.as_ref().and_then(|c| c.drop.clone()),
                Some(vec!["ALL".to_owned()])
            );
            assert!(container.liveness_probe.is_some());
            assert!(container.readiness_probe.is_some());
        }
    }

    #[test]
    fn settings_change_the_checksum_and_the_operator_sets_address_and_namespace() {
        let mut obj = sample();
        obj.spec
            .settings
            .insert("NAMESPACE".to_owned(), "elsewhere".to_owned());
        let data = settings_data(&obj);
        assert_eq!(data["NAMESPACE"], "shop");
        assert_eq!(data["LISTEN_ADDRESS"], "0.0.0.0:8080");
        let before = checksum(&data);
        obj.spec
            .settings
            .insert("FEATURE_X".to_owned(), "on".to_owned());
        assert_ne!(checksum(&settings_data(&obj)), before);
        assert_eq!(checksum(&data), before, "deterministic");
    }

    #[test]
    fn user_env_overrides_the_operators_by_name() {
        let mut obj = sample();
        obj.spec.frontend.env = vec![env("BACKEND_URL", "http://elsewhere"), env("A", "b")];
        let children = Children::new(&obj).expect("valid");
        let pod = children.frontend.spec.template.spec.expect("pod");
        let env = pod.containers[0].env.clone().unwrap_or_default();
        let names: Vec<&str> = env.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["LISTEN_ADDRESS", "BACKEND_URL", "LOG_FORMAT", "A"]);
        assert_eq!(env[1].value.as_deref(), Some("http://elsewhere"));
    }

    #[test]
    fn long_names_are_refused() {
        let name = "x".repeat(MAX_NAME_LENGTH + 1);
        let spec = NetworkSpec::default();
        let obj = Network::new(&name, spec);
        assert_eq!(
            Children::new(&obj).map(|_| ()),
            Err(InvalidSpec::NameTooLong(name))
        );
    }
}
