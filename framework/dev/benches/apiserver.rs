//! Benchmarks the embedded API server (the `mni-dev` binary) with etcd 3.4 as the anchor.
//!
//! Run with `cargo bench -p mni-dev --bench apiserver` (see `benches/README.md`). Both
//! servers run as child processes on loopback, with data directories on the same disk (under
//! Cargo's `target/tmp`), and are driven by the same HTTP/1 client (hyper-util's pooled client,
//! `TCP_NODELAY`, one connection per concurrent client). mNi gets ConfigMaps POSTed to
//! `/api/v1/namespaces/default/configmaps`; etcd gets the same JSON bytes as values through its
//! v3 JSON gateway (`POST /v3/kv/put`, base64 key and value). Both fsync every acknowledged
//! write. Measured: durable create throughput at 1/8/64 clients, mNi in-memory throughput, a
//! LIST (etcd: prefix range) of 10,000 objects, watch delivery latency to 100 watchers, and cold
//! start with an empty and with a 10,000-object data directory. A missing `etcd` binary is
//! reported and skipped, not an error.

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mni_bench::{Better, Mode, Report};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

/// The `mni-dev` binary Cargo built for this bench (`target/release/mni-dev`).
const MNI_DEV: &str = env!("CARGO_BIN_EXE_mni-dev");
/// Scratch space on the target directory's disk.
const SCRATCH: &str = env!("CARGO_TARGET_TMPDIR");

/// The sizes of one run: full ([`Sizes::FULL`]) or smoke ([`Sizes::SMOKE`], seconds long,
/// for CI).
#[derive(Debug)]
struct Sizes {
    /// Runs per throughput figure (the median is reported).
    runs: usize,
    /// Upper bound on one throughput run; a run ends at its request count or here.
    run_cap: Duration,
    /// Durable throughput: (concurrent clients, requests per run).
    durable: [(usize, usize); 3],
    /// In-memory throughput: (concurrent clients, requests per run), sized like the 64-client
    /// durable runs: creates get slower as the store grows, so equal sizes keep them
    /// comparable.
    memory: (usize, usize),
    /// Objects in the namespace for the LIST figure and the cold start with data.
    list_objects: usize,
    /// Timed LISTs (after one warm-up).
    lists: usize,
    /// Concurrent watchers.
    watchers: usize,
    /// Timed writes the watchers must see (after one warm-up write).
    watch_writes: usize,
    /// Cold starts per figure.
    cold_starts: usize,
}

impl Sizes {
    const FULL: Self = Self {
        runs: 3,
        run_cap: Duration::from_secs(4),
        durable: [(1, 2_000), (8, 10_000), (64, 20_000)],
        memory: (64, 20_000),
        list_objects: 10_000,
        lists: 10,
        watchers: 100,
        watch_writes: 200,
        cold_starts: 5,
    };
    const SMOKE: Self = Self {
        runs: 1,
        run_cap: Duration::from_secs(4),
        durable: [(1, 20), (8, 80), (64, 256)],
        memory: (64, 256),
        list_objects: 200,
        lists: 2,
        watchers: 5,
        watch_writes: 10,
        cold_starts: 1,
    };
}

/// This run's sizes, set once in `main`.
static SIZES: std::sync::OnceLock<&'static Sizes> = std::sync::OnceLock::new();

fn sizes() -> &'static Sizes {
    SIZES.get().copied().unwrap_or(&Sizes::FULL)
}

/// Bound on any single request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// Bound on a server becoming ready.
const START_TIMEOUT: Duration = Duration::from_secs(60);

type Http = Client<HttpConnector, Full<Bytes>>;

/// Which server a measurement talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Mni,
    Etcd,
}

/// About 350 bytes of ConfigMap JSON; also the value stored in etcd.
fn configmap(name: &str) -> Vec<u8> {
    let filler: String = std::iter::repeat_n("0123456789abcdef", 16).collect();
    let body = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench", "group": group(name)}},
        "data": {"config": filler},
    });
    serde_json::to_vec(&body).unwrap_or_default()
}

/// One of [`GROUPS`] label values, spread evenly over names: a selector on one group matches
/// 1% of the objects.
fn group(name: &str) -> String {
    let hash = name
        .bytes()
        .fold(0_u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!("g{}", hash % GROUPS)
}

/// How many `group` label values the objects spread over.
const GROUPS: u64 = 100;

/// The etcd key of a ConfigMap, as kube-apiserver lays them out.
fn etcd_key(name: &str) -> String {
    format!("/registry/configmaps/default/{name}")
}

/// The request that creates object `name`, and the status that means success.
fn create_request(kind: Kind, base: &str, name: &str) -> (String, Vec<u8>, StatusCode) {
    match kind {
        Kind::Mni => (
            format!("{base}/api/v1/namespaces/default/configmaps"),
            configmap(name),
            StatusCode::CREATED,
        ),
        Kind::Etcd => {
            let body = json!({
                "key": B64.encode(etcd_key(name)),
                "value": B64.encode(configmap(name)),
            });
            (
                format!("{base}/v3/kv/put"),
                serde_json::to_vec(&body).unwrap_or_default(),
                StatusCode::OK,
            )
        }
    }
}

fn http_client() -> Http {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(512)
        .build(connector)
}

/// Each `mni-dev` server's admin bearer token (read from the kubeconfig it writes), by its
/// base URL. Every server started has tokens of its own; etcd gets no header (it refuses one
/// it did not issue).
static TOKENS: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// The bearer token of the `mni-dev` server that `url` points at, if it is one.
fn token_for(url: &str) -> Option<String> {
    let tokens = TOKENS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    tokens
        .iter()
        .find(|(base, _)| {
            url.strip_prefix(base.as_str()).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('/') || rest.starts_with('?')
            })
        })
        .map(|(_, token)| token.clone())
}

