//! The input model: [`ResourceDoc`], the description of one served kind, and
//! [`KindSchema`], where its schema comes from.
//!
//! A `ResourceDoc` carries exactly what kube-apiserver's OpenAPI builders use to publish
//! a resource: its group, version, kind, list kind, plural, scope, which subresources it
//! serves, and its schema (a `schemars` generator function for built-in kinds from
//! `k8s-openapi`, or a CRD version's `openAPIV3Schema` for custom resources).

use std::any::TypeId;

use k8s_openapi::{ListableResource, NamespaceResourceScope, Resource};
use schemars::{JsonSchema, Schema, SchemaGenerator};

/// Errors raised when a set of [`ResourceDoc`]s cannot be turned into a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A group-version document was requested for an empty set of resources.
    #[error("no resources given for the group-version document")]
    Empty,
    /// The resources given for one group-version document span several group-versions.
    #[error("resources of {first} and {second} cannot share one group-version document")]
    MixedGroupVersions {
        /// The group-version of the first resource.
        first: String,
        /// The first differing group-version.
        second: String,
    },
    /// Two resources share a plural name in the same group-version.
    #[error("the resource {plural} is described twice in {group_version}")]
    DuplicateResource {
        /// The group-version both resources belong to.
        group_version: String,
        /// The duplicated plural.
        plural: String,
    },
    /// A required name (version, kind, list kind or plural) is empty.
    #[error("resource {kind:?} in {group_version:?} has an empty {field}")]
    EmptyName {
        /// The group-version of the resource.
        group_version: String,
        /// The kind of the resource (possibly empty).
        kind: String,
        /// Which field is empty.
        field: &'static str,
    },
    /// A custom resource schema is not a JSON object.
    #[error("the openAPIV3Schema of {group_version} {kind} is not a JSON object")]
    CustomSchemaNotObject {
        /// The group-version of the resource.
        group_version: String,
        /// The kind of the resource.
        kind: String,
    },
}

/// Where the schema of a served kind comes from.
#[derive(Clone)]
pub enum KindSchema {
    /// A built-in kind: a function that registers the kind's schema (and every schema it
    /// references) in a `schemars` generator and returns a `$ref` to it. The generator's
    /// definitions use Kubernetes' canonical names (`io.k8s.api.apps.v1.Deployment`, …)
    /// because `k8s-openapi`'s `JsonSchema::schema_name` returns them.
    Builtin(fn(&mut SchemaGenerator) -> Schema),
    /// A custom resource: the `openAPIV3Schema` of one CRD version, as JSON.
    Custom(serde_json::Value),
}

impl std::fmt::Debug for KindSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Builtin(_) => f.write_str("Builtin(..)"),
            Self::Custom(value) => f.debug_tuple("Custom").field(value).finish(),
        }
    }
}

/// The description of one served kind: everything needed to publish its paths and schemas.
#[derive(Debug, Clone)]
pub struct ResourceDoc {
    /// The API group, empty for the core group.
    pub group: String,
    /// The API version, e.g. `v1`.
    pub version: String,
    /// The kind, e.g. `Deployment`.
    pub kind: String,
    /// The list kind, e.g. `DeploymentList`.
    pub list_kind: String,
    /// The plural resource name used in URLs, e.g. `deployments`.
    pub plural: String,
    /// Whether the resource lives in namespaces.
    pub namespaced: bool,
    /// Whether the `status` subresource is served.
    pub status: bool,
    /// Whether the `scale` subresource is served.
    pub scale: bool,
    /// The schema of the kind.
    pub schema: KindSchema,
}

fn subschema<K: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<K>()
}

impl ResourceDoc {
    /// Describes a built-in kind from `k8s-openapi`: group, version, kind, list kind, plural
    /// and scope come from its `Resource`/`ListableResource` implementations, the schema
    /// from its `JsonSchema` implementation. Subresources are off; enable them with
    /// [`with_status`](Self::with_status) and [`with_scale`](Self::with_scale).
    #[must_use]
    pub fn builtin<K>() -> Self
    where
        K: Resource + ListableResource + JsonSchema + 'static,
    {
        Self {
            group: K::GROUP.to_owned(),
            version: K::VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            list_kind: K::LIST_KIND.to_owned(),
            plural: K::URL_PATH_SEGMENT.to_owned(),
            namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
            status: false,
            scale: false,
            schema: KindSchema::Builtin(subschema::<K>),
        }
    }

    /// Describes one version of a custom resource from its CRD: `schema` is that version's
    /// `openAPIV3Schema`. The list kind defaults to `<kind>List`; override it with
    /// [`with_list_kind`](Self::with_list_kind).
    #[must_use]
    pub fn custom(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
        plural: impl Into<String>,
        namespaced: bool,
        schema: serde_json::Value,
    ) -> Self {
        let kind = kind.into();
        Self {
            group: group.into(),
            version: version.into(),
            list_kind: format!("{kind}List"),
            kind,
            plural: plural.into(),
            namespaced,
            status: false,
            scale: false,
            schema: KindSchema::Custom(schema),
        }
    }

