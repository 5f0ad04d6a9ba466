//! What a user sees with kubectl: the webhook's denial, its warnings (also on a server-side
//! dry run) and its defaults, through an API server over TLS (kubectl sends its token over TLS
//! only, as to a cluster).

use std::{net::SocketAddr, path::Path};

use crate::{
    admission::webhook_server,
    support::{Ca, configure},
};

/// Runs kubectl with `args` off the runtime's threads: success, stdout, stderr.
async fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let kubeconfig = kubeconfig.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(&args)
            .output()
            .expect("kubectl runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("kubectl joined")
}

#[tokio::test]
async fn kubectl_shows_the_denial_the_warnings_and_the_default() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let identity = mni_apiserver::tls::TlsIdentity::load_or_create(&tmp.path().join("pki"), None)
        .expect("pki");
    let server = mni_apiserver::Server::builder()
        .with_tls(identity)
        .start()
        .await
        .expect("API server starts");
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).expect("kubeconfig");
    let client = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).expect("kubeconfig"),
            &kube::config::KubeConfigOptions::default(),
        )
        .await
        .expect("config"),
    )
    .expect("client");

    let ca = Ca::new();
    let cert_dir = tmp.path().join("serving-certs");
    std::fs::create_dir_all(&cert_dir).expect("mkdir");
    ca.write_serving_cert(&cert_dir);
    let metrics = mni_operator::Metrics::new();
    let running = webhook_server(&metrics)
        .with_cert_dir(&cert_dir)
        .with_bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .start()
        .await
        .expect("webhook server starts");
    let address = running.local_addr();
    configure(
        &client,
        "Mutating",
        "team-label",
        ca.client_config(address, "/mutate--v1-configmap"),
    )
    .await;
    configure(
        &client,
        "Validating",
        "no-passwords",
        ca.client_config(address, "/validate--v1-configmap"),
    )
    .await;

    let manifest = |name: &str, key: &str| {
        let path = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(
            &path,
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  {key}: v\n"),
        )
        .expect("manifest");
        path.display().to_string()
    };
    let creds = manifest("creds", "password");
    let (ok, _, stderr) = kubectl(&kubeconfig, &["apply", "-f", &creds]).await;
    assert!(!ok);
    assert!(
        stderr.contains("admission webhook \"no-passwords.example.com\" denied the request: data.password: put passwords in a Secret"),
        "{stderr}"
    );

    let scratch = manifest("tmp-scratch", "k");
    let (ok, _, stderr) =
        kubectl(&kubeconfig, &["apply", "--dry-run=server", "-f", &scratch]).await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("Warning: validated a dry run"), "{stderr}");
    let (ok, stdout, stderr) = kubectl(&kubeconfig, &["apply", "-f", &scratch]).await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains("configmap/tmp-scratch created"), "{stdout}");
    assert!(
        stderr.contains("Warning: a tmp- ConfigMap is deleted by the nightly cleanup"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = kubectl(
        &kubeconfig,
        &[
            "get",
            "configmap",
            "tmp-scratch",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.labels.team}",
        ],
    )
    .await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "platform");
    running.shutdown().await.expect("stops");
}
