//! Hub-and-spoke conversion over HTTPS (`mni-dev` does not call conversion webhooks yet):
//! a ConversionReview converts every object to `desiredAPIVersion`, through the hub; an
//! unknown version or a failing conversion answers `result.status: Failure` with the message.

use std::net::SocketAddr;

use mni_webhook::{Conversion, Hub, Spoke, WebhookServer};
use serde_json::{Value, json};

use crate::support::Ca;

/// v1 sizes a widget with a quantity string (`"10Gi"`).
mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// A widget, v1.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
    pub(crate) struct WidgetSpec {
        pub(crate) size: String,
    }
}

/// v2, the hub, sizes it in GiB.
mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// A widget, v2.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(group = "example.com", version = "v2", kind = "Widget", namespaced)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct WidgetSpec {
        pub(crate) size_gib: u32,
    }
}

impl Hub for v2::Widget {}

impl Spoke<v2::Widget> for v1::Widget {
    fn to_hub(&self) -> Result<v2::Widget, String> {
        let gib = self
            .spec
            .size
            .strip_suffix("Gi")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("spec.size {:?}: expected <n>Gi", self.spec.size))?;
        Ok(v2::Widget {
            metadata: self.metadata.clone(),
            spec: v2::WidgetSpec { size_gib: gib },
        })
    }

    fn from_hub(hub: &v2::Widget) -> Result<Self, String> {
        Ok(v1::Widget {
            metadata: hub.metadata.clone(),
            spec: v1::WidgetSpec {
                size: format!("{}Gi", hub.spec.size_gib),
            },
        })
    }
}

fn review(desired: &str, objects: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects},
    }))
    .expect("review")
}

#[tokio::test]
async fn conversion_reviews_go_through_the_hub() {
    let ca = Ca::new();
    let dir = tempfile::tempdir().expect("tempdir");
    ca.write_serving_cert(dir.path());
    let running = WebhookServer::builder()
        .with_conversion(Conversion::<v2::Widget>::hub().spoke::<v1::Widget>())
        .with_cert_dir(dir.path())
        .with_bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .start()
        .await
        .expect("starts");
    let address = running.local_addr();
    let v1 = |name: &str, size: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
            "spec": {"size": size}})
    };
    let (code, body) = ca
        .post(
            address,
            "/convert",
            review("example.com/v2", json!([v1("a", "10Gi"), v1("b", "2Gi")])),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(answer["kind"], "ConversionReview");
    let response = &answer["response"];
    assert_eq!(response["uid"], "c-1");
    assert_eq!(response["result"]["status"], "Success");
    let converted = response["convertedObjects"].as_array().expect("objects");
    assert_eq!(converted.len(), 2);
    assert_eq!(converted[0]["apiVersion"], "example.com/v2");
    assert_eq!(converted[0]["spec"], json!({"sizeGib": 10}));
    assert_eq!(converted[0]["metadata"]["uid"], "uid-a");
    assert_eq!(converted[1]["spec"], json!({"sizeGib": 2}));

    // And back: the round trip gives the v1 objects again.
    let (code, body) = ca
        .post(
            address,
            "/convert",
            review("example.com/v1", Value::Array(converted.clone())),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let back: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        back["response"]["convertedObjects"],
        json!([v1("a", "10Gi"), v1("b", "2Gi")])
    );

    // A spoke that cannot convert, and a version nobody serves: Failure with the message.
    let (_, body) = ca
        .post(
            address,
            "/convert",
            review("example.com/v2", json!([v1("c", "lots")])),
        )
        .await;
    let failed: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(failed["response"]["result"]["status"], "Failure");
    assert_eq!(
        failed["response"]["result"]["message"],
        "Widget \"c\": convert example.com/v1 to example.com/v2: spec.size \"lots\": expected <n>Gi"
    );
    assert_eq!(failed["response"]["convertedObjects"], json!([]));
    let (_, body) = ca
        .post(
            address,
            "/convert",
            review("example.com/v3", json!([v1("a", "1Gi")])),
        )
        .await;
    let unknown: Value = serde_json::from_str(&body).expect("json");
    let message = unknown["response"]["result"]["message"]
        .as_str()
        .expect("message");
    assert!(
        message.contains("no conversion for example.com/v3 Widget"),
        "{message}"
    );

    // Not a ConversionReview: 400.
    let (code, body) = ca.post(address, "/convert", b"[]".to_vec()).await;
    assert_eq!(code, 400);
    assert!(
        body.contains("not an apiextensions.k8s.io/v1 ConversionReview"),
        "{body}"
    );
    running.shutdown().await.expect("stops");
}
