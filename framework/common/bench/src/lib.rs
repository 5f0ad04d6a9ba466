//! `mni-bench`: what every mNi benchmark binary shares.
//!
//! The project's benchmarks are `harness = false` bench targets, each measuring one part of
//! mNi against a named anchor (etcd for the store and the API, a bare kube-rs `Controller`
//! for the runtime, Kubebuilder for scaffolding). This crate gives them one shape, so
//! `cargo xtask bench` can run them all and print one table:
//!
//! - [`Mode`]: a full run (`cargo bench`, medians of several runs) or a **smoke** run
//!   (`--smoke` on the command line or `MNI_BENCH_SMOKE=1`: the same code paths with tiny
//!   sizes, seconds long, figures not kept), which CI runs so a broken bench fails the day it
//!   breaks;
//! - [`Report`]: the figures of one bench, each with its unit, which direction is better and
//!   its anchor; [`Report::finish`] prints them as a table, appends them as one JSON line to
//!   the file named by `MNI_BENCH_REPORT` (the file `cargo xtask bench` collects), and turns
//!   any recorded failure, or a figure that could not be measured, into a failing exit code.
//!   A bench whose requests fail must never exit 0 with a table of dashes.
//!
//! ```
//! use mni_bench::{Better, Mode, Report};
//!
//! let mode = Mode::Smoke;
//! let mut report = Report::new("store", mode);
//! report
//!     .figure("durable creates/s, 8 clients", "1/s", Some(41_000.0), Better::Higher)
//!     .anchor("etcd 3.4", Some(15_000.0));
//! assert!(report.failures().is_empty());
//! assert_eq!(report.figures()[0].ratio(), Some(41_000.0 / 15_000.0));
//! ```
//!
//! [`clean_cargo_env`] is for every tool that starts `cargo` from a process Cargo started (a
//! test, a bench, `cargo xtask`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

/// The environment variable that switches a bench to smoke mode (`1` or `true`).
pub const SMOKE_ENV: &str = "MNI_BENCH_SMOKE";
/// The environment variable naming the JSON-lines file [`Report::finish`] appends to.
pub const REPORT_ENV: &str = "MNI_BENCH_REPORT";

/// How thoroughly a bench runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Full sizes, medians of several runs: the figures reported.
    Full,
    /// Tiny sizes, one run: checks that every request of the bench still succeeds.
    Smoke,
}

impl Mode {
    /// Smoke when the command line has `--smoke` or [`SMOKE_ENV`] is `1`/`true`, else full.
    #[must_use]
    pub fn from_env() -> Self {
        let flag = std::env::args().skip(1).any(|a| a == "--smoke");
        let env = std::env::var(SMOKE_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
        if flag || env { Self::Smoke } else { Self::Full }
    }

    /// Whether this is a smoke run.
    #[must_use]
    pub fn is_smoke(self) -> bool {
        self == Self::Smoke
    }

    /// `full` in a full run, `smoke` in a smoke run.
    pub fn pick<T>(self, full: T, smoke: T) -> T {
        match self {
            Self::Full => full,
            Self::Smoke => smoke,
        }
    }
}

/// Which direction of a figure is the better one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Throughputs: more is better.
    Higher,
    /// Latencies, times, memory: less is better.
    Lower,
}

/// What a figure is compared with, measured in the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    /// The anchor's name and version, e.g. `etcd 3.4`.
    pub name: String,
    /// Its figure; `None` when it could not be measured (not installed, failed).
    pub value: Option<f64>,
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What was measured, with its method in brief (`LIST 10,000 objects, p50 of 10`).
    pub name: String,
    /// The unit (`ms`, `1/s`, `MiB`, …).
    pub unit: String,
    /// The figure; `None` when it could not be measured (then the bench fails).
    pub value: Option<f64>,
    /// Which direction is better.
    pub better: Better,
    /// The anchor, if this figure has one.
    pub anchor: Option<Anchor>,
}

impl Figure {
    /// Sets the anchor this figure is compared with.
    pub fn anchor(&mut self, name: impl Into<String>, value: Option<f64>) -> &mut Self {
        self.anchor = Some(Anchor {
            name: name.into(),
            value,
        });
        self
    }

