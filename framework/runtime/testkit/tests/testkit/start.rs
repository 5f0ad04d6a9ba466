//! Starting and stopping environments; how long a start takes (printed, not asserted).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use mni_testkit::TestEnv;

#[tokio::test]
async fn starts_in_milliseconds_and_serves_the_admin() -> anyhow::Result<()> {
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..20 {
        let began = Instant::now();
        let env = TestEnv::start().await?;
        times.push(began.elapsed());
        env.shutdown().await;
    }
    times.sort();
    println!(
        "TestEnv::start over 20 starts: median {:?}, min {:?}, max {:?}",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );

    let env = TestEnv::start().await?;
    let namespaces: Api<Namespace> = Api::all(env.client());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.iter().any(|n| n == "default"), "{names:?}");
    assert!(env.url().starts_with("http://127.0.0.1:"), "{}", env.url());
    assert!(env.kubeconfig().contains(env.url()), "{}", env.kubeconfig());
    assert!(env.kubeconfig().contains(env.admin_token()));
    // The kubeconfig works as is for kube-rs.
    let kubeconfig: kube::config::Kubeconfig = serde_yaml::from_str(env.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    let from_kubeconfig = kube::Client::try_from(config)?;
    Api::<Namespace>::all(from_kubeconfig)
        .get("default")
        .await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn dropping_an_environment_stops_its_server() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    let client = env.client();
    drop(env);
    let namespaces: Api<Namespace> = Api::all(client);
    let gone = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if namespaces.get("default").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the server still answers after the drop");
    Ok(())
}

/// Environments can be started from any task: the futures are `Send`.
#[allow(dead_code)]
fn futures_are_send() {
    fn send<T: Send>(_: T) {}
    send(TestEnv::start());
    send(TestEnv::builder().with_simulator(true).start());
}

/// Over HTTPS the admin client, clients for other identities, and kubectl with the
/// environment's kubeconfig all work, and kubectl authenticates with the token it is given
/// (it sends tokens only over TLS).
#[tokio::test]
async fn with_tls_serves_https_that_kubectl_authenticates_to() -> anyhow::Result<()> {
    let env = TestEnv::builder().with_tls(true).start().await?;
    assert!(env.url().starts_with("https://127.0.0.1:"), "{}", env.url());
    Api::<Namespace>::all(env.client()).get("default").await?;
    let path = std::env::temp_dir().join(format!("mni-testkit-{}.kubeconfig", std::process::id()));
    std::fs::write(&path, env.kubeconfig())?;
    let out = tokio::task::spawn_blocking({
        let path = path.clone();
        move || {
            std::process::Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(path)
                .args([
                    "auth",
                    "whoami",
                    "-o",
                    "jsonpath={.status.userInfo.username}",
                ])
                .output()
        }
    })
    .await??;
    std::fs::remove_file(&path)?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "mni:admin");
    env.shutdown().await;
    Ok(())
}
