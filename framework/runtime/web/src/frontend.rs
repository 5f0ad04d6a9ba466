//! [`Frontend`]: a service's web UI — embedded static assets, `/api/…` proxied to the
//! backend ([`Backend`]) and the probes.
//!
//! Assets are `&'static str`s the binary embeds (`include_str!`), so building it needs no
//! Node toolchain and the image is one static file. Every asset is served with
//! `Cache-Control: no-cache` and a `Content-Security-Policy` of `default-src 'self'`: the page
//! loads scripts, styles and data from its own origin only.

use std::collections::BTreeMap;

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use axum::response::IntoResponse;
use axum::routing::{any, get};

use crate::proxy::{Backend, forward};

/// Why an asset cannot be served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssetError {
    /// The asset's path does not start with `/`.
    #[error("asset path {0:?} must start with '/', e.g. \"/app.js\"")]
    RelativePath(String),
    /// The asset's path is under `/api/`, which goes to the backend.
    #[error("asset path {0:?} is under /api/, which is proxied to the backend")]
    UnderApi(String),
}

/// One embedded asset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Asset {
    content_type: &'static str,
    body: &'static str,
}

/// Builds the [`Router`] of a frontend. See the docs atop `src/frontend.rs`.
#[derive(Clone, Debug, Default)]
#[must_use = "a Frontend does nothing until `router` is called"]
pub struct Frontend {
    assets: BTreeMap<String, Asset>,
}

impl Frontend {
    /// A frontend without assets (it still proxies `/api` and answers the probes).
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `body` at `path` (e.g. `/` or `/app.js`), with the content type its extension
    /// names (`.html`, `.js`, `.css`, `.json`, `.svg`; `/` and anything else is HTML).
    ///
    /// # Errors
    ///
    /// [`AssetError`] when `path` is not absolute or is under `/api/`.
    pub fn with_asset(self, path: &str, body: &'static str) -> Result<Self, AssetError> {
        self.with_typed_asset(path, content_type(path), body)
    }

    /// Serves `body` at `path` as `content_type`.
    ///
    /// # Errors
    ///
    /// [`AssetError`] when `path` is not absolute or is under `/api/`.
    pub fn with_typed_asset(
        mut self,
        path: &str,
        content_type: &'static str,
        body: &'static str,
    ) -> Result<Self, AssetError> {
        if !path.starts_with('/') {
            return Err(AssetError::RelativePath(path.to_owned()));
        }
        if path == "/api" || path.starts_with("/api/") {
            return Err(AssetError::UnderApi(path.to_owned()));
        }
        let asset = Asset { content_type, body };
        self.assets.insert(path.to_owned(), asset);
        Ok(self)
    }

    /// Every route: the assets, `/api/{*path}` to `backend`, `/healthz` and `/readyz`.
    pub fn router(self, backend: Backend) -> Router {
        let mut router = Router::new();
        for (path, asset) in self.assets {
            router = router.route(&path, get(move || serve_asset(asset)));
        }
        router
            .route("/api/{*path}", any(forward))
            .route("/healthz", get(|| async { "ok" }))
            .route("/readyz", get(|| async { "ok" }))
            .with_state(backend)
    }
}

/// The content type of `path`, by its extension.
fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e);
    match extension {
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "text/html; charset=utf-8",
    }
}

async fn serve_asset(asset: Asset) -> impl IntoResponse {
    let headers = [
        (CONTENT_TYPE, asset.content_type),
        (CACHE_CONTROL, "no-cache"),
        (CONTENT_SECURITY_POLICY, "default-src 'self'"),
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (headers, asset.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_extension() {
        for (path, expected) in [
            ("/", "text/html; charset=utf-8"),
            ("/app.js", "text/javascript; charset=utf-8"),
            ("/style.css", "text/css; charset=utf-8"),
            ("/logo.svg", "image/svg+xml"),
        ] {
            assert_eq!(content_type(path), expected, "{path}");
        }
    }

    #[test]
    fn assets_are_absolute_and_outside_the_api() {
        assert_eq!(
            Frontend::new().with_asset("app.js", "").unwrap_err(),
            AssetError::RelativePath("app.js".to_owned())
        );
        assert!(matches!(
            Frontend::new().with_asset("/api/x", ""),
            Err(AssetError::UnderApi(_))
        ));
        assert!(Frontend::new().with_asset("/app.js", "").is_ok());
    }
}
