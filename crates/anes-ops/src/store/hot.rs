//! The hot copy of the S3 store: the newest verified checkpoint of a pipeline kept in Redis at
//! `pipeline:<id>:state`, in the Redis store's blob format (header then snapshot), so a recovery reads
//! it from memory when it is the same checkpoint as the newest in S3 (the design's order). A cache, not
//! a store: its failures are logged and never fail a write, and a copy that does not match S3 is
//! ignored.

use std::time::Duration;

/// How long a connection attempt or one request may take: short, S3 is the fallback.
const TIMEOUT: Duration = Duration::from_secs(2);

/// A Redis server holding hot copies.
pub struct HotCopy {
    url: String,
    connection: Option<redis::Connection>,
}

impl std::fmt::Debug for HotCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotCopy")
            .field("url", &self.url)
            .field("connected", &self.connection.is_some())
            .finish()
    }
}

/// `pipeline:<id>:state`.
pub fn state_key(pipeline: &str) -> String {
    format!("pipeline:{pipeline}:state")
}

impl HotCopy {
    /// A hot copy at `url` (`redis://HOST:PORT/DB`), checked now, connected on first use.
    pub fn new(url: &str) -> Result<HotCopy, String> {
        redis::Client::open(url).map_err(|e| format!("redis URL {url:?}: {e}"))?;
        Ok(HotCopy { url: url.to_string(), connection: None })
    }

    fn run<T: redis::FromRedisValue>(&mut self, command: &redis::Cmd) -> Result<T, String> {
        if self.connection.is_none() {
            let connection = redis::Client::open(self.url.as_str())
                .and_then(|c| c.get_connection_with_timeout(TIMEOUT))
                .and_then(|c| {
                    c.set_read_timeout(Some(TIMEOUT))?;
                    c.set_write_timeout(Some(TIMEOUT))?;
                    Ok(c)
                })
                .map_err(|e| format!("{}: {e}", self.url))?;
            self.connection = Some(connection);
        }
        let result = command.query(self.connection.as_mut().expect("just connected"));
        result.map_err(|e| {
            self.connection = None;
            format!("{}: {e}", self.url)
        })
    }

    /// Stores `blob` as the pipeline's hot copy.
    pub fn set(&mut self, pipeline: &str, blob: &[u8]) -> Result<(), String> {
        self.run(redis::cmd("SET").arg(state_key(pipeline)).arg(blob))
    }

    /// The pipeline's hot copy, if any.
    pub fn get(&mut self, pipeline: &str) -> Result<Option<Vec<u8>>, String> {
        self.run(redis::cmd("GET").arg(state_key(pipeline)))
    }
}