    /// The figure divided by its anchor's, when both exist and are positive.
    #[must_use]
    pub fn ratio(&self) -> Option<f64> {
        let anchor = self.anchor.as_ref()?.value?;
        let value = self.value?;
        (value > 0.0 && anchor > 0.0).then(|| value / anchor)
    }

    /// Whether the figure is better than its anchor's; `None` without a ratio.
    #[must_use]
    pub fn beats_anchor(&self) -> Option<bool> {
        let ratio = self.ratio()?;
        Some(match self.better {
            Better::Higher => ratio >= 1.0,
            Better::Lower => ratio <= 1.0,
        })
    }
}

/// The figures of one bench run, and what went wrong in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The bench's name (`apiserver`, `store`, …).
    pub bench: String,
    /// How it ran.
    pub mode: Mode,
    figures: Vec<Figure>,
    failures: Vec<String>,
    notes: Vec<String>,
}

impl Report {
    /// An empty report for bench `bench`.
    #[must_use]
    pub fn new(bench: impl Into<String>, mode: Mode) -> Self {
        Self {
            bench: bench.into(),
            mode,
            figures: Vec::new(),
            failures: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Records a figure; returns it so an anchor can be added.
    pub fn figure(
        &mut self,
        name: impl Into<String>,
        unit: impl Into<String>,
        value: Option<f64>,
        better: Better,
    ) -> &mut Figure {
        self.figures.push(Figure {
            name: name.into(),
            unit: unit.into(),
            value: value.filter(|v| v.is_finite()),
            better,
            anchor: None,
        });
        self.figures.last_mut().expect("just pushed")
    }

    /// Records a failure: a request that failed, a step that could not run. Any failure
    /// makes [`Report::finish`] exit non-zero.
    pub fn fail(&mut self, what: impl Into<String>) {
        self.failures.push(what.into());
    }

    /// Records a remark printed under the table (a run that hit its time cap, …).
    pub fn note(&mut self, what: impl Into<String>) {
        self.notes.push(what.into());
    }

    /// The figures so far.
    #[must_use]
    pub fn figures(&self) -> &[Figure] {
        &self.figures
    }

    /// The failures so far, and one for each figure without a value.
    #[must_use]
    pub fn failures(&self) -> Vec<String> {
        let mut all = self.failures.clone();
        for f in &self.figures {
            if f.value.is_none() {
                all.push(format!("{}: not measured", f.name));
            }
        }
        all
    }

    /// The report as a plain-text table (figure, value, anchor, ratio), notes and failures.
    #[must_use]
    pub fn table(&self) -> String {
        let mut out = String::new();
        let width = self
            .figures
            .iter()
            .map(|f| f.name.len() + f.unit.len() + 3)
            .max()
            .unwrap_or(10)
            .max(10);
        let _ = writeln!(
            out,
            "{:<width$} {:>12} {:>22} {:>8}",
            "figure", "value", "anchor", "ratio"
        );
        for f in &self.figures {
            let label = format!("{} ({})", f.name, f.unit);
            let anchor = f
                .anchor
                .as_ref()
                .map_or_else(String::new, |a| format!("{} {}", a.name, cell(a.value)));
            let ratio = f.ratio().map_or_else(String::new, |r| format!("{r:.2}x"));
            let _ = writeln!(
                out,
                "{label:<width$} {:>12} {anchor:>22} {ratio:>8}",
                cell(f.value)
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        for failure in self.failures() {
            let _ = writeln!(out, "FAILED: {failure}");
        }
        out
    }

    /// Prints the table, appends the report to the file named by [`REPORT_ENV`] (if set),
    /// and returns success only when nothing failed and every figure was measured.
    #[must_use]
    pub fn finish(self) -> ExitCode {
        println!();
        println!("{} ({:?})", self.bench, self.mode);
        print!("{}", self.table());
        if let Some(path) = std::env::var_os(REPORT_ENV) {
            let written = serde_json::to_string(&self)
                .map_err(std::io::Error::other)
                .and_then(|line| {
                    let mut file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)?;
                    writeln!(file, "{line}")
                });
            if let Err(e) = written {
                eprintln!("error: writing the report to {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
        let failures = self.failures();
        if failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            eprintln!("{}: {} failure(s); see above", self.bench, failures.len());
            ExitCode::FAILURE
        }
    }
}

fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// Removes from `command`'s environment the variables Cargo sets for the crate it is running
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …), so that a `cargo` started by a test, a bench or
/// `cargo xtask` builds as one started from a shell does. Build scripts watch some of them
/// (ring's `rerun-if-env-changed=CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`): inherited, they made
/// every nested build and the next plain one rebuild ring and everything above it in the shared
/// target directory.
pub fn clean_cargo_env(command: &mut std::process::Command) -> &mut std::process::Command {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if is_set_for_crate(name) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether Cargo sets the variable `name` for the one crate it builds or runs.
fn is_set_for_crate(name: &str) -> bool {
    matches!(
        name,
        "CARGO_MANIFEST_DIR"
            | "CARGO_MANIFEST_PATH"
            | "CARGO_MANIFEST_LINKS"
            | "CARGO_CRATE_NAME"
            | "CARGO_BIN_NAME"
            | "CARGO_PRIMARY_PACKAGE"
            | "CARGO_TARGET_TMPDIR"
            | "CARGO_RUSTC_CURRENT_DIR"
            | "OUT_DIR"
    ) || name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_BIN_EXE_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_cargo_does_not_inherit_the_crate_environment() {
        let mut command = std::process::Command::new("env");
        clean_cargo_env(&mut command);
        let removed: Vec<String> = command
            .get_envs()
            .filter(|(_, v)| v.is_none())
            .filter_map(|(k, _)| k.to_str().map(str::to_string))
            .collect();
        // Cargo sets these for this test binary.
        assert!(
            removed.contains(&"CARGO_MANIFEST_DIR".to_string()),
            "{removed:?}"
        );
        assert!(
            removed.contains(&"CARGO_PKG_NAME".to_string()),
            "{removed:?}"
        );
        assert!(!removed.iter().any(|k| k == "CARGO_HOME" || k == "PATH"));
    }

    #[test]
    fn ratio_needs_both_values() {
        let mut r = Report::new("t", Mode::Full);
        r.figure("a", "ms", Some(2.0), Better::Lower)
            .anchor("x", Some(4.0));
        r.figure("b", "ms", Some(2.0), Better::Lower)
            .anchor("x", None);
        r.figure("c", "ms", Some(2.0), Better::Lower);
        let f = r.figures();
        assert_eq!(f[0].ratio(), Some(0.5));
        assert_eq!(f[0].beats_anchor(), Some(true));
        assert_eq!(f[1].ratio(), None);
        assert_eq!(f[2].ratio(), None);
    }

    #[test]
    fn unmeasured_figures_and_failures_fail_the_report() {
        let mut r = Report::new("t", Mode::Smoke);
        r.figure("a", "1/s", Some(f64::NAN), Better::Higher);
        r.fail("POST /x: 401 Unauthorized");
        let failures = r.failures();
        assert_eq!(
            failures,
            vec![
                "POST /x: 401 Unauthorized".to_string(),
                "a: not measured".to_string()
            ]
        );
        assert!(r.table().contains("FAILED: a: not measured"));
    }

    #[test]
    fn report_round_trips_as_one_json_line() {
        let mut r = Report::new("store", Mode::Full);
        r.figure("creates", "1/s", Some(10.0), Better::Higher)
            .anchor("etcd 3.4", Some(5.0));
        r.note("capped");
        let line = serde_json::to_string(&r).unwrap();
        assert!(!line.contains('\n'));
        let back: Report = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        assert!(r.table().contains("2.00x"));
    }

    #[test]
    fn pick_follows_the_mode() {
        assert_eq!(Mode::Full.pick(3, 1), 3);
        assert_eq!(Mode::Smoke.pick(3, 1), 1);
    }
}
