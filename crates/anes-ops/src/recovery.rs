//! What a pipeline finds at start-up in its data directory (`<data_dir>/<id>/`) and store, and the
//! pipeline built from it: take the directory's lock, take the pipeline over in the store (bump its
//! epoch, with retries), load the newest checkpoint that verifies (header and payload checksums, then
//! the snapshot loaded into a console of the pipeline's ROM must have the header's state hash), read the
//! journal from that checkpoint on (the data directory's, or the store's when it is shared: every
//! record any earlier owner acknowledged), and hand it to [`Pipeline::recover`].
//!
//! Start-up refuses, naming the range and where it should be, when acknowledged records after the
//! checkpoint cannot be read ([`crate::journal::JournalError::Missing`]): it never starts with fewer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use thiserror::Error;

use crate::config::{PipelineConfig, StoreBackend};
use crate::journal::{FileJournal, Journal, JournalContents, SharedJournal, read_journal, read_shared};
use crate::pipeline::{Checkpoint, Pipeline, PipelineStorage};
use crate::store::fs::DirLock;
use crate::store::{
    CheckpointStore, FsStore, HeldEpoch, JournalStore, PostgresStore, RedisStore, S3Credentials, S3Store,
    StoreError, StoredCheckpoint,
};

/// A pipeline's durable state, opened.
#[derive(Debug)]
pub struct Opened {
    /// The pipeline, continuing what the previous run left.
    pub pipeline: Pipeline,
    /// Its journal and dead-letter queue.
    pub storage: PipelineStorage,
    /// The store, taken over.
    pub store: Box<dyn CheckpointStore>,
    /// The epoch it was taken over with, shared by the checkpoint writer and the journal.
    pub epoch: HeldEpoch,
    /// The data directory's lock, held while the pipeline runs.
    pub lock: DirLockGuard,
    /// One line for the log: what was found.
    pub summary: String,
}

/// Holds `<data_dir>/<id>/LOCK` (another service on the same directory is refused at start).
#[derive(Debug)]
pub struct DirLockGuard {
    _lock: DirLock,
}

/// The directory of a pipeline's durable state.
pub fn pipeline_dir(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join(id)
}

/// Why a pipeline's durable state could not be opened.
#[derive(Debug, Error)]
#[error("pipeline {pipeline}: {problem}")]
pub struct RecoveryError {
    /// `pipeline_id`.
    pub pipeline: String,
    /// What went wrong, naming the file or the store.
    pub problem: String,
}

fn setup(id: &str, what: impl std::fmt::Display) -> RecoveryError {
    RecoveryError { pipeline: id.to_string(), problem: what.to_string() }
}

/// Opens the store of a pipeline.
pub fn open_store(config: &PipelineConfig, data_dir: &Path) -> Result<Box<dyn CheckpointStore>, StoreError> {
    let id = &config.settings.id;
    Ok(match &config.store.backend {
        StoreBackend::Filesystem(dir) => {
            let dir = dir.clone().unwrap_or_else(|| pipeline_dir(data_dir, id).join("checkpoints"));
            Box::new(FsStore::open(&dir, id, config.store.kept)?)
        }
        StoreBackend::Redis(url) => Box::new(RedisStore::new(url, id, config.store.kept)?),
        StoreBackend::Postgres(url) => Box::new(PostgresStore::new(url, id, config.store.kept)?),
        StoreBackend::S3 { location, credentials_file } => {
            let credentials = S3Credentials::resolve(credentials_file.as_deref())?;
            Box::new(S3Store::new(location.clone(), credentials, id, config.store.kept)?)
        }
    })
}

/// Opens the journal side of a pipeline's store, on a connection of its own: `None` for the
/// filesystem store, whose journal is in the data directory.
pub fn open_journal_store(config: &PipelineConfig) -> Result<Option<Box<dyn JournalStore>>, StoreError> {
    let id = &config.settings.id;
    Ok(match &config.store.backend {
        StoreBackend::Filesystem(_) => None,
        StoreBackend::Redis(url) => Some(Box::new(RedisStore::new(url, id, config.store.kept)?)),
        StoreBackend::Postgres(url) => Some(Box::new(PostgresStore::new(url, id, config.store.kept)?)),
        StoreBackend::S3 { location, credentials_file } => {
            let credentials = S3Credentials::resolve(credentials_file.as_deref())?;
            // The journal's batches go to S3 only: the hot copy is for checkpoints.
            let location = crate::store::S3Location { hot: None, ..location.clone() };
            Some(Box::new(S3Store::new(location, credentials, id, config.store.kept)?))
        }
    })
}

