//! [`ServiceNames`]: every name a service `NAME` gives rise to — its kinds, API group, crates
//! and directories — and the checks that they are valid and free in the project.
//!
//! For `billing` in domain `example.com`: the service kind `Billing` and the domain kind
//! `BillingAccount`, both in `billing.example.com/v1alpha1`; the crates `billing-operator`,
//! `billing-backend` and `billing-frontend` under `services/billing/`, or at the project root
//! when the service is laid out flat ([`ServiceNames::at`]).

use mni_plugin::names::{self, NameError};
use mni_plugin::{ProjectConfig, Service};
use mni_plugin_rust::v1::{Kind, OPERATOR_CRATE};

/// The API version both kinds start at.
pub const API_VERSION: &str = "v1alpha1";

/// The role under which PROJECT records the backend crate (`services[].crates`).
pub const BACKEND_CRATE: &str = "backend";

/// The role under which PROJECT records the frontend crate (`services[].crates`).
pub const FRONTEND_CRATE: &str = "frontend";

/// What the domain kind's name adds to the service kind's.
const DOMAIN_KIND_SUFFIX: &str = "Account";

/// Names the operator's generated code uses in the same scope as the service kind: a kind with
/// one of these names would shadow or clash with them. The Rust prelude's names, the mNi
/// operator prelude's, and everything the operator templates import or define (a unit test
/// keeps this list complete).
pub const RESERVED_KINDS: &[&str] = &[
    "Action",
    "Api",
    "ApiScope",
    "Arc",
    "BTreeMap",
    "Box",
    "Children",
    "Cli",
    "Client",
    "Clone",
    "ClusterRole",
    "Condition",
    "ConditionStatus",
    "Conditions",
    "ConfigMap",
    "Context",
    "ContextError",
    "ControllerOptions",
    "Copy",
    "CustomResource",
    "CustomResourceDefinition",
    "Debug",
    "Default",
    "DeleteParams",
    "Deployment",
    "DeploymentCondition",
    "DeploymentSpec",
    "DeploymentStatus",
    "Deserialize",
    "DeserializeOwned",
    "Digest",
    "Duration",
    "Eq",
    "Err",
    "Error",
    "EventType",
    "Fixture",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "IntOrString",
    "Into",
    "InvalidSpec",
    "Iterator",
    "JsonSchema",
    "K",
    "Labels",
    "ListParams",
    "Manager",
    "NamespaceResourceScope",
    "NetworkPolicy",
    "None",
    "ObjectRef",
    "Observed",
    "Ok",
    "OperatorArgs",
    "OperatorCommand",
    "Option",
    "Owner",
    "Parser",
    "PartialEq",
    "Patch",
    "PatchParams",
    "Path",
    "PolicyRule",
    "PostParams",
    "Quantity",
    "Reconciler",
    "Relations",
    "Resource",
    "ResourceExt",
    "Result",
    "Role",
    "RoleBinding",
    "RunningManager",
    "Send",
    "Serialize",
    "Service",
    "ServiceAccount",
    "ServiceStatus",
    "ServiceWorkloads",
    "Sha256",
    "Sized",
    "Some",
    "String",
    "Sync",
    "TestEnv",
    "Timestamp",
    "ToOwned",
    "ToString",
    "Value",
    "Vec",
    "Workload",
    "WorkloadError",
    "WorkloadSpec",
    "WorkloadStatus",
];

/// Why a service name cannot be used. Every message names the argument and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceNameError {
    /// The name breaks a naming rule.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A kind or resource name derived from the service name breaks a naming rule.
    #[error("NAME {name:?} is too long or unusual for the names derived from it: {source}")]
    DerivedName {
        /// The service name.
        name: String,
        /// The rule the derived name breaks.
        #[source]
        source: NameError,
    },
    /// PROJECT has no domain, so the service's API group would not be fully qualified.
    #[error(
        "PROJECT has no domain: a service's API group is NAME.DOMAIN; run `mni-scaffold init --domain DOMAIN` first"
    )]
    NoDomain,
    /// The service exists already.
    #[error("NAME {0:?} is already a service of this project (see PROJECT); choose a new name")]
    Exists(String),
    /// A kind the service defines is already a resource of the project.
    #[error(
        "NAME {name:?} would define the kind {kind} in API group {group}, which PROJECT already has ({existing}); choose another name"
    )]
    KindExists {
        /// The service name.
        name: String,
        /// The kind it would define.
        kind: String,
        /// The full API group.
        group: String,
        /// The resource already recorded.
        existing: String,
    },
    /// A kind the service defines has a name the generated code needs for something else.
    #[error(
        "NAME {name:?} would define the kind {kind}, a name the generated code already uses; choose another name"
    )]
    ReservedKind {
        /// The service name.
        name: String,
        /// The kind.
        kind: String,
    },
    /// A crate of the service would have the project's (root crate's) name.
    #[error(
        "NAME {name:?} would name its {role} crate {crate_name}, the project's root crate; choose another name"
    )]
    CrateExists {
        /// The service name.
        name: String,
        /// `operator`, `backend` or `frontend`.
        role: String,
        /// The package name.
        crate_name: String,
    },
}

