//! The PostgreSQL checkpoint store and shared journal (the `tokio-postgres` client on a runtime of the
//! store's own, every request under [`REQUEST_DEADLINE`]). Three
//! tables, created on first use (`CREATE TABLE IF NOT EXISTS`, under an advisory lock so two services
//! starting together do not race on the catalog):
//!
//! | table | key | holds |
//! |---|---|---|
//! | `anes_store_epochs` | `pipeline` | `epoch`: the pipeline's store epoch; `journal_end`: the journal's end, its acknowledged mark |
//! | `anes_store_checkpoints` | `(pipeline, frame, epoch)` | `blob`: header then snapshot, the newest `kept` |
//! | `anes_journal` | `(pipeline, first_seq)` | `batch`: one committed batch of records `first_seq..end_seq`, and the epoch that wrote it |
//!
//! A journal append is one transaction too: the epoch row `FOR UPDATE`, the fencing rule, then the
//! batch inserted and `journal_end` moved, committed together: a producer is answered only after
//! that commit, and a takeover (which waits for the row) fences every later append.
//!
//! A write is one transaction: it reads the pipeline's epoch row `FOR SHARE` and applies the fencing
//! rule ([`fence::check`]) to the header alone, so a refused write ends (rolled back) before a byte of
//! its payload is read; an accepted one reads the payload, inserts it, trims to the retention and
//! commits. The row lock keeps a takeover (`UPDATE ... SET epoch = epoch + 1`, which waits for it) from
//! slipping between the check and the insert: the write is ordered wholly before or after it. What
//! survives a crash of the server is PostgreSQL's business (a committed transaction is durable with the
//! default `synchronous_commit`); a blob that does not verify on load is reported and skipped.
//!
//! Any failure of the client (connection refused or lost, a server shutting down, a statement timeout,
//! no answer within [`REQUEST_DEADLINE`]) is [`StoreError::Unavailable`]: the connection is dropped,
//! and the writer's retries reconnect. The deadline is the client's own: a server that accepts the
//! connection and never answers (stopped, wedged, a pooler waiting for a backend) acknowledges every
//! packet, so neither `statement_timeout` nor the socket's timeouts end the wait.

use std::io::Read;
use std::time::Duration;

use super::{
    CheckpointHeader, CheckpointStore, Damaged, Loaded, MAX_PAYLOAD_LEN, Persisted, StoreError,
    StoredCheckpoint, fence, newest_first,
};

const BACKEND: &str = "postgres";

/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one statement may run on the server (`statement_timeout`) and unacknowledged data may
/// wait on the socket (`tcp_user_timeout`).
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one request (connecting with the schema check, or one transaction) may take in all,
/// answer included; longer than the server's own limits, which report first when the server runs.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);
/// Longest blob loaded: the longest header and the largest payload.
const MAX_BLOB_LEN: i32 = (108 + 64 + 32 + MAX_PAYLOAD_LEN) as i32;
/// Any constant shared by every service: the advisory lock taken around the schema's creation.
const SCHEMA_LOCK: i64 = 0x616e_6573_5354; // "anesST"

/// The longest journal batch loaded: a framed record's largest payload.
const MAX_BATCH_LEN: i32 = crate::framed::MAX_RECORD_LEN as i32;

// Each statement is checked against the catalog first, so a second start neither changes anything nor
// makes the server log a notice ("relation already exists, skipping").
const SCHEMA: [(&str, &str); 4] = [
    (
        "SELECT to_regclass('anes_store_epochs') IS NOT NULL",
        "CREATE TABLE IF NOT EXISTS anes_store_epochs (
            pipeline TEXT PRIMARY KEY,
            epoch BIGINT NOT NULL CHECK (epoch >= 0))",
    ),
    (
        "SELECT EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_name = 'anes_store_epochs' AND column_name = 'journal_end')",
        "ALTER TABLE anes_store_epochs
             ADD COLUMN IF NOT EXISTS journal_end BIGINT NOT NULL DEFAULT 0 CHECK (journal_end >= 0)",
    ),
    (
        "SELECT to_regclass('anes_store_checkpoints') IS NOT NULL",
        "CREATE TABLE IF NOT EXISTS anes_store_checkpoints (
            pipeline TEXT NOT NULL,
            frame BIGINT NOT NULL,
            epoch BIGINT NOT NULL,
            blob BYTEA NOT NULL,
            PRIMARY KEY (pipeline, frame, epoch))",
    ),
    (
        "SELECT to_regclass('anes_journal') IS NOT NULL",
        "CREATE TABLE IF NOT EXISTS anes_journal (
            pipeline TEXT NOT NULL,
            first_seq BIGINT NOT NULL,
            end_seq BIGINT NOT NULL,
            epoch BIGINT NOT NULL,
            batch BYTEA NOT NULL,
            PRIMARY KEY (pipeline, first_seq))",
    ),
];

