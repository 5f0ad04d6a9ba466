//! `with_simulator(true)`: Deployments become Available.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use mni_testkit::{TestEnv, wait_for_condition};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_makes_a_deployment_available() -> anyhow::Result<()> {
    let env = TestEnv::builder().with_simulator(true).start().await?;
    let deployments: Api<Deployment> = Api::namespaced(env.client(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }))?;
    deployments
        .create(&PostParams::default(), &deployment)
        .await?;
    let began = Instant::now();
    let available = wait_for_condition(
        &deployments,
        "web",
        "Available",
        "True",
        Duration::from_secs(30),
    )
    .await?;
    println!("Deployment Available after {:?}", began.elapsed());
    let status = available.status.expect("status");
    assert_eq!(status.available_replicas, Some(2));
    env.shutdown().await;
    Ok(())
}
