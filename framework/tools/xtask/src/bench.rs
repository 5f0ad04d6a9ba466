//! `cargo xtask bench`: runs every benchmark of the workspace and prints one table.
//!
//! Each bench is a `harness = false` bench target that reports through `mni-bench` (figure,
//! anchor, ratio); this chore runs them one after the other with `MNI_BENCH_REPORT` pointing
//! at one JSON-lines file, then prints the collected figures as one Markdown table on stdout
//! (the benches' own output and progress go to stderr). A full run (`cargo bench`, release
//! builds, medians of several runs) also writes the table into the book's performance page
//! between its markers; a smoke run (`--smoke`: `cargo test --bench NAME -- --smoke`, the test
//! suite's debug builds, tiny sizes, seconds each) only checks that every bench still works
//! and keeps no figures. Any bench that fails makes the chore fail, after the others ran.

use std::fmt::Write as _;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mni_bench::{Mode, Report};

/// Every bench: (package, bench target), cheapest first.
pub const BENCHES: &[(&str, &str)] = &[
    ("mni-store", "store"),
    ("mni-testkit", "start"),
    ("mni-apiserver", "admission"),
    ("mni-scaffold", "scaffold"),
    ("mni-dev", "apiserver"),
    ("mni-dev", "upwith"),
    ("mni-operator", "operator"),
    ("mni-tests", "service"),
    ("mni-tests", "baremetal"),
    ("mni-tests", "tenants"),
];

/// The book page the table is written into, relative to the repository root.
pub const PAGE: &str = "book/src/performance.md";
/// The markers around the generated table on [`PAGE`].
pub const BEGIN: &str = "<!-- bench-table:begin (cargo xtask bench writes this) -->";
/// See [`BEGIN`].
pub const END: &str = "<!-- bench-table:end -->";

/// Errors of the bench chore.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file could not be read or written, or cargo could not be started.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// `--only` named no bench.
    #[error("--only {0}: no such bench (known: {known})", known = known())]
    Unknown(String),
    /// A report line is not a report.
    #[error("{path}: line {line}: {source}")]
    Report {
        /// The report file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The performance page lacks the markers.
    #[error("{PAGE}: the markers {BEGIN:?} and {END:?} are missing")]
    Markers,
}

fn known() -> String {
    BENCHES
        .iter()
        .map(|(_, b)| *b)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The repository root (this crate is `framework/tools/xtask`).
#[must_use]
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The benches `only` selects (all without it).
///
/// # Errors
///
/// [`BenchError::Unknown`] when `only` names no bench.
pub fn select(only: Option<&str>) -> Result<Vec<(&'static str, &'static str)>, BenchError> {
    match only {
        None => Ok(BENCHES.to_vec()),
        Some(name) => {
            let chosen: Vec<_> = BENCHES
                .iter()
                .copied()
                .filter(|(p, b)| *b == name || *p == name)
                .collect();
            if chosen.is_empty() {
                Err(BenchError::Unknown(name.to_string()))
            } else {
                Ok(chosen)
            }
        }
    }
}

/// The cargo command that runs one bench in `mode`. The bench is selected by its target name
/// (unique in the workspace) with `--workspace` rather than by `-p PACKAGE`: `-p` resolves the
/// dependencies' features for that package alone, so each bench would rebuild the
/// dependencies the workspace's own build (and the test run before a smoke run) has built.
#[must_use]
pub fn command(bench: &str, mode: Mode) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // `cargo xtask` is `cargo run`: its environment holds xtask's CARGO_MANIFEST_DIR and
    // CARGO_PKG_*, which ring's build script watches; passed on, every bench rebuilt ring and
    // all above it, and the next plain build rebuilt them back.
    mni_bench::clean_cargo_env(&mut cmd);
    match mode {
        Mode::Full => {
            cmd.args(["bench", "--workspace", "--bench", bench]);
        }
        Mode::Smoke => {
            cmd.args(["test", "--workspace", "--bench", bench, "--", "--smoke"]);
        }
    }
    cmd
}

/// Runs `benches` in `mode`, each appending to `report_file`; returns the names of those that
/// failed. Their output goes to stderr.
///
/// # Errors
///
/// [`BenchError::Io`] when cargo cannot be started or the report file not prepared.
pub fn run(
    benches: &[(&str, &str)],
    mode: Mode,
    report_file: &Path,
) -> Result<Vec<String>, BenchError> {
    if let Some(dir) = report_file.parent() {
        std::fs::create_dir_all(dir).map_err(|source| BenchError::Io {
            what: format!("creating {}", dir.display()),
            source,
        })?;
    }
    std::fs::write(report_file, "").map_err(|source| BenchError::Io {
        what: format!("writing {}", report_file.display()),
        source,
    })?;
    let mut failed = Vec::new();
    for (i, (package, bench)) in benches.iter().enumerate() {
        eprintln!(
            "== bench {}/{}: {bench} ({package}, {mode:?})",
            i + 1,
            benches.len()
        );
        // The benches' own tables and progress go to stderr: stdout is the combined table.
        let stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|source| BenchError::Io {
                what: "duplicating stderr".to_string(),
                source,
            })?;
        let status = command(bench, mode)
            .current_dir(repo_root())
            .env(mni_bench::REPORT_ENV, report_file)
            .stdout(Stdio::from(stderr))
            .status()
            .map_err(|source| BenchError::Io {
                what: format!("running cargo for bench {bench}"),
                source,
            })?;
        if !status.success() {
            eprintln!("== bench {bench}: FAILED ({status})");
            failed.push((*bench).to_string());
        }
    }
    Ok(failed)
}