fn request(method: Method, url: &str, body: Vec<u8>) -> Result<Request<Full<Bytes>>> {
    let mut builder = Request::builder();
    if let Some(token) = token_for(url) {
        builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    }
    builder
        .method(method)
        .uri(url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .with_context(|| format!("building a request to {url}"))
}

/// Sends one request and reads the whole response.
async fn send(
    http: &Http,
    method: Method,
    url: &str,
    body: Vec<u8>,
) -> Result<(StatusCode, Bytes)> {
    let req = request(method.clone(), url, body)?;
    let exchange = async {
        let resp = http.request(req).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        anyhow::Ok((status, body))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| anyhow!("{method} {url}: no answer in {REQUEST_TIMEOUT:?}"))?
        .with_context(|| format!("{method} {url}"))
}

/// Sends one request and parses a JSON answer with the expected status.
async fn send_json(
    http: &Http,
    method: Method,
    url: &str,
    body: Vec<u8>,
    expect: StatusCode,
) -> Result<Value> {
    let (status, bytes) = send(http, method.clone(), url, body).await?;
    if status != expect {
        bail!("{method} {url}: {status}: {}", snippet(&bytes));
    }
    serde_json::from_slice(&bytes).with_context(|| format!("{method} {url}: not JSON"))
}

fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.chars().take(300).collect()
}

fn scratch_dir(prefix: &str) -> Result<tempfile::TempDir> {
    std::fs::create_dir_all(SCRATCH).with_context(|| format!("creating {SCRATCH}"))?;
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(SCRATCH)
        .with_context(|| format!("creating a directory under {SCRATCH}"))
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}

/// A running server process; killed if dropped without [`Proc::stop`].
struct Proc {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Proc {
    /// SIGTERM, then wait (SIGKILL after 15 s); the time until it exited. mni-dev and etcd
    /// both shut down cleanly on SIGTERM.
    async fn stop(mut self) -> Result<Duration> {
        let started = Instant::now();
        if let Some(id) = self.child.id() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(id.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .await;
        }
        match tokio::time::timeout(Duration::from_secs(15), self.child.wait()).await {
            Ok(status) => {
                status?;
            }
            Err(_) => {
                eprintln!("warning: {} ignored SIGTERM for 15 s; killing", self.url);
                self.child.kill().await?;
            }
        }
        Ok(started.elapsed())
    }
}

/// Starts `mni-dev up` on `dir` and returns it with the time until it printed `ready`.
async fn start_mni(dir: &Path, in_memory: bool) -> Result<(Proc, Duration)> {
    let log = dir.join("mni-dev.log");
    let stderr = std::fs::File::create(&log).context("creating the mni-dev log")?;
    let data = dir.join("data");
    let mut cmd = Command::new(MNI_DEV);
    // Plain HTTP on loopback, so both servers are measured over the same kind of connection.
    cmd.args([
        "up",
        "--insecure-http",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
    ])
    .arg(&data)
    .arg("--kubeconfig")
    .arg(dir.join("kc"));
    if in_memory {
        cmd.arg("--in-memory");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true);
    let started = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("spawning {MNI_DEV}"))?;
    let stdout = child.stdout.take().context("mni-dev has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(START_TIMEOUT, async {
        while let Some(line) = lines.next_line().await? {
            if line.contains("ready") {
                return anyhow::Ok(line);
            }
        }
        bail!("mni-dev exited before printing `ready`")
    })
    .await;
    let elapsed = started.elapsed();
    let line = match ready {
        Ok(Ok(line)) => line,
        Ok(Err(e)) => bail!("{e}; its log ends:\n{}", log_tail(&log)),
        Err(_) => bail!(
            "mni-dev not ready in {START_TIMEOUT:?}; log:\n{}",
            log_tail(&log)
        ),
    };
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .map(|w| w.trim_end_matches([',', ')', ';']).to_string())
        .with_context(|| format!("no URL in the ready line {line:?}"))?;
    if url.starts_with("https://") {
        bail!("mni-dev serves HTTPS ({line:?}); this bench speaks plain HTTP only");
    }
    let kubeconfig =
        std::fs::read_to_string(dir.join("kc")).context("reading mni-dev's kubeconfig")?;
    let token = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .context("no token in mni-dev's kubeconfig")?;
    TOKENS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((url.clone(), token.trim_matches(['"', '\'']).to_string()));
    // Keep reading stdout so mni-dev's last line at shutdown does not hit a closed pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((Proc { child, url, log }, elapsed))
}

