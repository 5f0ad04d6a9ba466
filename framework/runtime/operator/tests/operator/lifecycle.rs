//! Process lifecycle: graceful shutdown, probes, metrics, and the example binary (SIGTERM,
//! the `crd` subcommand, idle memory).

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use kube::api::PostParams;
use mni_operator::{Action, Context, Reconciler};
use tokio::time::Instant;

use crate::support::{
    Env, Widget, http_get, manager, ready_condition, wait_for, widget, widget::WidgetReconciler,
};

/// (start, end once finished) of each reconcile.
type Runs = Arc<Mutex<Vec<(Instant, Option<Instant>)>>>;

/// Takes half a second per reconcile, recording when it ran.
struct Slow {
    runs: Runs,
}

impl Reconciler for Slow {
    type K = Widget;
    type Error = std::convert::Infallible;

    fn name(&self) -> &str {
        "slow"
    }

    async fn reconcile(
        &self,
        _w: Arc<Widget>,
        _ctx: &Context<Widget>,
    ) -> Result<Action, Self::Error> {
        let index = {
            let mut runs = self.runs.lock().unwrap();
            runs.push((Instant::now(), None));
            runs.len() - 1
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.runs.lock().unwrap()[index].1 = Some(Instant::now());
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn graceful_shutdown_lets_the_in_flight_reconcile_finish() {
    let env = Env::start().await;
    let runs = Arc::new(Mutex::new(Vec::new()));
    let running = manager(env.client.clone())
        .with_controller(Slow { runs: runs.clone() })
        .build()
        .start()
        .await
        .expect("manager starts");
    env.widgets()
        .create(&PostParams::default(), &widget("w", &[]))
        .await
        .expect("create");
    wait_for("a reconcile to start", || async {
        (!runs.lock().unwrap().is_empty()).then_some(())
    })
    .await;
    running
        .shutdown()
        .await
        .expect("Ok after a graceful shutdown");
    let runs = runs.lock().unwrap();
    assert_eq!(runs.len(), 1);
    assert!(
        runs[0].1.is_some(),
        "the in-flight reconcile finished before the manager returned"
    );
}

/// Never finishes a reconcile.
struct Stuck {
    started: Arc<Mutex<bool>>,
}

impl Reconciler for Stuck {
    type K = Widget;
    type Error = std::convert::Infallible;

    fn name(&self) -> &str {
        "stuck"
    }

    async fn reconcile(
        &self,
        _w: Arc<Widget>,
        _ctx: &Context<Widget>,
    ) -> Result<Action, Self::Error> {
        *self.started.lock().unwrap() = true;
        futures::future::pending::<()>().await;
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn a_reconcile_that_never_ends_is_dropped_after_the_graceful_shutdown_timeout() {
    let env = Env::start().await;
    let started = Arc::new(Mutex::new(false));
    let running = manager(env.client.clone())
        .with_controller(Stuck {
            started: started.clone(),
        })
        .with_graceful_shutdown_timeout(Some(Duration::from_millis(500)))
        .build()
        .start()
        .await
        .expect("manager starts");
    env.widgets()
        .create(&PostParams::default(), &widget("w", &[]))
        .await
        .expect("create");
    wait_for("the reconcile to start", || async {
        (*started.lock().unwrap()).then_some(())
    })
    .await;
    let err = running
        .shutdown()
        .await
        .expect_err("the reconcile never finishes");
    assert!(
        matches!(err, mni_operator::Error::ShutdownTimeout(grace) if grace == Duration::from_millis(500)),
        "{err}"
    );
    assert!(err.to_string().contains("still running"), "{err}");
}

#[tokio::test]
async fn a_manager_whose_kind_is_not_served_still_shuts_down() {
    // An operator started against a cluster without its CRDs (or the wrong operator binary):
    // its watches fail with 404 and back off; a shutdown must not wait for them.
    let env = mni_testkit::TestEnv::builder()
        .start()
        .await
        .expect("test environment starts");
    let runs = Arc::new(Mutex::new(Vec::new()));
    let running = manager(env.client())
        .with_controller(Slow { runs: runs.clone() })
        .build()
        .start()
        .await
        .expect("manager starts");
    // Long enough for the initial lists to fail and the watchers to back off.
    tokio::time::sleep(Duration::from_secs(3)).await;
    tokio::time::timeout(Duration::from_secs(60), running.shutdown())
        .await
        .expect("the manager stops after a shutdown although its caches never synced")
        .expect("Ok after a graceful shutdown");
    assert!(runs.lock().unwrap().is_empty());
}

#[tokio::test]
async fn probes_and_metrics_report_reconciles() {
    let env = Env::start().await;
    let running = manager(env.client.clone())
        .with_controller(WidgetReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");
    let health = running.health_probe_address().unwrap();
    assert_eq!(http_get(health, "/healthz").await.unwrap().0, 200);
    wait_for("readyz", || async {
        (http_get(health, "/readyz").await.ok()?.0 == 200).then_some(())
    })
    .await;
    let widgets = env.widgets();
    for name in ["m1", "m2"] {
        widgets
            .create(&PostParams::default(), &widget(name, &[]))
            .await
            .expect("create");
    }
    for name in ["m1", "m2"] {
        wait_for("Ready", || async {
            (ready_condition(&widgets.get(name).await.ok()?)?.0 == "True").then_some(())
        })
        .await;
    }
    let (status, text) = http_get(running.metrics_address().unwrap(), "/metrics")
        .await
        .unwrap();
    assert_eq!(status, 200);
    let samples = parse_exposition(&text);
    let value = |name: &str, labels: &str| {
        samples
            .iter()
            .find(|(n, l, _)| n == name && l == labels)
            .map(|s| s.2)
            .unwrap_or_else(|| panic!("no sample {name}{{{labels}}} in\n{text}"))
    };
    let c = "controller=\"widget-controller\"";
    // Each widget: one reconcile adds the finalizer, one applies (more are fine).
    assert!(
        value(
            "controller_runtime_reconcile_total",
            &format!("{c},result=\"success\"")
        ) >= 4.0
    );
    assert_eq!(value("controller_runtime_reconcile_errors_total", c), 0.0);
    assert_eq!(
        value("controller_runtime_max_concurrent_reconciles", c),
        1.0
    );
    assert_eq!(value("controller_runtime_active_workers", c), 0.0);
    assert!(value("controller_runtime_reconcile_time_seconds_count", c) >= 4.0);
    assert!(
        value(
            "controller_runtime_reconcile_time_seconds_bucket",
            &format!("le=\"+Inf\",{c}")
        ) >= 4.0
    );
    running.shutdown().await.expect("clean shutdown");
}

/// Parses the text exposition format strictly enough to catch malformed output:
/// `# HELP`/`# TYPE`/`# EOF` comments and `name{labels} value` samples.
fn parse_exposition(text: &str) -> Vec<(String, String, f64)> {
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix("# ") {
            assert!(
                comment.starts_with("HELP ") || comment.starts_with("TYPE ") || comment == "EOF",
                "bad comment {line:?}"
            );
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("bad sample {line:?}"));
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value in {line:?}"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (
                name,
                rest.strip_suffix('}')
                    .unwrap_or_else(|| panic!("bad labels {line:?}")),
            ),
            None => (series, ""),
        };
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad metric name {line:?}"
        );
        samples.push((name.to_string(), labels.to_string(), value));
    }
    samples
}

fn example_binary() -> std::path::PathBuf {
    let deps = std::env::current_exe().expect("test binary path");
    let dir = deps.parent().and_then(|d| d.parent()).expect("target dir");
    dir.join("examples").join("configmap-owner")
}

#[tokio::test]
async fn the_example_prints_its_crd() {
    let out = tokio::process::Command::new(example_binary())
        .arg("crd")
        .output()
        .await
        .expect("run example");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crd: serde_json::Value = serde_yaml::from_slice(&out.stdout).expect("YAML");
    assert_eq!(crd["metadata"]["name"], "widgets.example.mni.dev");
    assert_eq!(crd["kind"], "CustomResourceDefinition");
}

#[tokio::test]
async fn the_example_reconciles_and_exits_0_on_sigterm() {
    let env = Env::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = env.kubeconfig(dir.path());
    let health = std::net::SocketAddr::from(([127, 0, 0, 1], listen_port()));
    let mut child = tokio::process::Command::new(example_binary())
        .args([
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            &health.to_string(),
            "--log-format",
            "json",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start example");
    wait_for("the example to be ready", || async {
        (http_get(health, "/readyz").await.ok()?.0 == 200).then_some(())
    })
    .await;
    let widgets = env.widgets();
    widgets
        .create(&PostParams::default(), &widget("ex", &[("a", "b")]))
        .await
        .expect("create");
    wait_for("Ready", || async {
        (ready_condition(&widgets.get("ex").await.ok()?)?.0 == "True").then_some(())
    })
    .await;
    let pid = child.id().expect("pid");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    if let Some(rss) = status.lines().find(|l| l.starts_with("VmRSS")) {
        eprintln!("idle example operator (1 widget): {rss}");
    }
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("exits")
        .expect("status");
    assert_eq!(exit.code(), Some(0), "SIGTERM is a clean shutdown");
}

/// A free port below the kernel's ephemeral range (32768+): a port taken from that range and
/// released can be reused as the source port of any outgoing connection (other tests make
/// thousands) before the child process binds it.
fn listen_port() -> u16 {
    let seed = std::process::id() as u64
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
    (0..2000u64)
        .map(|i| {
            20_000
                + ((seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(i * 7919))
                    % 10_000) as u16
        })
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port between 20000 and 30000")
}

#[tokio::test]
async fn runnables_start_before_the_controllers_stop_with_them_and_a_failure_stops_the_manager() {
    let env = Env::start().await;
    // A runnable that serves until the shutdown, then records that it stopped.
    let stopped = Arc::new(Mutex::new(false));
    let flag = stopped.clone();
    let running = manager(env.client.clone())
        .with_controller(WidgetReconciler)
        .with_runnable("server", move |shutdown| async move {
            shutdown.wait().await;
            *flag.lock().unwrap() = true;
            Ok::<(), std::io::Error>(())
        })
        .build()
        .start()
        .await
        .expect("manager starts");
    tokio::time::timeout(Duration::from_secs(60), running.shutdown())
        .await
        .expect("the manager stops")
        .expect("Ok after a graceful shutdown");
    assert!(
        *stopped.lock().unwrap(),
        "the runnable was stopped with the manager"
    );

    // A runnable that fails (a webhook server without its certificate) ends the manager with
    // its error, by name, without a shutdown being asked for.
    let running = manager(env.client.clone())
        .with_controller(WidgetReconciler)
        .with_runnable("webhook server", |_| async {
            Err::<(), _>(std::io::Error::other("no certificate in /certs"))
        })
        .build()
        .start()
        .await
        .expect("manager starts");
    let error = tokio::time::timeout(Duration::from_secs(60), running.wait())
        .await
        .expect("the manager stops on its own")
        .expect_err("the runnable's failure is the manager's");
    assert!(
        matches!(&error, mni_operator::Error::Runnable { name, .. } if name == "webhook server"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "webhook server failed: no certificate in /certs"
    );
}