/// Runs `op` with the store's retry policy (backoff with full jitter) until it succeeds, fails for
/// good, or runs out of attempts.
fn with_retries<S: ?Sized + Reconnect, T>(
    config: &PipelineConfig,
    store: &mut S,
    what: &str,
    mut op: impl FnMut(&mut S) -> Result<T, StoreError>,
) -> Result<T, RecoveryError> {
    let retry = config.store.retry;
    let mut backoff = crate::backoff::Backoff::new(retry.base, retry.cap, retry.seed);
    let mut attempt = 0;
    loop {
        match op(store) {
            Ok(v) => return Ok(v),
            Err(e) if e.is_retryable() && attempt + 1 < retry.attempts => {
                let delay = backoff.delay(attempt);
                tracing::warn!(pipeline = %config.settings.id, attempt, delay_seconds = delay.as_secs_f64(), error = %e, "{what}: the store is unavailable; retrying");
                std::thread::sleep(delay);
                store.reconnect_now();
                attempt += 1;
            }
            Err(e) => return Err(setup(&config.settings.id, format!("{what}: {e}"))),
        }
    }
}

/// A store that can drop its connection between retries.
trait Reconnect {
    fn reconnect_now(&mut self);
}

impl Reconnect for dyn CheckpointStore {
    fn reconnect_now(&mut self) {
        let _ = self.reconnect();
    }
}

impl Reconnect for dyn JournalStore {
    fn reconnect_now(&mut self) {
        let _ = self.reconnect();
    }
}

/// Checks a stored snapshot against the pipeline's ROM: it loads and has the header's state hash.
pub fn verify_snapshot(rom: &[u8], stored: &StoredCheckpoint) -> Result<(), String> {
    let cartridge = anes_core::Cartridge::from_ines(rom).map_err(|e| e.to_string())?;
    let mut nes = anes_core::Nes::new(cartridge, anes_core::NesConfig::default());
    nes.load_state(&stored.payload).map_err(|e| format!("the snapshot does not load with this ROM: {e}"))?;
    let hash = nes.state_hash();
    if hash.0 != stored.header.state_hash {
        return Err(format!(
            "the snapshot's state hash {hash} is not the header's {}",
            anes_core::hex::to_hex(&stored.header.state_hash)
        ));
    }
    Ok(())
}

/// Checks a libretro pipeline's stored snapshot: a worker's snapshot, whole (its sections framed as
/// `anes_retro_host::snapshot` writes them). Its state hash is the worker's to compute (it depends
/// on what the worker compares, e.g. its audio), so the core that loads it is the last check.
pub fn verify_retro_snapshot(stored: &StoredCheckpoint) -> Result<(), String> {
    anes_retro_host::snapshot::parse(&stored.payload)
        .map(|_| ())
        .map_err(|e| format!("not a libretro worker's snapshot: {e}"))
}

/// A pipeline taken over: its data directory's lock held, its store's epoch bumped (every writer
/// holding an older one is fenced from now on), and the newest checkpoint that verifies.
struct TakenOver {
    dir: PathBuf,
    lock: DirLock,
    store: Box<dyn CheckpointStore>,
    epoch: u64,
    checkpoint: Option<StoredCheckpoint>,
    /// Checkpoints skipped as damaged or not of this ROM.
    skipped: usize,
}

