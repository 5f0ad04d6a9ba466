//! Store throughput: durable creates per second with 1, 8 and 64 concurrent writers on a
//! temporary directory (WAL, `synchronous=FULL`: every acknowledged write fsync'd, concurrent
//! writers sharing group commits), and in-memory creates per second. Each figure is the median
//! of a few fixed-duration runs on a fresh store. Run with `cargo bench -p mni-store`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mni_store::{Error, Store, StoreOptions};

/// How long each run writes.
const RUN: Duration = Duration::from_millis(300);
/// Runs per figure.
const RUNS: usize = 5;

/// One run: `writers` tasks create keys until the deadline. Returns (creates/s, writes/commit).
async fn run(store: &Store, writers: usize) -> Result<(f64, f64), Error> {
    let value = Bytes::from(vec![b'x'; 512]);
    let started = Instant::now();
    let deadline = started + RUN;
    let tasks: Vec<_> = (0..writers)
        .map(|writer| {
            let store = store.clone();
            let value = value.clone();
            tokio::spawn(async move {
                let mut count = 0_u64;
                while Instant::now() < deadline {
                    let key = format!("/registry/bench/w{writer}/{count}");
                    store.create(&key, value.clone()).await?;
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

fn median(mut values: Vec<(f64, f64)>) -> (f64, f64) {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    values[values.len() / 2]
}

async fn bench(name: &str, writers: usize, durable: bool) -> Result<(), Error> {
    let mut results = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let dir = tempfile::tempdir()?;
        let store = if durable {
            Store::open(&dir.path().join("bench.db"), StoreOptions::default())?
        } else {
            Store::in_memory()?
        };
        results.push(run(&store, writers).await?);
        store.close().await;
    }
    let (rate, per_commit) = median(results);
    println!(
        "{name:<10} {writers:>3} writers: {rate:>9.0} creates/s  ({per_commit:>5.1} writes/commit)"
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        for writers in [1, 8, 64] {
            bench("durable", writers, true).await?;
        }
        for writers in [1, 64] {
            bench("in-memory", writers, false).await?;
        }
        Ok(())
    })
}
