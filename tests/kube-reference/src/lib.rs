//! `mni-kube-reference`: the differential suite. The same requests go to a real
//! kube-apiserver (of the Kubernetes version `mni-dev` reports, built by
//! `scripts/kube-reference.sh` from the build module `framework/tools/kube-reference`) and to
//! `mni-dev`, and whatever differs after normalisation is reported.
//!
//! - [`servers`] starts both (etcd and kube-apiserver as envtest does; `mni-dev up`);
//! - [`cases`] is the table of HTTP requests (create/get/list/patch/delete of ConfigMaps,
//!   Secrets, Namespaces, Services, Deployments, Jobs, a CRD and its custom resources, bad
//!   input, dry runs, field validation, Tables, watches);
//! - [`discovery`] compares the groups, versions and resources served;
//! - [`kubectl`] runs kubectl's commands against both;
//! - [`compare`] normalises answers and lists differences;
//! - [`run`] drives it all and [`Outcome::markdown`] writes the report.
//!
//! `scripts/differential.sh` builds the reference and runs the `kube-differential` binary.

pub mod cases;
pub mod compare;
pub mod discovery;
pub mod exchange;
pub mod kubectl;
pub mod servers;

use std::fmt::Write as _;
use std::time::Duration;

use cases::Step;
use exchange::{Answer, send, watch_events};
use servers::Server;

/// One compared request (or kubectl command, or watch) and what differed.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// `http`, `watch`, `discovery` or `kubectl`.
    pub area: &'static str,
    /// What it checks.
    pub name: String,
    /// The request or command line.
    pub request: String,
    /// The status codes (or exit codes), reference first.
    pub codes: (i64, i64),
    /// The differences, one per line; empty when the answers agree.
    pub differences: Vec<String>,
}

/// Everything one run compared.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Every comparison, in order.
    pub comparisons: Vec<Comparison>,
}

impl Outcome {
    /// The comparisons that found a difference.
    pub fn differing(&self) -> impl Iterator<Item = &Comparison> {
        self.comparisons
            .iter()
            .filter(|c| !c.differences.is_empty())
    }

    /// The summary printed at the end of a run.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let differing: Vec<&Comparison> = self.differing().collect();
        let _ = writeln!(s, "requests compared: {}", self.comparisons.len());
        let _ = writeln!(s, "differences: {}", differing.len());
        for c in differing {
            let first = c.differences.first().map(String::as_str).unwrap_or("");
            let more = if c.differences.len() > 1 {
                format!(" (+{} more)", c.differences.len() - 1)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "  [{}] {} — {}: {first}{more}",
                c.area, c.name, c.request
            );
        }
        s
    }

    /// The Markdown report: the counts, then each difference in full, then every comparison.
    pub fn markdown(&self, header: &str) -> String {
        let mut s = String::new();
        let differing: Vec<&Comparison> = self.differing().collect();
        let _ = writeln!(s, "# Differential suite: mni-dev against kube-apiserver\n");
        let _ = writeln!(s, "{header}\n");
        let _ = writeln!(
            s,
            "- requests compared: {}\n- differences: {}\n",
            self.comparisons.len(),
            differing.len()
        );
        let _ = writeln!(s, "## Differences\n");
        for c in &differing {
            let _ = writeln!(
                s,
                "### [{}] {}\n\n`{}` — kube-apiserver {}, mni-dev {}\n\n```text",
                c.area, c.name, c.request, c.codes.0, c.codes.1
            );
            for d in &c.differences {
                let _ = writeln!(s, "{d}");
            }
            let _ = writeln!(s, "```\n");
        }
        let _ = writeln!(s, "## Every comparison\n");
        let _ = writeln!(s, "| area | what | request | codes | same |");
        let _ = writeln!(s, "| --- | --- | --- | --- | --- |");
        for c in &self.comparisons {
            let _ = writeln!(
                s,
                "| {} | {} | `{}` | {} / {} | {} |",
                c.area,
                c.name,
                c.request.replace('|', "\\|"),
                c.codes.0,
                c.codes.1,
                if c.differences.is_empty() {
                    "yes"
                } else {
                    "no"
                }
            );
        }
        s
    }
}

fn answer_differences(a: &Answer, b: &Answer) -> Vec<String> {
    let mut out = Vec::new();
    if a.status != b.status {
        out.push(format!(
            "status: kube-apiserver {}, mni-dev {}",
            a.status, b.status
        ));
    }
    let (mut x, mut y) = (a.body.clone(), b.body.clone());
    compare::normalize(&mut x);
    compare::normalize(&mut y);
    out.extend(compare::diff(&x, &y));
    if a.warnings != b.warnings {
        out.push(format!(
            "warnings: kube-apiserver {:?}, mni-dev {:?}",
            a.warnings, b.warnings
        ));
    }
    out
}

