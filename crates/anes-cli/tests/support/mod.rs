//! What the tests that start `anes serve` share: a child stopped by PID on every exit path, a
//! temporary folder removed on every exit path, and a loopback HTTP client.
// Each test binary uses its own subset.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;

/// Kills the child by PID when dropped, also when the test panics.
pub struct Guard(pub Child);

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

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A client for 127.0.0.1: no proxy, 5 s per request, and an HTTP error status is an answer to
/// look at rather than an error.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(5)))
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
