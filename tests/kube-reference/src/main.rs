//! `kube-differential`: starts a real kube-apiserver (with its etcd) and `mni-dev` side by
//! side, sends both the differential suite, prints the number of requests compared, the
//! number of differences and the list, and writes the full report as Markdown.
//!
//! Run it through `scripts/differential.sh`, which builds the reference binaries first.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mni_kube_reference::servers::Server;

/// Compares mni-dev with a real kube-apiserver, request by request.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Where `kube-apiserver` and `etcd` are (what scripts/kube-reference.sh prints).
    #[arg(
        long,
        env = "MNI_KUBE_REFERENCE_BIN",
        default_value = ".mni/kube-reference/bin"
    )]
    bin_dir: PathBuf,
    /// The `mni-dev` binary (default: beside this binary, where `cargo build -p mni-dev`
    /// puts it).
    #[arg(long, env = "MNI_DEV")]
    mni_dev: Option<PathBuf>,
    /// Where to write the Markdown report.
    #[arg(long, default_value = ".mni/kube-reference/differential.md")]
    report: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mni_dev = args.mni_dev.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("mni-dev")))
            .unwrap_or_else(|| PathBuf::from("mni-dev"))
    });
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let reference = match Server::start_reference(&args.bin_dir).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: starting the reference: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mni = match Server::start_mni_dev(&mni_dev).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: starting mni-dev: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!(
            "comparing kube-apiserver at {} with mni-dev at {}",
            reference.url, mni.url
        );
        let outcome = mni_kube_reference::run(&reference, &mni).await;
        let header = format!(
            "kube-apiserver {} with etcd (built by scripts/kube-reference.sh), mni-dev {}, kubectl \
             on PATH. Regenerate with `scripts/differential.sh`.",
            version(&reference).await,
            version(&mni).await,
        );
        if let Some(dir) = args.report.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(&args.report, outcome.markdown(&header)) {
            eprintln!("error: writing {}: {e}", args.report.display());
            return ExitCode::FAILURE;
        }
        print!("{}", outcome.summary());
        println!("report: {}", args.report.display());
        ExitCode::SUCCESS
    })
}

async fn version(server: &Server) -> String {
    let call = mni_kube_reference::exchange::Call::new(http::Method::GET, "/version");
    let answer = mni_kube_reference::exchange::send(&server.client, &call).await;
    answer.body["gitVersion"]
        .as_str()
        .unwrap_or("(unknown)")
        .to_owned()
}
