//! Container probes as kubelet runs them: `httpGet` (a status from 200 to 399 succeeds),
//! `tcpSocket` (a connection succeeds) and `exec` (exit code 0 succeeds, run beside the
//! container with its environment), each bounded by `timeoutSeconds`. Ports are looked up
//! by name in the container's ports; the host is the pod's address.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The timing of a probe, kubelet's defaults filled in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) initial_delay: Duration,
    pub(crate) period: Duration,
    pub(crate) timeout: Duration,
    pub(crate) success_threshold: i32,
    pub(crate) failure_threshold: i32,
}

fn secs(v: Option<i32>, default: i32) -> Duration {
    Duration::from_secs(u64::try_from(v.unwrap_or(default).max(0)).unwrap_or(0))
}

impl Timing {
    pub(crate) fn of(p: &Probe) -> Self {
        Self {
            initial_delay: secs(p.initial_delay_seconds, 0),
            period: secs(p.period_seconds, 10).max(Duration::from_secs(1)),
            timeout: secs(p.timeout_seconds, 1).max(Duration::from_secs(1)),
            success_threshold: p.success_threshold.unwrap_or(1).max(1),
            failure_threshold: p.failure_threshold.unwrap_or(3).max(1),
        }
    }
}

fn port(p: &IntOrString, c: &Container) -> Option<u16> {
    match p {
        IntOrString::Int(n) => u16::try_from(*n).ok(),
        IntOrString::String(name) => c
            .ports
            .iter()
            .flatten()
            .find(|cp| cp.name.as_deref() == Some(name))
            .and_then(|cp| u16::try_from(cp.container_port).ok()),
    }
}

/// Runs `probe` once against the container at `ip`; whether it succeeded.
pub(crate) async fn run(
    probe: &Probe,
    c: &Container,
    ip: &str,
    env: &BTreeMap<String, String>,
) -> bool {
    let timeout = Timing::of(probe).timeout;
    let check = async {
        if let Some(h) = &probe.http_get {
            let Some(port) = port(&h.port, c) else {
                return false;
            };
            let host = h.host.clone().unwrap_or_else(|| ip.to_string());
            http_get(&host, port, h.path.as_deref().unwrap_or("/")).await
        } else if let Some(t) = &probe.tcp_socket {
            let Some(port) = port(&t.port, c) else {
                return false;
            };
            let host = t.host.clone().unwrap_or_else(|| ip.to_string());
            tokio::net::TcpStream::connect((host.as_str(), port))
                .await
                .is_ok()
        } else if let Some(e) = &probe.exec {
            let argv = e.command.clone().unwrap_or_default();
            let Some((cmd, args)) = argv.split_first() else {
                return false;
            };
            tokio::process::Command::new(cmd)
                .args(args)
                .env_clear()
                .envs(env)
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .status()
                .await
                .is_ok_and(|s| s.success())
        } else {
            // grpc is not supported yet: treated as succeeding, as an absent probe.
            true
        }
    };
    tokio::time::timeout(timeout, check).await.unwrap_or(false)
}

/// An HTTP/1.0 GET; whether the status is 2xx or 3xx.
async fn http_get(host: &str, port: u16, path: &str) -> bool {
    let Ok(mut s) = tokio::net::TcpStream::connect((host, port)).await else {
        return false;
    };
    let req = format!(
        "GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).await.is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let mut n = 0;
    while n < 12 {
        match s.read(&mut head[n..]).await {
            Ok(0) | Err(_) => break,
            Ok(m) => n += m,
        }
    }
    let line = String::from_utf8_lossy(&head[..n]);
    line.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .is_some_and(|c| (200..400).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tcp_and_http_probes_see_listeners() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let mut buf = [0u8; 512];
                let _ = s.read(&mut buf).await;
                let ok = String::from_utf8_lossy(&buf).starts_with("GET /healthz");
                let status = if ok { "200 OK" } else { "500 Oops" };
                let _ = s
                    .write_all(format!("HTTP/1.1 {status}\r\n\r\n").as_bytes())
                    .await;
            }
        });
        let c = Container::default();
        let probe = |v: serde_json::Value| -> Probe { serde_json::from_value(v).expect("probe") };
        let env = BTreeMap::new();
        let http = |path: &str| probe(serde_json::json!({"httpGet": {"path": path, "port": port}}));
        assert!(run(&http("/healthz"), &c, "127.0.0.1", &env).await);
        assert!(!run(&http("/other"), &c, "127.0.0.1", &env).await);
        let tcp = probe(serde_json::json!({"tcpSocket": {"port": port}}));
        assert!(run(&tcp, &c, "127.0.0.1", &env).await);
        let exec = probe(serde_json::json!({"exec": {"command": ["/bin/sh", "-c", "exit 1"]}}));
        assert!(!run(&exec, &c, "127.0.0.1", &env).await);
    }
}
