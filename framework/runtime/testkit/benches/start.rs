//! How long `TestEnv::start` takes: the median over 50 starts (`-- --smoke`: 3).
//!
//! Run with `cargo bench -p mni-testkit --bench start`. Each start is timed from the call to
//! the returned environment (server listening, admin client built); shutdowns are not timed.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use mni_bench::{Better, Mode, Report};
use mni_testkit::TestEnv;

fn main() -> ExitCode {
    let mode = Mode::from_env();
    let starts = mode.pick(50, 3);
    let mut report = Report::new("testkit-start", mode);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: building the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let mut times = Vec::with_capacity(starts);
        for _ in 0..starts {
            let began = Instant::now();
            let env = TestEnv::start().await?;
            times.push(began.elapsed());
            env.shutdown().await;
        }
        Ok::<_, mni_testkit::Error>(times)
    });
    match result {
        Ok(mut times) => {
            times.sort();
            let at =
                |q: f64| -> Duration { times[((times.len() - 1) as f64 * q).round() as usize] };
            let ms = |d: Duration| Some(d.as_secs_f64() * 1e3);
            report.figure(
                format!("TestEnv::start, median of {starts}"),
                "ms",
                ms(at(0.5)),
                Better::Lower,
            );
            report.figure("TestEnv::start, p90", "ms", ms(at(0.9)), Better::Lower);
        }
        Err(e) => report.fail(format!("TestEnv::start: {e}")),
    }
    report.finish()
}
