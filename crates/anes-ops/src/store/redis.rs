//! The Redis checkpoint store and shared journal (the `redis` crate against a real `redis-server`).
//! Keys of pipeline `<id>`:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `pipeline:<id>:epoch` | string (integer) | the store epoch, bumped with `INCR` |
//! | `pipeline:<id>:state` | string | the newest checkpoint (the design's live state): header then snapshot |
//! | `pipeline:<id>:checkpoints` | sorted set | member `<frame, 20 digits>-<epoch, 20 digits>`, score the frame |
//! | `pipeline:<id>:blobs` | hash | member → header then snapshot, for each kept checkpoint |
//! | `pipeline:<id>:journal` | sorted set | member: one committed batch ([`crate::journal::encode_batch`]), score its first sequence number |
//! | `pipeline:<id>:journal_end` | string (integer) | the journal's end, its acknowledged mark |
//!
//! A journal append is one script: the fencing rule, then the batch added and the end moved. Scores
//! are doubles, exact to 2^53: a sequence number beyond it is refused. What an acknowledgement is
//! worth after a crash of `redis-server` is its `appendfsync`'s business: `always` keeps every
//! acknowledged batch, `everysec` (the default with `appendonly yes`) may lose the last second.
//!
//! A write first checks the header against the pipeline's epoch (`GET`, [`fence::check`]), so a writer
//! already taken over is refused before its payload is read; then it is one Lua script, atomic on the
//! server: it compares the writer's epoch with the pipeline's again ([`fence::LUA_RULE`], the same
//! rule) and returns the refusal before anything is stored; only then does it store the checkpoint,
//! trim to the retention (the newest `kept` at or below it: those above are ones recovery skipped)
//! and update `:state`. Redis's own
//! persistence (`appendonly`, `appendfsync`) decides what survives a crash of `redis-server`; a blob that
//! does not verify on load is reported and skipped like a damaged file.

use std::io::Read;
use std::time::Duration;

use super::{
    CheckpointHeader, CheckpointStore, Damaged, Loaded, Persisted, StoreError, StoredCheckpoint, fence,
    newest_first,
};

const BACKEND: &str = "redis";

/// Longest blob loaded: the longest header and the largest payload.
const MAX_BLOB_LEN: u64 = 108 + 64 + 32 + super::MAX_PAYLOAD_LEN;

/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one request may take.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

fn put_script() -> String {
    format!(
        r#"-- KEYS: epoch, checkpoints (zset), blobs (hash), state. ARGV: writer epoch, member, frame, blob, kept
{}
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
-- Retention counts the checkpoints at or below this one (members sort as frame, then epoch): those
-- above it are the ones recovery skipped (damaged, or not of this ROM), evidence left as they are.
local kept = tonumber(ARGV[5])
local mine = {{}}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])) do
  if m <= ARGV[2] then table.insert(mine, m) end
end
local first = 1
if #mine > kept then
  first = #mine - kept + 1
  for i = 1, first - 1 do
    redis.call('HDEL', KEYS[3], mine[i])
    redis.call('ZREM', KEYS[2], mine[i])
  end
end
local newest = redis.call('ZRANGE', KEYS[2], -1, -1)[1]
redis.call('SET', KEYS[4], redis.call('HGET', KEYS[3], newest))
return {{'ok', redis.call('ZSCORE', KEYS[2], mine[first])}}
"#,
        fence::LUA_RULE
    )
}

/// The fenced bump of [`CheckpointStore::advance_epoch`]: the rule, then `INCR`, in one script.
fn advance_script() -> String {
    format!(
        r#"-- KEYS: epoch. ARGV: the epoch the writer holds
{}
return {{'ok', tostring(redis.call('INCR', KEYS[1]))}}
"#,
        fence::LUA_RULE
    )
}

/// The journal append: the fencing rule, then the batch and the end in one step.
fn append_script() -> String {
    format!(
        r#"-- KEYS: epoch, journal (zset), journal_end. ARGV: writer epoch, first_seq, end, batch
{}
local held = tonumber(redis.call('GET', KEYS[3]) or '0')
if held == nil then return {{'damaged_end', tostring(redis.call('GET', KEYS[3]))}} end
local first = tonumber(ARGV[2])
if first > held then return {{'gap', tostring(held)}} end
if first < held then redis.call('ZREMRANGEBYSCORE', KEYS[2], ARGV[2], '+inf') end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
redis.call('SET', KEYS[3], ARGV[3])
return {{'ok', ARGV[3]}}
"#,
        fence::LUA_RULE
    )
}

