//! `GET /api/v1/namespaces/NS/pods/NAME/log`: a container's log, read from the files a node
//! agent writes in the directory given to
//! [`ServerBuilder::with_pod_logs_dir`](crate::ServerBuilder::with_pod_logs_dir), in
//! kubelet's layout (`<ns>_<pod>_<uid>/<container>/<restart count>.log`, rotated to
//! `.log.1`; lines `<RFC 3339 time> <stream> <F|P> <text>`). Where kube-apiserver asks the
//! kubelet, this server reads the files: `mni-dev` runs both in one process.
//!
//! Served options: `container`, `previous`, `follow`, `tailLines`, `sinceSeconds`,
//! `sinceTime`, `timestamps` and `limitBytes`, as `kubectl logs` sends them. A follow ends
//! when the container stops running (its status no longer says `running`, or a newer
//! instance starts) or the pod goes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::request::{Query, Target};
use crate::state::State;

/// How often a follow looks for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// What one request asks for.
#[derive(Debug, Clone, Default)]
struct Options {
    container: String,
    previous: bool,
    follow: bool,
    tail: Option<usize>,
    since: Option<jiff::Timestamp>,
    timestamps: bool,
    limit: Option<usize>,
}

fn options(query: &Query, pod: &Value) -> ApiResult<Options> {
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let containers: Vec<&str> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            pod["spec"]["initContainers"]
                .as_array()
                .into_iter()
                .flatten(),
        )
        .filter_map(|c| c["name"].as_str())
        .collect();
    let container = match query.get("container").filter(|c| !c.is_empty()) {
        Some(c) if containers.contains(&c) => c.to_string(),
        Some(c) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )));
        }
        None => match pod["spec"]["containers"].as_array().map(Vec::as_slice) {
            Some([only]) => only["name"].as_str().unwrap_or_default().to_string(),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    containers.join(" ")
                )));
            }
        },
    };
    let non_negative = |key: &str| -> ApiResult<Option<i64>> {
        match query.int(key)? {
            Some(n) if n < 0 => Err(ApiError::bad_request(format!(
                "{key}: Invalid value: {n}: must be greater than or equal to 0"
            ))),
            n => Ok(n),
        }
    };
    let since = match (non_negative("sinceSeconds")?, query.get("sinceTime")) {
        (Some(s), _) => Some(
            jiff::Timestamp::now()
                .checked_sub(jiff::SignedDuration::from_secs(s))
                .unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        ),
        (None, Some(t)) => Some(t.parse().map_err(|_| {
            ApiError::bad_request(format!(
                "sinceTime: Invalid value: {t:?}: not an RFC 3339 time"
            ))
        })?),
        (None, None) => None,
    };
    Ok(Options {
        container,
        previous: query.flag("previous"),
        follow: query.flag("follow"),
        tail: non_negative("tailLines")?.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        since,
        timestamps: query.flag("timestamps"),
        limit: non_negative("limitBytes")?.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    })
}

/// The instance numbers of a container's logs, ascending.
fn instances(dir: &Path) -> Vec<i32> {
    let mut found: Vec<i32> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.strip_suffix(".log")?.parse().ok()
        })
        .collect();
    found.sort_unstable();
    found
}

/// One parsed log line: its time and the text to send (with the time when asked).
fn render(line: &str, opts: &Options) -> Option<String> {
    let mut parts = line.splitn(4, ' ');
    let ts = parts.next()?;
    let _stream = parts.next()?;
    let tag = parts.next()?;
    let text = parts.next().unwrap_or_default();
    if let Some(since) = opts.since
        && ts.parse::<jiff::Timestamp>().is_ok_and(|t| t < since)
    {
        return None;
    }
    // A partial line (`P`) continues on the next one.
    let end = if tag == "P" { "" } else { "\n" };
    Some(if opts.timestamps {
        format!("{ts} {text}{end}")
    } else {
        format!("{text}{end}")
    })
}

/// Text of the files of one instance (rotated first), from `offset` of the current file.
fn read_instance(file: &Path, with_rotated: bool) -> String {
    let mut text = String::new();
    if with_rotated && let Ok(old) = std::fs::read_to_string(file.with_extension("log.1")) {
        text.push_str(&old);
    }
    if let Ok(cur) = std::fs::read_to_string(file) {
        text.push_str(&cur);
    }
    text
}

/// Whether the container's status says it runs the instance `restart`.
fn running(state: &State, target: &Target, uid: &str, container: &str, restart: i32) -> bool {
    let name = target.name.as_deref().unwrap_or_default();
    let Ok((pod, _)) = state.read(&target.info, target.namespace.as_deref(), name) else {
        return false;
    };
    if pod["metadata"]["uid"].as_str() != Some(uid) {
        return false;
    }
    let statuses = ["containerStatuses", "initContainerStatuses"];
    statuses.iter().any(|k| {
        pod["status"][k].as_array().into_iter().flatten().any(|s| {
            s["name"].as_str() == Some(container)
                && s["state"].get("running").is_some()
                && s["restartCount"].as_i64() == Some(i64::from(restart))
        })
    })
}

