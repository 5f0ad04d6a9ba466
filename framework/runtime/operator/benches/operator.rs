//! Convergence benchmark: N Widgets, each owning one ConfigMap, reconciled by the mNi runtime
//! and by a bare kube-rs `Controller` doing the same writes; plus the idle RSS of an operator.
//!
//! The parent process runs the embedded API server and creates the Widgets; each measured run
//! is a child process (this binary again, `MNI_BENCH_PHASE` set) against a fresh server, with
//! the two sides alternating which goes first, so that its peak RSS
//! (`VmHWM`) is the operator's alone. A run starts the controller, waits until every Widget is
//! `Ready=True`, and reports the wall time, the reconciles done and `VmHWM`.
//!
//! ```text
//! cargo bench -p mni-operator --bench operator            # 1,000 widgets, 3 runs each
//! MNI_BENCH_SIZES=1000,10000 MNI_BENCH_RUNS=1 cargo bench -p mni-operator --bench operator
//! ```

use std::process::ExitCode;
use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api, Client, Config, ResourceExt,
    api::{ListParams, ObjectMeta, Patch, PatchParams, PostParams},
    runtime::{Controller, controller, controller::Action, watcher},
};
use mni_bench::{Better, Mode, Report};
use mni_operator::{ContextError, ControllerOptions, Manager, Reconciler, prelude::*};
use serde_json::json;

#[path = "../examples/configmap-owner/widget.rs"]
mod widget;

use widget::{Widget, WidgetSpec};

const CONCURRENCY: u16 = 16;

fn client(url: &str, token: &str) -> Client {
    let mut config = Config::new(url.parse().expect("url"));
    config.auth_info.token = Some(token.to_string().into());
    Client::try_from(config).expect("client")
}

fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn is_ready(w: &Widget) -> bool {
    w.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.is_true())
    })
}

/// The example's work without its finalizer, so both sides do the same writes.
struct BenchReconciler;

impl Reconciler for BenchReconciler {
    type K = Widget;
    type Error = ContextError;

    fn name(&self) -> &str {
        "bench-mni"
    }

    async fn reconcile(
        &self,
        w: Arc<Widget>,
        ctx: &Context<Widget>,
    ) -> Result<Action, ContextError> {
        ctx.apply_owned(&w, config_map(&w, None)).await?;
        ctx.set_condition(
            &w,
            READY,
            ConditionStatus::True,
            reasons::RECONCILED,
            "the ConfigMap holds the widget's data",
        )
        .await?;
        Ok(Action::await_change())
    }
}

fn config_map(
    w: &Widget,
    owner: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(widget::config_map_name(w)),
            namespace: w.namespace(),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(w.spec.data.clone()),
        ..ConfigMap::default()
    }
}

struct Bare {
    client: Client,
    reconciles: AtomicU64,
}

/// What a hand-written kube-rs reconciler for the same job does.
async fn bare_reconcile(w: Arc<Widget>, ctx: Arc<Bare>) -> Result<Action, kube::Error> {
    ctx.reconciles.fetch_add(1, Ordering::Relaxed);
    let ns = w.namespace().unwrap_or_default();
    let mut owner = w.controller_owner_ref(&()).expect("owner ref");
    owner.block_owner_deletion = Some(true);
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let cm = config_map(&w, Some(owner));
    cms.patch(
        &cm.name_any(),
        &PatchParams::apply("bench-bare").force(),
        &Patch::Apply(&cm),
    )
    .await?;
    if !is_ready(&w) {
        let mut conditions = Vec::new();
        conditions.set(
            READY,
            ConditionStatus::True,
            reasons::RECONCILED,
            "the ConfigMap holds the widget's data",
            w.metadata.generation,
            jiff::Timestamp::now(),
        );
        let status = json!({"status": {"conditions": conditions, "observedGeneration": w.metadata.generation}});
        Api::<Widget>::namespaced(ctx.client.clone(), &ns)
            .patch_status(
                &w.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&status),
            )
            .await?;
    }
    Ok(Action::await_change())
}

async fn wait_converged(widgets: &Api<Widget>, n: usize) {
    loop {
        let list = widgets.list(&ListParams::default()).await.expect("list");
        if list.items.iter().filter(|w| is_ready(w)).count() >= n {
            return;
        }
        // Listing every Widget costs the operator's process too; poll less often when big.
        tokio::time::sleep(Duration::from_millis((n as u64 / 20).max(100))).await;
    }
}