/// Lowering the journal's end (an operator accepting a loss): the rule, then the end and the batches.
fn lower_script() -> String {
    format!(
        r#"-- KEYS: epoch, journal (zset), journal_end. ARGV: writer epoch, end
{}
local old = redis.call('GET', KEYS[3]) or '0'
redis.call('ZREMRANGEBYSCORE', KEYS[2], ARGV[2], '+inf')
redis.call('SET', KEYS[3], ARGV[2])
return {{'ok', old}}
"#,
        fence::LUA_RULE
    )
}

/// Members of a sorted set with their scores.
type ScoredMembers = Vec<(Vec<u8>, f64)>;

/// Sequence numbers a sorted set's score holds exactly.
const MAX_EXACT_SCORE: u64 = 1 << 53;

/// What survives a restart of the `redis-server` behind a store, as its configuration says. Fencing
/// needs the epoch to survive: a server that restarts empty hands out epoch 1 again, and the pipeline
/// then stops as fenced by a store that lost its data (docs/OPERATIONS.md, "The store epoch").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisPersistence {
    /// `appendonly yes`: every write is logged (how soon it is on disk is `appendfsync`'s policy).
    AppendOnly {
        /// `always`, `everysec` or `no`.
        appendfsync: String,
    },
    /// RDB snapshots only (`save` rules, `appendonly no`): writes since the last snapshot, epoch bumps
    /// among them, are lost by a restart.
    SnapshotsOnly {
        /// The `save` rules, as `CONFIG GET save` gives them.
        save: String,
    },
    /// Neither: a restart empties the server.
    None,
    /// `CONFIG GET` was refused (managed services often rename or disable it).
    Unknown {
        /// The server's answer.
        reason: String,
    },
}

impl RedisPersistence {
    /// Reads the server's persistence settings.
    fn query(connection: &mut redis::Connection) -> RedisPersistence {
        let get = |connection: &mut redis::Connection, name: &str| -> Result<String, String> {
            let pairs: Vec<String> =
                redis::cmd("CONFIG").arg("GET").arg(name).query(connection).map_err(|e| e.to_string())?;
            pairs.get(1).cloned().ok_or_else(|| format!("CONFIG GET {name} answered nothing"))
        };
        let settings = get(connection, "appendonly")
            .and_then(|aof| Ok((aof, get(connection, "appendfsync")?, get(connection, "save")?)));
        match settings {
            Err(reason) => RedisPersistence::Unknown { reason },
            Ok((aof, appendfsync, _)) if aof == "yes" => RedisPersistence::AppendOnly { appendfsync },
            Ok((_, _, save)) if !save.trim().is_empty() => RedisPersistence::SnapshotsOnly { save },
            Ok(_) => RedisPersistence::None,
        }
    }

    /// Whether the store epoch is sure to survive a restart of the server.
    pub fn keeps_the_epoch(&self) -> bool {
        matches!(self, RedisPersistence::AppendOnly { .. })
    }
}

/// A pipeline's checkpoints in Redis.
pub struct RedisStore {
    url: String,
    pipeline: String,
    kept: usize,
    connection: Option<redis::Connection>,
    persistence: Option<RedisPersistence>,
    put: redis::Script,
    advance: redis::Script,
    append: redis::Script,
    lower: redis::Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url)
            .field("pipeline", &self.pipeline)
            .field("kept", &self.kept)
            .field("connected", &self.connection.is_some())
            .finish()
    }
}

impl RedisStore {
    /// A store for `pipeline` at `url` (`redis://127.0.0.1:6379/0`) keeping `kept` checkpoints. The
    /// URL is checked now; the connection is made on first use (and again after any failure).
    pub fn new(url: &str, pipeline: &str, kept: usize) -> Result<RedisStore, StoreError> {
        if !super::valid_pipeline_id(pipeline) {
            return Err(StoreError::Settings(format!("pipeline id {pipeline:?} is not valid")));
        }
        redis::Client::open(url).map_err(|e| StoreError::Settings(format!("redis URL {url:?}: {e}")))?;
        Ok(RedisStore {
            url: url.to_string(),
            pipeline: pipeline.to_string(),
            kept: kept.max(1),
            connection: None,
            persistence: None,
            put: redis::Script::new(&put_script()),
            advance: redis::Script::new(&advance_script()),
            append: redis::Script::new(&append_script()),
            lower: redis::Script::new(&lower_script()),
        })
    }

