// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! VirtualPrivateClouds are validated before they are written, with the operator's
//! `validate` module: the same rules as the CRD's CEL rules. A broken rule is HTTP 422
//! `Invalid` whose message names the subnet and the rule, as the API server's CEL rules do;
//! a 422 from the API server is passed on as it is.

use mni_web::ApiError;

use network_operator::api::network_v1alpha1::VirtualPrivateCloudSpec;
use network_operator::api::network_v1alpha1::validate::{message, validate, validate_update};

/// HTTP 422 when `spec` (replacing `old`, if any) breaks a rule, worded like the API server:
/// the validation hook of the backend's `Domain`.
pub(crate) fn check(
    name: &str,
    spec: &VirtualPrivateCloudSpec,
    old: Option<&VirtualPrivateCloudSpec>,
) -> Result<(), ApiError> {
    let mut errors = validate(spec);
    if let Some(old) = old {
        let pairs = old
            .subnets
            .iter()
            .map(|s| (s.name.as_str(), s.cidr_block.as_str()));
        errors.extend(validate_update(pairs, spec));
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(format!(
        "VirtualPrivateCloud {name:?} is invalid: {}",
        message(&errors)
    )))
}
