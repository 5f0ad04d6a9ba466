//! The `mni-scaffold` binary: parses the command line and hands it to the library.
//!
//! Everything happens in [`mni_scaffold::parse`] and [`mni_scaffold::run`]; this file only maps
//! the outcome to an exit code: 0 on success, 2 on bad input (clap's own usage errors and
//! unknown plugin flags included), 1 otherwise.

use std::io::Write;
use std::process::ExitCode;

use mni_scaffold::{Environment, Error};

fn main() -> ExitCode {
    let env = Environment::from_process();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let result = mni_scaffold::parse(std::env::args_os(), &env)
        .and_then(|cli| mni_scaffold::run(cli, &env, &mut out, &mut err));
    let _ = out.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(e)) => {
            // Help and --version print to stdout and exit 0; usage errors exit 2.
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
        }
        Err(e) => {
            let code = e.exit_code();
            let _ = writeln!(err, "error: {}", anyhow::Error::new(e));
            ExitCode::from(code)
        }
    }
}