/// Repeats `call` on `server` until it answers 2xx (30 s at most).
async fn until(server: &Server, call: &exchange::Call) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let answer = send(&server.client, call).await;
        if (200..300).contains(&answer.status) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!(
                "{}: {} on {} after 30 s",
                call.line(),
                answer.status,
                server.name
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn normalized_events(events: &[serde_json::Value]) -> serde_json::Value {
    let mut v = serde_json::Value::Array(events.to_vec());
    compare::normalize(&mut v);
    v
}

/// Sends the whole table, the discovery comparison and the kubectl commands to both servers.
pub async fn run(reference: &Server, mni: &Server) -> Outcome {
    let mut outcome = Outcome::default();
    for step in cases::steps() {
        match step {
            Step::Http { name, call } => {
                let a = send(&reference.client, &call).await;
                let b = send(&mni.client, &call).await;
                outcome.comparisons.push(Comparison {
                    area: "http",
                    name: name.to_owned(),
                    request: call.line(),
                    codes: (i64::from(a.status), i64::from(b.status)),
                    differences: answer_differences(&a, &b),
                });
            }
            Step::Until { name, call } => {
                for server in [reference, mni] {
                    if let Err(e) = until(server, &call).await {
                        eprintln!("warning: {name}: {e}");
                    }
                }
            }
            Step::Watch {
                name,
                collection,
                calls,
                expected,
            } => {
                let a = watch_events(&reference.client, &collection, &calls, expected).await;
                let b = watch_events(&mni.client, &collection, &calls, expected).await;
                let differences = match (&a, &b) {
                    (Ok(x), Ok(y)) => compare::diff(&normalized_events(x), &normalized_events(y)),
                    (x, y) => vec![format!("kube-apiserver {x:?}, mni-dev {y:?}")],
                };
                let count = |r: &Result<Vec<serde_json::Value>, String>| {
                    r.as_ref().map_or(-1, |v| v.len() as i64)
                };
                outcome.comparisons.push(Comparison {
                    area: "watch",
                    name: name.to_owned(),
                    request: format!("WATCH {collection} ({} writes)", calls.len()),
                    codes: (count(&a), count(&b)),
                    differences,
                });
            }
        }
    }
    for c in discovery::compare(&reference.client, &mni.client).await {
        outcome.comparisons.push(Comparison {
            area: "discovery",
            name: c.request.clone(),
            request: c.request,
            codes: (200, 200),
            differences: c.differences,
        });
    }
    let urls = [reference.url.as_str(), mni.url.as_str()];
    for case in kubectl::cases() {
        let (ra, ma) = (reference.kubeconfig.clone(), mni.kubeconfig.clone());
        let (ca, cb) = (case.clone(), case.clone());
        let a = tokio::task::spawn_blocking(move || kubectl::run(&ca, &ra)).await;
        let b = tokio::task::spawn_blocking(move || kubectl::run(&cb, &ma)).await;
        let (Ok(a), Ok(b)) = (a, b) else {
            continue;
        };
        outcome.comparisons.push(Comparison {
            area: "kubectl",
            name: case.line(),
            request: case.line(),
            codes: (i64::from(a.code), i64::from(b.code)),
            differences: kubectl::differences(&case, &a, &b, &urls),
        });
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_and_lists() {
        let outcome = Outcome {
            comparisons: vec![
                Comparison {
                    area: "http",
                    name: "same".into(),
                    request: "GET /a".into(),
                    codes: (200, 200),
                    differences: vec![],
                },
                Comparison {
                    area: "http",
                    name: "differs".into(),
                    request: "GET /b".into(),
                    codes: (200, 404),
                    differences: vec!["status: kube-apiserver 200, mni-dev 404".into()],
                },
            ],
        };
        let s = outcome.summary();
        assert!(s.contains("requests compared: 2"), "{s}");
        assert!(s.contains("differences: 1"), "{s}");
        assert!(s.contains("[http] differs — GET /b"), "{s}");
        let md = outcome.markdown("header");
        assert!(md.contains("### [http] differs"), "{md}");
        assert!(
            md.contains("| http | same | `GET /a` | 200 / 200 | yes |"),
            "{md}"
        );
    }

    #[test]
    fn status_and_body_differences_are_both_listed() {
        let a = Answer {
            status: 422,
            body: serde_json::json!({"message": "x", "metadata": {"resourceVersion": "1"}}),
            warnings: vec![],
        };
        let b = Answer {
            status: 400,
            body: serde_json::json!({"message": "y", "metadata": {"resourceVersion": "7"}}),
            warnings: vec!["299 - \"w\"".into()],
        };
        let d = answer_differences(&a, &b);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].starts_with("status:"));
        assert!(d[1].starts_with("/message:"));
        assert!(d[2].starts_with("warnings:"));
    }
}
