//! The webhook server end to end: served over TLS from an rcgen CA's certificate in a temp
//! cert-manager directory, called by the in-process API server's real admission chain (what
//! `mni-dev` runs), read by the manager's `/readyz` and `/metrics`.

mod admission;
mod certificates;
mod conversion;
mod kubectl;
mod lifecycle;
mod support;
