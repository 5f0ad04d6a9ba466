//! The objects a service installation owns, as pure functions of a [`ServiceWorkloads`], so
//! that they are easy to read, to unit-test and to change.
//!
//! Both Deployments run under the restricted Pod Security profile (non-root user, seccomp
//! `RuntimeDefault`, every capability dropped, no privilege escalation, read-only root file
//! system) with probes on `/healthz` and `/readyz`. Owner references are added when the
//! objects are applied ([`super::apply`]).

use std::collections::BTreeMap;

use k8s_openapi::api::{
    apps::v1 as apps, core::v1 as corev1, networking::v1 as networking, rbac::v1 as rbac,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use sha2::{Digest, Sha256};

use super::{Component, ServiceWorkloads};

/// The user and group the containers run as (distroless `nonroot`).
pub const RUN_AS: i64 = 65532;

/// The longest installation name: `NAME-frontend` must still be a Service name (a DNS label).
pub const MAX_NAME_LENGTH: usize = 63 - "-frontend".len();

/// The port name of both containers, which probes and Services refer to.
const HTTP: &str = "http";

/// Labels, or a label selector's `matchLabels`.
pub type Labels = BTreeMap<String, String>;

/// Why a service installation cannot be turned into objects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidSpec {
    /// The name is too long for the Services it names.
    #[error(
        "metadata.name {0:?} is longer than {MAX_NAME_LENGTH} characters: it names the Services NAME-frontend and NAME-backend, which must be DNS labels"
    )]
    NameTooLong(String),
}

/// Everything a service installation owns. The fields are public: customise an object by
/// changing it before it is applied (see [`ServiceWorkloads::with_customize`]); an optional one
/// set to `None` is deleted if an earlier reconcile created it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Children {
    /// The backend's identity.
    pub service_account: corev1::ServiceAccount,
    /// The backend's permissions in the namespace (`None` when it needs none).
    pub role: Option<rbac::Role>,
    /// Grants `role` to `service_account` (`None` with `role`).
    pub role_binding: Option<rbac::RoleBinding>,
    /// The backend's settings, as environment variables.
    pub settings: corev1::ConfigMap,
    /// Routes to the frontend's pods.
    pub frontend_service: corev1::Service,
    /// Routes to the backend's pods.
    pub backend_service: corev1::Service,
    /// Lets only the frontend's pods reach the backend's (`None`: no policy).
    pub network_policy: Option<networking::NetworkPolicy>,
    /// The web UI.
    pub frontend: apps::Deployment,
    /// The HTTP API.
    pub backend: apps::Deployment,
}

impl Children {
    /// The objects `workloads` asks for.
    pub fn new(workloads: &ServiceWorkloads) -> Result<Self, InvalidSpec> {
        let w = workloads;
        if w.instance.len() > MAX_NAME_LENGTH {
            return Err(InvalidSpec::NameTooLong(w.instance.clone()));
        }
        let backend = w.name(Component::Backend);
        let mut settings = metadata(w, Component::Backend);
        settings.name = Some(w.settings_name());
        let rbac = !w.backend_rules.is_empty();
        Ok(Self {
            service_account: corev1::ServiceAccount {
                metadata: metadata(w, Component::Backend),
                automount_service_account_token: Some(true),
                ..Default::default()
            },
            role: rbac.then(|| rbac::Role {
                metadata: metadata(w, Component::Backend),
                rules: Some(w.backend_rules.clone()),
            }),
            role_binding: rbac.then(|| rbac::RoleBinding {
                metadata: metadata(w, Component::Backend),
                role_ref: rbac::RoleRef {
                    api_group: Some("rbac.authorization.k8s.io".to_owned()),
                    kind: "Role".to_owned(),
                    name: backend.clone(),
                },
                subjects: Some(vec![rbac::Subject {
                    kind: "ServiceAccount".to_owned(),
                    name: backend.clone(),
                    namespace: w.namespace.clone(),
                    ..Default::default()
                }]),
            }),
            settings: corev1::ConfigMap {
                metadata: settings,
                data: Some(w.settings_data()),
                ..Default::default()
            },
            frontend_service: service(w, Component::Frontend),
            backend_service: service(w, Component::Backend),
            network_policy: Some(network_policy(w)),
            frontend: deployment(w, Component::Frontend),
            backend: deployment(w, Component::Backend),
        })
    }
}

/// The labels that select `component`'s pods (never change them: a Deployment's selector is
/// immutable).
#[must_use]
pub fn selector_labels(w: &ServiceWorkloads, component: Component) -> Labels {
    Labels::from([
        ("app.kubernetes.io/name".to_owned(), w.service.clone()),
        ("app.kubernetes.io/instance".to_owned(), w.instance.clone()),
        (
            "app.kubernetes.io/component".to_owned(),
            component.as_str().to_owned(),
        ),
    ])
}

/// The labels of every object of `component`.
#[must_use]
pub fn labels(w: &ServiceWorkloads, component: Component) -> Labels {
    let mut labels = selector_labels(w, component);
    labels.insert("app.kubernetes.io/part-of".to_owned(), w.service.clone());
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        w.managed_by.clone(),
    );
    labels
}

