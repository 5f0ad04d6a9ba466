// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Instances are validated before they are written, with the operator's `validate` module:
//! the same rules as the CRD's CEL rules. A broken rule is HTTP 422 `Invalid` whose message
//! names the field, as the API server's CEL rules do; a 422 from the API server is passed on
//! as it is.

use mni_web::ApiError;

use compute_operator::api::compute_v1alpha1::InstanceSpec;
use compute_operator::api::compute_v1alpha1::validate::message;
use compute_operator::api::compute_v1alpha1::validate::validate;

/// HTTP 422 when `spec` breaks a rule, worded like the API server: the validation hook of the
/// backend's `Domain`.
pub(crate) fn check(
    name: &str,
    spec: &InstanceSpec,
    _old: Option<&InstanceSpec>,
) -> Result<(), ApiError> {
    let errors = validate(spec);
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(format!(
        "Instance {name:?} is invalid: {}",
        message(&errors)
    )))
}
