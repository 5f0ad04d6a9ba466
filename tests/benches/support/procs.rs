//! What the `service` and `baremetal` benches share: child processes killed on drop, cargo
//! builds of `mni-dev` and a generated operator, and a process's peak memory and CPU time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use anyhow::{Context as _, Result, bail};
use mni_bench::Mode;

/// Kills a child process when dropped.
pub(crate) struct Guard(pub(crate) Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn cargo(target_dir: &Path, args: &[&str]) -> Result<()> {
    let status = mni_tests::clean_cargo_env(&mut Command::new(env!("CARGO")))
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .context("cargo")?;
    if !status.success() {
        bail!("cargo {} failed", args.join(" "));
    }
    Ok(())
}

/// Where [`build`] put the binaries.
pub(crate) struct Built {
    /// `mni-dev`.
    pub(crate) dev: PathBuf,
    /// The operator.
    pub(crate) operator: PathBuf,
    /// `release` or `debug`.
    pub(crate) profile: &'static str,
}

/// Builds `mni-dev` and `package`'s binary of the same name from the project at `project` (a
/// workspace of its own, built with mNi's lock file, as scripts/golden.sh does; the copy is
/// ignored by git). A full run builds both in release mode, the operator in a target directory
/// of its own: built into the workspace's, its dependencies and mni-dev's rebuild each other
/// (minutes per run on 2 cores). A smoke run uses the debug builds the test suite made: mni-dev
/// is built with `--workspace` (features resolved for the whole workspace, as the test build
/// resolves them), not `-p mni-dev`, whose narrower feature set rebuilt about 80 crates.
pub(crate) fn build(mode: Mode, project: &Path, package: &str) -> Result<Built> {
    let root = mni_tests::repo_root();
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock"))
        .with_context(|| format!("copying Cargo.lock into {}", project.display()))?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let (profile, operator_target, release_flag) = match mode {
        Mode::Full => ("release", target.join("bench-operator"), vec!["--release"]),
        Mode::Smoke => ("debug", target.clone(), vec![]),
    };
    let mut args = vec!["build"];
    args.extend(&release_flag);
    args.extend(["--workspace", "--bin", "mni-dev"]);
    cargo(&target, &args)?;
    let manifest = project.join("Cargo.toml");
    let mut args = vec!["build"];
    args.extend(&release_flag);
    args.extend([
        "--manifest-path",
        manifest.to_str().context("utf-8 path")?,
        "-p",
        package,
    ]);
    cargo(&operator_target, &args)?;
    Ok(Built {
        dev: target.join(profile).join("mni-dev"),
        operator: operator_target.join(profile).join(package),
        profile,
    })
}

/// Peak resident set size of `pid` in MiB.
pub(crate) fn peak_rss_mib(pid: u32) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("VmHWM of process {pid}"))?;
    Ok(kib / 1024.0)
}

/// CPU time (user + system) `pid` has used so far, in seconds (Linux reports clock ticks of
/// 1/100 s).
pub(crate) fn cpu_secs(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The fields after the command name, which is in parentheses and may contain spaces.
    let rest = stat.rsplit_once(')').context("/proc/pid/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<f64> {
        let field = fields.get(i).context("/proc/pid/stat field")?;
        Ok(field.parse::<f64>()?)
    };
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}
