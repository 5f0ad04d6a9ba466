//! Shared test setup: `mni-dev up` as a child process.

#![allow(dead_code, unreachable_pub)]

pub mod dev;

/// Held by every test that runs real pods (`--runtime process` or `podman`): each `mni-dev`
/// hands out pod addresses from the same range (127.1.0.0/16), so two of them at once in this
/// one test binary would give two pods the same address and port (a podman test's server
/// answered a process test's request).
pub fn real_pods() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