fn take_over(config: &PipelineConfig, data_dir: &Path, rom: &[u8]) -> Result<TakenOver, RecoveryError> {
    let id = &config.settings.id;
    let dir = pipeline_dir(data_dir, id);
    std::fs::create_dir_all(&dir).map_err(|e| setup(id, format!("{}: {e}", dir.display())))?;
    let lock_path = dir.join("LOCK");
    let lock = DirLock::acquire(&lock_path, Duration::ZERO)
        .map_err(|e| setup(id, format!("{}: {e}", lock_path.display())))?
        .ok_or_else(|| {
            setup(id, format!("{} is held by another anes serve: two services cannot share a pipeline's data directory (use --data-dir)", lock_path.display()))
        })?;
    let mut store = open_store(config, data_dir).map_err(|e| setup(id, e))?;
    let epoch = with_retries(config, store.as_mut(), "taking the store over", |s| s.bump_epoch())?;
    let loaded = with_retries(config, store.as_mut(), "loading checkpoints", |s| s.load())?;
    let mut skipped = loaded.damaged.len();
    let mut checkpoint = None;
    for stored in loaded.verified {
        let verified = match config.libretro {
            None => verify_snapshot(rom, &stored),
            Some(_) => verify_retro_snapshot(&stored),
        };
        match verified {
            Ok(()) => {
                checkpoint = Some(stored);
                break;
            }
            Err(reason) => {
                skipped += 1;
                tracing::error!(pipeline = %id, checkpoint = %stored.name, %reason, "stored checkpoint skipped");
            }
        }
    }
    Ok(TakenOver { dir, lock, store, epoch, checkpoint, skipped })
}

/// What `anes journal accept-loss` gave up.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AcceptedLoss {
    /// The pipeline.
    pub pipeline: String,
    /// The journal (a folder, or a store and pipeline).
    pub journal: String,
    /// The checkpoint recovery starts from.
    pub checkpoint_seq: u64,
    /// The acknowledged mark before (`None`: it was missing or damaged).
    pub acknowledged_before: Option<u64>,
    /// The records that could not be read, and where they should have been.
    pub missing: Vec<crate::journal::MissingRange>,
    /// Where the journal continues now: producers resend from here.
    pub continues_at: u64,
}

/// An operator accepting the loss of acknowledged records that cannot be read (what start-up refuses
/// with "records N..M are missing"): takes the pipeline over like a start-up (its lock, a new store
/// epoch, the newest checkpoint that verifies) and moves the journal's acknowledged mark down to the
/// first missing record after that checkpoint, so the next start continues from there. `None` when
/// nothing is missing (nothing is changed but the epoch).
pub fn accept_journal_loss(
    config: &PipelineConfig,
    data_dir: &Path,
    rom: &[u8],
) -> Result<Option<AcceptedLoss>, RecoveryError> {
    let id = &config.settings.id;
    let TakenOver { dir, lock, store: _, epoch, checkpoint, .. } = take_over(config, data_dir, rom)?;
    let start = checkpoint.as_ref().map_or(0, |c| c.header.frame);
    let loss = match open_journal_store(config).map_err(|e| setup(id, e))? {
        None => {
            let journal = dir.join("journal");
            let contents = crate::journal::read_for_loss(&journal, id).map_err(|e| setup(id, e))?;
            let acknowledged = contents.acknowledged_end;
            let missing = match acknowledged {
                Some(end) => contents.missing(start, end),
                // Without a mark what was acknowledged is unknown: what can be read counts.
                None => Vec::new(),
            };
            if acknowledged.is_some() && missing.is_empty() {
                None
            } else {
                let continues_at =
                    missing.first().map_or_else(|| contents.contiguous_end(start).max(start), |m| m.from);
                crate::journal::accept_loss(&journal, id, continues_at).map_err(|e| setup(id, e))?;
                Some(AcceptedLoss {
                    pipeline: id.clone(),
                    journal: contents.source,
                    checkpoint_seq: start,
                    acknowledged_before: acknowledged,
                    missing,
                    continues_at,
                })
            }
        }
        Some(mut store) => {
            let contents =
                with_retries(config, store.as_mut(), "reading the journal", |s| read_shared(s, start))?;
            let acknowledged = contents.acknowledged_end.unwrap_or(0);
            let missing = contents.missing(start, acknowledged);
            match missing.first().map(|m| m.from) {
                None => None,
                Some(continues_at) => {
                    with_retries(config, store.as_mut(), "moving the journal's end", |s| {
                        s.move_journal_end(epoch, continues_at)
                    })?;
                    Some(AcceptedLoss {
                        pipeline: id.clone(),
                        journal: contents.source,
                        checkpoint_seq: start,
                        acknowledged_before: Some(acknowledged),
                        missing,
                        continues_at,
                    })
                }
            }
        }
    };
    if let Some(loss) = &loss {
        tracing::warn!(pipeline = %id, journal = %loss.journal, continues_at = loss.continues_at, missing = %crate::framed::describe_all(&loss.missing), "an operator accepted the loss of acknowledged records");
    }
    drop(lock);
    Ok(loss)
}

