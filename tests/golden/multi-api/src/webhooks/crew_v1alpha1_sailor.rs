// SPDX-License-Identifier: MIT

//! The webhooks of `Sailor` (`crew.example.com/v1alpha1`): a validator at `/validate-crew-example-com-v1alpha1-sailor`.
//!
//! The API server calls them through `config/webhook/manifests.yaml`; `tests/sailor_webhook.rs`
//! shows them at work.

use mni_webhook::{Denial, Request, Validator, Warnings, WebhookServerBuilder};

use crate::api::crew_v1alpha1::Sailor;

/// Adds this kind's webhooks to `server` (`super::server` calls it).
pub fn register(server: WebhookServerBuilder) -> WebhookServerBuilder {
    server.with_validator(SailorCustomValidator)
}

/// The longest name a Sailor may have: it must fit in a label value, as things the
/// controller creates are labelled with it.
pub const MAX_NAME_LENGTH: usize = 63;

/// Validates Sailors when they are created, updated or deleted (Kubebuilder's
/// `CustomValidator`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SailorCustomValidator;

impl Validator<Sailor> for SailorCustomValidator {
    async fn validate_create(&self, _req: &Request, obj: &Sailor) -> Result<Warnings, Denial> {
        validate(obj)
    }

    async fn validate_update(
        &self,
        _req: &Request,
        _old: &Sailor,
        new: &Sailor,
    ) -> Result<Warnings, Denial> {
        validate(new)
    }

    // TODO(user): override `validate_delete` to refuse deletions (it allows every one).
}

/// The checks of create and update.
fn validate(obj: &Sailor) -> Result<Warnings, Denial> {
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
