//! `cargo xtask`: parses the command line and calls [`xtask::codegen`] or [`xtask::bench`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Repository chores.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Chore,
}

#[derive(Debug, Subcommand)]
enum Chore {
    /// Regenerates the committed generated code (protobuf field tables, built-in schema table).
    Codegen {
        /// Writes nothing; fails naming every generated file that differs from the generators'
        /// output.
        #[arg(long)]
        check: bool,
    },
    /// Runs every benchmark (or one) and prints one table: figure, anchor, ratio. A full run
    /// also writes the table into the book's performance page.
    Bench {
        /// Tiny sizes on the test builds, seconds per bench: checks the benches still work
        /// (no figures kept, the book untouched).
        #[arg(long)]
        smoke: bool,
        /// Runs only this bench (`store`, `apiserver`, …) or package's benches.
        #[arg(long, value_name = "NAME")]
        only: Option<String>,
        /// Runs nothing: prints the figures of the last run (its report file) and writes them
        /// into the book, e.g. after a run where one bench failed.
        #[arg(long, conflicts_with_all = ["smoke", "only"])]
        render: bool,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Chore::Codegen { check } => codegen(check),
        Chore::Bench {
            smoke,
            only,
            render,
        } => bench(smoke, only.as_deref(), render),
    }
}

fn bench(smoke: bool, only: Option<&str>, render: bool) -> ExitCode {
    use xtask::bench;
    let mode = if smoke {
        mni_bench::Mode::Smoke
    } else {
        mni_bench::Mode::Full
    };
    let result = (|| {
        let benches = bench::select(only)?;
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
            || bench::repo_root().join("target"),
            std::path::PathBuf::from,
        );
        let file = target.join("mni-bench").join("report.jsonl");
        let failed = if render {
            Vec::new()
        } else {
            bench::run(&benches, mode, &file)?
        };
        let reports = bench::read_reports(&file)?;
        let table = bench::table(&reports);
        println!("{table}");
        if render || (mode == mni_bench::Mode::Full && only.is_none() && failed.is_empty()) {
            let heading = format!(
                "Measured with `cargo xtask bench` on {}; each row names its statistic.",
                bench::machine()
            );
            let page = bench::write_page(&heading, &table)?;
            eprintln!("written into {}", page.display());
        }
        Ok::<_, bench::BenchError>(failed)
    })();
    match result {
        Ok(failed) if failed.is_empty() => ExitCode::SUCCESS,
        Ok(failed) => {
            eprintln!("error: benches failed: {}", failed.join(", "));
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn codegen(check: bool) -> ExitCode {
    let result = xtask::codegen::Inputs::locate()
        .map_err(xtask::codegen::CodegenError::from)
        .and_then(|inputs| xtask::codegen::generate(&inputs));
    let files = match result {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = if check {
        xtask::codegen::drifted(&files)
    } else {
        xtask::codegen::write(&files)
    };
    match outcome {
        Ok(paths) if check && !paths.is_empty() => {
            for path in paths {
                eprintln!("{}: out of date; run `cargo xtask codegen`", path.display());
            }
            ExitCode::FAILURE
        }
        Ok(paths) => {
            let verb = if check { "up to date" } else { "written" };
            println!("{} generated files {verb}", files.len());
            for path in paths {
                println!("  updated {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