    /// The key of the live state, `pipeline:<id>:state`.
    pub fn state_key(&self) -> String {
        self.key("state")
    }

    /// `pipeline:<id>:<what>`.
    pub fn key(&self, what: &str) -> String {
        format!("pipeline:{}:{what}", self.pipeline)
    }

    fn unavailable(&mut self, e: redis::RedisError) -> StoreError {
        // Whatever failed, the connection may be half-used: the next call opens a new one.
        self.connection = None;
        StoreError::Unavailable { backend: BACKEND, reason: format!("{}: {e}", self.url) }
    }

    fn connection(&mut self) -> Result<&mut redis::Connection, StoreError> {
        if self.connection.is_none() {
            let client = redis::Client::open(self.url.as_str())
                .map_err(|e| StoreError::Settings(format!("redis URL {:?}: {e}", self.url)))?;
            let connection = client
                .get_connection_with_timeout(CONNECT_TIMEOUT)
                .and_then(|c| {
                    c.set_read_timeout(Some(IO_TIMEOUT))?;
                    c.set_write_timeout(Some(IO_TIMEOUT))?;
                    Ok(c)
                })
                .map_err(|e| StoreError::Unavailable {
                    backend: BACKEND,
                    reason: format!("{}: {e}", self.url),
                })?;
            let mut connection = connection;
            // Checked on every new connection: the server may have been restarted with other settings.
            let persistence = RedisPersistence::query(&mut connection);
            if !persistence.keeps_the_epoch() && self.persistence.as_ref() != Some(&persistence) {
                tracing::warn!(
                    pipeline = %self.pipeline,
                    url = %self.url,
                    persistence = %persistence,
                    "redis-server does not keep the store epoch across its restarts: fencing holds only while it runs; set appendonly yes"
                );
            }
            self.persistence = Some(persistence);
            self.connection = Some(connection);
        }
        Ok(self.connection.as_mut().expect("just connected"))
    }

    /// The server's persistence as read on the newest connection (`None` before the first).
    pub fn persistence(&self) -> Option<&RedisPersistence> {
        self.persistence.as_ref()
    }

    /// A script's answer: `{'ok', N}` gives N; `{'fenced' | 'ahead', current}` the fencing error for
    /// `writer` (the same rule, [`fence::check`], says which).
    fn verdict(&self, verdict: &str, value: &str, writer: u64) -> Result<u64, StoreError> {
        let number = |v: &str| v.parse::<f64>().map(|f| f as u64).unwrap_or(0);
        match verdict {
            "ok" => Ok(number(value)),
            "damaged" | "damaged_end" => Err(StoreError::Damaged(format!(
                "redis {}: {} holds {value:?}, not a number: the store's record of the pipeline is damaged; restore it (docs/OPERATIONS.md, the store epoch)",
                self.url,
                self.key(if verdict == "damaged_end" { "journal_end" } else { "epoch" })
            ))),
            "gap" => Err(super::journal_gap(&self.pipeline, writer, number(value))),
            "fenced" | "ahead" => {
                let current = number(value);
                Err(fence::check(&self.pipeline, writer, current).err().unwrap_or_else(|| {
                    StoreError::Unavailable {
                        backend: BACKEND,
                        reason: format!("the script refused epoch {writer} against {current}"),
                    }
                }))
            }
            other => Err(StoreError::Unavailable {
                backend: BACKEND,
                reason: format!("unexpected script answer {other:?}"),
            }),
        }
    }

    fn query<T: redis::FromRedisValue>(&mut self, command: &redis::Cmd) -> Result<T, StoreError> {
        let result = command.query(self.connection()?);
        result.map_err(|e| self.unavailable(e))
    }
}

impl std::fmt::Display for RedisPersistence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisPersistence::AppendOnly { appendfsync } => {
                write!(f, "appendonly yes, appendfsync {appendfsync}")
            }
            RedisPersistence::SnapshotsOnly { save } => write!(f, "RDB snapshots only (save \"{save}\")"),
            RedisPersistence::None => f.write_str("none (appendonly no, save \"\")"),
            RedisPersistence::Unknown { reason } => write!(f, "unknown (CONFIG GET refused: {reason})"),
        }
    }
}