/// A service's crate: its role, package name and directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceCrate {
    /// `operator`, `backend` or `frontend` (the key in PROJECT `services[].crates`).
    pub role: &'static str,
    /// The package name, e.g. `billing-backend`.
    pub crate_name: String,
    /// The package as a Rust identifier, e.g. `billing_backend`.
    pub crate_ident: String,
    /// The directory relative to the project root, without a trailing `/`.
    pub dir: String,
}

impl ServiceCrate {
    fn new(name: &str, role: &'static str, service_dir: &str) -> Self {
        let crate_name = format!("{name}-{role}");
        Self {
            role,
            crate_ident: names::to_snake_case(&crate_name),
            crate_name,
            dir: format!("{service_dir}{role}"),
        }
    }
}

/// Every name a service gives rise to: for `billing`, the kinds `Billing` and `BillingAccount`
/// in `billing.<domain>/v1alpha1` and the crates `billing-{operator,backend,frontend}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceNames {
    /// The service name, e.g. `billing`.
    pub name: String,
    /// The service's custom resource, one installation (e.g. `Billing`).
    pub service: Kind,
    /// The domain kind the backend serves (e.g. `BillingAccount`).
    pub domain: Kind,
    /// The directory holding the three crates, relative to the project root, with a trailing
    /// `/`: `services/NAME/`, or empty when the service is laid out flat.
    pub dir: String,
    /// The operator, backend and frontend crates.
    pub crates: [ServiceCrate; 3],
}

impl ServiceNames {
    /// The names of service `name` in a project whose domain is `domain`; checks the naming
    /// rules only (see [`check_free`](Self::check_free) for clashes with the project).
    pub fn new(name: &str, domain: &str) -> Result<Self, ServiceNameError> {
        Self::with_domain_kind(name, domain, None)
    }

    /// Like [`new`](Self::new), with the domain kind `domain_kind` instead of `<Name>Account`
    /// when it is `Some` (a plugin building on this one chooses it, e.g.
    /// `VirtualPrivateCloud`).
    pub fn with_domain_kind(
        name: &str,
        domain: &str,
        domain_kind: Option<&str>,
    ) -> Result<Self, ServiceNameError> {
        names::validate_service_name("NAME", name)?;
        if domain.is_empty() {
            return Err(ServiceNameError::NoDomain);
        }
        names::validate_dns1123_subdomain("the PROJECT domain", domain)?;
        let full_group = format!("{name}.{domain}");
        names::validate_dns1123_subdomain("NAME.DOMAIN (the service's API group)", &full_group)?;
        let kind = names::to_pascal_case(name);
        let domain_kind =
            domain_kind.map_or_else(|| format!("{kind}{DOMAIN_KIND_SUFFIX}"), ToOwned::to_owned);
        for k in [&kind, &domain_kind] {
            let derived = |source| ServiceNameError::DerivedName {
                name: name.to_owned(),
                source,
            };
            names::validate_kind("the kind", k).map_err(derived)?;
            names::validate_dns1123_label("the resource", &names::pluralize(&k.to_lowercase()))
                .map_err(derived)?;
            if RESERVED_KINDS.contains(&k.as_str()) {
                return Err(ServiceNameError::ReservedKind {
                    name: name.to_owned(),
                    kind: k.clone(),
                });
            }
        }
        let make = |kind: &str| Kind {
            group: name.to_owned(),
            full_group: full_group.clone(),
            version: API_VERSION.to_owned(),
            kind: kind.to_owned(),
            plural: names::pluralize(&kind.to_lowercase()),
            namespaced: true,
        };
        Ok(Self {
            name: name.to_owned(),
            service: make(&kind),
            domain: make(&domain_kind),
            dir: String::new(),
            crates: [
                ServiceCrate::new(name, OPERATOR_CRATE, ""),
                ServiceCrate::new(name, BACKEND_CRATE, ""),
                ServiceCrate::new(name, FRONTEND_CRATE, ""),
            ],
        }
        .at(&format!("services/{name}/")))
    }

