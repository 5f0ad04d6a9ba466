//! Wall time and files/s of `mni-scaffold init` and of an external-plugin `create api`.
//!
//! Runs the library in-process (no cargo build, no CLI process start-up) on fresh temporary
//! projects: `init` with the built-in chain, then `init` + `create api` through the sample
//! external plugin of `plugins/external-sample` (a Python process per call). Run with
//! `cargo bench -p mni-scaffold`; set `MNI_BENCH_ITERS` to change the iteration count.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser;
use mni_scaffold::{Cli, Environment};

fn run(root: &Path, env: &Environment, args: &[&str]) -> anyhow::Result<usize> {
    let mut argv = vec!["mni-scaffold", "-C"];
    let root = root
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("non-UTF-8 temp dir"))?;
    argv.push(root);
    argv.extend_from_slice(args);
    let cli = Cli::try_parse_from(argv)?;
    let mut out = Vec::new();
    mni_scaffold::run(cli, env, &mut out, &mut std::io::sink())?;
    let out = String::from_utf8(out)?;
    Ok(out
        .lines()
        .filter(|l| l.starts_with("   create ") || l.starts_with("   update "))
        .count())
}

fn report(name: &str, iters: u32, files: usize, elapsed: Duration) {
    let per = elapsed / iters.max(1);
    let files_per_sec = files as f64 / elapsed.as_secs_f64();
    println!(
        "{name:<36} {iters:>4} runs  {per:>10.2?}/run  {files:>5} files  {files_per_sec:>9.0} files/s"
    );
}

fn main() -> anyhow::Result<()> {
    let iters: u32 = std::env::var("MNI_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let tmp = tempfile::tempdir()?;
    let plugins = tmp.path().join("plugins");
    let sample_dir = plugins.join("apidocs.mni.dev/v1");
    fs::create_dir_all(&sample_dir)?;
    let sample = sample_dir.join("apidocs.mni.dev");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/external-sample/apidocs.mni.dev"),
        &sample,
    )?;
    fs::set_permissions(&sample, fs::Permissions::from_mode(0o755))?;
    let mut env = Environment::from_process();
    env.plugins_dir = Some(plugins);

    let mut files = 0;
    let start = Instant::now();
    for i in 0..iters {
        files += run(&tmp.path().join(format!("init-{i}")), &env, &["init"])?;
    }
    report("init (base)", iters, files, start.elapsed());

    let mut init_files = 0;
    let mut api_files = 0;
    let mut init_time = Duration::ZERO;
    let mut api_time = Duration::ZERO;
    for i in 0..iters {
        let root = tmp.path().join(format!("ext-{i}"));
        let start = Instant::now();
        init_files += run(&root, &env, &["--plugins", "base,apidocs", "init"])?;
        init_time += start.elapsed();
        let start = Instant::now();
        api_files += run(
            &root,
            &env,
            &[
                "create",
                "api",
                "--group",
                "crew",
                "--version",
                "v1",
                "--kind",
                "Captain",
            ],
        )?;
        api_time += start.elapsed();
    }
    report(
        "init (base + external apidocs)",
        iters,
        init_files,
        init_time,
    );
    report("create api (external apidocs)", iters, api_files, api_time);
    Ok(())
}
