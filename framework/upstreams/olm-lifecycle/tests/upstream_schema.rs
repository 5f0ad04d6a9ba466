//! The bundles the project ships (`services/catalog/bundles`, written by `mni-scaffold olm
//! bundle`) against OLM's own CRDs, loaded unchanged into the embedded API server, checked
//! the way a cluster administrator would before installing: `kubectl apply --dry-run=server`.
//! The Subscriptions, OperatorGroups, CatalogSources, InstallPlans and CSVs the lifecycle
//! and `mni-dev up --with` write are created for real against the same CRDs in their own
//! tests (`lifecycle.rs`, `framework/dev/tests/integration/up_with.rs`).

use std::path::{Path, PathBuf};
use std::process::Output;

use mni_olm_lifecycle::Lifecycle;
use mni_testkit::TestEnv;

/// The repository's committed bundles directory.
fn bundles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../services/catalog/bundles")
}

/// Every file under each bundle's `manifests/`, sorted.
fn manifests() -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for bundle in std::fs::read_dir(bundles())? {
        let dir = bundle?.path().join("manifests");
        for file in std::fs::read_dir(&dir)? {
            files.push(file?.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Runs kubectl with `kubeconfig` off the async runtime (the API server runs in this process).
async fn kubectl(kubeconfig: &Path, args: Vec<String>) -> anyhow::Result<Output> {
    let kubeconfig = kubeconfig.to_path_buf();
    Ok(tokio::task::spawn_blocking(move || {
        std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .output()
    })
    .await??)
}

async fn dry_run(kubeconfig: &Path, file: &Path) -> anyhow::Result<Output> {
    kubectl(
        kubeconfig,
        vec![
            "apply".into(),
            "--dry-run=server".into(),
            "--namespace=default".into(),
            "-f".into(),
            file.display().to_string(),
        ],
    )
    .await
}

#[tokio::test]
async fn shipped_bundles_pass_a_server_side_dry_run_against_upstream_olm_crds() -> anyhow::Result<()>
{
    let env = TestEnv::builder().with_tls(true).start().await?;
    Lifecycle::new(env.client()).install_crds().await?;
    let dir = tempfile::tempdir()?;
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, env.kubeconfig())?;

    let files = manifests()?;
    let csvs = files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with(".clusterserviceversion.yaml"))
        .count();
    assert_eq!(
        csvs, 4,
        "one CSV per reference service and the platform: {files:?}"
    );
    for file in &files {
        let out = dry_run(&kubeconfig, file).await?;
        assert!(
            out.status.success(),
            "{} is refused: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("(server dry run)"), "{said}");
    }

    // The dry run validates: a CSV whose install mode lacks `supported` is refused, naming
    // the field, and nothing is stored.
    let csv = files
        .iter()
        .find(|f| {
            f.to_string_lossy()
                .ends_with("mni-vpc.clusterserviceversion.yaml")
        })
        .expect("the VPC service's CSV");
    let broken = std::fs::read_to_string(csv)?.replacen("    supported: true\n", "", 1);
    let broken_file = dir.path().join("broken.clusterserviceversion.yaml");
    std::fs::write(&broken_file, broken)?;
    let out = dry_run(&kubeconfig, &broken_file).await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a broken CSV is accepted");
    assert!(
        stderr.contains("spec.installModes[0].supported") && stderr.contains("Required value"),
        "{stderr}"
    );
    let listed = kubectl(
        &kubeconfig,
        vec![
            "get".into(),
            "clusterserviceversions".into(),
            "--all-namespaces".into(),
            "-o".into(),
            "name".into(),
        ],
    )
    .await?;
    assert!(listed.status.success());
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "");
    Ok(())
}
