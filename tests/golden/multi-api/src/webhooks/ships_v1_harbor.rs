// SPDX-License-Identifier: MIT

//! The webhooks of `Harbor` (`ships.example.com/v1`): a defaulter at `/mutate-ships-example-com-v1-harbor`, a validator at `/validate-ships-example-com-v1-harbor`.
//!
//! The API server calls them through `config/webhook/manifests.yaml`; `tests/harbor_webhook.rs`
//! shows them at work.

use mni_webhook::{Defaulter, Denial, Request, Validator, Warnings, WebhookServerBuilder};

use crate::api::ships_v1::Harbor;

/// Adds this kind's webhooks to `server` (`super::server` calls it).
pub fn register(server: WebhookServerBuilder) -> WebhookServerBuilder {
    server
        .with_defaulter(HarborCustomDefaulter)
        .with_validator(HarborCustomValidator)
}

/// The label the defaulter sets, unless the object has one.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";

/// Sets defaults on Harbors when they are created or updated (Kubebuilder's
/// `CustomDefaulter`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HarborCustomDefaulter;

impl Defaulter<Harbor> for HarborCustomDefaulter {
    async fn default(&self, _req: &Request, obj: &mut Harbor) -> Result<Warnings, Denial> {
        // TODO(user): fill in your defaulting logic. The example labels each Harbor with
        // `app.kubernetes.io/name: harbor` unless it has that label already.
        obj.metadata
            .labels
            .get_or_insert_default()
            .entry(NAME_LABEL.to_owned())
            .or_insert_with(|| "harbor".to_owned());
        Ok(Warnings::new())
    }
}

/// The longest name a Harbor may have: it must fit in a label value, as things the
/// controller creates are labelled with it.
pub const MAX_NAME_LENGTH: usize = 63;

/// Validates Harbors when they are created, updated or deleted (Kubebuilder's
/// `CustomValidator`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HarborCustomValidator;

impl Validator<Harbor> for HarborCustomValidator {
    async fn validate_create(&self, _req: &Request, obj: &Harbor) -> Result<Warnings, Denial> {
        validate(obj)
    }

    async fn validate_update(
        &self,
        _req: &Request,
        _old: &Harbor,
        new: &Harbor,
    ) -> Result<Warnings, Denial> {
        validate(new)
    }

    // TODO(user): override `validate_delete` to refuse deletions (it allows every one).
}

/// The checks of create and update.
fn validate(obj: &Harbor) -> Result<Warnings, Denial> {
    // TODO(user): fill in your validation logic. The example refuses names longer than
    // MAX_NAME_LENGTH; a `Denial::invalid` reaches the client as a 422 with its message.
    let name = obj.metadata.name.as_deref().unwrap_or_default();
    if name.len() > MAX_NAME_LENGTH {
        return Err(Denial::invalid(format!(
            "metadata.name: must be no more than {MAX_NAME_LENGTH} characters"
        )));
    }
    Ok(Warnings::new())
}
