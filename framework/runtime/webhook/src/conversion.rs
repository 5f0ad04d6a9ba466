//! Hub-and-spoke conversion at `/convert` (`apiextensions.k8s.io/v1` ConversionReview), as
//! Kubebuilder does it: one version of a kind is the [`Hub`]; every other version is a
//! [`Spoke`] that converts to and from the hub. A request from v1 to v3 goes v1 → hub → v3,
//! so n versions need n − 1 pairs of conversions, not n².
//!
//! Register a kind with [`Conversion::hub`] and [`Conversion::spoke`] and give it to
//! [`WebhookServerBuilder::with_conversion`](crate::WebhookServerBuilder::with_conversion).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::admission::Kind;

/// The only ConversionReview version this server speaks.
pub const CONVERSION_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// Errors of decoding a ConversionReview; the server answers them with HTTP 400.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConversionReviewError {
    /// The body is not a ConversionReview.
    #[error("the body is not an apiextensions.k8s.io/v1 ConversionReview: {0}")]
    Malformed(#[source] serde_json::Error),
    /// `apiVersion`/`kind` name something else.
    #[error(
        "expected apiVersion apiextensions.k8s.io/v1 and kind ConversionReview, got {api_version:?} {kind:?} (list only v1 in conversionReviewVersions)"
    )]
    WrongType {
        /// The `apiVersion` sent.
        api_version: String,
        /// The `kind` sent.
        kind: String,
    },
    /// The review has no `request`.
    #[error("the ConversionReview has no request")]
    NoRequest,
}

/// The hub version of a kind: the one every spoke converts through (usually the storage
/// version).
pub trait Hub: Kind {}

/// Another version of `H`'s kind, converting to and from the hub. Keep `metadata` as it is:
/// the API server refuses a conversion that changes an object's name, namespace or uid.
pub trait Spoke<H: Hub>: Kind {
    /// This version as the hub version.
    fn to_hub(&self) -> Result<H, String>;
    /// The hub version as this version.
    fn from_hub(hub: &H) -> Result<Self, String>;
}

type ToHub<H> = Box<dyn Fn(&Value) -> Result<H, String> + Send + Sync>;
type FromHub<H> = Box<dyn Fn(&H) -> Result<Value, String> + Send + Sync>;

/// The versions of one kind and how to convert between them; see the [module docs](self).
pub struct Conversion<H: Hub> {
    spokes: BTreeMap<String, (ToHub<H>, FromHub<H>)>,
}

impl<H: Hub> Conversion<H> {
    /// A kind whose hub is `H`, with no spokes yet.
    #[must_use]
    pub fn hub() -> Self {
        Self {
            spokes: BTreeMap::new(),
        }
    }

    /// Adds spoke version `S`.
    #[must_use]
    pub fn spoke<S: Spoke<H>>(mut self) -> Self {
        let to_hub: ToHub<H> = Box::new(|value| {
            let spoke = S::deserialize(value).map_err(|e| e.to_string())?;
            spoke.to_hub()
        });
        let from_hub: FromHub<H> = Box::new(|hub| {
            let spoke = S::from_hub(hub)?;
            serde_json::to_value(spoke).map_err(|e| e.to_string())
        });
        self.spokes
            .insert(S::api_version(&()).into_owned(), (to_hub, from_hub));
        self
    }
}

/// A kind's conversion with its hub type erased, as the server keeps it.
pub(crate) trait KindConversion: Send + Sync {
    /// `(group, kind)` this converts.
    fn group_kind(&self) -> (String, String);
    /// Converts `object` to `desired` (an apiVersion).
    fn convert(&self, object: &Value, desired: &str) -> Result<Value, String>;
}

impl<H: Hub> KindConversion for Conversion<H> {
    fn group_kind(&self) -> (String, String) {
        (H::group(&()).into_owned(), H::kind(&()).into_owned())
    }