/// Name, namespace and labels of the object of `component`.
fn metadata(w: &ServiceWorkloads, component: Component) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: Some(w.name(component)),
        namespace: w.namespace.clone(),
        labels: Some(labels(w, component)),
        ..Default::default()
    }
}

/// A SHA-256 of `data`, stable across operator versions, so that a change of the settings (and
/// only that) changes the backend's pod template and rolls it.
#[must_use]
pub fn checksum(data: &BTreeMap<String, String>) -> String {
    let mut hash = Sha256::new();
    for (key, value) in data {
        hash.update(key.as_bytes());
        hash.update([0]);
        hash.update(value.as_bytes());
        hash.update([0]);
    }
    hex(&hash.finalize())
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A plain environment variable.
#[must_use]
pub fn env(name: &str, value: &str) -> corev1::EnvVar {
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

/// The restricted profile's container security context.
#[must_use]
pub fn restricted_container() -> corev1::SecurityContext {
    corev1::SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        capabilities: Some(corev1::Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The restricted profile's pod security context, running as [`RUN_AS`].
#[must_use]
pub fn restricted_pod() -> corev1::PodSecurityContext {
    corev1::PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(RUN_AS),
        run_as_group: Some(RUN_AS),
        seccomp_profile: Some(corev1::SeccompProfile {
            type_: "RuntimeDefault".to_owned(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The container of `component`, restricted, with its environment: the frontend learns where
/// the backend is; the backend gets its settings from the ConfigMap.
fn container(w: &ServiceWorkloads, component: Component) -> corev1::Container {
    let spec = w.spec(component);
    let listen = format!("0.0.0.0:{}", spec.port);
    let (env_vars, env_from) = match component {
        Component::Frontend => {
            let backend = Component::Backend;
            let url = format!("http://{}:{}", w.name(backend), w.spec(backend).port);
            let vars = vec![
                env("LISTEN_ADDRESS", &listen),
                env("BACKEND_URL", &url),
                env("LOG_FORMAT", "json"),
            ];
            (vars, None)
        }
        Component::Backend => {
            let source = corev1::EnvFromSource {
                config_map_ref: Some(corev1::ConfigMapEnvSource {
                    name: w.settings_name(),
                    optional: Some(false),
                }),
                ..Default::default()
            };
            (Vec::new(), Some(vec![source]))
        }
    };
    corev1::Container {
        name: component.as_str().to_owned(),
        image: Some(spec.image.clone()),
        ports: Some(vec![corev1::ContainerPort {
            name: Some(HTTP.to_owned()),
            container_port: spec.port,
            protocol: Some("TCP".to_owned()),
            ..Default::default()
        }]),
        env: Some(merge_env(env_vars, &spec.env)).filter(|env| !env.is_empty()),
        env_from,
        resources: Some(spec.resources.clone().unwrap_or_else(default_resources)),
        liveness_probe: Some(probe("/healthz", 10)),
        readiness_probe: Some(probe("/readyz", 5)),
        security_context: Some(restricted_container()),
        ..Default::default()
    }
}

/// The Deployment of `component`. Only the backend runs as its own ServiceAccount (with an API
/// token); only its pod template carries the settings checksum.
fn deployment(w: &ServiceWorkloads, component: Component) -> apps::Deployment {
    let spec = w.spec(component);
    let backend = component == Component::Backend;
    let annotations = backend.then(|| {
        let checksum = checksum(&w.settings_data());
        BTreeMap::from([(w.checksum_annotation(), checksum)])
    });
    apps::Deployment {
        metadata: metadata(w, component),
        spec: apps::DeploymentSpec {
            replicas: Some(spec.replicas),
            selector: meta::LabelSelector {
                match_labels: Some(selector_labels(w, component)),
                ..Default::default()
            },
            template: corev1::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: Some(labels(w, component)),
                    annotations,
                    ..Default::default()
                }),
                spec: Some(corev1::PodSpec {
                    automount_service_account_token: Some(backend),
                    service_account_name: backend.then(|| w.name(component)),
                    containers: vec![container(w, component)],
                    node_selector: (!spec.node_selector.is_empty())
                        .then(|| spec.node_selector.clone()),
                    tolerations: (!spec.tolerations.is_empty()).then(|| spec.tolerations.clone()),
                    security_context: Some(restricted_pod()),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The Service of `component`: its port, to the container's `http` port.
fn service(w: &ServiceWorkloads, component: Component) -> corev1::Service {
    corev1::Service {
        metadata: metadata(w, component),
        spec: Some(corev1::ServiceSpec {
            selector: Some(selector_labels(w, component)),
            ports: Some(vec![corev1::ServicePort {
                name: Some(HTTP.to_owned()),
                port: w.spec(component).port,
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
fn network_policy(w: &ServiceWorkloads) -> networking::NetworkPolicy {
    let pods = |component| meta::LabelSelector {
        match_labels: Some(selector_labels(w, component)),
        ..Default::default()
    };
    networking::NetworkPolicy {
        metadata: metadata(w, Component::Backend),
        spec: Some(networking::NetworkPolicySpec {
            pod_selector: Some(pods(Component::Backend)),
            policy_types: Some(vec!["Ingress".to_owned()]),
            ingress: Some(vec![networking::NetworkPolicyIngressRule {
                from: Some(vec![networking::NetworkPolicyPeer {
                    pod_selector: Some(pods(Component::Frontend)),
                    ..Default::default()
                }]),
                ports: Some(vec![networking::NetworkPolicyPort {
                    port: Some(IntOrString::Int(w.backend.port)),
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
    use mni_core::WorkloadSpec;

    fn sample() -> ServiceWorkloads {
        ServiceWorkloads::new("ledger", "ledger.example.com", "sample", Some("shop"))
            .with_frontend(WorkloadSpec::new("ledger-frontend:latest"))
            .with_backend(WorkloadSpec::new("ledger-backend:latest"))
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
    fn names_labels_and_the_settings_checksum() {
        let w = sample().with_settings([("FEATURE_X".to_owned(), "on".to_owned())]);
        let children = Children::new(&w).expect("valid");
        assert_eq!(
            children.backend.metadata.name.as_deref(),
            Some("sample-backend")
        );
        assert_eq!(
            children.settings.metadata.name.as_deref(),
            Some("sample-backend-settings")
        );
        let labels = children
            .frontend
            .metadata
            .labels
            .clone()
            .unwrap_or_default();
        assert_eq!(labels["app.kubernetes.io/name"], "ledger");
        assert_eq!(labels["app.kubernetes.io/managed-by"], "ledger-operator");
        assert_eq!(labels["app.kubernetes.io/component"], "frontend");
        let template = &children.backend.spec.template;
        let annotations = template
            .metadata
            .as_ref()
            .and_then(|m| m.annotations.clone());
        let checksum_before =
            annotations.unwrap_or_default()["ledger.example.com/settings-checksum"].clone();
        let changed = w.with_settings([("FEATURE_X".to_owned(), "off".to_owned())]);
        let after = Children::new(&changed).expect("valid");
        let template = &after.backend.spec.template;
        let annotations = template
            .metadata
            .as_ref()
            .and_then(|m| m.annotations.clone());
        assert_ne!(
            annotations.unwrap_or_default()["ledger.example.com/settings-checksum"],
            checksum_before
        );
    }

    #[test]
    fn settings_keep_the_address_and_namespace_the_operator_decides() {
        let w = sample().with_settings([("NAMESPACE".to_owned(), "elsewhere".to_owned())]);
        let data = w.settings_data();
        assert_eq!(data["NAMESPACE"], "shop");
        assert_eq!(data["LISTEN_ADDRESS"], "0.0.0.0:8080");
        assert_eq!(data["LOG_FORMAT"], "json");
        assert_eq!(
            checksum(&data),
            checksum(&w.settings_data()),
            "deterministic"
        );
    }

    #[test]
    fn user_env_overrides_the_operators_by_name() {
        let mut frontend = WorkloadSpec::new("f:1");
        frontend.env = vec![env("BACKEND_URL", "http://elsewhere"), env("A", "b")];
        let children = Children::new(&sample().with_frontend(frontend)).expect("valid");
        let pod = children.frontend.spec.template.spec.expect("pod");
        let env = pod.containers[0].env.clone().unwrap_or_default();
        let names: Vec<&str> = env.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["LISTEN_ADDRESS", "BACKEND_URL", "LOG_FORMAT", "A"]);
        assert_eq!(env[1].value.as_deref(), Some("http://elsewhere"));
    }

    #[test]
    fn backend_rbac_only_when_the_backend_needs_permissions() {
        let none = Children::new(&sample()).expect("valid");
        assert!(none.role.is_none() && none.role_binding.is_none());
        let rule = rbac::PolicyRule {
            api_groups: Some(vec!["ledger.example.com".to_owned()]),
            resources: Some(vec!["ledgeraccounts".to_owned()]),
            verbs: vec!["get".to_owned()],
            ..Default::default()
        };
        let some = Children::new(&sample().with_backend_rules(vec![rule.clone()])).expect("valid");
        assert_eq!(some.role.and_then(|r| r.rules), Some(vec![rule]));
        let binding = some.role_binding.expect("binding");
        assert_eq!(binding.role_ref.name, "sample-backend");
        let subject = &binding.subjects.expect("subjects")[0];
        assert_eq!(
            (subject.name.as_str(), subject.namespace.as_deref()),
            ("sample-backend", Some("shop"))
        );
    }

    #[test]
    fn long_names_are_refused() {
        let name = "x".repeat(MAX_NAME_LENGTH + 1);
        let w = ServiceWorkloads::new("ledger", "ledger.example.com", &name, Some("shop"));
        assert_eq!(
            Children::new(&w).map(|_| ()),
            Err(InvalidSpec::NameTooLong(name))
        );
    }
}