    /// The same service with its crates under `dir` (relative to the project root, with a
    /// trailing `/`; empty for the project root): where PROJECT records the operator crate
    /// (see `mni_plugin_rust::v1::Target::service_dir`).
    #[must_use]
    pub fn at(mut self, dir: &str) -> Self {
        self.crates = [OPERATOR_CRATE, BACKEND_CRATE, FRONTEND_CRATE]
            .map(|role| ServiceCrate::new(&self.name, role, dir));
        self.dir = dir.to_owned();
        self
    }

    /// Checks that the service, its kinds and its crates are not taken in `config`.
    pub fn check_free(&self, config: &ProjectConfig) -> Result<(), ServiceNameError> {
        if config.service(&self.name).is_some() {
            return Err(ServiceNameError::Exists(self.name.clone()));
        }
        for kind in [&self.service, &self.domain] {
            let taken = config.resources.iter().find(|r| {
                let group = match &r.domain {
                    Some(d) if !d.is_empty() => format!("{}.{d}", r.group),
                    _ => r.group.clone(),
                };
                let plural = r
                    .plural
                    .clone()
                    .unwrap_or_else(|| names::pluralize(&r.kind.to_lowercase()));
                group == kind.full_group && (r.kind == kind.kind || plural == kind.plural)
            });
            if let Some(existing) = taken {
                return Err(ServiceNameError::KindExists {
                    name: self.name.clone(),
                    kind: kind.kind.clone(),
                    group: kind.full_group.clone(),
                    existing: existing.gvk(),
                });
            }
        }
        if let Some(project) = config.project_name.as_deref()
            && let Some(c) = self.crates.iter().find(|c| c.crate_name == project)
        {
            return Err(ServiceNameError::CrateExists {
                name: self.name.clone(),
                role: c.role.to_owned(),
                crate_name: c.crate_name.clone(),
            });
        }
        Ok(())
    }

    /// The operator crate.
    #[must_use]
    pub fn operator(&self) -> &ServiceCrate {
        &self.crates[0]
    }

    /// The backend crate.
    #[must_use]
    pub fn backend(&self) -> &ServiceCrate {
        &self.crates[1]
    }

    /// The frontend crate.
    #[must_use]
    pub fn frontend(&self) -> &ServiceCrate {
        &self.crates[2]
    }

    /// The service's PROJECT record, crates by role.
    #[must_use]
    pub fn crate_dirs(&self) -> std::collections::BTreeMap<String, String> {
        self.crates
            .iter()
            .map(|c| (c.role.to_owned(), c.dir.clone()))
            .collect()
    }

    /// The PROJECT record of the service, scaffolded by `plugin`.
    #[must_use]
    pub fn record(&self, plugin: &mni_plugin::PluginKey) -> Service {
        Service {
            crates: self.crate_dirs(),
            name: self.name.clone(),
            plugin: plugin.clone(),
        }
    }

