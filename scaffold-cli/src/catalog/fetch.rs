//! Reading a catalog's index and artefacts from a directory or over HTTP(S).
//!
//! Start with [`Location::parse`]: a path (a directory holding `index.json`, or the index file
//! itself) or an `http://`/`https://` URL (of `index.json`, or of the directory holding it).
//! [`Location::index`] reads the index; [`Location::artifact`] reads an artefact named
//! relative to the index. HTTP is a small blocking HTTP/1.0 client on `std::net` that follows up
//! to five redirects; HTTPS goes through rustls and verifies the server against the system's
//! root certificates. Everything read is held in memory (at most [`MAX_DOWNLOAD`] bytes), so a
//! caller can check it before writing anything.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The largest index or artefact read: 256 MiB.
pub const MAX_DOWNLOAD: u64 = 256 * 1024 * 1024;

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_REDIRECTS: usize = 5;

/// Why something could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// A local file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The index is not UTF-8.
    #[error("{origin}: the index is not UTF-8")]
    NotText {
        /// Where it came from.
        origin: String,
    },
    /// An HTTP(S) request failed.
    #[error("cannot fetch {url}: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
}

/// Where a catalog lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An index file on disk.
    File(PathBuf),
    /// An index URL.
    Url(String),
}

impl Location {
    /// A path or URL as the user gives it; a directory or a URL not ending in `.json` means its
    /// `index.json`.
    #[must_use]
    pub fn parse(s: &str) -> Self {
        if s.starts_with("http://") || s.starts_with("https://") {
            if Path::new(s).extension().is_some_and(|e| e == "json") {
                Self::Url(s.to_owned())
            } else {
                Self::Url(format!("{}/index.json", s.trim_end_matches('/')))
            }
        } else {
            let path = PathBuf::from(s);
            if path.is_dir() {
                Self::File(path.join("index.json"))
            } else {
                Self::File(path)
            }
        }
    }

    /// The index, as the path or URL it came from and its text.
    pub fn index(&self) -> Result<(String, String), FetchError> {
        let bytes = self.read(&self.to_string())?;
        let text = String::from_utf8(bytes).map_err(|_| FetchError::NotText {
            origin: self.to_string(),
        })?;
        Ok((self.to_string(), text))
    }

    /// An artefact's bytes; `reference` is relative to the index unless absolute.
    pub fn artifact(&self, reference: &str) -> Result<(String, Vec<u8>), FetchError> {
        let origin = self.resolve(reference);
        let bytes = self.read(&origin)?;
        Ok((origin, bytes))
    }

    /// Where `reference` points, relative to the index.
    #[must_use]
    pub fn resolve(&self, reference: &str) -> String {
        if reference.starts_with("http://") || reference.starts_with("https://") {
            return reference.to_owned();
        }
        match self {
            Self::File(index) => {
                let path = Path::new(reference);
                if path.is_absolute() {
                    reference.to_owned()
                } else {
                    index
                        .parent()
                        .unwrap_or(Path::new("."))
                        .join(path)
                        .display()
                        .to_string()
                }
            }
            Self::Url(url) => join_url(url, reference),
        }
    }

    fn read(&self, target: &str) -> Result<Vec<u8>, FetchError> {
        if target.starts_with("http://") || target.starts_with("https://") {
            return get(target);
        }
        let path = PathBuf::from(target);
        let read = |source| FetchError::Read {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(read)?;
        let mut bytes = Vec::new();
        file.take(MAX_DOWNLOAD + 1)
            .read_to_end(&mut bytes)
            .map_err(read)?;
        if bytes.len() as u64 > MAX_DOWNLOAD {
            return Err(read(std::io::Error::other(format!(
                "larger than {MAX_DOWNLOAD} bytes"
            ))));
        }
        Ok(bytes)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(p) => write!(f, "{}", p.display()),
            Self::Url(u) => f.write_str(u),
        }
    }
}

/// `reference` relative to `base` (an absolute URL): `/x` replaces the path, `x` replaces the
/// last segment.
fn join_url(base: &str, reference: &str) -> String {
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[after_scheme..]
        .find('/')
        .map_or(base.len(), |i| after_scheme + i);
    if reference.starts_with('/') {
        return format!("{}{reference}", &base[..path_start]);
    }
    let dir_end = base[path_start..]
        .rfind('/')
        .map_or(base.len(), |i| path_start + i);
    format!("{}/{reference}", &base[..dir_end])
}

/// A parsed `http(s)://host[:port]/path` URL.
struct Url<'a> {
    tls: bool,
    host: &'a str,
    port: u16,
    path: &'a str,
}

fn parse_url(url: &str) -> Result<Url<'_>, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err("not an http:// or https:// URL".to_owned());
    };
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| rest.split_at(i));
    if authority.contains('@') {
        return Err("credentials in the URL are not supported".to_owned());
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
            (h, p.parse().map_err(|_| format!("invalid port {p:?}"))?)
        }
        _ => (authority, if tls { 443 } else { 80 }),
    };
    if host.is_empty() {
        return Err("no host".to_owned());
    }
    Ok(Url {
        tls,
        host: host.trim_start_matches('[').trim_end_matches(']'),
        port,
        path,
    })
}

