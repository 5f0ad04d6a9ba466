//! The `mni-scaffold` binary: parses the command line and hands it to the library.
//!
//! Everything happens in [`mni_scaffold::run`]; this file only maps the outcome to an exit
//! code: 0 on success, 2 on bad input (clap's own usage errors included), 1 otherwise.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use mni_scaffold::{Cli, Environment};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and --version print to stdout and exit 0; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let env = Environment::from_process();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    match mni_scaffold::run(cli, &env, &mut out, &mut err) {
        Ok(()) => {
            let _ = out.flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = out.flush();
            let message = anyhow::Error::new(e);
            let code = message
                .downcast_ref::<mni_scaffold::Error>()
                .map_or(1, mni_scaffold::Error::exit_code);
            let _ = writeln!(err, "error: {message}");
            ExitCode::from(code)
        }
    }
}
