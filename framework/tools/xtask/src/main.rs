//! `cargo xtask`: parses the command line and calls [`xtask::codegen`].

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
}

fn main() -> ExitCode {
    let Cli {
        command: Chore::Codegen { check },
    } = Cli::parse();
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