/// Reads the reports in `path`, one JSON line each.
///
/// # Errors
///
/// [`BenchError::Io`] or [`BenchError::Report`].
pub fn read_reports(path: &Path) -> Result<Vec<Report>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::Io {
        what: format!("reading {}", path.display()),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| BenchError::Report {
                path: path.to_path_buf(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

fn number(v: Option<f64>) -> String {
    match v {
        None => "–".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The reports as one Markdown table: bench, figure, value, anchor, ratio (with whether the
/// ratio is in mNi's favour).
#[must_use]
pub fn table(reports: &[Report]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| bench | figure | unit | mNi | anchor | anchor's | ratio |"
    );
    let _ = writeln!(out, "|---|---|---|--:|---|--:|--:|");
    for report in reports {
        for f in report.figures() {
            let (anchor, anchor_value) = f
                .anchor
                .as_ref()
                .map_or((String::new(), String::new()), |a| {
                    (a.name.clone(), number(a.value))
                });
            let ratio = f.ratio().map_or_else(String::new, |r| {
                let mark = match f.beats_anchor() {
                    Some(true) => " ✓",
                    _ => "",
                };
                format!("{r:.2}×{mark}")
            });
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {anchor} | {anchor_value} | {ratio} |",
                report.bench,
                f.name.replace('|', "\\|"),
                f.unit,
                number(f.value)
            );
        }
    }
    out
}

/// `page` with the text between [`BEGIN`] and [`END`] replaced by `table`.
///
/// # Errors
///
/// [`BenchError::Markers`] when either marker is missing.
pub fn splice(page: &str, table: &str) -> Result<String, BenchError> {
    let start = page.find(BEGIN).ok_or(BenchError::Markers)? + BEGIN.len();
    let end = page[start..].find(END).ok_or(BenchError::Markers)? + start;
    Ok(format!(
        "{}\n\n{}\n{}",
        &page[..start],
        table.trim_end(),
        &page[end..]
    ))
}

/// Writes `table` into the book's performance page, with `heading` (date, machine) above it.
///
/// # Errors
///
/// [`BenchError::Io`] or [`BenchError::Markers`].
pub fn write_page(heading: &str, table: &str) -> Result<PathBuf, BenchError> {
    let path = repo_root().join(PAGE);
    let page = std::fs::read_to_string(&path).map_err(|source| BenchError::Io {
        what: format!("reading {}", path.display()),
        source,
    })?;
    let updated = splice(&page, &format!("{heading}\n\n{table}"))?;
    std::fs::write(&path, updated).map_err(|source| BenchError::Io {
        what: format!("writing {}", path.display()),
        source,
    })?;
    Ok(path)
}

/// A line naming when and where the figures were taken.
#[must_use]
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or_else(String::new, |kib| format!(", {} GiB", kib / (1 << 20)));
    format!("{cpus} CPUs ({model}){memory}")
}

#[cfg(test)]
mod tests {
    use mni_bench::Better;

    use super::*;

    #[test]
    fn select_by_bench_or_package() {
        assert_eq!(select(Some("store")).unwrap(), vec![("mni-store", "store")]);
        assert_eq!(
            select(Some("mni-dev")).unwrap(),
            vec![("mni-dev", "apiserver"), ("mni-dev", "upwith")]
        );
        let err = select(Some("nope")).unwrap_err().to_string();
        assert!(err.starts_with("--only nope: no such bench"), "{err}");
        assert_eq!(select(None).unwrap().len(), BENCHES.len());
    }

    #[test]
    fn smoke_runs_the_test_profile() {
        let cmd = command("store", Mode::Smoke);
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(
            args,
            ["test", "--workspace", "--bench", "store", "--", "--smoke"]
        );
        // Bench names select one target across the workspace: they must stay unique.
        let mut names: Vec<_> = BENCHES.iter().map(|(_, b)| *b).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), BENCHES.len());
    }

    #[test]
    fn table_and_splice() {
        let mut r = Report::new("store", Mode::Full);
        r.figure("creates", "1/s", Some(2000.0), Better::Higher)
            .anchor("etcd", Some(1000.0));
        r.figure("a | b", "ms", Some(1.5), Better::Lower);
        let table = table(&[r]);
        assert!(table.contains("| store | creates | 1/s | 2000 | etcd | 1000 | 2.00× ✓ |"));
        assert!(table.contains("a \\| b"));
        let page = format!("# P\n\n{BEGIN}\nold\n{END}\n\nafter\n");
        let out = splice(&page, &table).unwrap();
        assert!(out.contains("2.00×") && !out.contains("old") && out.ends_with("after\n"));
        assert!(matches!(splice("# P", &table), Err(BenchError::Markers)));
    }
}