/// One measured run, in the child process; prints `seconds reconciles vmhwm_kib`.
async fn child(phase: &str) {
    let var = |k: &str| std::env::var(k).expect(k);
    let client = client(&var("MNI_BENCH_URL"), &var("MNI_BENCH_TOKEN"));
    let ns = var("MNI_BENCH_NS");
    let n: usize = var("MNI_BENCH_N").parse().expect("n");
    let widgets: Api<Widget> = Api::namespaced(client.clone(), &ns);
    let started = Instant::now();
    let reconciles = match phase {
        "mni" | "idle" => {
            let manager = Manager::builder(client.clone())
                .with_namespace(Some(ns.clone()))
                .with_metrics_address(None)
                .with_health_probe_address(None)
                .with_signal_handling(false);
            let manager = if phase == "mni" {
                manager.with_controller_options(
                    BenchReconciler,
                    ControllerOptions::default().with_max_concurrent_reconciles(CONCURRENCY),
                )
            } else {
                manager.with_controller(widget::WidgetReconciler)
            }
            .build();
            let metrics = manager.metrics();
            let running = manager.start().await.expect("start");
            wait_converged(&widgets, n).await;
            let elapsed = started.elapsed();
            if phase == "idle" {
                tokio::time::sleep(Duration::from_secs(2)).await;
                println!("{} {}", proc_status_kib("VmRSS"), proc_status_kib("VmHWM"));
                return;
            }
            let text = metrics.encode();
            let count = text
                .lines()
                .filter(|l| l.starts_with("controller_runtime_reconcile_total{"))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>() as u64;
            running.shutdown().await.expect("shutdown");
            println!(
                "{} {} {}",
                elapsed.as_secs_f64(),
                count,
                proc_status_kib("VmHWM")
            );
            return;
        }
        _ => {
            let bare = Arc::new(Bare {
                client: client.clone(),
                reconciles: AtomicU64::new(0),
            });
            let run = Controller::new(widgets.clone(), watcher::Config::default())
                .owns(
                    Api::<ConfigMap>::namespaced(client.clone(), &ns),
                    watcher::Config::default(),
                )
                .with_config(controller::Config::default().concurrency(CONCURRENCY))
                .run(
                    bare_reconcile,
                    |_, _, _| Action::requeue(Duration::from_millis(5)),
                    bare.clone(),
                )
                .for_each(|_| async {});
            tokio::select! {
                () = run => {}
                () = wait_converged(&widgets, n) => {}
            }
            bare.reconciles.load(Ordering::Relaxed)
        }
    };
    println!(
        "{} {} {}",
        started.elapsed().as_secs_f64(),
        reconciles,
        proc_status_kib("VmHWM")
    );
}

async fn create_widgets(client: &Client, ns: &str, n: usize) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(ns.to_string()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let widgets: Api<Widget> = Api::namespaced(client.clone(), ns);
    stream::iter(0..n)
        .map(|i| {
            let widgets = widgets.clone();
            async move {
                let data = BTreeMap::from([("index".to_string(), i.to_string())]);
                let w = Widget::new(&format!("w{i}"), WidgetSpec { data });
                widgets.create(&PostParams::default(), &w).await.map(|_| ())
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<_>>()
        .await
        .expect("create widgets");
}

async fn measure(server: &mni_testkit::TestEnv, phase: &str, ns: &str, n: usize) -> Vec<f64> {
    let out = tokio::process::Command::new(std::env::current_exe().expect("exe"))
        .env("MNI_BENCH_PHASE", phase)
        .env("MNI_BENCH_URL", server.url())
        .env("MNI_BENCH_TOKEN", server.admin_token())
        .env("MNI_BENCH_NS", ns)
        .env("MNI_BENCH_N", n.to_string())
        .output()
        .await
        .expect("child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|v| v.parse().expect("number"))
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> ExitCode {
    if let Ok(phase) = std::env::var("MNI_BENCH_PHASE") {
        child(&phase).await;
        return ExitCode::SUCCESS;
    }
    let mode = Mode::from_env();
    let mut report = Report::new("operator", mode);
    let sizes: Vec<usize> = std::env::var("MNI_BENCH_SIZES")
        .unwrap_or_else(|_| mode.pick("1000", "20").into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("MNI_BENCH_SIZES: comma-separated counts")
        })
        .collect();
    let runs: usize = std::env::var("MNI_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(mode.pick(3, 1));
    let server = fresh_env().await;
    create_widgets(&server.client(), "idle", 1).await;
    let idle = measure(&server, "idle", "idle", 1).await;
    server.shutdown().await;
    report.figure(
        "idle example operator (1 widget), VmRSS",
        "MiB",
        Some(idle[0] / 1024.0),
        Better::Lower,
    );

    for n in sizes {
        let mut results: BTreeMap<&str, Vec<Vec<f64>>> = BTreeMap::new();
        for run in 0..runs {
            // Alternate which side goes first, each on a fresh server, so that neither
            // inherits the other's objects or a warmer machine.
            let order = if run % 2 == 0 {
                ["mni", "bare"]
            } else {
                ["bare", "mni"]
            };
            for phase in order {
                let server = fresh_env().await;
                let ns = format!("{phase}-{n}-{run}");
                create_widgets(&server.client(), &ns, n).await;
                let r = measure(&server, phase, &ns, n).await;
                server.shutdown().await;
                println!(
                    "  n={n} run={run} {phase}: {:.3} s, {} reconciles, VmHWM {} KiB",
                    r[0], r[1], r[2]
                );
                results.entry(phase).or_default().push(r);
            }
        }
        let stat = |phase: &str, i: usize| median(results[phase].iter().map(|r| r[i]).collect());
        let rate = |phase: &str| median(results[phase].iter().map(|r| r[1] / r[0]).collect());
        for phase in ["mni", "bare"] {
            println!(
                "n={n} {phase:>4}: converge {:.3} s (median of {runs}), {:.0} reconciles/s, peak RSS {:.1} MiB",
                stat(phase, 0),
                rate(phase),
                stat(phase, 2) / 1024.0
            );
        }
        let bare = "bare kube-rs Controller";
        report
            .figure(
                format!("{n} widgets: converge (median of {runs})"),
                "s",
                Some(stat("mni", 0)),
                Better::Lower,
            )
            .anchor(bare, Some(stat("bare", 0)));
        report
            .figure(
                format!("{n} widgets: reconciles/s"),
                "1/s",
                Some(rate("mni")),
                Better::Higher,
            )
            .anchor(bare, Some(rate("bare")));
        report
            .figure(
                format!("{n} widgets: operator peak RSS"),
                "MiB",
                Some(stat("mni", 2) / 1024.0),
                Better::Lower,
            )
            .anchor(bare, Some(stat("bare", 2) / 1024.0));
    }
    report.finish()
}

async fn fresh_env() -> mni_testkit::TestEnv {
    mni_testkit::TestEnv::builder()
        .with_crds(widget::crds())
        .start()
        .await
        .expect("test environment")
}
