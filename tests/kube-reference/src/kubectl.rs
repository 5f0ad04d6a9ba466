//! kubectl's commands, run against both servers with each one's kubeconfig: exit codes,
//! stdout and stderr are compared after normalisation (`-o yaml`/`-o json` output as
//! normalised objects, anything else as text without addresses, ages and uids).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The namespace of the kubectl commands.
pub const NS: &str = "kubectl-differential";

/// One kubectl command: its arguments and what it reads on stdin.
#[derive(Debug, Clone)]
pub struct KubectlCase {
    /// The arguments after `kubectl`.
    pub args: Vec<String>,
    /// Standard input (a manifest for `apply -f -`).
    pub stdin: Option<&'static str>,
}

impl KubectlCase {
    /// The command line as a user types it.
    pub fn line(&self) -> String {
        let mut line = format!("kubectl {}", self.args.join(" "));
        if self.stdin.is_some() {
            line.push_str(" < manifest");
        }
        line
    }

    fn structured(&self) -> bool {
        self.args
            .windows(2)
            .any(|w| w[0] == "-o" && (w[1] == "yaml" || w[1] == "json"))
    }
}

/// What one run printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    /// The exit code (-1 when killed).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

const MANIFEST: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels: {app: applied}
data:
  key: value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: applied
spec:
  replicas: 1
  selector:
    matchLabels: {app: applied}
  template:
    metadata:
      labels: {app: applied}
    spec:
      containers:
      - name: app
        image: nginx:1.27
---
apiVersion: v1
kind: Service
metadata:
  name: applied
spec:
  selector: {app: applied}
  ports:
  - port: 80
";

const MANIFEST_CHANGED: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels: {app: applied}
data:
  key: changed
";

const BAD_MANIFEST: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: Bad_Name
";

fn case(args: &str) -> KubectlCase {
    KubectlCase {
        args: args
            .split_whitespace()
            .map(|a| a.replace("{ns}", NS))
            .collect(),
        stdin: None,
    }
}

fn with_stdin(args: &str, stdin: &'static str) -> KubectlCase {
    KubectlCase {
        stdin: Some(stdin),
        ..case(args)
    }
}

/// The commands, in order.
pub fn cases() -> Vec<KubectlCase> {
    vec![
        case("create namespace {ns}"),
        case("create configmap cm -n {ns} --from-literal=a=1 --from-literal=b=2"),
        case("get configmap cm -n {ns} -o yaml"),
        case("get configmap cm -n {ns} -o json"),
        case("get configmap cm -n {ns} -o jsonpath={.data.a}"),
        case("get configmaps -n {ns} --show-labels"),
        case("get configmap missing -n {ns}"),
        case("create configmap cm -n {ns} --from-literal=a=1"),
        case("create configmap Bad_Name -n {ns}"),
        case("label configmap cm -n {ns} tier=one"),
        case("label configmap cm -n {ns} tier=two"),
        case("label configmap cm -n {ns} tier=two --overwrite"),
        case("annotate configmap cm -n {ns} note=hello"),
        case("patch configmap cm -n {ns} --type merge -p {\"data\":{\"c\":\"3\"}}"),
        case("patch configmap cm -n {ns} --type json -p [{\"op\":\"remove\",\"path\":\"/data/zz\"}]"),
        case("describe configmap cm -n {ns}"),
        with_stdin("apply -n {ns} -f -", MANIFEST),
        with_stdin("apply -n {ns} -f -", MANIFEST),
        with_stdin("diff -n {ns} -f -", MANIFEST_CHANGED),
        with_stdin("apply -n {ns} --server-side -f -", MANIFEST_CHANGED),
        with_stdin("apply -n {ns} -f -", BAD_MANIFEST),
        with_stdin("create -n {ns} -f -", MANIFEST_CHANGED),
        case("get configmap applied -n {ns} -o yaml"),
        case("create deployment web -n {ns} --image=nginx:1.27 --replicas=2"),
        case("get deployment web -n {ns} -o yaml"),
        case("scale deployment web -n {ns} --replicas=3"),
        case("set image deployment/web -n {ns} nginx=nginx:1.28"),
        case("get deployment web -n {ns} -o jsonpath={.spec.replicas}/{.spec.template.spec.containers[0].image}"),
        case("get deployments -n {ns} -o wide"),
        case("rollout history deployment/web -n {ns}"),
        case("create job once -n {ns} --image=busybox:1.36 -- true"),
        case("get job once -n {ns} -o yaml"),
        case("create cronjob nightly -n {ns} --image=busybox:1.36 --schedule=0_3_*_*_*"),
        case("create secret generic s -n {ns} --from-literal=password=hunter2"),
        case("get secret s -n {ns} -o jsonpath={.data.password}"),
        case("create service clusterip svc -n {ns} --tcp=80:8080"),
        case("get services -n {ns}"),
        case("create serviceaccount robot -n {ns}"),
        case("create role reader -n {ns} --verb=get,list --resource=configmaps"),
        case("create rolebinding reader -n {ns} --role=reader --serviceaccount={ns}:robot"),
        case("auth can-i list configmaps -n {ns} --as=system:serviceaccount:{ns}:robot"),
        case("auth can-i delete configmaps -n {ns} --as=system:serviceaccount:{ns}:robot"),
        case("get all -n {ns}"),
        case("explain configmap"),
        case("explain deployment.spec.replicas"),
        case("api-resources --api-group=apps"),
        case("api-resources --namespaced=false --api-group="),
        case("delete configmap cm -n {ns}"),
        case("delete configmap cm -n {ns}"),
        case("delete deployment web -n {ns}"),
        case("get nosuchkind"),
    ]
    .into_iter()
    .map(|mut c| {
        // `--schedule` takes one argument with spaces; the table splits on whitespace.
        for a in &mut c.args {
            if a.starts_with("--schedule=") {
                *a = a.replace('_', " ");
            }
        }
        c
    })
    .collect()
}