/// A pipeline's checkpoints in PostgreSQL.
pub struct PostgresStore {
    config: tokio_postgres::Config,
    /// The URL without its password, for messages.
    target: String,
    pipeline: String,
    kept: usize,
    /// Runs the client's requests (on the caller's thread) and its connection's task.
    runtime: tokio::runtime::Runtime,
    client: Option<tokio_postgres::Client>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.target)
            .field("pipeline", &self.pipeline)
            .field("kept", &self.kept)
            .field("connected", &self.client.is_some())
            .finish()
    }
}

/// `user@host:port/db` of a configuration (never its password).
fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    format!(
        "postgres://{}@{}:{}/{}",
        config.get_user().unwrap_or(""),
        hosts.join(","),
        ports.join(","),
        config.get_dbname().unwrap_or("")
    )
}

fn to_i64(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("{what} {value} does not fit PostgreSQL's BIGINT")))
}

impl PostgresStore {
    /// A store for `pipeline` at `url` (`postgres://user@127.0.0.1:5432/db`) keeping `kept`
    /// checkpoints. The URL is checked now; the connection is made on first use (and again after any
    /// failure). TLS is not linked: the server must accept a plain connection (`sslmode` disable or
    /// prefer).
    pub fn new(url: &str, pipeline: &str, kept: usize) -> Result<PostgresStore, StoreError> {
        if !super::valid_pipeline_id(pipeline) {
            return Err(StoreError::Settings(format!("pipeline id {pipeline:?} is not valid")));
        }
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Settings(format!("postgres URL: {e} (postgres://USER@HOST:PORT/DB)")))?;
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_user_timeout(IO_TIMEOUT)
            .options(format!("-c statement_timeout={}", IO_TIMEOUT.as_millis()))
            .application_name("anes serve");
        // A worker thread of its own runs the connection's task between requests too: a transaction
        // dropped without its commit (a refused write) is rolled back then, not at the next request,
        // so its row lock holds nobody else up.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("anes-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Settings(format!("postgres client runtime: {e}")))?;
        Ok(PostgresStore {
            target: describe(&config),
            config,
            pipeline: pipeline.to_string(),
            kept: kept.max(1),
            runtime,
            client: None,
        })
    }

    fn unavailable(&mut self, reason: impl std::fmt::Display) -> StoreError {
        // Whatever failed, the connection may be in a broken transaction: the next call opens a new one.
        self.client = None;
        StoreError::Unavailable { backend: BACKEND, reason: format!("{}: {reason}", self.target) }
    }

    async fn connect(
        config: &tokio_postgres::Config,
        pipeline: &str,
    ) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (mut client, connection) = config.connect(tokio_postgres::NoTls).await?;
        // The connection's task ends when the client is dropped (or the server goes).
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).await?;
        for (exists, create) in SCHEMA {
            if !tx.query_one(exists, &[]).await?.get::<_, bool>(0) {
                tx.execute(create, &[]).await?;
            }
        }
        tx.execute(
            "INSERT INTO anes_store_epochs (pipeline, epoch) VALUES ($1, 0) ON CONFLICT (pipeline) DO NOTHING",
            &[&pipeline],
        )
        .await?;
        tx.commit().await?;
        Ok(client)
    }

    /// Runs `op` on the connection (opening it first if needed), each under [`REQUEST_DEADLINE`]; a
    /// client error or a missed deadline drops the connection.
    fn with_client<T>(
        &mut self,
        op: impl AsyncFnOnce(&mut tokio_postgres::Client, &str) -> Result<T, Failure>,
    ) -> Result<T, StoreError> {
        let no_answer = || format!("no answer within {REQUEST_DEADLINE:?}");
        if self.client.is_none() {
            let connecting = Self::connect(&self.config, &self.pipeline);
            match self.runtime.block_on(async { tokio::time::timeout(REQUEST_DEADLINE, connecting).await }) {
                Ok(Ok(c)) => self.client = Some(c),
                Ok(Err(e)) => return Err(self.unavailable(client_error(&e))),
                Err(_) => return Err(self.unavailable(format!("connecting: {}", no_answer()))),
            }
        }
        let client = self.client.as_mut().expect("just connected");
        let pipeline = self.pipeline.as_str();
        let answer = self
            .runtime
            .block_on(async { tokio::time::timeout(REQUEST_DEADLINE, op(client, pipeline)).await });
        match answer {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(Failure::Client(e))) => Err(self.unavailable(client_error(&e))),
            Ok(Err(Failure::Store(e))) => Err(e),
            Err(_) => Err(self.unavailable(no_answer())),
        }
    }
}

