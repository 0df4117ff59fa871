//! What the tests that start `anes serve` share: a child stopped by PID on every exit path, a
//! temporary folder removed on every exit path, and a loopback HTTP client.
// Each test binary uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Kills the child by PID when dropped, also when the test panics.
pub struct Guard(pub Child);

impl Guard {
    /// Asks the child to stop (SIGTERM) and waits up to `limit` for it: `anes serve` then stops its
    /// workers and removes their folders. Its exit status, or `None` when it had to be killed.
    pub fn terminate(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let _ = std::process::Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let start = std::time::Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.0.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Removes the folder (and everything in it) when dropped, also when the test panics.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `anes-{name}-{pid}-{n}` in the temporary folder, not created, a new `n` each call (tests run
    /// in parallel, and one that used another's folder would see it go); what an earlier process
    /// with this PID left there is removed.
    pub fn named(name: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("anes-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }

    /// [`TempDir::named`], created.
    pub fn create(name: &str) -> TempDir {
        let dir = TempDir::named(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

/// A file in a [`TempDir`] of its own, removed with it when dropped.
pub struct TempFile {
    pub path: PathBuf,
    _dir: TempDir,
}

impl TempFile {
    /// `bytes` in `file` of a new [`TempDir::named`] `name`.
    pub fn write(name: &str, file: &str, bytes: &[u8]) -> TempFile {
        let dir = TempDir::create(name);
        let path = dir.join(file);
        std::fs::write(&path, bytes).unwrap();
        TempFile { path, _dir: dir }
    }
}

impl std::ops::Deref for TempFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

/// A client for 127.0.0.1: no proxy, 5 s per request, and an HTTP error status is an answer to
/// look at rather than an error. It reuses a connection idle for at most 5 s: the server closes one
/// idle for its `header_timeout_seconds` (10 s), and a request sent on it as the server closes it
/// fails (a test that slept 10 s between two requests did, now and then).
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(5)))
        .max_idle_age(Duration::from_secs(5))
        .build()
        .into()
}

/// GET `url` as JSON; `None` unless it answers 200 with JSON.
pub fn get_json(agent: &ureq::Agent, url: &str) -> Option<serde_json::Value> {
    let mut r = agent.get(url).call().ok()?;
    if r.status() != 200 {
        return None;
    }
    serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()
}

pub mod coordinator;
pub mod fault_proxy;
pub mod netns;
pub mod remote;
