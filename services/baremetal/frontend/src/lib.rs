// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `metal_frontend`: the metal service's web UI.
//!
//! A page that lists, creates and deletes Servers and shows their status. Its HTML,
//! JavaScript and CSS (under `assets/`) are compiled into the binary with `include_str!`, so
//! building it needs no Node toolchain and the image is one static file. The page calls
//! `/api/…` on its own origin; `mni-web` ([`mni_web::Frontend`]) serves the assets and
//! forwards those requests to the [`Backend`], so the browser talks to one server and the
//! backend needs no CORS. More assets go in at the `+mni:scaffold:assets` marker.
//!
//! Start with [`router`]; `src/main.rs` parses the flags and serves it.

use axum::Router;
use mni_web::{AssetError, Frontend};

pub use mni_web::{Backend, ProxyError};

/// The page.
pub const INDEX_HTML: &str = include_str!("../assets/index.html");
/// Its script.
pub const APP_JS: &str = include_str!("../assets/app.js");
/// Its style sheet.
pub const STYLE_CSS: &str = include_str!("../assets/style.css");

/// The embedded assets, by path.
///
/// # Errors
///
/// [`AssetError`] for an asset path that is not absolute or is under `/api/`.
pub fn assets() -> Result<Frontend, AssetError> {
    let frontend = Frontend::new()
        .with_asset("/", INDEX_HTML)?
        .with_asset("/app.js", APP_JS)?
        .with_asset("/style.css", STYLE_CSS)?;
    // +mni:scaffold:assets
    Ok(frontend)
}

/// Every route: the assets, the `/api` proxy to `backend` and the probes.
///
/// # Panics
///
/// Only if an asset path above is invalid (ruled out by the tests).
pub fn router(backend: Backend) -> Router {
    assets().expect("valid asset paths").router(backend)
}
