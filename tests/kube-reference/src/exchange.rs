//! One HTTP exchange with a server: a [`Call`] (method, path, content type, body) sent with the
//! admin's client, and its [`Answer`] (status, JSON body, `Warning` headers); and watches
//! ([`watch_events`]) that collect the events a sequence of calls causes.

use std::time::Duration;

use http_body_util::BodyExt as _;
use serde_json::Value;

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The content type of JSON bodies.
pub const JSON: &str = "application/json";
/// JSON merge patch.
pub const MERGE: &str = "application/merge-patch+json";
/// Strategic merge patch.
pub const STRATEGIC: &str = "application/strategic-merge-patch+json";
/// JSON patch.
pub const JSON_PATCH: &str = "application/json-patch+json";
/// Server-side apply.
pub const APPLY: &str = "application/apply-patch+yaml";
/// A Table answer.
pub const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// One request, the same for both servers.
#[derive(Debug, Clone)]
pub struct Call {
    /// The HTTP method.
    pub method: http::Method,
    /// The path and query.
    pub path: String,
    /// The body's content type.
    pub content_type: &'static str,
    /// The `Accept` header, when not JSON.
    pub accept: Option<&'static str>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
}

impl Call {
    /// A call without a body.
    pub fn new(method: http::Method, path: impl Into<String>) -> Self {
        Self {
            method,
            path: path.into(),
            content_type: JSON,
            accept: None,
            body: None,
        }
    }

    /// With a JSON body.
    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some(body.to_string().into_bytes());
        self
    }

    /// With a raw body of `content_type`.
    pub fn raw(mut self, content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        self.content_type = content_type;
        self.body = Some(body.into());
        self
    }

    /// With an `Accept` header.
    pub fn accept(mut self, accept: &'static str) -> Self {
        self.accept = Some(accept);
        self
    }

    /// `METHOD PATH` for reports.
    pub fn line(&self) -> String {
        if self.body.is_some() && self.content_type != JSON {
            format!("{} {} ({})", self.method, self.path, self.content_type)
        } else {
            format!("{} {}", self.method, self.path)
        }
    }

    fn request(&self) -> Result<http::Request<kube::client::Body>, http::Error> {
        let mut builder = http::Request::builder()
            .method(self.method.clone())
            .uri(&self.path)
            .header(http::header::ACCEPT, self.accept.unwrap_or(JSON));
        if self.body.is_some() {
            builder = builder.header(http::header::CONTENT_TYPE, self.content_type);
        }
        builder.body(kube::client::Body::from(
            self.body.clone().unwrap_or_default(),
        ))
    }
}

/// A server's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The HTTP status (0 when there was no answer).
    pub status: u16,
    /// The body: JSON as parsed, anything else as `{"text": ...}`.
    pub body: Value,
    /// The `Warning` headers.
    pub warnings: Vec<String>,
}

fn text_body(bytes: &[u8]) -> Value {
    serde_json::json!({ "text": String::from_utf8_lossy(bytes) })
}

/// Sends `call` with `client` and reads the whole answer.
pub async fn send(client: &kube::Client, call: &Call) -> Answer {
    let request = match call.request() {
        Ok(r) => r,
        Err(e) => return failed(format!("building the request: {e}")),
    };
    let exchange = async {
        let response = client.send(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let warnings = response
            .headers()
            .get_all("warning")
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| text_body(&bytes));
        Ok::<_, String>(Answer {
            status,
            body,
            warnings,
        })
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => failed(e),
        Err(_) => failed(format!("no answer in {REQUEST_TIMEOUT:?}")),
    }
}

fn failed(why: String) -> Answer {
    Answer {
        status: 0,
        body: serde_json::json!({ "error": why }),
        warnings: Vec::new(),
    }
}

/// Opens a watch on `collection` (a list path without query) from its current
/// resourceVersion, makes `calls` one after the other, and returns the events seen (each
/// `{"type", "object"}`) until `expected` arrived or 10 s passed.
pub async fn watch_events(
    client: &kube::Client,
    collection: &str,
    calls: &[Call],
    expected: usize,
) -> Result<Vec<Value>, String> {
    let list = send(client, &Call::new(http::Method::GET, collection)).await;
    let rv = list.body["metadata"]["resourceVersion"]
        .as_str()
        .ok_or_else(|| format!("LIST {collection}: {} {}", list.status, list.body))?
        .to_owned();
    let sep = if collection.contains('?') { '&' } else { '?' };
    let watch = Call::new(
        http::Method::GET,
        format!("{collection}{sep}watch=true&resourceVersion={rv}"),
    );
    let request = watch.request().map_err(|e| e.to_string())?;
    let response = client.send(request).await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("WATCH {collection}: {}", response.status()));
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        let mut body = response.into_body();
        let mut buf = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            buf.extend_from_slice(&data);
            while let Some(end) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=end).collect();
                if let Ok(event) = serde_json::from_slice::<Value>(&line)
                    && tx.send(event).is_err()
                {
                    return;
                }
            }
        }
    });
    for call in calls {
        let answer = send(client, call).await;
        if !(200..300).contains(&answer.status) {
            reader.abort();
            return Err(format!(
                "{} during the watch: {} {}",
                call.line(),
                answer.status,
                answer.body
            ));
        }
    }
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while events.len() < expected {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(event)) => events.push(event),
            _ => break,
        }
    }
    reader.abort();
    Ok(events)
}