    /// Serves the `status` subresource.
    #[must_use]
    pub fn with_status(mut self) -> Self {
        self.status = true;
        self
    }

    /// Serves the `scale` subresource (`autoscaling/v1` `Scale`).
    #[must_use]
    pub fn with_scale(mut self) -> Self {
        self.scale = true;
        self
    }

    /// Sets the list kind (custom resources whose CRD names a non-default `listKind`).
    #[must_use]
    pub fn with_list_kind(mut self, list_kind: impl Into<String>) -> Self {
        self.list_kind = list_kind.into();
        self
    }

    /// Whether this is a custom resource (served without strategic merge patch or protobuf).
    #[must_use]
    pub fn is_custom(&self) -> bool {
        matches!(self.schema, KindSchema::Custom(_))
    }

    /// The group-version string: `v1` for the core group, `apps/v1` otherwise.
    #[must_use]
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The OpenAPI v3 discovery path of this resource's group-version: `api/v1` or
    /// `apis/<group>/<version>`.
    #[must_use]
    pub fn group_version_path(&self) -> String {
        group_version_path(&self.group, &self.version)
    }

    /// The URL prefix of this resource's group-version: `/api/v1` or `/apis/<group>/<version>`.
    pub(crate) fn url_prefix(&self) -> String {
        format!("/{}", self.group_version_path())
    }

    /// The canonical schema name of the kind (`io.k8s.api.apps.v1.Deployment` for built-ins,
    /// `com.example.stable.v1.CronTab` for custom resources). For built-ins this is only
    /// known after generation; this function returns the custom-resource form.
    pub(crate) fn custom_schema_name(&self, kind: &str) -> String {
        let mut parts: Vec<&str> = self.group.split('.').filter(|p| !p.is_empty()).collect();
        parts.reverse();
        let mut name = parts.join(".");
        if !name.is_empty() {
            name.push('.');
        }
        name.push_str(&self.version);
        name.push('.');
        name.push_str(kind);
        name
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let fields = [
            ("version", &self.version),
            ("kind", &self.kind),
            ("list kind", &self.list_kind),
            ("plural", &self.plural),
        ];
        for (field, value) in fields {
            if value.is_empty() {
                return Err(Error::EmptyName {
                    group_version: self.group_version(),
                    kind: self.kind.clone(),
                    field,
                });
            }
        }
        if let KindSchema::Custom(schema) = &self.schema
            && !schema.is_object()
        {
            return Err(Error::CustomSchemaNotObject {
                group_version: self.group_version(),
                kind: self.kind.clone(),
            });
        }
        Ok(())
    }
}

/// The OpenAPI v3 discovery path of a group-version: `api/v1` for the core group,
/// `apis/<group>/<version>` otherwise.
#[must_use]
pub fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Namespace;

    #[test]
    fn builtin_derives_names_and_scope() {
        let doc = ResourceDoc::builtin::<Deployment>()
            .with_status()
            .with_scale();
        assert_eq!(doc.group, "apps");
        assert_eq!(doc.version, "v1");
        assert_eq!(doc.kind, "Deployment");
        assert_eq!(doc.list_kind, "DeploymentList");
        assert_eq!(doc.plural, "deployments");
        assert!(doc.namespaced && doc.status && doc.scale && !doc.is_custom());
        assert_eq!(doc.group_version_path(), "apis/apps/v1");

        let ns = ResourceDoc::builtin::<Namespace>();
        assert!(!ns.namespaced);
        assert_eq!(ns.group_version(), "v1");
        assert_eq!(ns.group_version_path(), "api/v1");
    }

    #[test]
    fn custom_names_and_validation() {
        let doc = ResourceDoc::custom(
            "stable.example.com",
            "v1",
            "CronTab",
            "crontabs",
            true,
            serde_json::json!({"type": "object"}),
        );
        assert_eq!(doc.list_kind, "CronTabList");
        assert_eq!(
            doc.custom_schema_name("CronTab"),
            "com.example.stable.v1.CronTab"
        );
        assert!(doc.validate().is_ok());

        let bad = ResourceDoc::custom("g.io", "v1", "K", "ks", false, serde_json::json!(1));
        assert!(matches!(
            bad.validate(),
            Err(Error::CustomSchemaNotObject { .. })
        ));
        let empty = ResourceDoc::custom("g.io", "v1", "K", "", false, serde_json::json!({}));
        assert!(matches!(
            empty.validate(),
            Err(Error::EmptyName {
                field: "plural",
                ..
            })
        ));
    }
}
