//! Wall time and files/s of the scaffolding subcommands, without any cargo build.
//!
//! Runs the library in-process (no CLI process start-up) on fresh temporary projects, each
//! iteration timed on its own, and prints the median and the files written per second at the
//! median: `init` and `new service` with the default chain, `create api` into a project with
//! and without a service, and `create api` through the sample external plugin of
//! `plugins/external-sample` (a Python process per call). The aim for a whole service
//! (`new service` in an empty directory, project included) is under 50 ms.
//!
//! The anchor is Kubebuilder's `init` + `create api` (with `--fetch-deps=false` and
//! `--make=false`: neither tool downloads or builds anything), timed as a process each, when a
//! `kubebuilder` binary is on PATH or named by `MNI_BENCH_KUBEBUILDER`.
//!
//! The cost of the external-plugin door: `new service` with `vpc.mni.dev/v1` built in, against
//! the same plugin built as an external binary (`mni-plugin-vpc`, release profile, built by the
//! bench with cargo), installed and run instead of the built-in (`MNI_REPLACE_BUILTINS`) — a
//! process, the JSON protocol and the sandbox's checks per call; the built-in is the anchor.
//!
//! `upgrade` on the largest golden project (`tests/golden/multi-api`, committed to git first, as
//! upgrade requires), with nothing to change: the cost of replaying its history twice and
//! comparing; the anchor is one replay (the project generated from its commands).
//!
//! `cargo bench -p mni-scaffold`; `MNI_BENCH_ITERS` sets the iteration count (default 30;
//! `-- --smoke`: 2).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use mni_bench::{Better, Mode, Report};
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

    /// The median in milliseconds.
    fn median_ms(&mut self) -> Option<f64> {
        self.times.sort_unstable();
        let median = self.times.get(self.times.len() / 2)?;
        Some(median.as_secs_f64() * 1e3)
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

fn main() -> ExitCode {
    let mode = Mode::from_env();
    let mut report = Report::new("scaffold", mode);
    if let Err(e) = run_all(mode, &mut report) {
        report.fail(format!("{e:#}"));
    }
    report.finish()
}

/// Kubebuilder, the anchor for `init` + `create api`: `MNI_BENCH_KUBEBUILDER` or `kubebuilder`
/// on PATH (build it with `go install sigs.k8s.io/kubebuilder/v4@v4.16.0`).
fn kubebuilder() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MNI_BENCH_KUBEBUILDER") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("kubebuilder"))
            .find(|p| p.is_file())
    })
}