impl CheckpointStore for RedisStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn bump_epoch(&mut self) -> Result<u64, StoreError> {
        let key = self.key("epoch");
        let result: redis::RedisResult<i64> = redis::cmd("INCR").arg(&key).query(self.connection()?);
        match result {
            Ok(epoch) => Ok(epoch.max(0) as u64),
            // The server refused the increment itself: not a number, or at its maximum.
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError) => {
                Err(StoreError::Damaged(format!(
                    "redis {}: {key} cannot be incremented ({e}): the store's record of the pipeline is damaged or at its maximum; restore it (docs/OPERATIONS.md, the store epoch)",
                    self.url
                )))
            }
            Err(e) => Err(self.unavailable(e)),
        }
    }

    fn advance_epoch(&mut self, held: u64) -> Result<u64, StoreError> {
        let script = self.advance.clone();
        let mut invocation = script.prepare_invoke();
        invocation.key(self.key("epoch")).arg(held);
        let result: Result<(String, String), _> = invocation.invoke(self.connection()?);
        let (verdict, value) = result.map_err(|e| self.unavailable(e))?;
        self.verdict(&verdict, &value, held)
    }

    fn current_epoch(&mut self) -> Result<u64, StoreError> {
        let key = self.key("epoch");
        let value: Option<String> = self.query(redis::cmd("GET").arg(&key))?;
        match value {
            None => Ok(0),
            Some(text) => text.parse().map_err(|_| {
                StoreError::Damaged(format!(
                    "redis {}: {key} holds {text:?}, not a number: the store's record of the pipeline is damaged; restore it (docs/OPERATIONS.md, the store epoch)",
                    self.url
                ))
            }),
        }
    }

    fn put(&mut self, header: &CheckpointHeader, payload: &mut dyn Read) -> Result<Persisted, StoreError> {
        super::check_put_header(&self.pipeline, header)?;
        // The fencing check on the header alone, before the payload is read: a writer already taken
        // over reads nothing. The script checks again, atomically with the store: a takeover that
        // lands while the payload is read is refused there.
        let current = self.current_epoch()?;
        fence::check(&self.pipeline, header.epoch, current)?;
        let blob = super::read_blob(header, payload)?;
        let member = super::fs::checkpoint_file_name(header.frame, header.epoch);
        let member = member.trim_start_matches("ckpt-").trim_end_matches(".anck").to_string();
        let keys = [self.key("epoch"), self.key("checkpoints"), self.key("blobs"), self.key("state")];
        let script = self.put.clone();
        let mut invocation = script.prepare_invoke();
        for k in &keys {
            invocation.key(k);
        }
        invocation.arg(header.epoch).arg(&member).arg(header.frame).arg(blob).arg(self.kept);
        let result: Result<(String, String), _> = invocation.invoke(self.connection()?);
        let (verdict, value) = result.map_err(|e| self.unavailable(e))?;
        let oldest_kept_frame = self.verdict(&verdict, &value, header.epoch)?;
        Ok(Persisted { frame: header.frame, epoch: header.epoch, oldest_kept_frame })
    }

    fn load(&mut self) -> Result<Loaded, StoreError> {
        let members: Vec<String> =
            self.query(redis::cmd("ZREVRANGE").arg(self.key("checkpoints")).arg(0).arg(-1))?;
        let mut loaded = Loaded::default();
        for member in members {
            // The length first: a blob no writer of ours could have stored is not fetched.
            let len: u64 = self.query(redis::cmd("HSTRLEN").arg(self.key("blobs")).arg(&member))?;
            let blob: Option<Vec<u8>> = if len > MAX_BLOB_LEN {
                None
            } else {
                self.query(redis::cmd("HGET").arg(self.key("blobs")).arg(&member))?
            };
            let checked = match blob {
                None if len > MAX_BLOB_LEN => {
                    Err(format!("{len} bytes, more than the {MAX_BLOB_LEN}-byte limit"))
                }
                None => Err("listed in the index but its blob is missing".to_string()),
                Some(blob) => match CheckpointHeader::decode_blob(&blob) {
                    Ok((header, _)) if header.pipeline_id != self.pipeline => {
                        Err(format!("holds pipeline {:?}'s checkpoint", header.pipeline_id))
                    }
                    Ok((header, payload)) => {
                        Ok(StoredCheckpoint { payload: payload.to_vec(), header, name: member.clone() })
                    }
                    Err(e) => Err(e.to_string()),
                },
            };
            match checked {
                Ok(c) => loaded.verified.push(c),
                Err(reason) => {
                    tracing::error!(pipeline = %self.pipeline, member = %member, %reason, "damaged checkpoint in redis skipped");
                    loaded.damaged.push(Damaged { name: member, reason });
                }
            }
        }
        newest_first(&mut loaded.verified);
        Ok(loaded)
    }

    fn reconnect(&mut self) -> Result<(), StoreError> {
        self.connection = None;
        self.connection().map(|_| ())
    }
}

