//! Headless Chromium driven through the Chrome DevTools protocol (CDP) over a WebSocket, with
//! no Node and no WebDriver: [`Chromium::launch`] starts the browser with a fresh profile,
//! [`Chromium::open`] attaches to a new tab, and a [`Page`] evaluates JavaScript, types,
//! clicks and takes screenshots the way a user's input would reach the page.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use super::{Process, eventually_value};

/// How long one CDP command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The Chromium to run: `$CHROMIUM`, else `chromium` on PATH, else the Debian package's
/// `/usr/bin/chromium`; fails, saying how to install it, when there is none.
pub fn executable() -> PathBuf {
    let on_path = || {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    };
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .or_else(on_path)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.is_file(),
        "the frontend test needs headless Chromium, and {} is not there: install the Debian \
         package with `apt-get install -y chromium` (CI's .ci/run installs it), or set CHROMIUM \
         to a Chromium binary",
        path.display()
    );
    path
}

/// A headless Chromium and the browser-level DevTools connection.
pub struct Chromium {
    socket: WebSocket<TcpStream>,
    next_id: u64,
    /// Before the profile, so the browser stops before its profile is deleted.
    process: Process,
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Starts headless Chromium with a fresh profile and connects to its DevTools endpoint,
    /// whose port it picks itself and writes to `DevToolsActivePort` in the profile.
    pub fn launch() -> Self {
        let exe = executable();
        let profile = tempfile::tempdir().expect("tempdir");
        let mut command = Command::new(&exe);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank");
        let mut process = Process::spawn("chromium", command);
        let active_port = profile.path().join("DevToolsActivePort");
        let (port, path) = eventually_value(
            "Chromium's DevToolsActivePort file",
            Duration::from_secs(60),
            || {
                process.assert_running();
                let text = std::fs::read_to_string(&active_port).map_err(|e| e.to_string())?;
                let mut lines = text.lines();
                match (lines.next(), lines.next()) {
                    (Some(port), Some(path)) if !port.is_empty() && !path.is_empty() => {
                        Ok((port.to_owned(), path.to_owned()))
                    }
                    _ => Err(format!("incomplete: {text:?}")),
                }
            },
        );
        let stream = TcpStream::connect(format!("127.0.0.1:{port}"))
            .unwrap_or_else(|e| panic!("connect to Chromium's DevTools port {port}: {e}"));
        stream
            .set_read_timeout(Some(COMMAND_TIMEOUT))
            .expect("set a read timeout");
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (socket, _) = tungstenite::client(url.as_str(), stream)
            .unwrap_or_else(|e| panic!("WebSocket handshake with {url}: {e}"));
        println!(
            "chromium: {} (DevTools on port {port})",
            Self::version(&exe)
        );
        Self {
            socket,
            next_id: 0,
            process,
            _profile: profile,
        }
    }

    fn version(exe: &Path) -> String {
        Command::new(exe)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    }

    /// Sends `method` with `params` (to the tab of `session`, or to the browser) and returns
    /// its result; panics on a protocol error.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .unwrap_or_else(|e| panic!("send {method} to Chromium: {e}"));
        loop {
            let reply = match self.socket.read() {
                Ok(Message::Text(text)) => text,
                Ok(_) => continue,
                Err(e) => panic!(
                    "no answer from Chromium to {method} ({e}); its output:\n{}",
                    self.process.output()
                ),
            };
            let reply: Value = serde_json::from_str(reply.as_str()).expect("CDP speaks JSON");
            // Events (no id) and answers to earlier commands are not ours.
            if reply["id"] != json!(id) {
                continue;
            }
            if let Some(error) = reply.get("error") {
                panic!("Chromium: {method} failed: {error}");
            }
            return reply["result"].clone();
        }
    }

    /// Opens a new tab on `url` and attaches to it.
    pub fn open(&mut self, url: &str) -> Page<'_> {
        let target = self.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].clone();
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        let session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        let mut page = Page {
            browser: self,
            session,
        };
        page.call("Page.enable", json!({}));
        page.call("Runtime.enable", json!({}));
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
        );
        page.call("Page.navigate", json!({ "url": url }));
        // Page.navigate returns before the document loads: wait for it, or the first `eval`
        // reads about:blank (an empty title).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let state =
                page.eval("location.href !== 'about:blank' && document.readyState === 'complete'");
            if state == json!(true) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{url} did not load in 30 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        page
    }

    /// Closes the browser (the process group is killed on drop if it lingers).
    pub fn close(mut self) {
        self.next_id += 1;
        let message = json!({ "id": self.next_id, "method": "Browser.close" });
        let _ = self.socket.send(Message::text(message.to_string()));
        self.process.terminate();
    }
}

/// One tab, attached with a flat session.
pub struct Page<'a> {
    browser: &'a mut Chromium,
    session: String,
}

impl Page<'_> {
    fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.browser.call(Some(&session), method, params)
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its value as JSON;
    /// panics when it throws.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("the page threw evaluating {expression:?}: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// Focuses the element `selector` and types `text` into it, as a keyboard would.
    pub fn type_into(&mut self, selector: &str, text: &str) {
        let focus = format!(
            "(() => {{ const e = document.querySelector({s}); e.focus(); \
             return document.activeElement === e; }})()",
            s = json!(selector)
        );
        assert_eq!(self.eval(&focus), json!(true), "cannot focus {selector}");
        self.call("Input.insertText", json!({ "text": text }));
    }

    /// Focuses the element `selector`.
    pub fn focus(&mut self, selector: &str) {
        let focus = format!(
            "(() => {{ const e = document.querySelector({s}); e.focus(); \
             return document.activeElement === e; }})()",
            s = json!(selector)
        );
        assert_eq!(self.eval(&focus), json!(true), "cannot focus {selector}");
    }

    /// Types `text` into the focused element one key at a time, as a keyboard would: each
    /// character is a key down and a key up, so `keydown`, `input` and `keyup` handlers run
    /// (`type_into` inserts text with an `input` event only).
    pub fn press_keys(&mut self, text: &str) {
        for c in text.chars() {
            let key = c.to_string();
            self.call(
                "Input.dispatchKeyEvent",
                json!({ "type": "keyDown", "key": key, "text": key, "unmodifiedText": key }),
            );
            self.call(
                "Input.dispatchKeyEvent",
                json!({ "type": "keyUp", "key": key }),
            );
        }
    }

    /// Clicks the middle of the element `selector` with the mouse.
    pub fn click(&mut self, selector: &str) {
        let rect = format!(
            "(() => {{ const e = document.querySelector({s}); \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            s = json!(selector)
        );
        let at = self.eval(&rect);
        let (x, y) = (at[0].clone(), at[1].clone());
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }

    /// Saves a PNG screenshot of the page at `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": true }),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("screenshot data"))
            .expect("the screenshot is base64");
        assert!(png.starts_with(b"\x89PNG"), "Chromium returned a PNG");
        std::fs::create_dir_all(path.parent().expect("a file has a parent"))
            .expect("create the artefact directory");
        std::fs::write(path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}
