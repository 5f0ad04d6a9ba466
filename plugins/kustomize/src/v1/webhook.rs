//! `create webhook`: the Kubernetes side of a kind's webhooks, laid out as Kubebuilder does.
//!
//! ```text
//! DIR/config/webhook/        manifests.yaml (Mutating/ValidatingWebhookConfiguration, one
//!                            webhook per kind at the `mutatingwebhooks`/`validatingwebhooks`
//!                            markers), service.yaml (webhook-service, 443 → 9443)
//! DIR/config/certmanager/    a self-signed Issuer and the serving Certificate
//! DIR/config/default/        ../webhook and ../certmanager listed; manager_webhook_patch.yaml
//!                            (port 9443, the certificate's Secret mounted where the server
//!                            reads it); replacements filling the Certificate's DNS names and
//!                            cert-manager's `inject-ca-from` annotations
//! DIR/config/crd/            with --conversion: patches/webhook_in_PLURAL.yaml (strategy
//!                            Webhook, the webhook Service's /convert) and kustomizeconfig.yaml
//! ```
//!
//! `config/default` and `config/crd` kustomizations made before the first webhook get their
//! `patches:`/`replacements:`/`configurations:` sections and markers appended
//! ([`ensure_marker`]); everything else is an insert at a marker, so webhooks of several kinds
//! compose.

use mni_machinery::{Insert, TemplateFile, ensure_marker, insert, merge_data};
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, IfExists, SubcommandMetadata};
use mni_plugin_rust::v1::{WebhookRequest, create_webhook_flags};

use super::KustomizeV1;

impl CreateWebhook for KustomizeV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Add the kind's webhooks to config/webhook, the webhook Service and \
                          cert-manager's Certificate (config/certmanager) and the config/default \
                          patches that mount it; with --conversion, the CRD's conversion patch."
                .to_owned(),
            examples: String::new(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        create_webhook_flags()
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let request = WebhookRequest::from_context(cx)?;
        request.check_new()?;
        request.target(cx)?;
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let request = WebhookRequest::from_context(cx)?;
        let target = request.target(cx)?;
        let data = merge_data(&[self.data(cx, &target)?, request.template_data()]);
        let dir = &target.dir;
        let err = |e: mni_machinery::MarkerError| e.into_plugin_error(&self.key);
        let terr = |e: mni_machinery::TemplateError| e.into_plugin_error(&self.key);

        let mut files: Vec<TemplateFile> = [
            "config/webhook/manifests.yaml",
            "config/webhook/service.yaml",
            "config/webhook/kustomization.yaml",
            "config/webhook/kustomizeconfig.yaml",
            "config/certmanager/issuer.yaml",
            "config/certmanager/certificate-webhook.yaml",
            "config/certmanager/kustomization.yaml",
            "config/certmanager/kustomizeconfig.yaml",
            "config/default/manager_webhook_patch.yaml",
        ]
        .into_iter()
        .map(|t| TemplateFile::new(t, &format!("{dir}{t}")).if_exists(IfExists::Skip))
        .collect();
        if request.conversion {
            files.push(TemplateFile::new(
                "config/crd/patches/webhook_in_kind.yaml",
                &format!("{dir}config/crd/patches/webhook_in_{}.yaml", request.plural),
            ));
            files.push(
                TemplateFile::new(
                    "config/crd/kustomizeconfig.yaml",
                    &format!("{dir}config/crd/kustomizeconfig.yaml"),
                )
                .if_exists(IfExists::Skip),
            );
        }
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(terr)?;

        // The webhooks, one per kind and kind of webhook.
        let manifests = format!("{dir}config/webhook/manifests.yaml");
        let id = format!(
            "{}-{}-{}",
            request.full_group, request.version, request.kind
        );
        for (on, marker, prefix, letter) in [
            (request.defaulting, "mutatingwebhooks", "mutate", "m"),
            (request.validation, "validatingwebhooks", "validate", "v"),
        ] {
            if on {
                let entry_data = merge_data(&[
                    data.clone(),
                    serde_json::json!({ "prefix": prefix, "letter": letter }),
                ]);
                let entry = self
                    .templates
                    .render("config/webhook/entry.yaml", &entry_data)
                    .map_err(terr)?;
                insert(cx.universe, &manifests, &Insert::new(marker, &id, &entry)).map_err(err)?;
            }
        }

        // config/default: the webhook Service and the certificate, mounted in the manager.
        let default = format!("{dir}config/default/kustomization.yaml");
        for (entry, id) in [
            ("- ../webhook", "webhook"),
            ("- ../certmanager", "certmanager"),
        ] {
            insert(
                cx.universe,
                &default,
                &Insert::new(super::DEFAULT_RESOURCES, id, entry),
            )
            .map_err(err)?;
        }
        ensure_marker(cx.universe, &default, "defaultkustomizepatches", "patches:").map_err(err)?;
        ensure_marker(
            cx.universe,
            &default,
            "defaultkustomizereplacements",
            "replacements:",
        )
        .map_err(err)?;
        insert(
            cx.universe,
            &default,
            &Insert::new(
                "defaultkustomizepatches",
                "webhook",
                "# [WEBHOOK] The manager serves the webhooks with cert-manager's certificate.\n\
                 - path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
            ),
        )
        .map_err(err)?;
        let sources = serde_json::json!({ "sources": [
            { "field": "namespace", "index": 0 },
            { "field": "name", "index": 1 },
        ]});
        let replacements = self
            .templates
            .render(
                "config/default/webhook_replacements.yaml",
                &merge_data(&[data.clone(), sources.clone()]),
            )
            .map_err(terr)?;
        insert(
            cx.universe,
            &default,
            &Insert::new("defaultkustomizereplacements", "webhook", &replacements),
        )
        .map_err(err)?;

        if request.conversion {
            let crd = format!("{dir}config/crd/kustomization.yaml");
            ensure_marker(cx.universe, &crd, "crdkustomizewebhookpatch", "patches:")
                .map_err(err)?;
            ensure_marker(
                cx.universe,
                &crd,
                "crdkustomizeconfigurations",
                "configurations:",
            )
            .map_err(err)?;
            let patch = format!("patches/webhook_in_{}.yaml", request.plural);
            insert(
                cx.universe,
                &crd,
                &Insert::new(
                    "crdkustomizewebhookpatch",
                    &patch,
                    &format!("- path: {patch}"),
                ),
            )
            .map_err(err)?;
            insert(
                cx.universe,
                &crd,
                &Insert::new(
                    "crdkustomizeconfigurations",
                    "kustomizeconfig",
                    "- kustomizeconfig.yaml",
                ),
            )
            .map_err(err)?;
            let crd_ca = self
                .templates
                .render(
                    "config/default/crd_replacements.yaml",
                    &merge_data(&[data.clone(), sources]),
                )
                .map_err(terr)?;
            insert(
                cx.universe,
                &default,
                &Insert::new(
                    "defaultkustomizereplacements",
                    &format!("crd-{}", request.plural),
                    &crd_ca,
                ),
            )
            .map_err(err)?;
        }
        Ok(())
    }
}