impl super::JournalStore for RedisStore {
    fn describe(&self) -> String {
        format!("redis {} {}", self.url, self.key("journal"))
    }

    fn append_batch(
        &mut self,
        epoch: u64,
        first_seq: u64,
        end: u64,
        payload: &[u8],
    ) -> Result<(), StoreError> {
        if end > MAX_EXACT_SCORE {
            return Err(StoreError::Invalid(format!(
                "sequence number {end} is beyond 2^53, the last a Redis score holds exactly"
            )));
        }
        let script = self.append.clone();
        let mut invocation = script.prepare_invoke();
        invocation.key(self.key("epoch")).key(self.key("journal")).key(self.key("journal_end"));
        invocation.arg(epoch).arg(first_seq).arg(end).arg(payload);
        let result: Result<(String, String), _> = invocation.invoke(self.connection()?);
        let (verdict, value) = result.map_err(|e| self.unavailable(e))?;
        // A gap's refusal names the first sequence number asked for.
        let writer = if verdict == "gap" { first_seq } else { epoch };
        self.verdict(&verdict, &value, writer).map(|_| ())
    }

    fn read_journal(&mut self, from: u64) -> Result<super::StoredJournal, StoreError> {
        let (journal, end_key) = (self.key("journal"), self.key("journal_end"));
        // One atomic read: the end, the batch holding `from` and every later one, as one append left them.
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("GET")
            .arg(&end_key)
            .cmd("ZREVRANGEBYSCORE")
            .arg(&journal)
            .arg(from)
            .arg("-inf")
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(1)
            .cmd("ZRANGEBYSCORE")
            .arg(&journal)
            .arg(format!("({from}"))
            .arg("+inf")
            .arg("WITHSCORES");
        let result: Result<(Option<String>, ScoredMembers, ScoredMembers), _> =
            pipe.query(self.connection()?);
        let (end, before, after) = result.map_err(|e| self.unavailable(e))?;
        let end = match end {
            None => 0,
            Some(text) => text.parse().map_err(|_| {
                StoreError::Damaged(format!(
                    "redis {}: {end_key} holds {text:?}, not a number: the journal's end is damaged; restore it (docs/OPERATIONS.md)",
                    self.url
                ))
            })?,
        };
        let batches = before
            .into_iter()
            .chain(after)
            .map(|(member, score)| super::StoredBatch {
                name: format!("{journal} member at score {score}"),
                first_seq: score as u64,
                payload: Ok(member),
            })
            .collect();
        Ok(super::StoredJournal { end, batches })
    }

    fn release_journal_before(&mut self, seq: u64) -> Result<(), StoreError> {
        let journal = self.key("journal");
        // The batch holding `seq` stays, and everything after it.
        let holding: Vec<(Vec<u8>, f64)> = self.query(
            redis::cmd("ZREVRANGEBYSCORE")
                .arg(&journal)
                .arg(seq)
                .arg("-inf")
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(1),
        )?;
        if let Some((_, score)) = holding.first() {
            let _: i64 = self
                .query(redis::cmd("ZREMRANGEBYSCORE").arg(&journal).arg("-inf").arg(format!("({score}")))?;
        }
        Ok(())
    }

    fn move_journal_end(&mut self, epoch: u64, end: u64) -> Result<u64, StoreError> {
        let script = self.lower.clone();
        let mut invocation = script.prepare_invoke();
        invocation.key(self.key("epoch")).key(self.key("journal")).key(self.key("journal_end"));
        invocation.arg(epoch).arg(end);
        let result: Result<(String, String), _> = invocation.invoke(self.connection()?);
        let (verdict, value) = result.map_err(|e| self.unavailable(e))?;
        self.verdict(&verdict, &value, epoch)
    }
}