/// Two free loopback ports (bound and released; a small race, acceptable on a bench box).
fn free_ports() -> Result<(u16, u16)> {
    let a = std::net::TcpListener::bind("127.0.0.1:0")?;
    let b = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok((a.local_addr()?.port(), b.local_addr()?.port()))
}

/// Whether `etcd` is on PATH; the version line if so.
async fn etcd_version() -> Option<String> {
    let out = Command::new("etcd")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .await
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().next().unwrap_or("etcd").trim().to_string())
}

/// Starts etcd on `dir` and returns it with the time until `/health` said true.
async fn start_etcd(http: &Http, dir: &Path) -> Result<(Proc, Duration)> {
    let (client, peer) = free_ports()?;
    let url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let log = dir.join("etcd.log");
    let stderr = std::fs::File::create(&log).context("creating the etcd log")?;
    let started = Instant::now();
    let mut child = Command::new("etcd")
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["--name", "default"])
        .args(["--listen-client-urls", &url])
        .args(["--advertise-client-urls", &url])
        .args(["--listen-peer-urls", &peer_url])
        .args(["--initial-advertise-peer-urls", &peer_url])
        .arg("--initial-cluster")
        .arg(format!("default={peer_url}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true)
        .spawn()
        .context("spawning etcd")?;
    let health = format!("{url}/health");
    loop {
        if let Ok(Ok(resp)) = tokio::time::timeout(
            Duration::from_secs(1),
            send(http, Method::GET, &health, Vec::new()),
        )
        .await
            && resp.0 == StatusCode::OK
            && snippet(&resp.1).contains("true")
        {
            break;
        }
        if let Some(status) = child.try_wait()? {
            bail!(
                "etcd exited with {status}; its log ends:\n{}",
                log_tail(&log)
            );
        }
        if started.elapsed() > START_TIMEOUT {
            bail!(
                "etcd not healthy in {START_TIMEOUT:?}; log:\n{}",
                log_tail(&log)
            );
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let elapsed = started.elapsed();
    Ok((Proc { child, url, log }, elapsed))
}

async fn start(kind: Kind, http: &Http, dir: &Path) -> Result<(Proc, Duration)> {
    match kind {
        Kind::Mni => start_mni(dir, false).await,
        Kind::Etcd => start_etcd(http, dir).await,
    }
}

/// The outcome of one throughput run.
#[derive(Debug, Default)]
struct Load {
    ok: usize,
    errors: usize,
    first_error: Option<String>,
    elapsed: Duration,
}

impl Load {
    fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Creates objects `{prefix}{i}` for i < `total` with `clients` concurrent clients, stopping
/// early at the run cap ([`Sizes::run_cap`]).
async fn load(
    http: &Http,
    kind: Kind,
    base: &str,
    prefix: &str,
    clients: usize,
    total: usize,
) -> Load {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let deadline = started + sizes().run_cap;
    let mut tasks = Vec::with_capacity(clients);
    for _ in 0..clients {
        let (http, next) = (http.clone(), next.clone());
        let (base, prefix) = (base.to_string(), prefix.to_string());
        tasks.push(tokio::spawn(async move {
            let mut load = Load::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total || Instant::now() >= deadline {
                    break;
                }
                let (url, body, expect) = create_request(kind, &base, &format!("{prefix}{i}"));
                match send(&http, Method::POST, &url, body).await {
                    Ok((status, _)) if status == expect => load.ok += 1,
                    Ok((status, bytes)) => {
                        load.errors += 1;
                        load.first_error.get_or_insert_with(|| {
                            format!("POST {url}: {status}: {}", snippet(&bytes))
                        });
                    }
                    Err(e) => {
                        load.errors += 1;
                        load.first_error.get_or_insert_with(|| format!("{e:#}"));
                    }
                }
            }
            load
        }));
    }
    let mut total_load = Load::default();
    for task in tasks {
        match task.await {
            Ok(l) => {
                total_load.ok += l.ok;
                total_load.errors += l.errors;
                if total_load.first_error.is_none() {
                    total_load.first_error = l.first_error;
                }
            }
            Err(e) => {
                total_load.errors += 1;
                total_load
                    .first_error
                    .get_or_insert_with(|| format!("client task: {e}"));
            }
        }
    }
    total_load.elapsed = started.elapsed();
    total_load
}

/// Median of unsorted values (upper median for even counts).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The `p` quantile (0..=1, nearest rank) of unsorted values.
fn quantile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One system's figures; `None` where not measured.
#[derive(Debug, Default)]
struct Figures {
    durable: Vec<(usize, Option<f64>)>,
    memory: Option<f64>,
    list_ms: Option<f64>,
    list_count: Option<(usize, usize)>,
    /// Resident memory gained per stored object while filling the store, in bytes.
    rss_per_object: Option<f64>,
    /// p50 of a label-selected LIST and the items it returned.
    selected_list: Option<(f64, usize)>,
    watch_send: Option<(f64, f64)>,
    watch_reply: Option<(f64, f64)>,
    watch_missed: usize,
    cold_ms: Option<f64>,
    cold_first_write_ms: Option<f64>,
    cold_data_ms: Option<f64>,
    stop_ms: Option<f64>,
    log: Log,
}

/// What went wrong (failures: the bench fails) and what is worth saying (notes).
#[derive(Debug, Default)]
struct Log {
    notes: Vec<String>,
    failures: Vec<String>,
}

/// Runs [`Sizes::runs`] throughput runs on one server and returns the median rate.
async fn throughput(
    http: &Http,
    kind: Kind,
    base: &str,
    tag: &str,
    clients: usize,
    total: usize,
    log: &mut Log,
) -> Option<f64> {
    // Warm up connections and the server.
    let _ = load(
        http,
        kind,
        base,
        &format!("warm-{tag}-"),
        clients,
        clients * 4,
    )
    .await;
    let mut rates = Vec::new();
    for run in 0..sizes().runs {
        let l = load(http, kind, base, &format!("{tag}-r{run}-"), clients, total).await;
        if let Some(e) = &l.first_error {
            log.failures.push(format!(
                "{tag} run {run}: {} errors of {} requests; first: {e}",
                l.errors,
                l.ok + l.errors
            ));
        }
        if l.ok + l.errors < total {
            log.notes.push(format!(
                "{tag} run {run}: hit the {:?} cap after {} of {total} requests",
                sizes().run_cap,
                l.ok + l.errors
            ));
        }
        if l.ok > 0 {
            rates.push(l.rate());
        }
        eprintln!(
            "  {tag} run {run}: {} ok, {} errors in {:.2}s = {:.0}/s",
            l.ok,
            l.errors,
            l.elapsed.as_secs_f64(),
            l.rate()
        );
    }
    (!rates.is_empty()).then(|| median(&rates))
}

/// Revision to start a watch from so it sees everything after now.
async fn current_revision(http: &Http, kind: Kind, base: &str) -> Result<i64> {
    match kind {
        Kind::Mni => {
            let url = format!("{base}/api/v1/namespaces/default/configmaps?limit=1");
            let list = send_json(http, Method::GET, &url, Vec::new(), StatusCode::OK).await?;
            let rv = list["metadata"]["resourceVersion"]
                .as_str()
                .context("LIST without metadata.resourceVersion")?;
            rv.parse()
                .with_context(|| format!("resourceVersion {rv:?}"))
        }
        Kind::Etcd => {
            let body = serde_json::to_vec(&json!({"key": B64.encode("/nothing")}))?;
            let url = format!("{base}/v3/kv/range");
            let resp = send_json(http, Method::POST, &url, body, StatusCode::OK).await?;
            let rev = resp["header"]["revision"]
                .as_str()
                .context("range without header.revision")?;
            rev.parse().with_context(|| format!("revision {rev:?}"))
        }
    }
}

/// The object names carried by one line of a watch stream.
fn watch_names(kind: Kind, line: &[u8]) -> Vec<String> {
    let Ok(event) = serde_json::from_slice::<Value>(line) else {
        return Vec::new();
    };
    match kind {
        Kind::Mni => match (
            event["type"].as_str(),
            event["object"]["metadata"]["name"].as_str(),
        ) {
            (Some("ADDED"), Some(name)) => vec![name.to_string()],
            _ => Vec::new(),
        },
        Kind::Etcd => event["result"]["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["kv"]["key"].as_str())
            .filter_map(|k| B64.decode(k).ok())
            .filter_map(|k| {
                let key = String::from_utf8(k).ok()?;
                key.rsplit('/').next().map(str::to_string)
            })
            .collect(),
    }
}

/// How many watchers saw the warm-up event, and how many finished.
#[derive(Debug, Default)]
struct Progress {
    warm: AtomicUsize,
    done: AtomicUsize,
}

/// One watcher: the arrival time of object `{prefix}{i}` for each i in 0..=n.
async fn watcher(
    http: Http,
    req: Request<Full<Bytes>>,
    kind: Kind,
    prefix: String,
    n: usize,
    progress: Arc<Progress>,
    mut stop: watch::Receiver<bool>,
) -> Result<Vec<Option<Instant>>> {
    let mut seen: Vec<Option<Instant>> = vec![None; n + 1];
    let resp = tokio::select! {
        r = http.request(req) => r?,
        _ = stop.changed() => return Ok(seen),
    };
    if resp.status() != StatusCode::OK {
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        bail!("watch: {status}: {}", snippet(&body));
    }
    let mut body = resp.into_body();
    let mut buf: Vec<u8> = Vec::new();
    let mut count = 0;
    while count <= n {
        let frame = tokio::select! {
            f = body.frame() => f,
            _ = stop.changed() => break,
        };
        let at = Instant::now();
        let Some(frame) = frame else { break };
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        buf.extend_from_slice(&data);
        while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            for name in watch_names(kind, &line) {
                let Some(i) = name
                    .strip_prefix(&prefix)
                    .and_then(|s| s.parse::<usize>().ok())
                else {
                    continue;
                };
                if let Some(slot @ None) = seen.get_mut(i) {
                    *slot = Some(at);
                    count += 1;
                    if i == 0 {
                        progress.warm.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    }
    progress.done.fetch_add(1, Ordering::Relaxed);
    Ok(seen)
}

/// Waits until `counter` reaches `target` or `limit` passes; whether it did.
async fn wait_count(counter: &AtomicUsize, target: usize, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while counter.load(Ordering::Relaxed) < target {
        if Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    true
}

/// Watch delivery: [`Sizes::watchers`] watchers, [`Sizes::watch_writes`] sequential creates. Returns
/// (p50, p99) from the POST being sent, (p50, p99) from its answer, and the number of events
/// never delivered.
async fn watch_latency(
    http: &Http,
    kind: Kind,
    base: &str,
) -> Result<((f64, f64), (f64, f64), usize)> {
    let prefix = "watch-".to_string();
    let rev = current_revision(http, kind, base).await?;
    let progress = Arc::new(Progress::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    // Watch connections are long-lived: give them their own pool so writes never queue behind.
    let watch_http = http_client();
    let mut tasks = Vec::new();
    for _ in 0..sizes().watchers {
        let req = match kind {
            Kind::Mni => request(
                Method::GET,
                &format!(
                    "{base}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rev}"
                ),
                Vec::new(),
            )?,
            Kind::Etcd => {
                let key = etcd_key(&prefix);
                let mut end = key.clone().into_bytes();
                if let Some(last) = end.last_mut() {
                    *last += 1;
                }
                let body = json!({"create_request": {
                    "key": B64.encode(&key),
                    "range_end": B64.encode(&end),
                    "start_revision": (rev + 1).to_string(),
                }});
                request(
                    Method::POST,
                    &format!("{base}/v3/watch"),
                    serde_json::to_vec(&body)?,
                )?
            }
        };
        tasks.push(tokio::spawn(watcher(
            watch_http.clone(),
            req,
            kind,
            prefix.clone(),
            sizes().watch_writes,
            progress.clone(),
            stop_rx.clone(),
        )));
    }
    // Warm-up write: every watcher is connected and caught up once it has seen object 0.
    let (url, body, expect) = create_request(kind, base, &format!("{prefix}0"));
    let (status, bytes) = send(http, Method::POST, &url, body).await?;
    if status != expect {
        bail!("POST {url}: {status}: {}", snippet(&bytes));
    }
    if !wait_count(&progress.warm, sizes().watchers, Duration::from_secs(20)).await {
        let _ = stop_tx.send(true);
        bail!(
            "only {} of {} watchers saw the warm-up event in 20 s",
            progress.warm.load(Ordering::Relaxed),
            sizes().watchers
        );
    }
    let mut sent = Vec::with_capacity(sizes().watch_writes + 1);
    let mut answered = Vec::with_capacity(sizes().watch_writes + 1);
    sent.push(Instant::now());
    answered.push(Instant::now());
    for i in 1..=sizes().watch_writes {
        let (url, body, expect) = create_request(kind, base, &format!("{prefix}{i}"));
        sent.push(Instant::now());
        let (status, bytes) = send(http, Method::POST, &url, body).await?;
        answered.push(Instant::now());
        if status != expect {
            let _ = stop_tx.send(true);
            bail!("POST {url}: {status}: {}", snippet(&bytes));
        }
    }
    wait_count(&progress.done, sizes().watchers, Duration::from_secs(10)).await;
    let _ = stop_tx.send(true);
    let (mut from_send, mut from_reply, mut missed) = (Vec::new(), Vec::new(), 0);
    for task in tasks {
        let seen = task.await.map_err(|e| anyhow!("watcher task: {e}"))??;
        for i in 1..=sizes().watch_writes {
            match seen.get(i).copied().flatten() {
                Some(at) => {
                    from_send.push(ms(at.saturating_duration_since(sent[i])));
                    let reply = if at >= answered[i] {
                        ms(at - answered[i])
                    } else {
                        -ms(answered[i] - at)
                    };
                    from_reply.push(reply);
                }
                None => missed += 1,
            }
        }
    }
    Ok((
        (quantile(&from_send, 0.5), quantile(&from_send, 0.99)),
        (quantile(&from_reply, 0.5), quantile(&from_reply, 0.99)),
        missed,
    ))
}

/// Fills the store with [`Sizes::list_objects`] objects (64 clients; the fill may hit the
/// run cap on a slow disk, then it is finished without one).
async fn fill(http: &Http, kind: Kind, base: &str) -> Result<()> {
    let l = load(http, kind, base, "list-", 64, sizes().list_objects).await;
    if l.ok < sizes().list_objects {
        // The fill may hit the run cap on a slow disk; finish it without a cap.
        let mut missing = sizes().list_objects - l.ok;
        let mut round = 0;
        while missing > 0 && round < 10 {
            let extra = load(http, kind, base, &format!("list-fill{round}-"), 64, missing).await;
            missing = missing.saturating_sub(extra.ok);
            round += 1;
            if extra.ok == 0 {
                bail!("filling for LIST failed: {:?}", extra.first_error);
            }
        }
    }
    Ok(())
}

/// The resident set size of process `pid`, in bytes (`VmRSS`).
fn rss_bytes(pid: Option<u32>) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024.0)
}

/// Times [`Sizes::lists`] full LISTs (etcd: a
/// prefix range with values). Returns the median latency, and the items and bytes returned.
async fn list_latency(http: &Http, kind: Kind, base: &str) -> Result<(f64, (usize, usize))> {
    let (method, url, body) = match kind {
        Kind::Mni => (
            Method::GET,
            format!("{base}/api/v1/namespaces/default/configmaps"),
            Vec::new(),
        ),
        Kind::Etcd => {
            let key = etcd_key("");
            let mut end = key.clone().into_bytes();
            if let Some(last) = end.last_mut() {
                *last += 1;
            }
            let body = json!({"key": B64.encode(&key), "range_end": B64.encode(&end)});
            (
                Method::POST,
                format!("{base}/v3/kv/range"),
                serde_json::to_vec(&body)?,
            )
        }
    };
    let (status, bytes) = send(http, method.clone(), &url, body.clone()).await?;
    if status != StatusCode::OK {
        bail!("{method} {url}: {status}: {}", snippet(&bytes));
    }
    let value: Value = serde_json::from_slice(&bytes).context("LIST answer is not JSON")?;
    let count = match kind {
        Kind::Mni => value["items"].as_array().map_or(0, Vec::len),
        Kind::Etcd => value["kvs"].as_array().map_or(0, Vec::len),
    };
    let mut times = Vec::new();
    for _ in 0..sizes().lists {
        let started = Instant::now();
        let (status, _) = send(http, method.clone(), &url, body.clone()).await?;
        times.push(ms(started.elapsed()));
        if status != StatusCode::OK {
            bail!("{method} {url}: {status}");
        }
    }
    Ok((quantile(&times, 0.5), (count, bytes.len())))
}

/// A label-selected LIST (`group=g7`, 1% of the objects) over the store [`list_latency`]
/// filled: the p50 of [`Sizes::lists`] after one warm-up, and the items returned. mni-dev
/// only: etcd has no labels.
async fn selected_list_latency(http: &Http, base: &str) -> Result<(f64, usize)> {
    let url = format!("{base}/api/v1/namespaces/default/configmaps?labelSelector=group%3Dg7");
    let first = send_json(http, Method::GET, &url, Vec::new(), StatusCode::OK).await?;
    let count = first["items"].as_array().map_or(0, Vec::len);
    let mut times = Vec::new();
    for _ in 0..sizes().lists {
        let started = Instant::now();
        let (status, _) = send(http, Method::GET, &url, Vec::new()).await?;
        times.push(ms(started.elapsed()));
        if status != StatusCode::OK {
            bail!("GET {url}: {status}");
        }
    }
    Ok((quantile(&times, 0.5), count))
}

/// Cold starts: fresh data directories, then (if given) copies of `seeded`.
async fn cold_starts(
    http: &Http,
    kind: Kind,
    seeded: Option<&Path>,
) -> Result<(f64, f64, f64, Option<f64>)> {
    let (mut ready, mut first_write, mut stops) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..sizes().cold_starts {
        let dir = scratch_dir("cold-")?;
        let started = Instant::now();
        let (proc, elapsed) = start(kind, http, dir.path()).await?;
        ready.push(ms(elapsed));
        let (url, body, expect) = create_request(kind, &proc.url, &format!("cold-{i}"));
        let (status, bytes) = send(http, Method::POST, &url, body).await?;
        first_write.push(ms(started.elapsed()));
        stops.push(ms(proc.stop().await?));
        if status != expect {
            bail!(
                "first write after a cold start: POST {url}: {status}: {}",
                snippet(&bytes)
            );
        }
    }
    let mut with_data = None;
    if let Some(seeded) = seeded {
        let mut times = Vec::new();
        for _ in 0..sizes().cold_starts {
            let (proc, elapsed) = start(kind, http, seeded).await?;
            times.push(ms(elapsed));
            proc.stop().await?;
        }
        with_data = Some(median(&times));
    }
    Ok((
        median(&ready),
        median(&first_write),
        median(&stops),
        with_data,
    ))
}

fn name(kind: Kind) -> &'static str {
    match kind {
        Kind::Mni => "mni",
        Kind::Etcd => "etcd",
    }
}

/// Durable throughput at one concurrency on a fresh server (and, at 64 clients, watch
/// latency on the same server). Failures of single measurements are recorded in the log.
async fn measure_durable(
    http: &Http,
    kind: Kind,
    clients: usize,
    total: usize,
    f: &mut Figures,
) -> Result<()> {
    let name = name(kind);
    eprintln!("{name}: durable creates, {clients} clients");
    let dir = scratch_dir(&format!("{name}-c{clients}-"))?;
    let (proc, _) = start(kind, http, dir.path()).await?;
    let tag = format!("c{clients}");
    let rate = throughput(http, kind, &proc.url, &tag, clients, total, &mut f.log).await;
    f.durable.push((clients, rate));
    if clients == 64 {
        eprintln!("{name}: watch latency, {} watchers", sizes().watchers);
        match watch_latency(http, kind, &proc.url).await {
            Ok((send, reply, missed)) => {
                f.watch_send = Some(send);
                f.watch_reply = Some(reply);
                f.watch_missed = missed;
            }
            Err(e) => f.log.failures.push(format!("watch: {e:#}")),
        }
    }
    let log = proc.log.clone();
    match proc.stop().await {
        Ok(took) if took > Duration::from_secs(1) => f.log.notes.push(format!(
            "{clients}-client server took {:.1}s from SIGTERM to exit",
            took.as_secs_f64()
        )),
        Ok(_) => {}
        Err(e) => f
            .log
            .failures
            .push(format!("stopping {name}: {e:#}; log: {}", log_tail(&log))),
    }
    Ok(())
}

/// LIST latency over a store filled with [`Sizes::list_objects`] objects, then cold starts with an
/// empty and with that data directory.
async fn measure_seeded(http: &Http, kind: Kind, f: &mut Figures) -> Result<()> {
    let name = name(kind);
    eprintln!("{name}: LIST of {}", sizes().list_objects);
    let seeded = scratch_dir(&format!("{name}-seeded-"))?;
    let (proc, _) = start(kind, http, seeded.path()).await?;
    let empty = rss_bytes(proc.child.id());
    fill(http, kind, &proc.url).await?;
    let full = rss_bytes(proc.child.id());
    f.rss_per_object = empty
        .zip(full)
        .map(|(e, f)| (f - e) / sizes().list_objects as f64);
    match list_latency(http, kind, &proc.url).await {
        Ok((latency, count)) => {
            f.list_ms = Some(latency);
            f.list_count = Some(count);
        }
        Err(e) => f.log.failures.push(format!("list: {e:#}")),
    }
    if kind == Kind::Mni {
        match selected_list_latency(http, &proc.url).await {
            Ok((latency, count)) => f.selected_list = Some((latency, count)),
            Err(e) => f.log.failures.push(format!("selected list: {e:#}")),
        }
    }
    proc.stop().await?;
    eprintln!("{name}: cold starts");
    match cold_starts(http, kind, Some(seeded.path())).await {
        Ok((ready, first, stop, data)) => {
            f.cold_ms = Some(ready);
            f.stop_ms = Some(stop);
            f.cold_first_write_ms = Some(first);
            f.cold_data_ms = data;
        }
        Err(e) => f.log.failures.push(format!("cold start: {e:#}")),
    }
    Ok(())
}

/// Records an etcd step that failed outright (etcd is installed, so that is a failure of the
/// bench) and drops the etcd figures.
fn etcd_step(etcd: &mut Option<Figures>, failures: &mut Vec<String>, result: Result<()>) {
    if let Err(e) = result {
        failures.push(format!("etcd: {e:#}"));
        *etcd = None;
    }
}

/// The figures as the shared bench report, with etcd as the anchor.
fn report(mode: Mode, mni: &Figures, etcd: Option<&Figures>, anchor: &str) -> Report {
    let sz = sizes();
    let mut r = Report::new("apiserver", mode);
    let e = |get: &dyn Fn(&Figures) -> Option<f64>| etcd.and_then(get);
    for (i, (clients, rate)) in mni.durable.iter().enumerate() {
        r.figure(
            format!("durable creates, {clients} clients (median of {})", sz.runs),
            "1/s",
            *rate,
            Better::Higher,
        )
        .anchor(anchor, e(&|f| f.durable.get(i).and_then(|d| d.1)));
    }
    r.figure(
        format!(
            "in-memory creates, {} clients (median of {})",
            sz.memory.0, sz.runs
        ),
        "1/s",
        mni.memory,
        Better::Higher,
    );
    r.figure(
        format!("LIST {} objects (p50 of {})", sz.list_objects, sz.lists),
        "ms",
        mni.list_ms,
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.list_ms));
    let selected = mni.selected_list.map_or(0, |s| s.1);
    r.figure(
        format!(
            "label-selected LIST, {selected} of {} objects (p50 of {})",
            sz.list_objects, sz.lists
        ),
        "ms",
        mni.selected_list.map(|s| s.0),
        Better::Lower,
    )
    .anchor("full LIST on mni-dev", mni.list_ms);
    r.figure(
        format!(
            "resident memory per stored object ({} objects of {} bytes)",
            sz.list_objects,
            configmap("list-0").len()
        ),
        "B",
        mni.rss_per_object,
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.rss_per_object));
    let watch = format!("{} watchers x {} writes", sz.watchers, sz.watch_writes);
    r.figure(
        format!("watch p50 from POST sent ({watch})"),
        "ms",
        mni.watch_send.map(|w| w.0),
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.watch_send.map(|w| w.0)));
    r.figure(
        "watch p99 from POST sent",
        "ms",
        mni.watch_send.map(|w| w.1),
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.watch_send.map(|w| w.1)));
    r.figure(
        format!("cold start to ready, empty (median of {})", sz.cold_starts),
        "ms",
        mni.cold_ms,
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.cold_ms));
    r.figure(
        "cold start to first durable write",
        "ms",
        mni.cold_first_write_ms,
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.cold_first_write_ms));
    r.figure(
        format!("cold start to ready, {} objects", sz.list_objects),
        "ms",
        mni.cold_data_ms,
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.cold_data_ms));
    r.figure(
        "SIGTERM to exit after one write",
        "ms",
        mni.stop_ms,
        Better::Lower,
    )
    .anchor(anchor, e(&|f| f.stop_ms));
    // Where events went: watch answers before the POST's own answer are normal (negative).
    if let Some((p50, p99)) = mni.watch_reply {
        r.note(format!(
            "mni-dev watch delivery from the POST's answer: p50 {p50:.2} ms, p99 {p99:.2} ms"
        ));
    }
    if let Some((n, b)) = mni.list_count {
        r.note(format!(
            "mni-dev LIST answer: {n} items in {} KiB",
            b / 1024
        ));
    }
    for (name, figures) in [("mni-dev", Some(mni)), ("etcd", etcd)] {
        let Some(f) = figures else { continue };
        if f.watch_missed > 0 {
            r.fail(format!(
                "{name}: {} watch events never delivered",
                f.watch_missed
            ));
        }
        for note in &f.log.notes {
            r.note(format!("{name}: {note}"));
        }
        for failure in &f.log.failures {
            r.fail(format!("{name}: {failure}"));
        }
    }
    r
}

