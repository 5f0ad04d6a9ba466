//! [`Process`]: a program the test started, with its output, killed with its process group
//! however the test ends.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::kill_group;

/// A program running for the length of a test: its output is collected line by line, and it
/// is killed with its process group when dropped, however the test ends.
pub struct Process {
    name: String,
    child: Child,
    output: Arc<(Mutex<String>, Condvar)>,
}

impl Process {
    /// Starts `command` as `name`, in a process group of its own.
    pub fn spawn(name: &str, mut command: Command) -> Self {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({command:?}): {e}"));
        let output: Arc<(Mutex<String>, Condvar)> = Arc::default();
        let streams: [Option<Box<dyn Read + Send>>; 2] = [
            child.stdout.take().map(|s| Box::new(s) as _),
            child.stderr.take().map(|s| Box::new(s) as _),
        ];
        for stream in streams.into_iter().flatten() {
            let output = Arc::clone(&output);
            thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    let (text, changed) = &*output;
                    let mut text = text.lock().expect("output lock");
                    text.push_str(&line);
                    text.push('\n');
                    changed.notify_all();
                }
            });
        }
        Self {
            name: name.to_owned(),
            child,
            output,
        }
    }

    /// Everything the program printed so far.
    pub fn output(&self) -> String {
        self.output.0.lock().expect("output lock").clone()
    }

    /// Waits until the program prints a line for which `matches` holds, and returns it; fails
    /// when the program exits first or after `timeout`.
    pub fn wait_for_line(
        &mut self,
        what: &str,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let found = {
                let (text, changed) = &*self.output;
                let text = text.lock().expect("output lock");
                let found = text.lines().find(|l| matches(l)).map(str::to_owned);
                if found.is_none() {
                    let _ = changed.wait_timeout(text, Duration::from_millis(100));
                }
                found
            };
            if let Some(line) = found {
                return line;
            }
            if let Some(status) = self.child.try_wait().expect("wait for a child") {
                // Let the readers catch the last lines.
                thread::sleep(Duration::from_millis(100));
                panic!(
                    "{} exited ({status}) before {what}; its output:\n{}",
                    self.name,
                    self.output()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{} did not print {what} within {timeout:?}; its output:\n{}",
                self.name,
                self.output()
            );
        }
    }

    /// Panics with the program's output if it has exited.
    pub fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().expect("wait for a child") {
            panic!(
                "{} exited ({status}); its output:\n{}",
                self.name,
                self.output()
            );
        }
    }

    /// Stops the program at once, like a crash (SIGKILL), and waits for it.
    pub fn kill(mut self) {
        self.stop(rustix::process::Signal::KILL);
    }

    /// Asks the program to stop (SIGTERM) and waits up to 10 s before killing it.
    pub fn terminate(mut self) {
        self.stop(rustix::process::Signal::TERM);
    }

    fn stop(&mut self, signal: rustix::process::Signal) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        kill_group(&self.child, signal);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                // Helpers the program started in its group (Chromium's) go too.
                kill_group(&self.child, rustix::process::Signal::KILL);
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        kill_group(&self.child, rustix::process::Signal::KILL);
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop(rustix::process::Signal::KILL);
    }
}