/// GET of `pods/log`.
pub(crate) fn get(state: &Arc<State>, target: &Target, query: &Query) -> ApiResult<Response> {
    let Some(root) = state.pod_logs_dir() else {
        return Err(ApiError::bad_request(
            "this server runs no containers (mni-dev's simulated runtime), so there are no \
             logs: start mni-dev with --runtime process",
        ));
    };
    let name = target.name.as_deref().unwrap_or_default();
    let ns = target.namespace.as_deref().unwrap_or_default();
    let (pod, _) = state.read(&target.info, target.namespace.as_deref(), name)?;
    let opts = options(query, &pod)?;
    let uid = pod["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let dir: PathBuf = root
        .join(format!("{ns}_{name}_{uid}"))
        .join(&opts.container);
    let found = instances(&dir);
    let restart = pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            pod["status"]["initContainerStatuses"]
                .as_array()
                .into_iter()
                .flatten(),
        )
        .find(|s| s["name"].as_str() == Some(opts.container.as_str()))
        .and_then(|s| s["restartCount"].as_i64())
        .and_then(|n| i32::try_from(n).ok());
    let current = found.last().copied().or(restart);
    let instance = if opts.previous {
        current
            .map(|c| c - 1)
            .filter(|p| found.contains(p))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "previous terminated container \"{}\" in pod \"{name}\" not found",
                    opts.container
                ))
            })?
    } else {
        match current.filter(|c| found.contains(c)) {
            Some(c) => c,
            None => {
                return Err(ApiError::bad_request(format!(
                    "container \"{}\" in pod \"{name}\" is waiting to start: ContainerCreating",
                    opts.container
                )));
            }
        }
    };
    let file = dir.join(format!("{instance}.log"));
    let text = read_instance(&file, true);
    let mut lines: Vec<String> = text.lines().filter_map(|l| render(l, &opts)).collect();
    if let Some(n) = opts.tail {
        let skip = lines.len().saturating_sub(n);
        lines.drain(..skip);
    }
    let mut out: String = lines.concat();
    let mut budget = opts.limit;
    if let Some(limit) = budget {
        truncate(&mut out, limit);
        budget = Some(limit - out.len());
    }
    let follow = opts.follow && !opts.previous && budget != Some(0);
    let mut resp = if follow {
        let state = state.clone();
        let target = target.clone();
        let first = Bytes::from(out);
        let offset = std::fs::metadata(&file).map_or(0, |m| m.len());
        let stream = futures::stream::unfold(
            (Some(first), offset, file, budget, false),
            move |(first, mut offset, file, mut budget, done)| {
                let state = state.clone();
                let target = target.clone();
                let opts = opts.clone();
                let uid = uid.clone();
                async move {
                    if let Some(first) = first {
                        return Some((
                            Ok::<_, std::io::Error>(first),
                            (None, offset, file, budget, false),
                        ));
                    }
                    if done {
                        return None;
                    }
                    loop {
                        let len = std::fs::metadata(&file).map_or(0, |m| m.len());
                        if len < offset {
                            // Rotated: the new file starts from the beginning.
                            offset = 0;
                        }
                        if len > offset {
                            let text = read_from(&file, offset);
                            offset = len;
                            let mut chunk: String =
                                text.lines().filter_map(|l| render(l, &opts)).collect();
                            let mut over = false;
                            if let Some(b) = budget.as_mut() {
                                truncate(&mut chunk, *b);
                                *b -= chunk.len();
                                over = *b == 0;
                            }
                            if !chunk.is_empty() || over {
                                return Some((
                                    Ok(Bytes::from(chunk)),
                                    (None, offset, file, budget, over),
                                ));
                            }
                        }
                        if !running(&state, &target, &uid, &opts.container, instance) {
                            // One last look for lines written before it stopped.
                            let len = std::fs::metadata(&file).map_or(0, |m| m.len());
                            if len > offset {
                                continue;
                            }
                            return None;
                        }
                        tokio::time::sleep(FOLLOW_POLL).await;
                    }
                }
            },
        );
        Response::new(Body::from_stream(stream))
    } else {
        Response::new(Body::from(out))
    };
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    Ok(resp)
}

fn read_from(file: &Path, offset: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(file)
        && f.seek(SeekFrom::Start(offset)).is_ok()
    {
        let _ = f.read_to_string(&mut text);
    }
    text
}

/// Cuts `s` to at most `limit` bytes, on a character boundary.
fn truncate(s: &mut String, limit: usize) {
    if s.len() > limit {
        let mut at = limit;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_render_with_and_without_timestamps() {
        let line = "2026-01-01T00:00:00.000000001Z stdout F hello world";
        let opts = Options::default();
        assert_eq!(render(line, &opts).as_deref(), Some("hello world\n"));
        let ts = Options {
            timestamps: true,
            ..Options::default()
        };
        assert_eq!(
            render(line, &ts).as_deref(),
            Some("2026-01-01T00:00:00.000000001Z hello world\n")
        );
        let since = Options {
            since: Some("2026-06-01T00:00:00Z".parse().expect("time")),
            ..Options::default()
        };
        assert_eq!(render(line, &since), None);
    }

    #[test]
    fn the_container_defaults_only_when_there_is_one() {
        let pod = serde_json::json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let e = options(&Query::parse(None), &pod).expect_err("ambiguous");
        assert!(e.to_string().contains("choose one of: [a b]"), "{e}");
        let o = options(&Query::parse(Some("container=b&tailLines=2")), &pod).expect("ok");
        assert_eq!((o.container.as_str(), o.tail), ("b", Some(2)));
        assert!(options(&Query::parse(Some("container=c")), &pod).is_err());
    }
}
