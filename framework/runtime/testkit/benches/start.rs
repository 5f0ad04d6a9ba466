//! How long `TestEnv::start` takes: the median over 50 starts.
//!
//! Run with `cargo bench -p mni-testkit --bench start`. Each start is timed from the call to
//! the returned environment (server listening, admin client built); shutdowns are not timed.

use std::time::{Duration, Instant};

use mni_testkit::TestEnv;

const STARTS: usize = 50;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut times: Vec<Duration> = runtime.block_on(async {
        let mut times = Vec::with_capacity(STARTS);
        for _ in 0..STARTS {
            let began = Instant::now();
            let env = TestEnv::start().await?;
            times.push(began.elapsed());
            env.shutdown().await;
        }
        Ok::<_, mni_testkit::Error>(times)
    })?;
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "TestEnv::start over {STARTS} starts: median {:?} (min {:?}, p90 {:?}, max {:?})",
        at(0.5),
        at(0.0),
        at(0.9),
        at(1.0)
    );
    Ok(())
}
