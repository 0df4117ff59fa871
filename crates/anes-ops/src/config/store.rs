//! `[pipeline.store]`: where a pipeline's checkpoints are kept, and the retries of store requests.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::store::writer::RetryPolicy;

/// `[pipeline.store]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// `filesystem` (default) or `redis`.
    pub backend: Option<String>,
    /// Filesystem: the directory (default `<data_dir>/<id>/checkpoints`).
    pub dir: Option<PathBuf>,
    /// Redis: the URL (`redis://127.0.0.1:6379/0`).
    pub url: Option<String>,
    /// Checkpoints kept (default 4).
    pub kept: Option<usize>,
    /// Delay ceiling of the first retry, seconds (default 2; doubling per retry).
    pub retry_base_seconds: Option<f64>,
    /// Largest delay ceiling, seconds (default 30).
    pub retry_cap_seconds: Option<f64>,
    /// Attempts of one request before it is given up (default 10).
    pub retry_attempts: Option<u32>,
}

/// Where a pipeline's checkpoints are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreBackend {
    /// Files in a directory (`None`: `<data_dir>/<id>/checkpoints`).
    Filesystem(Option<PathBuf>),
    /// A Redis server.
    Redis(String),
}

/// A pipeline's store, validated.
#[derive(Debug, Clone)]
pub struct StoreSpec {
    /// Where checkpoints go: a folder or a Redis server.
    pub backend: StoreBackend,
    /// How many verified checkpoints the store keeps; older ones are deleted after a write.
    pub kept: usize,
    /// Retries of store requests.
    pub retry: RetryPolicy,
}

pub(super) fn parse_store(store: &StoreSection) -> Result<StoreSpec, (&'static str, String)> {
    let backend = match store.backend.as_deref().unwrap_or("filesystem") {
        "filesystem" => {
            if store.url.is_some() {
                return Err(("store.url", "only the redis backend has a URL (backend = \"redis\")".into()));
            }
            StoreBackend::Filesystem(store.dir.clone())
        }
        "redis" => {
            if store.dir.is_some() {
                return Err(("store.dir", "only the filesystem backend has a directory".into()));
            }
            let url = store.url.clone().ok_or((
                "store.url",
                "missing: the redis backend needs url = \"redis://HOST:PORT/DB\"".to_string(),
            ))?;
            if redis::Client::open(url.as_str()).is_err() {
                return Err((
                    "store.url",
                    format!("{url:?} is not a redis URL such as redis://127.0.0.1:6379/0"),
                ));
            }
            StoreBackend::Redis(url)
        }
        other => return Err(("store.backend", format!("{other:?}: use \"filesystem\" or \"redis\""))),
    };
    let kept = store.kept.unwrap_or(4);
    if kept == 0 || kept > 256 {
        return Err(("store.kept", format!("{kept}: use 1 to 256")));
    }
    let mut retry = RetryPolicy::default();
    if let Some(s) = store.retry_base_seconds {
        if !(0.001..=60.0).contains(&s) {
            return Err(("store.retry_base_seconds", format!("{s}: use 0.001 to 60")));
        }
        retry.base = Duration::from_secs_f64(s);
    }
    if let Some(s) = store.retry_cap_seconds {
        if !(0.001..=3600.0).contains(&s) || Duration::from_secs_f64(s) < retry.base {
            return Err(("store.retry_cap_seconds", format!("{s}: use the base to 3600")));
        }
        retry.cap = Duration::from_secs_f64(s);
    }
    if let Some(n) = store.retry_attempts {
        if n == 0 || n > 1000 {
            return Err(("store.retry_attempts", format!("{n}: use 1 to 1000")));
        }
        retry.attempts = n;
    }
    Ok(StoreSpec { backend, kept, retry })
}