async fn run(mode: Mode) -> Result<Report> {
    let started = Instant::now();
    let sz = sizes();
    let http = http_client();
    eprintln!("mni-dev: {MNI_DEV}; scratch: {SCRATCH}");
    let mut mni = Figures::default();
    let mut failures = Vec::new();
    let version = etcd_version().await;
    let mut etcd = match &version {
        None => {
            eprintln!("etcd: not installed (apt-get install etcd-server etcd-client)");
            None
        }
        Some(version) => {
            eprintln!("{version}");
            Some(Figures::default())
        }
    };
    // mni-dev and etcd alternate step by step, so both see the same background load.
    for (clients, total) in sz.durable {
        measure_durable(&http, Kind::Mni, clients, total, &mut mni)
            .await
            .context("measuring mni-dev")?;
        if let Some(f) = etcd.as_mut() {
            let result = measure_durable(&http, Kind::Etcd, clients, total, f).await;
            etcd_step(&mut etcd, &mut failures, result);
        }
    }
    eprintln!("mni: in-memory creates, {} clients", sz.memory.0);
    let dir = scratch_dir("mni-mem-")?;
    let (proc, _) = start_mni(dir.path(), true).await?;
    let (clients, total) = sz.memory;
    mni.memory = throughput(
        &http,
        Kind::Mni,
        &proc.url,
        "mem",
        clients,
        total,
        &mut mni.log,
    )
    .await;
    proc.stop().await?;
    measure_seeded(&http, Kind::Mni, &mut mni)
        .await
        .context("measuring mni-dev")?;
    if let Some(f) = etcd.as_mut() {
        let result = measure_seeded(&http, Kind::Etcd, f).await;
        etcd_step(&mut etcd, &mut failures, result);
    }
    let anchor = version
        .as_deref()
        .and_then(|v| {
            v.split_whitespace()
                .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        })
        .map_or_else(|| "etcd".to_string(), |v| format!("etcd {v}"));
    let mut report = report(mode, &mni, etcd.as_ref(), &anchor);
    if version.is_none() {
        report.note("etcd not installed: no anchor figures (apt-get install etcd-server)");
    }
    for failure in failures {
        report.fail(failure);
    }
    report.note(format!(
        "total bench time: {:.1}s",
        started.elapsed().as_secs_f64()
    ));
    Ok(report)
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`, `cargo test --bench apiserver -- --smoke` a smoke run.
    let mode = Mode::from_env();
    let _ = SIZES.set(mode.pick(&Sizes::FULL, &Sizes::SMOKE));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: building the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(mode)) {
        Ok(report) => report.finish(),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
