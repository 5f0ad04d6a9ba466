// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Servers are validated before they are written, with the operator's `validate` module:
//! the same rules as the CRD's CEL rules, including the transition rules (neither the BMC
//! address nor the image of a server with an image changes). A broken rule is HTTP 422
//! `Invalid` whose message names the field, as the API server's CEL rules do; a 422 from the
//! API server is passed on as it is.

use mni_web::ApiError;

use metal_operator::api::metal_v1alpha1::ServerSpec;
use metal_operator::api::metal_v1alpha1::validate::message;
use metal_operator::api::metal_v1alpha1::validate::validate;
use metal_operator::api::metal_v1alpha1::validate::validate_update;

/// HTTP 422 when `spec` (replacing `old`, if any) breaks a rule, worded like the API server:
/// the validation hook of the backend's `Domain`.
pub(crate) fn check(
    name: &str,
    spec: &ServerSpec,
    old: Option<&ServerSpec>,
) -> Result<(), ApiError> {
    let mut errors = validate(spec);
    if let Some(old) = old {
        errors.extend(validate_update(old, spec));
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(format!(
        "Server {name:?} is invalid: {}",
        message(&errors)
    )))
}