    /// The data the templates see: the service kind under the keys `create api` uses (`kind`,
    /// `kind_snake`, `resource_plural`, `group_version`, …), the domain kind under `domain_*`
    /// keys, and each crate as `<role>_crate`, `<role>_ident` and `<role>_dir`.
    ///
    /// No key is named after a template helper (`plural`, `snake`, …): Handlebars would call
    /// the helper instead of reading the key.
    #[must_use]
    pub fn template_data(&self) -> serde_json::Value {
        let mut data = self.service.template_data();
        let d = &self.domain;
        let extra = serde_json::json!({
            "service_dir": self.dir,
            "title": names::words(&self.name)
                .iter()
                .map(|w| names::to_pascal_case(w))
                .collect::<Vec<_>>()
                .join(" "),
            "domain_kind": d.kind,
            "domain_kind_snake": names::to_snake_case(&d.kind),
            "domain_kind_lower": d.kind.to_lowercase(),
            "domain_kind_kebab": names::to_kebab_case(&d.kind),
            "domain_plural": d.plural,
            "kind_kebab": names::to_kebab_case(&self.service.kind),
        });
        if let (Some(map), Some(extra)) = (data.as_object_mut(), extra.as_object()) {
            map.extend(extra.clone());
            for c in &self.crates {
                map.insert(format!("{}_crate", c.role), c.crate_name.clone().into());
                map.insert(format!("{}_ident", c.role), c.crate_ident.clone().into());
                map.insert(format!("{}_dir", c.role), format!("{}/", c.dir).into());
            }
        }
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin::Resource;

    #[test]
    fn derives_kinds_groups_and_crates() {
        let n = ServiceNames::new("cloud-dns", "example.com").unwrap();
        assert_eq!(n.service.kind, "CloudDns");
        assert_eq!(n.service.plural, "clouddnses");
        assert_eq!(n.domain.kind, "CloudDnsAccount");
        assert_eq!(n.domain.plural, "clouddnsaccounts");
        assert_eq!(n.service.full_group, "cloud-dns.example.com");
        assert_eq!(n.service.group_version(), "cloud_dns_v1alpha1");
        assert_eq!(n.backend().crate_ident, "cloud_dns_backend");
        assert_eq!(n.frontend().dir, "services/cloud-dns/frontend");
        let data = n.template_data();
        assert_eq!(data["title"], "Cloud Dns");
        assert_eq!(data["domain_kind_snake"], "cloud_dns_account");
        assert_eq!(data["backend_dir"], "services/cloud-dns/backend/");
        assert_eq!(data["operator_crate"], "cloud-dns-operator");
        let flat = n.at("");
        assert_eq!(flat.backend().dir, "backend");
        assert_eq!(flat.template_data()["operator_dir"], "operator/");
        assert_eq!(flat.template_data()["service_dir"], "");
    }

    fn check(name: &str, domain: &str, config: &ProjectConfig, expected: &str) {
        let err = ServiceNames::new(name, domain)
            .and_then(|n| n.check_free(config))
            .expect_err(name)
            .to_string();
        assert!(err.contains(expected), "{name}: {err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }

    /// The PascalCase names a Rust template imports (`use`) or defines (`struct`, `enum`,
    /// `type`, `trait`) by itself, leaving out names built from template variables.
    fn names_in(template: &str) -> Vec<String> {
        let mut text = String::new();
        let mut rest = template;
        while let Some(start) = rest.find("{{") {
            text.push_str(&rest[..start]);
            let after = rest[start..]
                .find("}}")
                .map_or(rest.len(), |e| start + e + 2);
            rest = rest[after..].trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
        }
        text.push_str(rest);
        let mut found = Vec::new();
        let mut in_use = false;
        for line in text.lines() {
            let line = line.trim_start();
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            let line = line.strip_prefix("pub ").unwrap_or(line);
            let words: Vec<&str> = line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            in_use |= line.starts_with("use ");
            if in_use {
                found.extend(words.iter().map(|w| (*w).to_owned()));
                in_use = !line.contains(';');
            } else if let ["struct" | "enum" | "type" | "trait", name, ..] = words.as_slice() {
                found.push((*name).to_owned());
            }
        }
        found.retain(|w| {
            w.starts_with(|c: char| c.is_ascii_uppercase()) && w.chars().any(|c| c.is_lowercase())
        });
        found
    }

    #[test]
    fn reserved_kinds_cover_every_name_the_operator_templates_use() {
        let mut missing = std::collections::BTreeSet::new();
        for (path, source) in mni_templates::files("service", "v1") {
            if path.starts_with("operator/") && path.ends_with(".rs") {
                missing.extend(
                    names_in(source)
                        .into_iter()
                        .filter(|n| !RESERVED_KINDS.contains(&n.as_str()))
                        .map(|n| format!("{n} ({path})")),
                );
            }
        }
        assert!(missing.is_empty(), "add to RESERVED_KINDS: {missing:?}");
        assert!(RESERVED_KINDS.windows(2).all(|w| w[0] < w[1]), "sorted");
    }

    #[test]
    fn refuses_bad_and_taken_names() {
        let mut config = ProjectConfig::new("example.com");
        config.project_name = Some("shop-backend".into());
        config
            .add_resource(Resource {
                domain: Some("example.com".into()),
                ..Resource::new("ledger", "v1", "LedgerAccount")
            })
            .unwrap();
        check("Billing", "example.com", &config, "NAME \"Billing\"");
        check("fn", "example.com", &config, "Rust keyword");
        check("1st", "example.com", &config, "lowercase letter");
        check("billing", "", &config, "PROJECT has no domain");
        check("billing", "Example.com", &config, "the PROJECT domain");
        let long = format!("{}.com", vec!["a".repeat(60); 4].join("."));
        check("billing", &long, &config, "NAME.DOMAIN");
        check("deployment", "example.com", &config, "kind Deployment");
        check("ledger", "example.com", &config, "kind LedgerAccount");
        check("shop", "example.com", &config, "backend crate shop-backend");
        let long = "a".repeat(60);
        check(&long, "example.com", &config, "too long or unusual");
        config
            .add_service(Service {
                crates: Default::default(),
                name: "billing".into(),
                plugin: "service.mni.dev/v1".parse().unwrap(),
            })
            .unwrap();
        check("billing", "example.com", &config, "already a service");
        assert!(
            ServiceNames::new("invoices", "example.com")
                .unwrap()
                .check_free(&config)
                .is_ok()
        );
    }
}
