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
use std::sync::{Arc, Mutex, MutexGuard};

use thiserror::Error;

pub use fs::FsStore;
pub use header::{
    CHECKPOINT_MAGIC, CHECKPOINT_VERSION, CheckpointHeader, HeaderError, MAX_PAYLOAD_LEN, PIPELINE_ID_RULE,
    valid_pipeline_id,
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
    /// A journal batch that would start after the journal's end, leaving a gap: nothing was stored.
    #[error(
        "pipeline {pipeline}: a journal batch from sequence number {first_seq}, but the journal ends at {end}: it would leave a gap"
    )]
    JournalGap {
        /// The pipeline whose journal it is.
        pipeline: String,
        /// Where the batch starts.
        first_seq: u64,
        /// The journal's end, as the store holds it.
        end: u64,
    },
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

/// The store epoch a service holds for a pipeline, shared by its checkpoint writer and its journal. A
/// rollback's new epoch is taken while holding it, and so is each journal append: the journal never
/// appends with an epoch its own service has just left (which the store would refuse as fenced).
#[derive(Debug, Clone)]
pub struct HeldEpoch(Arc<Mutex<u64>>);

impl HeldEpoch {
    /// The epoch a takeover returned.
    pub fn new(epoch: u64) -> HeldEpoch {
        HeldEpoch(Arc::new(Mutex::new(epoch)))
    }

    /// Holds the epoch (for an append, or to replace it).
    pub fn lock(&self) -> MutexGuard<'_, u64> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The epoch now.
    pub fn get(&self) -> u64 {
        *self.lock()
    }
}

/// One stored journal batch as read back: where it is, the sequence number its key says it starts
/// at, and its payload (or why it could not be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBatch {
    /// Where it is (a row, a member, an object key).
    pub name: String,
    /// The first sequence number its key names.
    pub first_seq: u64,
    /// The batch as stored ([`crate::journal::encode_batch`]), or what is wrong with it.
    pub payload: Result<Vec<u8>, String>,
}

/// A shared journal as a store holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredJournal {
    /// The journal's end: the acknowledged mark.
    pub end: u64,
    /// The batches holding records at or after the sequence number asked for, in order.
    pub batches: Vec<StoredBatch>,
}

/// A store's side of a pipeline's shared journal ([`crate::journal::shared`]): batches of acknowledged
/// records kept where another coordinator can read them, appended under the epoch fence. Every shared
/// store is a checkpoint store too (its backend's name, its reconnection).
pub trait JournalStore: CheckpointStore {
    /// The store and pipeline, for messages (never a password).
    fn describe(&self) -> String;

    /// Appends one batch holding the records `first_seq..end` (`payload`: its stored form) as
    /// `epoch`, atomically with the fencing check ([`fence::check`]: refused unless `epoch` is the
    /// store's, before anything is stored) and with the journal's end, which becomes `end`.
    /// `first_seq` must not be beyond the journal's end ([`StoreError::JournalGap`]); below it, the
    /// batches from `first_seq` on are replaced (records of a commit whose answer was lost).
    fn append_batch(
        &mut self,
        epoch: u64,
        first_seq: u64,
        end: u64,
        payload: &[u8],
    ) -> Result<(), StoreError>;

    /// The journal's end and its batches that hold records at or after `from`, in order.
    fn read_journal(&mut self, from: u64) -> Result<StoredJournal, StoreError>;

    /// Removes the batches whose records all come before `seq`.
    fn release_journal_before(&mut self, seq: u64) -> Result<(), StoreError>;

    /// Sets the journal's end to `end` under `epoch` (fenced like an append) and removes the batches
    /// from `end` on; returns the end it had. An operator accepting the loss of records that cannot be
    /// read lowers it; a takeover from a checkpoint beyond the end (a journal that starts there) raises
    /// it.
    fn move_journal_end(&mut self, epoch: u64, end: u64) -> Result<u64, StoreError>;
}

/// The refusal of an epoch that cannot grow: taking the pipeline over again would wrap it, and every
/// fenced writer would count as current again.
pub(crate) fn epoch_at_maximum(backend: &'static str, pipeline: &str, epoch: u64) -> StoreError {
    StoreError::Damaged(format!(
        "{backend} store: pipeline {pipeline}'s store epoch is {epoch}, its maximum: it cannot be taken over again (an epoch that wrapped would let fenced writers write). Was it set by hand? Move the pipeline's store data aside (docs/OPERATIONS.md, the store epoch)"
    ))
}

/// The refusal of a journal batch that would leave a gap after the journal's end.
pub(crate) fn journal_gap(pipeline: &str, first_seq: u64, end: u64) -> StoreError {
    StoreError::JournalGap { pipeline: pipeline.to_string(), first_seq, end }
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
