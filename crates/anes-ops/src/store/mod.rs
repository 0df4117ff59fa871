//! The checkpoint store: verified checkpoints kept where a crash of the service cannot take them, behind
//! one trait ([`CheckpointStore`]) with four backends: the filesystem ([`FsStore`], the default), Redis
//! ([`RedisStore`], the design's `pipeline:<id>:state`), PostgreSQL ([`PostgresStore`]) and S3
//! ([`S3Store`], optionally with a hot copy of the newest checkpoint in Redis).
//!
//! Fencing: every pipeline has a store **epoch**, a counter kept by the store (distinct from the core's
//! emulation epoch). A service takes over a pipeline at start by bumping it
//! ([`CheckpointStore::bump_epoch`]) and writes with the epoch it got; each of its rollbacks moves to
//! the next epoch only while its own is still the store's ([`CheckpointStore::advance_epoch`], so a
//! writer that was taken over cannot take the pipeline back). A write carrying an older epoch is refused
//! ([`StoreError::Fenced`], naming both epochs), decided from the header alone ([`fence::check`], the
//! rule in one place), before a byte of the payload is read or stored. A writer that is fenced learns it
//! from that error and stops writing ([`writer::CheckpointWriter`]).

pub mod fence;
pub mod fs;
mod header;
pub mod hot;
pub mod model;
pub mod postgres;
pub mod redis;
pub mod s3;
pub mod writer;

use std::io::Read;

use thiserror::Error;

pub use fs::FsStore;
pub use header::{
    CHECKPOINT_MAGIC, CHECKPOINT_VERSION, CheckpointHeader, HeaderError, MAX_PAYLOAD_LEN, valid_pipeline_id,
};
pub use postgres::PostgresStore;
pub use redis::{RedisPersistence, RedisStore};
pub use s3::{S3Credentials, S3Location, S3Store};

/// A checkpoint read back from a store, verified (header checksum, payload length and checksum).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCheckpoint {
    /// The header as stored, checked against the payload.
    pub header: CheckpointHeader,
    /// The console snapshot both workers verified (the anes snapshot format).
    pub payload: Vec<u8>,
    /// Where it is (a file name, or a Redis member).
    pub name: String,
}

/// A stored checkpoint that failed verification, skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged {
    /// Where it is.
    pub name: String,
    /// What is wrong.
    pub reason: String,
}

/// What a store holds for a pipeline, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// The checkpoints that verify, newest (highest frame, then epoch) first.
    pub verified: Vec<StoredCheckpoint>,
    /// The ones that do not (torn, damaged, another pipeline's), reported and skipped.
    pub damaged: Vec<Damaged>,
}

/// What a successful write left in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Persisted {
    /// The frame of the checkpoint written.
    pub frame: u64,
    /// The epoch it was written with.
    pub epoch: u64,
    /// The oldest frame among the checkpoints the store keeps (retention); input records before it are
    /// no longer needed to recover.
    pub oldest_kept_frame: u64,
}

/// Why a store operation failed.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The writer's epoch is older than the pipeline's: another writer took over. Stop writing.
    #[error(
        "pipeline {pipeline}: write refused: writer epoch {writer} is older than the store's epoch {current} (another writer took over; this one is fenced)"
    )]
    Fenced {
        /// The pipeline whose write was refused.
        pipeline: String,
        /// The writer's epoch.
        writer: u64,
        /// The store's.
        current: u64,
    },
    /// The writer's epoch is newer than any the store issued: the store lost its epoch (emptied,
    /// replaced). Refused too: take over again to write.
    #[error(
        "pipeline {pipeline}: write refused: writer epoch {writer} is newer than the store's epoch {current}, which never issued it (was the store emptied?)"
    )]
    EpochAhead {
        /// The pipeline whose write was refused.
        pipeline: String,
        /// The writer's epoch.
        writer: u64,
        /// The store's.
        current: u64,
    },
    /// The store cannot be reached or failed a request; worth retrying after a delay.
    #[error("{backend} store unavailable: {reason}")]
    Unavailable {
        /// `filesystem`, `redis`, `postgres` or `s3`.
        backend: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// A write that does not match its header (payload length or checksum), or a header for another
    /// pipeline.
    #[error("checkpoint refused: {0}")]
    Invalid(String),
    /// What the store holds about the pipeline itself (its epoch record) is damaged.
    #[error("{0}")]
    Damaged(String),
    /// The store's settings cannot work (a URL that does not parse, credentials that cannot be read):
    /// found when the store is opened, before any request.
    #[error("store settings: {0}")]
    Settings(String),
}