/// Opens a pipeline's durable state and builds the pipeline that continues it.
pub fn open(config: &PipelineConfig, data_dir: &Path, rom: &[u8]) -> Result<Opened, RecoveryError> {
    let id = &config.settings.id;
    let TakenOver { dir, lock, store, epoch, checkpoint, skipped } = take_over(config, data_dir, rom)?;
    let start = checkpoint.as_ref().map_or(0, |c| c.header.frame);
    let held = HeldEpoch::new(epoch);
    let shared = open_journal_store(config).map_err(|e| setup(id, e))?;
    let (mut journal, contents, moved): (Box<dyn Journal>, JournalContents, u64) = match shared {
        None => {
            let (journal, contents) =
                FileJournal::open(&dir.join("journal"), id, config.journal).map_err(|e| setup(id, e))?;
            (Box::new(journal), contents, 0)
        }
        Some(mut store) => {
            let mut contents =
                with_retries(config, store.as_mut(), "reading the journal", |s| read_shared(s, start))?;
            // A journal that ends before the checkpoint (none yet, or one an earlier version kept in the
            // data directory) continues from the checkpoint.
            if contents.acknowledged_end.is_some_and(|e| e < start) {
                with_retries(config, store.as_mut(), "moving the journal's end to the checkpoint", |s| {
                    s.move_journal_end(epoch, start)
                })?;
                contents.acknowledged_end = Some(start);
            }
            let end = contents.contiguous_end(start).max(start);
            let moved = move_local_journal(id, &dir, end, store.as_mut(), epoch)?;
            if moved > 0 {
                contents =
                    with_retries(config, store.as_mut(), "reading the journal", |s| read_shared(s, start))?;
            }
            let end = contents.contiguous_end(start).max(start);
            (Box::new(SharedJournal::new(store, held.clone(), end)), contents, moved)
        }
    };
    // Every acknowledged record from the checkpoint on must be readable: never start with fewer.
    contents.require_acknowledged_from(start).map_err(|e| setup(id, e))?;
    let end = contents.contiguous_end(start).max(start);
    if contents.end().max(contents.acknowledged_end.unwrap_or(0)) < start {
        // The journal lost its tail (fsync = "never" and a power failure) but nothing acknowledged after
        // the checkpoint: nothing to re-run.
        tracing::warn!(pipeline = %id, journal_end = contents.end(), checkpoint = start, "the journal ends before the checkpoint; continuing from the checkpoint");
    }
    let mut log = if end > start {
        crate::pipeline::stream_frames(&contents.window(start, end - start).map_err(|e| setup(id, e))?)
    } else {
        Vec::new()
    };
    let queued = journal_legacy_queue(id, &dir, end, journal.as_mut())?;
    log.extend_from_slice(&queued);
    let summary = format!(
        "data directory {}; {} store epoch {epoch}; {}; {} journaled records to re-run{}{}{}",
        dir.display(),
        store.backend(),
        match &checkpoint {
            Some(c) => format!("recovering from the checkpoint before frame {} ({})", c.header.frame, c.name),
            None => "no checkpoint: from power-on".into(),
        },
        log.len(),
        if skipped > 0 { format!("; {skipped} damaged checkpoints skipped") } else { String::new() },
        if moved > 0 {
            format!("; {moved} records moved from the data directory's journal to the store's")
        } else {
            String::new()
        },
        if queued.is_empty() {
            String::new()
        } else {
            format!("; {} records of an earlier version's dead-letter queue journaled", queued.len())
        },
    );
    let checkpoint = checkpoint.map(|c| Checkpoint {
        seq: c.header.frame,
        cpu_cycle: c.header.cpu_cycle,
        state_hash: c.header.state_hash,
        snapshot: Arc::new(c.payload),
        taken_at: Duration::ZERO,
    });
    let pipeline = Pipeline::recover(config.settings.clone(), checkpoint, log);
    let storage = PipelineStorage::new(journal);
    Ok(Opened { pipeline, storage, store, epoch: held, lock: DirLockGuard { _lock: lock }, summary })
}

