//! Container logs on disk, in the layout and line format kubelet and CRI runtimes use, so the
//! API server (`pods/log`) reads them without knowing the node agent:
//!
//! ```text
//! LOGS/<namespace>_<pod>_<pod uid>/<container>/<restart count>.log     the current file
//! LOGS/<namespace>_<pod>_<pod uid>/<container>/<restart count>.log.1   the rotated one
//! ```
//!
//! Each line is `<RFC 3339 time with nanoseconds> <stdout|stderr> F <text>`. A file that
//! grows over the size cap is renamed to `.log.1` (replacing the older one) and a new one
//! started, so one container instance holds at most twice the cap. The instance before the
//! current one is kept (`kubectl logs --previous`); older ones are deleted when a new one
//! starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The default size cap of one log file (kubelet's `containerLogMaxSize`).
pub const DEFAULT_MAX_SIZE: u64 = 10 * 1024 * 1024;

/// The directory of one container's logs.
pub fn container_dir(logs: &Path, ns: &str, pod: &str, uid: &str, container: &str) -> PathBuf {
    logs.join(format!("{ns}_{pod}_{uid}")).join(container)
}

/// Where one instance of a container logs.
pub fn instance_file(dir: &Path, restart: i32) -> PathBuf {
    dir.join(format!("{restart}.log"))
}

/// A log file being written by one container instance, shared by its two streams.
#[derive(Clone)]
pub(crate) struct LogFile {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    path: PathBuf,
    file: Option<tokio::fs::File>,
    size: u64,
    max: u64,
}

impl LogFile {
    /// Starts the file of instance `restart` in `dir`, deleting instances older than the
    /// previous one.
    pub(crate) async fn create(dir: &Path, restart: i32, max: u64) -> std::io::Result<Self> {
        tokio::fs::create_dir_all(dir).await?;
        if let Ok(mut entries) = tokio::fs::read_dir(dir).await {
            while let Ok(Some(e)) = entries.next_entry().await {
                let name = e.file_name().to_string_lossy().to_string();
                let n = name.split('.').next().and_then(|n| n.parse::<i32>().ok());
                if n.is_some_and(|n| n < restart - 1) {
                    let _ = tokio::fs::remove_file(e.path()).await;
                }
            }
        }
        let path = instance_file(dir, restart);
        let file = tokio::fs::File::create(&path).await?;
        Ok(Self {
            inner: Arc::new(Mutex::new(Inner {
                path,
                file: Some(file),
                size: 0,
                max,
            })),
        })
    }

    /// Appends one line of `stream`.
    pub(crate) async fn line(&self, stream: &str, text: &[u8]) {
        let mut inner = self.inner.lock().await;
        let now = jiff::Timestamp::now();
        let mut buf = format!("{now:.9} {stream} F ").into_bytes();
        buf.extend_from_slice(text);
        buf.push(b'\n');
        if inner.size + buf.len() as u64 > inner.max && inner.size > 0 {
            let rotated = inner.path.with_extension("log.1");
            drop(inner.file.take());
            let _ = tokio::fs::rename(&inner.path, &rotated).await;
            inner.file = tokio::fs::File::create(&inner.path).await.ok();
            inner.size = 0;
        }
        if let Some(f) = inner.file.as_mut()
            && f.write_all(&buf).await.is_ok()
            && f.flush().await.is_ok()
        {
            inner.size += buf.len() as u64;
        }
    }

    /// Copies `reader` into the file line by line, as `stream`, until it closes.
    pub(crate) async fn pump(self, stream: &'static str, reader: impl AsyncRead + Unpin) {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if buf.last() == Some(&b'\n') {
                        buf.pop();
                    }
                    self.line(stream, &buf).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_rotate_over_the_cap_and_old_instances_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = container_dir(dir.path(), "ns", "p", "u", "c");
        let first = LogFile::create(&c, 0, 1000).await.expect("log");
        first.line("stdout", b"hello").await;
        let text = std::fs::read_to_string(instance_file(&c, 0)).expect("read");
        let (ts, rest) = text.split_once(' ').expect("line");
        assert!(ts.parse::<jiff::Timestamp>().is_ok(), "{ts}");
        assert_eq!(rest, "stdout F hello\n");
        let second = LogFile::create(&c, 1, 100).await.expect("log");
        for _ in 0..5 {
            second.line("stderr", &[b'x'; 40]).await;
        }
        assert!(c.join("1.log.1").exists());
        assert!(std::fs::metadata(c.join("1.log")).expect("log").len() <= 100);
        LogFile::create(&c, 2, 100).await.expect("log");
        assert!(!c.join("0.log").exists(), "instance 0 is deleted");
        assert!(c.join("1.log").exists(), "the previous instance is kept");
    }
}
