//! The domain kind a service's API serves: [`Kind`] (what a custom resource type must be),
//! [`Domain`] (its objects in one namespace, with the service's hooks) and the JSON shapes
//! of the API ([`View`], [`CreateRequest`], [`ReplaceRequest`], [`ListResponse`]).
//!
//! Every write goes through [`Domain`], which runs the service's validation hook before it
//! reaches the Kubernetes API, so handlers a service adds (e.g. sub-resources of the spec)
//! validate exactly as the CRUD routes do.

use std::fmt::Debug;
use std::sync::Arc;

use kube::api::{DeleteParams, ListParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::core::object::{HasSpec, HasStatus};
use kube::{Api, Client, CustomResourceExt, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::ApiError;

/// A namespaced custom resource with a spec and a status, as `#[derive(CustomResource)]`
/// makes them: what a [`Domain`] serves. Implemented for every such type.
pub trait Kind:
    Resource<Scope = NamespaceResourceScope, DynamicType = ()>
    + HasSpec<Spec: Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static>
    + HasStatus<Status: Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static>
    + CustomResourceExt
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Kind for K where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + HasSpec<Spec: Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static>
        + HasStatus<Status: Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static>
        + CustomResourceExt
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// The spec type of kind `K`.
pub type Spec<K> = <K as HasSpec>::Spec;

/// The status type of kind `K`.
pub type Status<K> = <K as HasStatus>::Status;

/// Builds a new object from its name and spec: `#[derive(CustomResource)]`'s `K::new`.
pub type Build<K> = fn(&str, Spec<K>) -> K;

/// Checks a spec before it is written: `(name, new spec, old spec when replacing)`. An error
/// is the response, worded as the API server words it (see [`ApiError::invalid`]).
pub type Validate<K> = fn(&str, &Spec<K>, Option<&Spec<K>>) -> Result<(), ApiError>;

/// The hooks of a domain kind, shared by every clone of a [`Domain`].
struct Hooks<K: Kind> {
    build: Build<K>,
    validate: Validate<K>,
}

/// The objects of kind `K` in one namespace, with the service's hooks: the state of every
/// handler of the API. See the docs atop `src/domain.rs`.
pub struct Domain<K: Kind> {
    api: Api<K>,
    namespace: String,
    hooks: Arc<Hooks<K>>,
}

impl<K: Kind> Clone for Domain<K> {
    fn clone(&self) -> Self {
        Self {
            api: self.api.clone(),
            namespace: self.namespace.clone(),
            hooks: Arc::clone(&self.hooks),
        }
    }
}

impl<K: Kind> Debug for Domain<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Domain")
            .field("kind", &K::kind(&()))
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

fn accept_all<S>(_: &str, _: &S, _: Option<&S>) -> Result<(), ApiError> {
    Ok(())
}

impl<K: Kind> Domain<K> {
    /// The objects of `namespace` through `client`; `build` makes a new object (pass
    /// `K::new`). Every spec is accepted until [`with_validation`](Self::with_validation).
    #[must_use]
    pub fn new(client: Client, namespace: &str, build: Build<K>) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            hooks: Arc::new(Hooks {
                build,
                validate: accept_all::<Spec<K>>,
            }),
        }
    }

    /// Checks every spec with `validate` before it is written.
    #[must_use]
    pub fn with_validation(self, validate: Validate<K>) -> Self {
        Self {
            hooks: Arc::new(Hooks {
                build: self.hooks.build,
                validate,
            }),
            ..self
        }
    }

    /// The namespace whose objects are served.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The Kubernetes API of the namespace's objects, for what the methods below do not cover.
    #[must_use]
    pub fn api(&self) -> &Api<K> {
        &self.api
    }

    /// Every object of the namespace, by name.
    ///
    /// # Errors
    ///
    /// What the Kubernetes API answers, as an [`ApiError`].
    pub async fn list(&self) -> Result<Vec<K>, ApiError> {
        let mut items = self.api.list(&ListParams::default()).await?.items;
        items.sort_by_key(ResourceExt::name_any);
        Ok(items)
    }

    /// The object `name`.
    ///
    /// # Errors
    ///
    /// `NotFound` and what else the Kubernetes API answers.
    pub async fn get(&self, name: &str) -> Result<K, ApiError> {
        Ok(self.api.get(name).await?)
    }

    /// Validates `spec` and creates the object `name` with it.
    ///
    /// # Errors
    ///
    /// The validation hook's error, `AlreadyExists`, `Invalid` and what else the API answers.
    pub async fn create(&self, name: &str, spec: Spec<K>) -> Result<K, ApiError> {
        (self.hooks.validate)(name, &spec, None)?;
        let obj = (self.hooks.build)(name, spec);
        let created = self.api.create(&PostParams::default(), &obj).await?;
        tracing::info!(name = %created.name_any(), namespace = self.namespace, "created");
        Ok(created)
    }

    /// Validates `spec` against `obj`'s current spec and replaces `obj`'s spec with it
    /// (optimistically: a concurrent change is HTTP 409).
    ///
    /// # Errors
    ///
    /// The validation hook's error, `Conflict` and what else the API answers.
    pub async fn replace_spec(&self, mut obj: K, spec: Spec<K>) -> Result<K, ApiError> {
        let name = obj.name_any();
        (self.hooks.validate)(&name, &spec, Some(obj.spec()))?;
        *obj.spec_mut() = spec;
        let replaced = self
            .api
            .replace(&name, &PostParams::default(), &obj)
            .await?;
        tracing::info!(%name, namespace = self.namespace, "replaced");
        Ok(replaced)
    }

    /// Deletes the object `name`.
    ///
    /// # Errors
    ///
    /// `NotFound` and what else the Kubernetes API answers.
    pub async fn delete(&self, name: &str) -> Result<(), ApiError> {
        self.api.delete(name, &DeleteParams::default()).await?;
        tracing::info!(%name, namespace = self.namespace, "deleted");
        Ok(())
    }

    /// Whether the Kubernetes API answers a list of one object: the API can serve.
    ///
    /// # Errors
    ///
    /// What the Kubernetes API answers, as an [`ApiError`].
    pub async fn ready(&self) -> Result<(), ApiError> {
        self.api.list(&ListParams::default().limit(1)).await?;
        Ok(())
    }
}

/// An object as the API shows it: its name, what it asks for and what the operator reports.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound(serialize = "", deserialize = ""))]
pub struct View<K: Kind> {
    /// The object's name, unique in its namespace.
    pub name: String,
    /// What it asks for.
    pub spec: Spec<K>,
    /// What the operator last reported, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status<K>>,
    /// When it was created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

impl<K: Kind> View<K> {
    /// The view of `obj`.
    #[must_use]
    pub fn of(obj: &K) -> Self {
        Self {
            name: obj.name_any(),
            spec: obj.spec().clone(),
            status: obj.status().cloned(),
            created_at: obj
                .meta()
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string()),
        }
    }
}

/// The body of `POST` on the collection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreateRequest<S> {
    /// The new object's name: lowercase letters, digits and '-'.
    pub name: String,
    /// What it asks for.
    pub spec: S,
}

/// The body of `PUT` on one object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaceRequest<S> {
    /// What it asks for from now on.
    pub spec: S,
}

/// The body of `GET` on the collection.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound(serialize = "", deserialize = ""))]
pub struct ListResponse<K: Kind> {
    /// Every object of the namespace, by name.
    pub items: Vec<View<K>>,
}