/// Appends to the store's journal what the data directory's journal of an earlier version holds from
/// `end` on, then sets that folder aside as `journal.moved-to-store`. Returns how many records.
fn move_local_journal(
    id: &str,
    dir: &Path,
    end: u64,
    store: &mut dyn JournalStore,
    epoch: u64,
) -> Result<u64, RecoveryError> {
    let local_dir = dir.join("journal");
    if !local_dir.is_dir() {
        return Ok(0);
    }
    let local = read_journal(&local_dir).map_err(|e| setup(id, e))?;
    let local_end = local.contiguous_end(end);
    if local_end > end {
        let records = local.window(end, local_end - end).map_err(|e| setup(id, e))?;
        store
            .append_batch(epoch, end, local_end, &crate::journal::encode_batch(end, &records))
            .map_err(|e| setup(id, format!("moving the data directory's journal to the store: {e}")))?;
    }
    let aside = dir.join("journal.moved-to-store");
    std::fs::rename(&local_dir, &aside).map_err(|e| setup(id, format!("{}: {e}", local_dir.display())))?;
    // No journal is kept here any more: its witness goes with it.
    let witness = crate::journal::file::witness_path(&local_dir);
    if witness.exists() {
        std::fs::rename(&witness, crate::journal::file::witness_path(&aside))
            .map_err(|e| setup(id, format!("{}: {e}", witness.display())))?;
    }
    let moved = local_end - end;
    tracing::warn!(pipeline = %id, records = moved, kept = %aside.display(), "the data directory's journal (an earlier version's) moved to the store's journal");
    Ok(moved)
}

/// Journals the records of an earlier version's dead-letter queue file (`dlq/queue.adlq`, kept beside
/// the journal before the journal held the queue) from the journal's `end` on, and sets the file aside
/// as `queue.adlq.journaled`. Records below `end` are journaled already (a crash during a replay left
/// them in both). Refused when the queue does not continue the journal, naming the records missing.
fn journal_legacy_queue(
    id: &str,
    dir: &Path,
    end: u64,
    journal: &mut dyn Journal,
) -> Result<Vec<FrameInput>, RecoveryError> {
    let path = dir.join("dlq").join("queue.adlq");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let queue = crate::dlq::inspect(&path).map_err(|e| setup(id, e))?;
    if queue.file_bytes > 0 && queue.pipeline_id != id {
        return Err(setup(
            id,
            format!(
                "{}: holds pipeline {:?}'s queue, not {id:?}'s; move it away",
                path.display(),
                queue.pipeline_id
            ),
        ));
    }
    let records: Vec<_> = queue.records.iter().filter(|r| r.seq >= end).collect();
    for (expected, r) in (end..).zip(&records) {
        if r.seq != expected {
            return Err(setup(
                id,
                format!(
                    "{}: records {expected}..{} are missing from an earlier version's dead-letter queue ({} damaged stretches); inspect it with `anes dlq inspect {}`",
                    path.display(),
                    r.seq,
                    queue.damage.len(),
                    path.display()
                ),
            ));
        }
    }
    if !queue.damage.is_empty() && records.is_empty() {
        tracing::warn!(pipeline = %id, file = %path.display(), "an earlier version's dead-letter queue has damage after the journal's end; nothing of it is journaled");
    }
    let inputs: Vec<FrameInput> = records
        .iter()
        .map(|r| FrameInput {
            pads: r.pads,
            command: anes_core::movie::ConsoleCommand::from_u8(r.command).unwrap_or_default(),
        })
        .collect();
    for (seq, &input) in (end..).zip(&inputs) {
        journal.append(seq, input);
    }
    journal.commit().map_err(|e| setup(id, e))?;
    let aside = path.with_extension("adlq.journaled");
    std::fs::rename(&path, &aside).map_err(|e| setup(id, format!("{}: {e}", path.display())))?;
    tracing::warn!(pipeline = %id, records = inputs.len(), kept = %aside.display(), "an earlier version's dead-letter queue journaled");
    Ok(inputs)
}
