//! Store throughput and how it holds up as the store grows.
//!
//! - Durable creates per second with 1, 8 and 64 concurrent writers on a temporary directory
//!   (WAL, `synchronous=FULL`: every acknowledged write fsync'd, concurrent writers sharing
//!   group commits), and in-memory creates per second; each the median of a few fixed-duration
//!   runs on a fresh store.
//! - Growth (issue "scale and speed"): one durable store is filled to a small and then to a
//!   large size (10,000 and 1,000,000 objects in a full run); at each size, the create rate of
//!   64 writers over a window of new keys, and the latency of GETs and updates of random
//!   existing keys. The large-size figures are reported with the small-size ones as their
//!   anchor: a flat-cost store keeps the ratio near 1.
//!
//! `cargo bench -p mni-store` for the figures; `cargo test -p mni-store --bench store --
//! --smoke` runs the same code with tiny sizes (CI does, so a broken bench fails at once).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mni_bench::{Better, Mode, Report};
use mni_store::{Error, Store, StoreOptions};

/// Any failure of a measurement, with what failed.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The sizes of one run.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    /// How long each throughput run writes.
    run: Duration,
    /// Runs per throughput figure.
    runs: usize,
    /// The two store sizes the growth figures compare.
    grow: (usize, usize),
    /// Creates timed at each size.
    window: usize,
    /// GETs and updates timed at each size.
    samples: usize,
}

const FULL: Sizes = Sizes {
    run: Duration::from_millis(300),
    runs: 5,
    grow: (10_000, 1_000_000),
    window: 20_000,
    samples: 2_000,
};

const SMOKE: Sizes = Sizes {
    run: Duration::from_millis(50),
    runs: 1,
    grow: (500, 2_000),
    window: 500,
    samples: 100,
};

/// Updates timed at each size (at most).
const UPDATES: usize = 500;

/// A 512-byte value, about a small Kubernetes object.
fn value() -> Bytes {
    Bytes::from(vec![b'x'; 512])
}

/// One run: `writers` tasks create keys until the deadline. Returns (creates/s, writes/commit).
async fn run(store: &Store, writers: usize, length: Duration) -> Result<(f64, f64), Error> {
    let started = Instant::now();
    let deadline = started + length;
    let tasks: Vec<_> = (0..writers)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut count = 0_u64;
                while Instant::now() < deadline {
                    let key = format!("/registry/bench/w{writer}/{count}");
                    store.create(&key, value()).await?;
                    count += 1;
                }
                Ok::<_, Error>(count)
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.map_err(|_| Error::Closed)??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let stats = store.stats();
    let per_commit = stats.writes as f64 / stats.commits.max(1) as f64;
    Ok((total as f64 / elapsed, per_commit))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median create rate of `writers` over `sizes.runs` fresh stores.
async fn throughput(sizes: Sizes, writers: usize, durable: bool) -> Result<(f64, f64), Error> {
    let mut rates = Vec::with_capacity(sizes.runs);
    let mut commits = Vec::with_capacity(sizes.runs);
    for _ in 0..sizes.runs {
        let dir = tempfile::tempdir()?;
        let store = if durable {
            Store::open(&dir.path().join("bench.db"), StoreOptions::default())?
        } else {
            Store::in_memory()?
        };
        let (rate, per_commit) = run(&store, writers, sizes.run).await?;
        rates.push(rate);
        commits.push(per_commit);
        store.close().await;
    }
    Ok((median(rates), median(commits)))
}

/// Creates keys `/registry/grow/{i}` for i in `range` with 64 writers; the rate.
async fn fill(store: &Store, range: std::ops::Range<usize>) -> Result<f64, Error> {
    const WRITERS: usize = 64;
    let started = Instant::now();
    let count = range.len();
    let tasks: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let store = store.clone();
            let range = range.clone();
            tokio::spawn(async move {
                for i in range.skip(writer).step_by(WRITERS) {
                    store
                        .create(&format!("/registry/grow/{i:09}"), value())
                        .await?;
                }
                Ok::<_, Error>(())
            })
        })
        .collect();
    for task in tasks {
        task.await
            .map_err(|e| Error::from(std::io::Error::other(e)))??;
    }
    Ok(count as f64 / started.elapsed().as_secs_f64())
}

