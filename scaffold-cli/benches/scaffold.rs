//! Wall time and files/s of the scaffolding subcommands, without any cargo build.
//!
//! Runs the library in-process (no CLI process start-up) on fresh temporary projects, each
//! iteration timed on its own, and prints the median and the files written per second at the
//! median: `init` and `new service` with the default chain, `create api` into a project with
//! and without a service, and `create api` through the sample external plugin of
//! `plugins/external-sample` (a Python process per call). The aim for a whole service
//! (`new service` in an empty directory, project included) is under 50 ms.
//!
//! `cargo bench -p mni-scaffold`; `MNI_BENCH_ITERS` sets the iteration count (default 30).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use mni_scaffold::Environment;

/// Runs one command in `root`; returns the number of files created or updated.
fn run(root: &Path, env: &Environment, args: &[&str]) -> anyhow::Result<usize> {
    let root = root
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("non-UTF-8 temp dir"))?;
    let mut argv = vec!["mni-scaffold", "-C", root];
    argv.extend_from_slice(args);
    let cli = mni_scaffold::parse(argv, env)?;
    let mut out = Vec::new();
    mni_scaffold::run(cli, env, &mut out, &mut std::io::sink())?;
    let out = String::from_utf8(out)?;
    Ok(out
        .lines()
        .filter(|l| l.starts_with("   create ") || l.starts_with("   update "))
        .count())
}

/// Timings of one step over all iterations.
#[derive(Default)]
struct Step {
    times: Vec<Duration>,
    files: usize,
}

impl Step {
    fn record(&mut self, start: Instant, files: usize) {
        self.times.push(start.elapsed());
        self.files = files;
    }

    fn report(&mut self, name: &str) {
        self.times.sort_unstable();
        let median = self.times[self.times.len() / 2];
        let (min, max) = (self.times[0], self.times[self.times.len() - 1]);
        let files_per_sec = self.files as f64 / median.as_secs_f64();
        println!(
            "{name:<44} median {median:>9.2?}  (min {min:>9.2?}, max {max:>9.2?})  {:>3} files  {files_per_sec:>7.0} files/s",
            self.files
        );
    }
}

const API: &[&str] = &[
    "create",
    "api",
    "--group",
    "crew",
    "--version",
    "v1",
    "--kind",
    "Captain",
];

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

    let mut steps: Vec<(&str, Step)> = [
        "init (default chain)",
        "create api (root crate)",
        "new service, empty dir (project + service)",
        "new service, existing project",
        "create api --service",
        "init (default chain + external apidocs)",
        "create api (default chain + external apidocs)",
    ]
    .into_iter()
    .map(|n| (n, Step::default()))
    .collect();
    for i in 0..iters {
        let root = tmp.path().join(format!("p-{i}"));
        let start = Instant::now();
        let files = run(&root, &env, &["init", "--project-name", "bench"])?;
        steps[0].1.record(start, files);
        let start = Instant::now();
        let files = run(&root, &env, API)?;
        steps[1].1.record(start, files);

        let root = tmp.path().join(format!("s-{i}"));
        let start = Instant::now();
        let files = run(&root, &env, &["new", "service", "billing"])?;
        steps[2].1.record(start, files);
        let start = Instant::now();
        let files = run(&root, &env, &["new", "service", "ledger"])?;
        steps[3].1.record(start, files);
        let start = Instant::now();
        let mut api = API.to_vec();
        api.extend(["--service", "ledger"]);
        let files = run(&root, &env, &api)?;
        steps[4].1.record(start, files);

        let root = tmp.path().join(format!("e-{i}"));
        let start = Instant::now();
        let files = run(
            &root,
            &env,
            &[
                "--plugins",
                "rust-operator,apidocs",
                "init",
                "--project-name",
                "bench",
            ],
        )?;
        steps[5].1.record(start, files);
        let start = Instant::now();
        let files = run(&root, &env, API)?;
        steps[6].1.record(start, files);
    }
    println!("{iters} iterations each");
    for (name, step) in &mut steps {
        step.report(name);
    }
    Ok(())
}