/// Runs `program` with each argument list in `dir`, one process each; the wall time of all.
fn processes(program: &Path, dir: &Path, steps: &[&[&str]]) -> anyhow::Result<Duration> {
    fs::create_dir_all(dir)?;
    let start = Instant::now();
    for args in steps {
        let out = Command::new(program)
            .args(*args)
            .current_dir(dir)
            .output()?;
        if !out.status.success() {
            anyhow::bail!(
                "{} {}: {}",
                program.display(),
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    Ok(start.elapsed())
}

/// One `mni-scaffold init` + `create api`, a process each, in `dir`.
fn mni_project(dir: &Path) -> anyhow::Result<Duration> {
    processes(
        Path::new(env!("CARGO_BIN_EXE_mni-scaffold")),
        dir,
        &[&["init", "--project-name", "bench"], API],
    )
}

/// One Kubebuilder `init` + `create api` (no dependency download, no `make`), in `dir`;
/// the wall time of the two.
fn kubebuilder_project(kb: &Path, dir: &Path) -> anyhow::Result<Duration> {
    processes(
        kb,
        dir,
        &[
            &[
                "init",
                "--domain",
                "example.com",
                "--repo",
                "example.com/bench",
                "--skip-go-version-check",
                "--fetch-deps=false",
            ][..],
            &[
                "create",
                "api",
                "--group",
                "crew",
                "--version",
                "v1",
                "--kind",
                "Captain",
                "--resource",
                "--controller",
                "--make=false",
            ][..],
        ],
    )
}

fn run_all(mode: Mode, report: &mut Report) -> anyhow::Result<()> {
    let iters: u32 = std::env::var("MNI_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(mode.pick(30, 2));
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
    let process_iters = iters.min(mode.pick(10, 1));
    let median_ms = |mut times: Vec<Duration>| {
        times.sort_unstable();
        times.get(times.len() / 2).map(|d| d.as_secs_f64() * 1e3)
    };
    let mut mni_times = Vec::new();
    let mut kb_times = Vec::new();
    let kb = kubebuilder();
    if kb.is_none() {
        report.note("kubebuilder not found: no anchor for init + create api");
    }
    for i in 0..process_iters {
        mni_times.push(mni_project(&tmp.path().join(format!("mp-{i}")))?);
        if let Some(kb) = &kb {
            kb_times.push(kubebuilder_project(
                kb,
                &tmp.path().join(format!("kb-{i}")),
            )?);
        }
    }
    external_vpc(&tmp.path().join("vpc"), iters, mode, report)?;
    upgrade_golden(
        &tmp.path().join("upgrade"),
        iters.min(mode.pick(10, 1)),
        report,
    )?;
    let kb_ms = median_ms(kb_times);
    for (name, step) in &mut steps {
        report.figure(
            format!("{name}, median of {iters} ({} files)", step.files),
            "ms",
            step.median_ms(),
            Better::Lower,
        );
    }
    report
        .figure(
            format!("init + create api, two processes, median of {process_iters}"),
            "ms",
            median_ms(mni_times),
            Better::Lower,
        )
        .anchor("Kubebuilder v4.16 (no deps, no make)", kb_ms);
    Ok(())
}

/// `upgrade` of a copy of `tests/golden/multi-api` under git, against one replay of its history.
fn upgrade_golden(root: &Path, iters: u32, report: &mut Report) -> anyhow::Result<()> {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/multi-api");
    let env = Environment::from_process();
    let (mut upgrade, mut replay) = (Step::default(), Step::default());
    for i in 0..iters {
        let dir = root.join(format!("p-{i}"));
        let mut files = 0;
        for entry in walkdir::WalkDir::new(&golden)
            .into_iter()
            .filter_entry(|e| {
                e.depth() != 1 || !matches!(e.file_name().to_str(), Some("target" | "Cargo.lock"))
            })
        {
            let entry = entry?;
            let target = dir.join(entry.path().strip_prefix(&golden)?);
            if entry.file_type().is_dir() {
                fs::create_dir_all(&target)?;
            } else {
                fs::copy(entry.path(), &target)?;
                files += 1;
            }
        }
        let git = |args: &[&str]| -> anyhow::Result<()> {
            let out = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args([
                    "-c",
                    "user.name=bench",
                    "-c",
                    "user.email=bench@example.com",
                ])
                .args(args)
                .output()?;
            if !out.status.success() {
                anyhow::bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            }
            Ok(())
        };
        git(&["init", "-q"])?;
        git(&["add", "-A"])?;
        git(&["commit", "-qm", "golden"])?;
        let start = Instant::now();
        let out = run(&dir, &env, &["upgrade"])?;
        upgrade.record(start, files);
        if out != 0 {
            anyhow::bail!("upgrade of an up-to-date project changed {out} files");
        }
        let history = mni_scaffold::history::History::require(&dir)?;
        let into = root.join(format!("r-{i}"));
        fs::create_dir_all(&into)?;
        let start = Instant::now();
        history.replay(&into, &dir, &env, None)?;
        replay.record(start, files);
    }
    report
        .figure(
            format!(
                "upgrade of tests/golden/multi-api ({} files), up to date, median of {iters}",
                upgrade.files
            ),
            "ms",
            upgrade.median_ms(),
            Better::Lower,
        )
        .anchor("one replay of its history", replay.median_ms());
    Ok(())
}

/// Builds `mni-plugin-vpc` (release; in a smoke run the dev profile the tests built) and installs
/// it under `plugins` as `vpc.mni.dev/v1`.
fn install_vpc_plugin(plugins: &Path, mode: Mode) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "build",
            "-q",
            "-p",
            "mni-plugin-vpc",
            "--bin",
            "mni-plugin-vpc",
        ])
        .args(mode.pick(&["--release"][..], &[]))
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--message-format=json")
        .output()?;
    if !out.status.success() {
        anyhow::bail!(
            "cargo build mni-plugin-vpc: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The executable's path, from cargo's own report (wherever the target directory is).
    let built = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .next_back()
        .ok_or_else(|| anyhow::anyhow!("cargo reported no mni-plugin-vpc executable"))?;
    let dir = plugins.join("vpc.mni.dev/v1");
    fs::create_dir_all(&dir)?;
    fs::copy(&built, dir.join("vpc.mni.dev"))?;
    Ok(())
}

/// `new service` through `vpc.mni.dev/v1` built in and installed, interleaved per iteration.
fn external_vpc(root: &Path, iters: u32, mode: Mode, report: &mut Report) -> anyhow::Result<()> {
    let plugins = root.join("plugins");
    install_vpc_plugin(&plugins, mode)?;
    let mut builtin = Environment::from_process();
    builtin.plugins_dir = Some(plugins.clone());
    let mut external = Environment::from_process();
    external.plugins_dir = Some(plugins);
    external.replace_builtins = vec!["vpc.mni.dev/v1".parse()?];
    let init = [
        "--plugins",
        "vpc/v1",
        "init",
        "--domain",
        "mni.dev",
        "--project-name",
        "net",
    ];
    let new = ["--plugins", "vpc/v1", "new", "service", "network"];
    let (mut b, mut e) = (Step::default(), Step::default());
    for i in 0..iters {
        for (env, step, name) in [(&builtin, &mut b, "b"), (&external, &mut e, "e")] {
            let dir = root.join(format!("{name}-{i}"));
            run(&dir, env, &init)?;
            let start = Instant::now();
            let files = run(&dir, env, &new)?;
            step.record(start, files);
        }
    }
    if b.files != e.files {
        anyhow::bail!("built-in wrote {} files, installed {}", b.files, e.files);
    }
    report
        .figure(
            format!("new service with vpc.mni.dev/v1 installed from a catalog build, median of {iters} ({} files)", e.files),
            "ms",
            e.median_ms(),
            Better::Lower,
        )
        .anchor("the same plugin built in", b.median_ms());
    Ok(())
}