/// A client error with the server's own message, where the server gave one ("db error" alone says
/// nothing).
fn client_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{e}: {db}"),
        None => e.to_string(),
    }
}

/// What went wrong inside a transaction: the client (the connection is dropped) or the store's rules.
enum Failure {
    Client(tokio_postgres::Error),
    Store(StoreError),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Failure {
        Failure::Client(e)
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Failure {
        Failure::Store(e)
    }
}

/// The pipeline's epoch read under a row lock (`FOR SHARE` or `FOR UPDATE`); a missing row (the table
/// emptied) reads 0, so every writer is refused as ahead of the store.
async fn locked_epoch(
    tx: &tokio_postgres::Transaction<'_>,
    pipeline: &str,
    lock: &str,
) -> Result<u64, Failure> {
    let row = tx
        .query_opt(&format!("SELECT epoch FROM anes_store_epochs WHERE pipeline = $1 {lock}"), &[&pipeline])
        .await?;
    Ok(row.map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
}

impl CheckpointStore for PostgresStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn bump_epoch(&mut self) -> Result<u64, StoreError> {
        self.with_client(async |client, pipeline| {
            let row = client
                .query_opt(
                    "INSERT INTO anes_store_epochs (pipeline, epoch) VALUES ($1, 1)
                 ON CONFLICT (pipeline) DO UPDATE SET epoch = anes_store_epochs.epoch + 1
                 WHERE anes_store_epochs.epoch < 9223372036854775807 RETURNING epoch",
                    &[&pipeline],
                )
                .await?;
            match row {
                Some(row) => Ok(row.get::<_, i64>(0) as u64),
                None => Err(Failure::Store(super::epoch_at_maximum(BACKEND, pipeline, i64::MAX as u64))),
            }
        })
    }

    fn advance_epoch(&mut self, held: u64) -> Result<u64, StoreError> {
        if held >= i64::MAX as u64 {
            return Err(super::epoch_at_maximum(BACKEND, &self.pipeline, held));
        }
        let next = to_i64("epoch", held + 1)?;
        self.with_client(async |client, pipeline| {
            let tx = client.transaction().await?;
            // FOR UPDATE: the check and the new epoch are one step; no takeover can come in between.
            fence::check(pipeline, held, locked_epoch(&tx, pipeline, "FOR UPDATE").await?)?;
            tx.execute(
                "INSERT INTO anes_store_epochs (pipeline, epoch) VALUES ($1, $2)
                 ON CONFLICT (pipeline) DO UPDATE SET epoch = EXCLUDED.epoch",
                &[&pipeline, &next],
            )
            .await?;
            tx.commit().await?;
            Ok(next as u64)
        })
    }

    fn current_epoch(&mut self) -> Result<u64, StoreError> {
        self.with_client(async |client, pipeline| {
            let row = client
                .query_opt("SELECT epoch FROM anes_store_epochs WHERE pipeline = $1", &[&pipeline])
                .await?;
            Ok(row.map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
        })
    }

    fn put(&mut self, header: &CheckpointHeader, payload: &mut dyn Read) -> Result<Persisted, StoreError> {
        super::check_put_header(&self.pipeline, header)?;
        let (frame, epoch) = (to_i64("frame", header.frame)?, to_i64("epoch", header.epoch)?);
        let kept = self.kept as i64;
        self.with_client(async |client, pipeline| {
            let tx = client.transaction().await?;
            // The fencing check: the header only, before the payload is touched. FOR SHARE holds off a
            // takeover until this transaction ends.
            fence::check(pipeline, header.epoch, locked_epoch(&tx, pipeline, "FOR SHARE").await?)?;
            let blob = super::read_blob(header, payload)?;
            tx.execute(
                "INSERT INTO anes_store_checkpoints (pipeline, frame, epoch, blob) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (pipeline, frame, epoch) DO UPDATE SET blob = EXCLUDED.blob",
                &[&pipeline, &frame, &epoch, &blob],
            )
            .await?;
            // Retention counts the checkpoints at or below this one: those above it are the ones
            // recovery skipped (damaged, or not of this ROM), evidence left as they are.
            tx.execute(
                "DELETE FROM anes_store_checkpoints WHERE pipeline = $1 AND (frame, epoch) <= ($3, $4)
                 AND (frame, epoch) NOT IN (
                     SELECT frame, epoch FROM anes_store_checkpoints
                     WHERE pipeline = $1 AND (frame, epoch) <= ($3, $4)
                     ORDER BY frame DESC, epoch DESC LIMIT $2)",
                &[&pipeline, &kept, &frame, &epoch],
            )
            .await?;
            let oldest: Option<i64> = tx
                .query_one(
                    "SELECT min(frame) FROM anes_store_checkpoints
                     WHERE pipeline = $1 AND (frame, epoch) <= ($2, $3)",
                    &[&pipeline, &frame, &epoch],
                )
                .await?
                .get(0);
            tx.commit().await?;
            Ok(Persisted {
                frame: header.frame,
                epoch: header.epoch,
                oldest_kept_frame: oldest.map_or(header.frame, |f| f as u64),
            })
        })
    }

    fn load(&mut self) -> Result<Loaded, StoreError> {
        let rows = self.with_client(async |client, pipeline| {
            let rows = client.query(
                "SELECT frame, epoch, CASE WHEN octet_length(blob) <= $2 THEN blob END, octet_length(blob)
                 FROM anes_store_checkpoints WHERE pipeline = $1 ORDER BY frame DESC, epoch DESC",
                &[&pipeline, &MAX_BLOB_LEN],
            ).await?;
            Ok(rows
                .into_iter()
                .map(|r| {
                    (
                        r.get::<_, i64>(0),
                        r.get::<_, i64>(1),
                        r.get::<_, Option<Vec<u8>>>(2),
                        r.get::<_, i32>(3),
                    )
                })
                .collect::<Vec<_>>())
        })?;
        let mut loaded = Loaded::default();
        for (frame, epoch, blob, len) in rows {
            let name = format!("{frame:020}-{epoch:020}");
            let checked = match blob {
                None => Err(format!("{len} bytes, more than the {MAX_BLOB_LEN}-byte limit")),
                Some(blob) => match CheckpointHeader::decode_blob(&blob) {
                    Ok((header, _)) if header.pipeline_id != self.pipeline => {
                        Err(format!("holds pipeline {:?}'s checkpoint", header.pipeline_id))
                    }
                    Ok((header, _)) if (header.frame as i64, header.epoch as i64) != (frame, epoch) => {
                        Err(format!(
                            "its header says frame {} epoch {}, its row frame {frame} epoch {epoch}",
                            header.frame, header.epoch
                        ))
                    }
                    Ok((header, payload)) => {
                        Ok(StoredCheckpoint { payload: payload.to_vec(), header, name: name.clone() })
                    }
                    Err(e) => Err(e.to_string()),
                },
            };
            match checked {
                Ok(c) => loaded.verified.push(c),
                Err(reason) => {
                    tracing::error!(pipeline = %self.pipeline, row = %name, %reason, "damaged checkpoint in postgres skipped");
                    loaded.damaged.push(Damaged { name, reason });
                }
            }
        }
        newest_first(&mut loaded.verified);
        Ok(loaded)
    }

    fn reconnect(&mut self) -> Result<(), StoreError> {
        self.client = None;
        self.with_client(async |_, _| Ok(()))
    }
}

/// The pipeline's epoch and journal end, read under a `FOR UPDATE` row lock; a missing row (the table
/// emptied) reads 0 for both, so every writer is refused as ahead of the store.
async fn locked_journal(tx: &tokio_postgres::Transaction<'_>, pipeline: &str) -> Result<(u64, u64), Failure> {
    let row = tx
        .query_opt(
            "SELECT epoch, journal_end FROM anes_store_epochs WHERE pipeline = $1 FOR UPDATE",
            &[&pipeline],
        )
        .await?;
    Ok(row.map_or((0, 0), |r| (r.get::<_, i64>(0).max(0) as u64, r.get::<_, i64>(1).max(0) as u64)))
}

impl super::JournalStore for PostgresStore {
    fn describe(&self) -> String {
        format!("{} table anes_journal, pipeline {}", self.target, self.pipeline)
    }

    fn append_batch(
        &mut self,
        epoch: u64,
        first_seq: u64,
        end: u64,
        payload: &[u8],
    ) -> Result<(), StoreError> {
        let (first, last) = (to_i64("sequence number", first_seq)?, to_i64("sequence number", end)?);
        let writer = to_i64("epoch", epoch)?;
        self.with_client(async |client, pipeline| {
            let tx = client.transaction().await?;
            let (current, journal_end) = locked_journal(&tx, pipeline).await?;
            fence::check(pipeline, epoch, current)?;
            if first_seq > journal_end {
                return Err(Failure::Store(super::journal_gap(pipeline, first_seq, journal_end)));
            }
            if first_seq < journal_end {
                // This epoch's unacknowledged tail (a commit whose answer was lost): replaced.
                tx.execute("DELETE FROM anes_journal WHERE pipeline = $1 AND first_seq >= $2", &[&pipeline, &first]).await?;
            }
            tx.execute(
                "INSERT INTO anes_journal (pipeline, first_seq, end_seq, epoch, batch) VALUES ($1, $2, $3, $4, $5)",
                &[&pipeline, &first, &last, &writer, &payload],
            ).await?;
            tx.execute("UPDATE anes_store_epochs SET journal_end = $2 WHERE pipeline = $1", &[&pipeline, &last]).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn read_journal(&mut self, from: u64) -> Result<super::StoredJournal, StoreError> {
        let from = to_i64("sequence number", from)?;
        let (end, rows) = self.with_client(async |client, pipeline| {
            // One snapshot: the end and the batches as one commit left them.
            let tx = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .start()
                .await?;
            let end = tx
                .query_opt("SELECT journal_end FROM anes_store_epochs WHERE pipeline = $1", &[&pipeline])
                .await?
                .map_or(0, |r| r.get::<_, i64>(0).max(0) as u64);
            let rows = tx.query(
                "SELECT first_seq, CASE WHEN octet_length(batch) <= $3 THEN batch END, octet_length(batch)
                 FROM anes_journal WHERE pipeline = $1 AND end_seq > $2 ORDER BY first_seq",
                &[&pipeline, &from, &MAX_BATCH_LEN],
            ).await?;
            tx.commit().await?;
            Ok((
                end,
                rows.into_iter()
                    .map(|r| (r.get::<_, i64>(0), r.get::<_, Option<Vec<u8>>>(1), r.get::<_, i32>(2)))
                    .collect::<Vec<_>>(),
            ))
        })?;
        let batches = rows
            .into_iter()
            .map(|(first, batch, len)| super::StoredBatch {
                name: format!("anes_journal row first_seq {first}"),
                first_seq: first.max(0) as u64,
                payload: batch
                    .ok_or_else(|| format!("{len} bytes, more than the {MAX_BATCH_LEN}-byte limit")),
            })
            .collect();
        Ok(super::StoredJournal { end, batches })
    }

    fn release_journal_before(&mut self, seq: u64) -> Result<(), StoreError> {
        let seq = to_i64("sequence number", seq)?;
        self.with_client(async |client, pipeline| {
            client
                .execute("DELETE FROM anes_journal WHERE pipeline = $1 AND end_seq <= $2", &[&pipeline, &seq])
                .await?;
            Ok(())
        })
    }

    fn move_journal_end(&mut self, epoch: u64, end: u64) -> Result<u64, StoreError> {
        let end_i64 = to_i64("sequence number", end)?;
        self.with_client(async |client, pipeline| {
            let tx = client.transaction().await?;
            let (current, journal_end) = locked_journal(&tx, pipeline).await?;
            fence::check(pipeline, epoch, current)?;
            tx.execute(
                "DELETE FROM anes_journal WHERE pipeline = $1 AND first_seq >= $2",
                &[&pipeline, &end_i64],
            )
            .await?;
            tx.execute(
                "UPDATE anes_store_epochs SET journal_end = $2 WHERE pipeline = $1",
                &[&pipeline, &end_i64],
            )
            .await?;
            tx.commit().await?;
            Ok(journal_end)
        })
    }
}