    fn convert(&self, object: &Value, desired: &str) -> Result<Value, String> {
        let from = object["apiVersion"].as_str().unwrap_or_default();
        if from == desired {
            return Ok(object.clone());
        }
        let hub_version = H::api_version(&());
        let unknown = |version: &str| {
            let mut known: Vec<&str> = self.spokes.keys().map(String::as_str).collect();
            known.push(&hub_version);
            format!(
                "no conversion for {version} {} (this webhook converts {})",
                H::kind(&()),
                known.join(", ")
            )
        };
        let hub = if from == hub_version {
            H::deserialize(object).map_err(|e| format!("decode {from} {}: {e}", H::kind(&())))?
        } else {
            let (to_hub, _) = self.spokes.get(from).ok_or_else(|| unknown(from))?;
            to_hub(object).map_err(|e| format!("convert {from} to {hub_version}: {e}"))?
        };
        if desired == hub_version {
            return serde_json::to_value(&hub).map_err(|e| e.to_string());
        }
        let (_, from_hub) = self.spokes.get(desired).ok_or_else(|| unknown(desired))?;
        from_hub(&hub).map_err(|e| format!("convert {hub_version} to {desired}: {e}"))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<ConversionRequest>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConversionRequest {
    uid: String,
    #[serde(rename = "desiredAPIVersion")]
    desired_api_version: String,
    #[serde(default)]
    objects: Vec<Value>,
}

/// Answers the ConversionReview `body` with the registered `kinds`: every object converted to
/// `desiredAPIVersion`, or `result.status: Failure` with the first error.
pub(crate) fn convert_review(
    kinds: &[Box<dyn KindConversion>],
    body: &[u8],
) -> Result<Value, ConversionReviewError> {
    let review: Review = serde_json::from_slice(body).map_err(ConversionReviewError::Malformed)?;
    if review.api_version != CONVERSION_API_VERSION || review.kind != "ConversionReview" {
        return Err(ConversionReviewError::WrongType {
            api_version: review.api_version,
            kind: review.kind,
        });
    }
    let request = review.request.ok_or(ConversionReviewError::NoRequest)?;
    let converted: Result<Vec<Value>, String> = request
        .objects
        .iter()
        .map(|object| convert_one(kinds, object, &request.desired_api_version))
        .collect();
    let response = match converted {
        Ok(objects) => json!({
            "uid": request.uid,
            "convertedObjects": objects,
            "result": {"metadata": {}, "status": "Success"},
        }),
        Err(message) => json!({
            "uid": request.uid,
            "convertedObjects": [],
            "result": {"metadata": {}, "status": "Failure", "message": message},
        }),
    };
    Ok(json!({
        "apiVersion": CONVERSION_API_VERSION,
        "kind": "ConversionReview",
        "response": response,
    }))
}

fn convert_one(
    kinds: &[Box<dyn KindConversion>],
    object: &Value,
    desired: &str,
) -> Result<Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let conversion = kinds
        .iter()
        .find(|c| c.group_kind() == (group.to_string(), kind.to_string()))
        .ok_or_else(|| format!("no conversion registered for kind {kind:?} of {api_version:?}"))?;
    let mut converted = conversion
        .convert(object, desired)
        .map_err(|e| format!("{kind} {name:?}: {e}"))?;
    converted["apiVersion"] = json!(desired);
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(api_version: &str, request: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": api_version, "kind": "ConversionReview", "request": request,
        }))
        .unwrap()
    }

    #[test]
    fn malformed_reviews_are_errors_naming_the_problem() {
        let e = convert_review(&[], b"{").unwrap_err();
        assert!(
            e.to_string().contains("not an apiextensions.k8s.io/v1"),
            "{e}"
        );
        let e = convert_review(
            &[],
            &review(
                "apiextensions.k8s.io/v1beta1",
                json!({"uid": "u", "desiredAPIVersion": "example.com/v1"}),
            ),
        )
        .unwrap_err();
        assert!(e.to_string().contains("v1beta1"), "{e}");
        let e = convert_review(&[], &review(CONVERSION_API_VERSION, Value::Null)).unwrap_err();
        assert!(matches!(e, ConversionReviewError::NoRequest));
        let e =
            convert_review(&[], &review(CONVERSION_API_VERSION, json!({"uid": "u"}))).unwrap_err();
        assert!(e.to_string().contains("desiredAPIVersion"), "{e}");
    }

    #[test]
    fn an_unregistered_kind_fails_with_the_kinds_name() {
        let body = review(
            CONVERSION_API_VERSION,
            json!({"uid": "u", "desiredAPIVersion": "example.com/v2",
                "objects": [{"apiVersion": "example.com/v1", "kind": "Gadget"}]}),
        );
        let answer = convert_review(&[], &body).unwrap();
        assert_eq!(
            answer["response"],
            json!({
                "uid": "u",
                "convertedObjects": [],
                "result": {"metadata": {}, "status": "Failure",
                    "message": "no conversion registered for kind \"Gadget\" of \"example.com/v1\""},
            })
        );
        // No objects: nothing to convert, a success.
        let empty = review(
            CONVERSION_API_VERSION,
            json!({"uid": "u", "desiredAPIVersion": "example.com/v2", "objects": []}),
        );
        let answer = convert_review(&[], &empty).unwrap();
        assert_eq!(answer["response"]["result"]["status"], "Success");
    }
}