/// Growth figures at one size: (creates/s, GET p50 µs, update p50 ms).
async fn at_size(store: &Store, size: usize, sizes: Sizes) -> Result<(f64, f64, f64), BoxError> {
    let rate = fill(store, size..size + sizes.window).await?;
    // Spread the sampled keys over the whole store, deterministically.
    let total = size + sizes.window;
    let keys: Vec<String> = (0..sizes.samples)
        .map(|i| format!("/registry/grow/{:09}", (i * 7_919) % total))
        .collect();
    let mut gets = Vec::with_capacity(keys.len());
    for key in &keys {
        let started = Instant::now();
        let found = store.get(key);
        gets.push(started.elapsed().as_secs_f64() * 1e6);
        if found.is_none() {
            return Err(format!("GET {key}: not found in a store of {total} keys").into());
        }
    }
    let mut updates = Vec::with_capacity(keys.len().min(UPDATES));
    for key in keys.iter().take(UPDATES) {
        let started = Instant::now();
        store.update(key, value(), None).await?;
        updates.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok((rate, median(gets), median(updates)))
}

async fn measure(mode: Mode, report: &mut Report) -> Result<(), BoxError> {
    let sizes = mode.pick(FULL, SMOKE);
    for writers in [1, 8, 64] {
        eprintln!("durable creates, {writers} writers");
        let (rate, per_commit) = throughput(sizes, writers, true).await?;
        report.figure(
            format!(
                "durable creates, {writers} writers (median of {})",
                sizes.runs
            ),
            "1/s",
            Some(rate),
            Better::Higher,
        );
        report.note(format!(
            "{writers} writers: {per_commit:.1} writes per commit"
        ));
    }
    for writers in [1, 64] {
        eprintln!("in-memory creates, {writers} writers");
        let (rate, _) = throughput(sizes, writers, false).await?;
        report.figure(
            format!(
                "in-memory creates, {writers} writers (median of {})",
                sizes.runs
            ),
            "1/s",
            Some(rate),
            Better::Higher,
        );
    }
    let (small, large) = sizes.grow;
    eprintln!("growth: filling to {small} objects");
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("grow.db"), StoreOptions::default())?;
    fill(&store, 0..small).await?;
    let (rate_s, get_s, update_s) = at_size(&store, small, sizes).await?;
    eprintln!("growth: filling to {large} objects");
    fill(&store, small + sizes.window..large).await?;
    let (rate_l, get_l, update_l) = at_size(&store, large, sizes).await?;
    let bytes = std::fs::metadata(dir.path().join("grow.db")).map_or(0, |m| m.len());
    store.close().await;
    let anchor = format!("same store at {small} objects");
    report
        .figure(
            format!("durable creates at {large} objects, 64 writers"),
            "1/s",
            Some(rate_l),
            Better::Higher,
        )
        .anchor(&anchor, Some(rate_s));
    report
        .figure(
            format!("GET by key at {large} objects (p50 of {})", sizes.samples),
            "µs",
            Some(get_l),
            Better::Lower,
        )
        .anchor(&anchor, Some(get_s));
    report
        .figure(
            format!(
                "durable update at {large} objects (p50 of {})",
                sizes.samples.min(UPDATES)
            ),
            "ms",
            Some(update_l),
            Better::Lower,
        )
        .anchor(&anchor, Some(update_s));
    report.note(format!(
        "database file at {} objects: {} MiB",
        large + sizes.window,
        bytes / (1 << 20)
    ));
    Ok(())
}

fn main() -> ExitCode {
    let mode = Mode::from_env();
    let mut report = Report::new("store", mode);
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
    if let Err(e) = runtime.block_on(measure(mode, &mut report)) {
        report.fail(format!("store: {e}"));
    }
    report.finish()
}
