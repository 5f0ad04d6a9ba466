//! `mni-web`: the web tier every mNi service shares — a backend that serves its domain kind
//! over HTTP, a frontend that serves its page and proxies `/api` to the backend, and the
//! runner of both binaries.
//!
//! A generated service's backend and frontend are thin: they name their domain kind, their
//! assets and their own routes, and this crate does the rest.
//!
//! Start with [`CrudRouter`] (the backend's routes over a [`Domain`]) and [`Frontend`] (the
//! frontend's). The modules:
//!
//! - `domain`: [`Kind`] (what a custom resource type must be), [`Domain`] (its objects in one
//!   namespace, with the service's build and validation hooks), the JSON shapes ([`View`],
//!   [`CreateRequest`], [`ReplaceRequest`], [`ListResponse`]);
//! - `crud`: [`CrudRouter`], the list/read/create/replace/delete routes, probes, a JSON 404;
//! - `error`: [`ApiError`], every failure as one JSON problem body naming the fields at fault;
//! - `openapi`: [`OpenApi`], the OpenAPI 3 document, schemas taken from the CRD;
//! - `frontend` and `proxy`: [`Frontend`] (embedded assets) and [`Backend`] (the `/api` proxy);
//! - `runner`: [`ServeArgs`] (the flags of every web binary), [`run`] (serve until SIGTERM or
//!   SIGINT);
//! - `testing` (feature `testing`): [`testing::TestServer`] for integration tests.
//!
//! A backend for a `Widget` kind, in full:
//!
//! ```no_run
//! use kube::CustomResource;
//! use mni_web::{ApiError, CrudRouter, Domain, OpenApi, ServeArgs};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
//! #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
//! #[kube(status = "WidgetStatus")]
//! pub struct WidgetSpec {
//!     size: u32,
//! }
//!
//! #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
//! pub struct WidgetStatus {}
//!
//! /// No widget is larger than 10.
//! fn validate(name: &str, spec: &WidgetSpec, _old: Option<&WidgetSpec>) -> Result<(), ApiError> {
//!     match spec.size {
//!         0..=10 => Ok(()),
//!         _ => Err(ApiError::invalid(format!("Widget {name:?} is invalid: spec.size: at most 10"))),
//!     }
//! }
//!
//! # async fn main_() -> Result<(), Box<dyn std::error::Error>> {
//! let client = kube::Client::try_default().await?;
//! let domain = Domain::new(client, "default", Widget::new).with_validation(validate);
//! let router = CrudRouter::new("/api/v1/widgets")
//!     .with_openapi(OpenApi::new("widgets", "v1"))
//!     .router(domain);
//! let listener = ServeArgs::default().bind(([127, 0, 0, 1], 8090).into()).await?;
//! mni_web::run(listener, router).await?;
//! # Ok(())
//! # }
//! ```
//!
//! **Architecture Invariant:** like `mni-operator`, `mni-web` depends on no control plane
//! crate: it runs unchanged against a real kube-apiserver. Its tests use `mni-testkit` only as
//! a dev-dependency.

mod crud;
mod domain;
mod error;
mod frontend;
mod openapi;
mod proxy;
mod runner;
#[cfg(feature = "testing")]
pub mod testing;

pub use crud::{CrudRouter, OPENAPI_PATH};
pub use domain::{
    Build, CreateRequest, Domain, Kind, ListResponse, ReplaceRequest, Spec, Status, Validate, View,
};
pub use error::{ApiError, Cause};
pub use frontend::{AssetError, Frontend};
pub use openapi::{OpenApi, path_parameter, reference};
pub use proxy::{Backend, ProxyError};
pub use runner::{LogFormat, RunError, ServeArgs, run, serve, shutdown_signal};

#[cfg(test)]
mod tests {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// A kind for the unit tests.
    #[derive(CustomResource, Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
    #[kube(status = "WidgetStatus")]
    pub(crate) struct WidgetSpec {
        pub(crate) size: u32,
    }

    /// Its status.
    #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
    pub(crate) struct WidgetStatus {
        pub(crate) ready: bool,
    }

    #[test]
    fn a_view_shows_name_spec_and_status_in_camel_case() {
        let mut widget = Widget::new("w", WidgetSpec { size: 3 });
        widget.status = Some(WidgetStatus { ready: true });
        let view = serde_json::to_value(super::View::of(&widget)).expect("JSON");
        assert_eq!(
            view,
            serde_json::json!({ "name": "w", "spec": { "size": 3 }, "status": { "ready": true } })
        );
    }

    /// Handlers' futures must be `Send` for axum; this only needs to compile.
    #[allow(dead_code, reason = "a compile-time check")]
    fn routers_build_for_any_kind(domain: super::Domain<Widget>) -> axum::Router {
        super::CrudRouter::<Widget>::new("/api/v1/widgets").router(domain)
    }
}