impl StoreError {
    /// True for errors a retry after a delay may cure (the store was unreachable or failed).
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }

    /// True when this writer must stop writing (another took over, or the store lost its epoch).
    pub fn is_fenced(&self) -> bool {
        matches!(self, StoreError::Fenced { .. } | StoreError::EpochAhead { .. })
    }
}

/// Where a pipeline's verified checkpoints are kept.
pub trait CheckpointStore: Send + std::fmt::Debug {
    /// `filesystem`, `redis`, `postgres` or `s3` (the metric label).
    fn backend(&self) -> &'static str;

    /// Takes the pipeline over: bumps its epoch atomically and returns the new one, the token to write
    /// with. Every writer holding an older epoch is fenced from then on.
    fn bump_epoch(&mut self) -> Result<u64, StoreError>;

    /// A writer's own next epoch (a rollback's restore): bumps the epoch only when `held` is still the
    /// store's, by the fencing rule ([`fence::check`]), atomically with the check, and returns the new
    /// one. A writer that was taken over gets [`StoreError::Fenced`] and cannot take the pipeline back;
    /// only a start-up takes over unconditionally ([`CheckpointStore::bump_epoch`]).
    fn advance_epoch(&mut self, held: u64) -> Result<u64, StoreError>;

    /// The pipeline's current epoch (0 before the first takeover).
    fn current_epoch(&mut self) -> Result<u64, StoreError>;

    /// Writes a checkpoint as `header.epoch`. The fencing check reads the header only: a write whose
    /// epoch is not the store's when it starts reads nothing from `payload`. Then exactly
    /// `header.payload_len` bytes are read, checked against the header's checksum and stored
    /// atomically; the oldest beyond the retention are removed. A takeover that lands while the
    /// payload is read waits for the write (filesystem: the directory lock; PostgreSQL: the epoch
    /// row's lock) or refuses it at its atomic step (Redis: the script; S3: the conditional PUT).
    fn put(&mut self, header: &CheckpointHeader, payload: &mut dyn Read) -> Result<Persisted, StoreError>;

    /// Every checkpoint the store keeps for the pipeline, verified, newest first; damaged ones are
    /// reported in [`Loaded::damaged`] and skipped.
    fn load(&mut self) -> Result<Loaded, StoreError>;

    /// Drops the connection (if any) and opens a new one; called between retries.
    fn reconnect(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What every store checks of a checkpoint before its fencing check: it belongs to this store's
/// pipeline, and its payload is one a store can load again (within [`MAX_PAYLOAD_LEN`]).
pub(crate) fn check_put_header(pipeline: &str, header: &CheckpointHeader) -> Result<(), StoreError> {
    if header.pipeline_id != pipeline {
        return Err(StoreError::Invalid(format!(
            "a checkpoint of pipeline {:?} written to {:?}'s store",
            header.pipeline_id, pipeline
        )));
    }
    if header.payload_len > MAX_PAYLOAD_LEN {
        return Err(StoreError::Invalid(format!("payload of {} bytes is too long", header.payload_len)));
    }
    Ok(())
}

/// The stored form of a checkpoint: its header's encoding followed by exactly the payload the header
/// declares, read from `payload` and checked against the header's length and checksum.
pub(crate) fn read_blob(header: &CheckpointHeader, payload: &mut dyn Read) -> Result<Vec<u8>, StoreError> {
    let mut blob = header.encode();
    let start = blob.len();
    payload
        .take(header.payload_len)
        .read_to_end(&mut blob)
        .map_err(|e| StoreError::Invalid(format!("reading the payload: {e}")))?;
    header.check_payload(&blob[start..]).map_err(|e| StoreError::Invalid(e.to_string()))?;
    Ok(blob)
}

/// Sorts verified checkpoints newest first: highest frame, then highest epoch.
pub(crate) fn newest_first(verified: &mut [StoredCheckpoint]) {
    verified.sort_by_key(|c| std::cmp::Reverse((c.header.frame, c.header.epoch)));
}