/// GETs `url`, following redirects.
fn get(url: &str) -> Result<Vec<u8>, FetchError> {
    let mut current = url.to_owned();
    for _ in 0..=MAX_REDIRECTS {
        let http = |message: String| FetchError::Http {
            url: current.clone(),
            message,
        };
        let (status, location, body) = get_once(&current).map_err(http)?;
        match status {
            200 => return Ok(body),
            301 | 302 | 303 | 307 | 308 => {
                let location =
                    location.ok_or_else(|| http(format!("HTTP {status} without Location")))?;
                current = if location.contains("://") {
                    location
                } else {
                    join_url(&current, &location)
                };
            }
            _ => return Err(http(format!("HTTP {status}"))),
        }
    }
    Err(FetchError::Http {
        url: url.to_owned(),
        message: format!("more than {MAX_REDIRECTS} redirects"),
    })
}

/// One request: the status, the `Location` header and the body.
fn get_once(url: &str) -> Result<(u16, Option<String>, Vec<u8>), String> {
    let u = parse_url(url)?;
    let addr = (u.host, u.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", u.host))?
        .next()
        .ok_or_else(|| format!("cannot resolve {}", u.host))?;
    let tcp = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(TIMEOUT))
        .and_then(|()| tcp.set_write_timeout(Some(TIMEOUT)))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {}\r\nUser-Agent: mni-scaffold/{}\r\nAccept: */*\r\nConnection: close\r\n\r\n",
        u.path,
        u.host,
        env!("CARGO_PKG_VERSION")
    );
    let mut raw = Vec::new();
    if u.tls {
        let mut stream = tls_stream(u.host, tcp)?;
        exchange(&mut stream, request.as_bytes(), &mut raw)?;
    } else {
        let mut stream = tcp;
        exchange(&mut stream, request.as_bytes(), &mut raw)?;
    }
    parse_response(&raw)
}

fn exchange(stream: &mut impl ReadWrite, request: &[u8], raw: &mut Vec<u8>) -> Result<(), String> {
    stream.write_all(request).map_err(|e| e.to_string())?;
    stream.flush().map_err(|e| e.to_string())?;
    let limit = MAX_DOWNLOAD + 64 * 1024;
    match stream.take(limit + 1).read_to_end(raw) {
        Ok(_) => {}
        // Servers that close without a TLS close_notify: the body is framed by the close.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
        Err(e) => return Err(e.to_string()),
    }
    if raw.len() as u64 > limit {
        return Err(format!("the response is larger than {MAX_DOWNLOAD} bytes"));
    }
    Ok(())
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn tls_stream(host: &str, tcp: TcpStream) -> Result<impl ReadWrite, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if roots.is_empty() {
        return Err("no system root certificates found to verify the server".to_owned());
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|e| format!("invalid server name {host:?}: {e}"))?;
    let conn = rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| e.to_string())?;
    Ok(rustls::StreamOwned::new(conn, tcp))
}

fn parse_response(raw: &[u8]) -> Result<(u16, Option<String>, Vec<u8>), String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the response has no header end")?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| "the headers are not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let mut location = None;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("location") {
            location = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value != "identity" {
            return Err(format!("unsupported Transfer-Encoding {value:?}"));
        }
    }
    let body = &raw[end + 4..];
    if let Some(length) = length
        && body.len() < length
    {
        return Err(format!(
            "the body ended after {} of {length} bytes",
            body.len()
        ));
    }
    let body = length.map_or(body, |l| &body[..l]);
    Ok((status, location, body.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_and_references() {
        assert_eq!(
            Location::parse("https://x.io/cat"),
            Location::Url("https://x.io/cat/index.json".to_owned())
        );
        let url = Location::parse("http://x.io:8080/cat/index.json");
        assert_eq!(url.resolve("a/b"), "http://x.io:8080/cat/a/b");
        assert_eq!(url.resolve("/a"), "http://x.io:8080/a");
        assert_eq!(url.resolve("https://y.io/z"), "https://y.io/z");
        let file = Location::parse("/nonexistent/cat/index.json");
        assert_eq!(file.resolve("a/b"), "/nonexistent/cat/a/b");
        let u = parse_url("http://127.0.0.1:9/i.json").unwrap();
        assert_eq!(
            (u.host, u.port, u.path, u.tls),
            ("127.0.0.1", 9, "/i.json", false)
        );
        assert_eq!(parse_url("https://h").unwrap().port, 443);
        assert!(parse_url("ftp://h").is_err());
    }

    #[test]
    fn parses_responses() {
        let (s, l, b) = parse_response(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi!").unwrap();
        assert_eq!((s, l, b.as_slice()), (200, None, &b"hi"[..]));
        let (s, l, _) = parse_response(b"HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n").unwrap();
        assert_eq!((s, l.as_deref()), (302, Some("/x")));
        assert!(parse_response(b"HTTP/1.0 200 OK\r\nContent-Length: 9\r\n\r\nhi").is_err());
    }
}
