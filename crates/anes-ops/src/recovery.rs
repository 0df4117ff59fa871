//! What a pipeline finds at start-up in its data directory (`<data_dir>/<id>/`) and store, and the
//! pipeline built from it: take the directory's lock, take the pipeline over in the store (bump its
//! epoch, with retries), load the newest checkpoint that verifies (header and payload checksums, then
//! the snapshot loaded into a console of the pipeline's ROM must have the header's state hash), read the
//! journal from that checkpoint on and the dead-letter queue, and hand all of it to
//! [`Pipeline::recover`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use thiserror::Error;

use crate::config::{PipelineConfig, StoreBackend};
use crate::dlq::{DeadLetterQueue, FileDlq};
use crate::journal::FileJournal;
use crate::pipeline::{Checkpoint, Pipeline, PipelineStorage};
use crate::store::fs::DirLock;
use crate::store::{
    CheckpointStore, FsStore, PostgresStore, RedisStore, S3Credentials, S3Store, StoreError, StoredCheckpoint,
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
    /// The epoch it was taken over with.
    pub epoch: u64,
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

/// Runs `op` with the store's retry policy (backoff with full jitter) until it succeeds, fails for
/// good, or runs out of attempts.
fn with_retries<T>(
    config: &PipelineConfig,
    store: &mut dyn CheckpointStore,
    what: &str,
    mut op: impl FnMut(&mut dyn CheckpointStore) -> Result<T, StoreError>,
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
                let _ = store.reconnect();
                attempt += 1;
            }
            Err(e) => return Err(setup(&config.settings.id, format!("{what}: {e}"))),
        }
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

/// Opens a pipeline's durable state and builds the pipeline that continues it.
pub fn open(config: &PipelineConfig, data_dir: &Path, rom: &[u8]) -> Result<Opened, RecoveryError> {
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
    // The takeover: every writer holding an older epoch is fenced from now on.
    let epoch = with_retries(config, store.as_mut(), "taking the store over", |s| s.bump_epoch())?;
    let loaded = with_retries(config, store.as_mut(), "loading checkpoints", |s| s.load())?;
    let mut skipped = loaded.damaged.len();
    let mut checkpoint = None;
    for stored in loaded.verified {
        match verify_snapshot(rom, &stored) {
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
    let start = checkpoint.as_ref().map_or(0, |c| c.header.frame);
    let (mut journal, contents) =
        FileJournal::open(&dir.join("journal"), id, config.journal).map_err(|e| setup(id, e))?;
    let log: Vec<FrameInput> = if contents.end() >= start {
        let records = contents.records_from(&dir.join("journal"), start).map_err(|e| setup(id, e))?;
        crate::pipeline::stream_frames(&records)
    } else {
        // The journal lost its tail (fsync = "never" and a power failure): nothing to re-run.
        tracing::warn!(pipeline = %id, journal_end = contents.end(), checkpoint = start, "the journal ends before the checkpoint; continuing from the checkpoint");
        journal.continue_at(start);
        Vec::new()
    };
    let log_end = start + log.len() as u64;
    let (dlq, report) = FileDlq::open(
        &dir.join("dlq").join("queue.adlq"),
        id,
        config.settings.dlq_capacity,
        config.dlq_fsync,
        log_end,
    )
    .map_err(|e| setup(id, e))?;
    let mut first = Vec::new();
    dlq.front(1, &mut first);
    if let Some(&(seq, _)) = first.first()
        && seq != log_end
    {
        return Err(setup(
            id,
            format!(
                "the dead-letter queue starts at record {seq} but the journal ends at {log_end}: records are missing; inspect it with `anes dlq inspect {}`",
                dlq.path().display()
            ),
        ));
    }
    let summary = format!(
        "data directory {}; {} store epoch {epoch}; {}; {} journaled records to re-run; {} in the dead-letter queue{}{}",
        dir.display(),
        store.backend(),
        match &checkpoint {
            Some(c) => format!("recovering from the checkpoint before frame {} ({})", c.header.frame, c.name),
            None => "no checkpoint: from power-on".into(),
        },
        log.len(),
        report.records,
        if skipped > 0 { format!("; {skipped} damaged checkpoints skipped") } else { String::new() },
        if report.torn_tail_bytes > 0 || !report.damage.is_empty() {
            format!(
                "; queue recovered (torn tail {} bytes, {} damaged stretches)",
                report.torn_tail_bytes,
                report.damage.len()
            )
        } else {
            String::new()
        },
    );
    let checkpoint = checkpoint.map(|c| Checkpoint {
        seq: c.header.frame,
        cpu_cycle: c.header.cpu_cycle,
        state_hash: c.header.state_hash,
        snapshot: Arc::new(c.payload),
        taken_at: Duration::ZERO,
    });
    let mut queued = Vec::new();
    dlq.front(usize::MAX, &mut queued);
    let pipeline = Pipeline::recover(config.settings.clone(), checkpoint, log, queued);
    let storage = PipelineStorage::new(Box::new(journal), Box::new(dlq));
    Ok(Opened { pipeline, storage, store, epoch, lock: DirLockGuard { _lock: lock }, summary })
}