/// Runs `case` against the server of `kubeconfig` (60 s at most).
pub fn run(case: &KubectlCase, kubeconfig: &Path) -> Printed {
    let mut child = match Command::new("kubectl")
        .args(&case.args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .stdin(if case.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return Printed {
                code: -1,
                stdout: String::new(),
                stderr: format!("cannot run kubectl: {e}"),
            };
        }
    };
    if let (Some(text), Some(mut stdin)) = (case.stdin, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(out)) => Printed {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        Ok(Err(e)) => Printed {
            code: -1,
            stdout: String::new(),
            stderr: e.to_string(),
        },
        Err(_) => {
            let _ = Command::new("kill").arg(id.to_string()).status();
            Printed {
                code: -1,
                stdout: String::new(),
                stderr: "kubectl did not finish in 60 s".to_owned(),
            }
        }
    }
}

/// The differences between the reference's and mni-dev's runs of `case`.
pub fn differences(case: &KubectlCase, a: &Printed, b: &Printed, urls: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if a.code != b.code {
        out.push(format!(
            "exit code: kube-apiserver {}, mni-dev {}",
            a.code, b.code
        ));
    }
    if case.structured() {
        let parse = |s: &str| -> Option<Value> {
            let mut v: Value = serde_yaml::from_str(s).ok()?;
            crate::compare::normalize(&mut v);
            Some(v)
        };
        match (parse(&a.stdout), parse(&b.stdout)) {
            (Some(x), Some(y)) => out.extend(
                crate::compare::diff(&x, &y)
                    .into_iter()
                    .map(|d| format!("stdout {d}")),
            ),
            _ => text_diff("stdout", &a.stdout, &b.stdout, urls, &mut out),
        }
    } else if case.args.first().is_some_and(|a| a == "describe") {
        // kubectl describe prints a ConfigMap's data in Go's map order, which varies per run.
        text_diff(
            "stdout",
            &sorted_lines(&a.stdout),
            &sorted_lines(&b.stdout),
            urls,
            &mut out,
        );
    } else {
        text_diff("stdout", &a.stdout, &b.stdout, urls, &mut out);
    }
    text_diff("stderr", &a.stderr, &b.stderr, urls, &mut out);
    out
}

fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

fn text_diff(what: &str, a: &str, b: &str, urls: &[&str], out: &mut Vec<String>) {
    let a = crate::compare::normalize_text(a, urls);
    let b = crate::compare::normalize_text(b, urls);
    if a == b {
        return;
    }
    let diff = similar::TextDiff::from_lines(&a, &b);
    for change in diff.iter_all_changes() {
        let line = change.value().trim_end();
        match change.tag() {
            similar::ChangeTag::Delete => out.push(format!("{what} kube-apiserver only: {line}")),
            similar::ChangeTag::Insert => out.push(format!("{what} mni-dev only: {line}")),
            similar::ChangeTag::Equal => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_name_the_namespace_and_keep_schedules_whole() {
        let all = cases();
        assert!(all[0].args.contains(&NS.to_owned()));
        let cron = all
            .iter()
            .find(|c| c.args.iter().any(|a| a.starts_with("--schedule")))
            .expect("a cronjob case");
        assert!(cron.args.contains(&"--schedule=0 3 * * *".to_owned()));
    }

    #[test]
    fn structured_output_is_compared_as_objects() {
        let c = case("get cm x -o yaml");
        let a = Printed {
            code: 0,
            stdout: "metadata:\n  name: x\n  uid: 0c7d1f2e-aaaa\n  resourceVersion: \"5\"\n".into(),
            stderr: String::new(),
        };
        let b = Printed {
            stdout: "metadata:\n  resourceVersion: \"9\"\n  name: x\n  uid: 9f00aa11-bbbb\n".into(),
            ..a.clone()
        };
        assert!(differences(&c, &a, &b, &[]).is_empty());
        let b = Printed {
            code: 1,
            ..a.clone()
        };
        assert_eq!(
            differences(&c, &a, &b, &[]),
            vec!["exit code: kube-apiserver 0, mni-dev 1"]
        );
    }
}
