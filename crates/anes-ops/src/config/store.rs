//! `[pipeline.store]`: where a pipeline's checkpoints are kept, and the retries of store requests.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::store::S3Location;
use crate::store::writer::RetryPolicy;

/// `[pipeline.store]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// `filesystem` (default), `redis`, `postgres` or `s3`.
    pub backend: Option<String>,
    /// Filesystem: the directory (default `<data_dir>/<id>/checkpoints`).
    pub dir: Option<PathBuf>,
    /// Redis and PostgreSQL: the URL (`redis://127.0.0.1:6379/0`, `postgres://anes@127.0.0.1:5432/anes`).
    pub url: Option<String>,
    /// S3: the endpoint of an S3-compatible server (`http://127.0.0.1:9000`); default AWS's.
    pub endpoint: Option<String>,
    /// S3: the bucket.
    pub bucket: Option<String>,
    /// S3: the key prefix under which each pipeline has `<id>/`.
    pub prefix: Option<String>,
    /// S3: the region (`us-east-1`).
    pub region: Option<String>,
    /// S3: an AWS shared credentials file (its `[default]` profile) instead of the `AWS_*` variables.
    pub credentials_file: Option<PathBuf>,
    /// S3: a Redis URL where the newest checkpoint is also kept (`pipeline:<id>:state`).
    pub hot: Option<String>,
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
    /// A PostgreSQL database (its URL).
    Postgres(String),
    /// An S3 bucket.
    S3 {
        /// Where the checkpoints are.
        location: S3Location,
        /// The credentials file; `None`: the `AWS_*` environment variables.
        credentials_file: Option<PathBuf>,
    },
}

impl StoreBackend {
    /// `filesystem`, `redis`, `postgres` or `s3` (the metric label).
    pub fn name(&self) -> &'static str {
        match self {
            StoreBackend::Filesystem(_) => "filesystem",
            StoreBackend::Redis(_) => "redis",
            StoreBackend::Postgres(_) => "postgres",
            StoreBackend::S3 { .. } => "s3",
        }
    }
}

/// A pipeline's store, validated.
#[derive(Debug, Clone)]
pub struct StoreSpec {
    /// Where checkpoints go: a folder, a Redis server, a PostgreSQL database or an S3 bucket.
    pub backend: StoreBackend,
    /// How many verified checkpoints the store keeps; older ones are deleted after a write.
    pub kept: usize,
    /// Retries of store requests.
    pub retry: RetryPolicy,
}

type Refusal = (&'static str, String);

/// Refuses the keys of `store` that `backend` has no use for.
fn only(store: &StoreSection, backend: &str, allowed: &[&str]) -> Result<(), Refusal> {
    let keys: [(&'static str, bool); 8] = [
        ("store.dir", store.dir.is_some()),
        ("store.url", store.url.is_some()),
        ("store.endpoint", store.endpoint.is_some()),
        ("store.bucket", store.bucket.is_some()),
        ("store.prefix", store.prefix.is_some()),
        ("store.region", store.region.is_some()),
        ("store.credentials_file", store.credentials_file.is_some()),
        ("store.hot", store.hot.is_some()),
    ];
    match keys.iter().find(|(key, set)| *set && !allowed.contains(&&key["store.".len()..])) {
        Some((key, _)) => Err((*key, format!("the {backend} backend has no {}", &key["store.".len()..]))),
        None => Ok(()),
    }
}

fn redis_url(key: &'static str, url: &str) -> Result<(), Refusal> {
    match redis::Client::open(url) {
        Ok(_) => Ok(()),
        Err(_) => Err((key, format!("{url:?} is not a redis URL such as redis://127.0.0.1:6379/0"))),
    }
}

/// S3's bucket naming rules: 3-63 lowercase letters, digits, '-' and '.', a letter or digit at each end.
fn valid_bucket(name: &str) -> bool {
    let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (3..=63).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && edge(name.as_bytes().first())
        && edge(name.as_bytes().last())
        && !name.contains("..")
}

fn parse_s3(store: &StoreSection) -> Result<StoreBackend, Refusal> {
    only(store, "s3", &["endpoint", "bucket", "prefix", "region", "credentials_file", "hot"])?;
    let bucket = store
        .bucket
        .clone()
        .ok_or(("store.bucket", "missing: the s3 backend needs bucket = \"NAME\"".to_string()))?;
    if !valid_bucket(&bucket) {
        return Err(("store.bucket", format!("{bucket:?}: use 3-63 lowercase letters, digits, '-' and '.'")));
    }
    let region = store.region.clone().ok_or((
        "store.region",
        "missing: the s3 backend needs region = \"us-east-1\" (any name for a server that ignores it)"
            .to_string(),
    ))?;
    if region.is_empty() || !region.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(("store.region", format!("{region:?} is not a region name such as us-east-1")));
    }
    if let Some(endpoint) = &store.endpoint {
        let rest = endpoint.strip_prefix("http://").or_else(|| endpoint.strip_prefix("https://"));
        if rest.is_none_or(|r| r.is_empty() || r.contains(char::is_whitespace)) {
            return Err(("store.endpoint", format!("{endpoint:?}: use http(s)://HOST:PORT")));
        }
    }
    let prefix = store.prefix.clone().unwrap_or_default();
    let segments_ok = prefix.split('/').all(|s| !s.is_empty() && s != "." && s != "..");
    let chars_ok = prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b));
    if !(prefix.is_empty() || segments_ok && chars_ok) {
        return Err((
            "store.prefix",
            format!(
                "{prefix:?}: use segments of letters, digits, '-', '_', '.' joined by '/' (no leading, trailing or double '/')"
            ),
        ));
    }
    if let Some(hot) = &store.hot {
        redis_url("store.hot", hot)?;
    }
    let location =
        S3Location { endpoint: store.endpoint.clone(), bucket, prefix, region, hot: store.hot.clone() };
    Ok(StoreBackend::S3 { location, credentials_file: store.credentials_file.clone() })
}

pub(super) fn parse_store(store: &StoreSection) -> Result<StoreSpec, Refusal> {
    let backend = match store.backend.as_deref().unwrap_or("filesystem") {
        "filesystem" => {
            only(store, "filesystem", &["dir"])?;
            StoreBackend::Filesystem(store.dir.clone())
        }
        "redis" => {
            only(store, "redis", &["url"])?;
            let url = store.url.clone().ok_or((
                "store.url",
                "missing: the redis backend needs url = \"redis://HOST:PORT/DB\"".to_string(),
            ))?;
            redis_url("store.url", &url)?;
            StoreBackend::Redis(url)
        }
        "postgres" => {
            only(store, "postgres", &["url"])?;
            let url = store.url.clone().ok_or((
                "store.url",
                "missing: the postgres backend needs url = \"postgres://USER@HOST:PORT/DB\"".to_string(),
            ))?;
            let scheme_ok = url.starts_with("postgres://") || url.starts_with("postgresql://");
            if !scheme_ok || url.parse::<tokio_postgres::Config>().is_err() {
                return Err((
                    "store.url",
                    "not a postgres URL such as postgres://anes@127.0.0.1:5432/anes (the URL is not repeated: it may hold a password)".to_string(),
                ));
            }
            StoreBackend::Postgres(url)
        }
        "s3" => parse_s3(store)?,
        other => {
            return Err((
                "store.backend",
                format!("{other:?}: use \"filesystem\", \"redis\", \"postgres\" or \"s3\""),
            ));
        }
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
