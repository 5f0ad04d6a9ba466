//! Logging setup for operator binaries: `tracing` with `RUST_LOG` filtering, text or JSON.
//!
//! Call [`init`] once at the start of `main`. Every reconcile runs in a `reconcile` span whose
//! fields (`controller`, `object.ref`, `object.name`, `object.namespace`) appear on each line
//! logged inside it.

use tracing_subscriber::{EnvFilter, fmt, prelude::*};

use crate::args::LogFormat;

/// Installs the global subscriber; `RUST_LOG` filters (default `info`).
///
/// Does nothing if a subscriber is already installed (tests, or a binary that set its own).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let registry = tracing_subscriber::registry().with(filter);
    let _ = match format {
        LogFormat::Text => registry.with(fmt::layer()).try_init(),
        LogFormat::Json => registry
            .with(
                fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true),
            )
            .try_init(),
    };
}
