//! The durable dead-letter queue: one append-only file (`<data_dir>/<id>/dlq/queue.adlq`) of framed
//! records ([`crate::framed`], magic `ANESDLQ1`), each record's payload its sequence number (u64), both
//! ports and the console command (11 bytes).
//!
//! What a crash leaves, step by step:
//!
//! | crash during | on disk | at the next start |
//! |---|---|---|
//! | appending a batch (before its fsync) | the committed records, maybe part of the batch | the complete records are queued again; a torn last record is cut off. None of the batch was acknowledged (the answer waits for the commit) |
//! | after the commit | every acknowledged record | all queued, replayed after recovery |
//! | replaying: records journaled, queue not yet truncated | the records in both | records already in the journal (sequence number below its end) are dropped, not run twice |
//! | truncating | the old or the empty file | as above |
//!
//! A record damaged later (not at the end) is skipped alone (the scan resynchronizes on the next
//! record); the original file is kept beside the queue as `queue.adlq.damaged-<n>` for the operator
//! and the queue is rewritten with every record that verifies.

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anes_core::movie::{ConsoleCommand, FrameInput};
use serde::Serialize;

use super::{DeadLetterQueue, DlqError};
use crate::framed::{self, Damage, FileHeader, FsyncPolicy};

/// The queue file's magic.
pub const DLQ_MAGIC: [u8; 8] = *b"ANESDLQ1";
const PAYLOAD_LEN: usize = 11;
/// The largest queue file read (far above any capacity's worth of records).
const MAX_FILE_LEN: u64 = 1 << 30;

fn io(path: &Path, e: impl std::fmt::Display) -> DlqError {
    DlqError::Io(format!("{}: {e}", path.display()))
}

fn encode(seq: u64, input: FrameInput) -> [u8; PAYLOAD_LEN] {
    let mut out = [0u8; PAYLOAD_LEN];
    out[..8].copy_from_slice(&seq.to_le_bytes());
    out[8] = input.pads[0];
    out[9] = input.pads[1];
    out[10] = input.command as u8;
    out
}

fn decode(payload: &[u8]) -> Result<(u64, FrameInput), String> {
    if payload.len() != PAYLOAD_LEN {
        return Err(format!("a record of {} bytes, not {PAYLOAD_LEN}", payload.len()));
    }
    let seq = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
    let command = ConsoleCommand::from_u8(payload[10])
        .ok_or_else(|| format!("unknown command byte {:#04x}", payload[10]))?;
    Ok((seq, FrameInput { pads: [payload[8], payload[9]], command }))
}

/// One record as `anes dlq inspect` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InspectedRecord {
    /// The record's input sequence number (its frame in the pipeline's input).
    pub seq: u64,
    /// Port 1 and port 2 buttons.
    pub pads: [u8; 2],
    /// 0 none, 1 soft reset, 2 power cycle.
    pub command: u8,
}

/// What a queue file holds, read without changing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DlqInspection {
    /// The queue file inspected, as given.
    pub path: String,
    /// The queue file's size in bytes, torn tail and damage included.
    pub file_bytes: u64,
    /// The pipeline it belongs to.
    pub pipeline_id: String,
    /// The records that verify, in order.
    pub records: Vec<InspectedRecord>,
    /// Stretches that did not verify (records lost in the middle).
    pub damage: Vec<Damage>,
    /// Bytes of an incomplete last record (a write torn by a crash), cut off at the next start.
    pub torn_tail_bytes: u64,
    /// True when the sequence numbers run without a gap.
    pub contiguous: bool,
}

fn read_capped(path: &Path) -> Result<Vec<u8>, DlqError> {
    anes_fs::read_capped(path, MAX_FILE_LEN, "dead-letter queue").map_err(|e| DlqError::Read(e.to_string()))
}

/// Reads a queue file without changing it (`anes dlq inspect`).
pub fn inspect(path: &Path) -> Result<DlqInspection, DlqError> {
    let bytes = read_capped(path)?;
    let scan = framed::scan(&bytes, &DLQ_MAGIC, PAYLOAD_LEN).map_err(|e| io(path, e))?;
    let mut damage = scan.damage.clone();
    let mut records = Vec::new();
    for range in &scan.records {
        match decode(&bytes[range.clone()]) {
            Ok((seq, input)) => {
                records.push(InspectedRecord { seq, pads: input.pads, command: input.command as u8 })
            }
            Err(reason) => {
                damage.push(Damage { offset: range.start as u64 - 16, len: range.len() as u64 + 16, reason })
            }
        }
    }
    let contiguous = records.windows(2).all(|w| w[1].seq == w[0].seq + 1);
    Ok(DlqInspection {
        path: path.display().to_string(),
        file_bytes: bytes.len() as u64,
        pipeline_id: scan.header.pipeline_id,
        records,
        damage,
        torn_tail_bytes: scan.torn_tail.map_or(0, |t| (bytes.len() - t) as u64),
        contiguous,
    })
}

/// What opening a queue found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DlqOpenReport {
    /// Records queued (to replay after recovery).
    pub records: usize,
    /// Records dropped because the journal already holds them (a crash during a replay).
    pub already_journaled: usize,
    /// Bytes of a torn last record cut off.
    pub torn_tail_bytes: u64,
    /// Damaged stretches skipped.
    pub damage: Vec<Damage>,
    /// Where the damaged original was kept, if it was.
    pub kept_aside: Option<String>,
}

/// The durable [`DeadLetterQueue`].
#[derive(Debug)]
pub struct FileDlq {
    path: PathBuf,
    file: File,
    header_len: u64,
    records: VecDeque<(u64, FrameInput)>,
    committed: usize,
    pending: Vec<u8>,
    capacity: usize,
    fsync: FsyncPolicy,
}

impl FileDlq {
    /// Opens (creating it) the queue at `path` for `pipeline`: recovers what a crash left (cuts a torn
    /// tail, skips damage keeping the original aside), and drops records below `journal_end` (already
    /// journaled). The records left are queued, in order.
    pub fn open(
        path: &Path,
        pipeline: &str,
        capacity: usize,
        fsync: FsyncPolicy,
        journal_end: u64,
    ) -> Result<(FileDlq, DlqOpenReport), DlqError> {
        let header = FileHeader { magic: DLQ_MAGIC, pipeline_id: pipeline.to_string() }.encode();
        let dir = path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let mut report = DlqOpenReport::default();
        let mut records = VecDeque::new();
        let rewrite = if path.exists() {
            let bytes = read_capped(path)?;
            let scan = framed::scan(&bytes, &DLQ_MAGIC, PAYLOAD_LEN).map_err(|e| {
                io(
                    path,
                    format!(
                        "{e}: not a dead-letter queue; move it away (the service will start a new queue)"
                    ),
                )
            })?;
            if scan.header.pipeline_id != pipeline {
                return Err(io(
                    path,
                    format!("holds pipeline {:?}'s queue, not {pipeline:?}'s", scan.header.pipeline_id),
                ));
            }
            report.damage = scan.damage.clone();
            for range in &scan.records {
                match decode(&bytes[range.clone()]) {
                    Ok((seq, _)) if seq < journal_end => report.already_journaled += 1,
                    Ok(record) => records.push_back(record),
                    Err(reason) => report.damage.push(Damage {
                        offset: range.start as u64 - 16,
                        len: range.len() as u64 + 16,
                        reason,
                    }),
                }
            }
            if let Some(t) = scan.torn_tail {
                report.torn_tail_bytes = (bytes.len() - t) as u64;
            }
            if !report.damage.is_empty() {
                let aside = (1..)
                    .map(|n| path.with_extension(format!("adlq.damaged-{n}")))
                    .find(|p| !p.exists())
                    .expect("a free name");
                fs::copy(path, &aside).map_err(|e| io(&aside, e))?;
                tracing::error!(file = %path.display(), kept = %aside.display(), damage = %crate::framed::describe_all(&report.damage), "the dead-letter queue has damaged records: skipped; the original is kept");
                report.kept_aside = Some(aside.display().to_string());
            }
            !report.damage.is_empty() || report.already_journaled > 0 || report.torn_tail_bytes > 0
        } else {
            true
        };
        if rewrite {
            // Invariant: the queue is replaced atomically by what it should hold; a crash leaves the old
            // file (recovered the same way next time) or the new one.
            let mut bytes = header.clone();
            for &(seq, input) in &records {
                framed::encode_record(&encode(seq, input), &mut bytes);
            }
            let tmp = path.with_extension("adlq.tmp");
            let mut file = File::create(&tmp).map_err(|e| io(&tmp, e))?;
            file.write_all(&bytes).and_then(|()| file.sync_all()).map_err(|e| io(&tmp, e))?;
            fs::rename(&tmp, path).map_err(|e| io(path, e))?;
            crate::store::fs::sync_dir(dir).map_err(|e| io(dir, e))?;
        }
        let mut file = OpenOptions::new().read(true).write(true).open(path).map_err(|e| io(path, e))?;
        file.seek(SeekFrom::End(0)).map_err(|e| io(path, e))?;
        report.records = records.len();
        let committed = records.len();
        Ok((
            FileDlq {
                path: path.to_path_buf(),
                file,
                header_len: header.len() as u64,
                records,
                committed,
                pending: Vec::new(),
                capacity,
                fsync,
            },
            report,
        ))
    }

    /// Where this queue keeps its records.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn drop_pending(&mut self) {
        self.records.truncate(self.committed);
        self.pending.clear();
    }
}

impl DeadLetterQueue for FileDlq {
    fn push(&mut self, seq: u64, record: FrameInput) -> Result<(), DlqError> {
        if self.records.len() >= self.capacity {
            return Err(DlqError::Full { capacity: self.capacity });
        }
        framed::encode_record(&encode(seq, record), &mut self.pending);
        self.records.push_back((seq, record));
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DlqError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let result = match self.fsync {
            FsyncPolicy::Always => self.pending.chunks(16 + PAYLOAD_LEN).try_for_each(|record| {
                self.file.write_all(record)?;
                self.file.sync_data()
            }),
            FsyncPolicy::Batch => self.file.write_all(&self.pending).and_then(|()| self.file.sync_data()),
            FsyncPolicy::Never => self.file.write_all(&self.pending),
        };
        match result {
            Ok(()) => {
                self.pending.clear();
                self.committed = self.records.len();
                Ok(())
            }
            Err(e) => {
                // Cut whatever part of the batch reached the file, so the file holds committed records only.
                let end = self.header_len + (self.committed * (16 + PAYLOAD_LEN)) as u64;
                let _ = self.file.set_len(end).and_then(|()| self.file.seek(SeekFrom::End(0)).map(|_| ()));
                self.drop_pending();
                Err(io(&self.path, e))
            }
        }
    }

    fn front(&self, max: usize, out: &mut Vec<(u64, FrameInput)>) {
        out.extend(self.records.iter().take(max.min(self.committed)).copied());
    }

    fn discard_front(&mut self, n: usize) -> Result<(), DlqError> {
        let n = n.min(self.committed);
        self.records.drain(..n);
        self.committed -= n;
        if self.records.is_empty() {
            // Invariant: only records already journaled are cut; if this is lost in a crash they come
            // back at the next start and are dropped there as already journaled.
            self.file.set_len(self.header_len).map_err(|e| io(&self.path, e))?;
            self.file.seek(SeekFrom::End(0)).map_err(|e| io(&self.path, e))?;
            if self.fsync != FsyncPolicy::Never {
                self.file.sync_data().map_err(|e| io(&self.path, e))?;
            }
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.records.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue file in a folder of its own, removed with the folder when dropped (on every exit
    /// path of a test, a failed assertion included).
    struct TempQueue(PathBuf);

    impl TempQueue {
        fn new(name: &str) -> TempQueue {
            let dir = std::env::temp_dir().join(format!(
                "anes-dlq-{name}-{}-{}",
                std::process::id(),
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            ));
            fs::create_dir_all(&dir).unwrap();
            TempQueue(dir)
        }

        fn path(&self) -> PathBuf {
            self.0.join("queue.adlq")
        }
    }

    impl Drop for TempQueue {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn survives_reopening_drops_journaled_records_and_cuts_a_torn_tail() {
        let dir = TempQueue::new("reopen");
        let path = dir.path();
        let (mut q, report) = FileDlq::open(&path, "p", 100, FsyncPolicy::Batch, 0).unwrap();
        assert_eq!(report.records, 0);
        for seq in 10..20 {
            q.push(seq, FrameInput::buttons(seq as u8, 1)).unwrap();
        }
        q.commit().unwrap();
        q.push(20, FrameInput::default()).unwrap();
        drop(q); // never committed: as if the service died before answering
        // A torn record at the end, as a crash in the middle of a write leaves.
        let mut bytes = fs::read(&path).unwrap();
        let mut torn = Vec::new();
        framed::encode_record(&encode(20, FrameInput::default()), &mut torn);
        bytes.extend_from_slice(&torn[..10]);
        fs::write(&path, &bytes).unwrap();
        let inspected = inspect(&path).unwrap();
        assert_eq!(inspected.records.len(), 10);
        assert_eq!(inspected.torn_tail_bytes, 10);
        let (q, report) = FileDlq::open(&path, "p", 100, FsyncPolicy::Batch, 13).unwrap();
        assert_eq!((report.records, report.already_journaled, report.torn_tail_bytes), (7, 3, 10));
        let mut out = Vec::new();
        q.front(100, &mut out);
        assert_eq!(out.first().map(|r| r.0), Some(13));
        assert_eq!(out.last(), Some(&(19, FrameInput::buttons(19, 1))));
        assert_eq!(inspect(&path).unwrap().torn_tail_bytes, 0, "cut at open");
    }

    #[test]
    fn a_damaged_record_is_skipped_alone_and_the_original_kept() {
        let dir = TempQueue::new("damage");
        let path = dir.path();
        let (mut q, _) = FileDlq::open(&path, "p", 100, FsyncPolicy::Never, 0).unwrap();
        for seq in 0..5 {
            q.push(seq, FrameInput::buttons(1, 2)).unwrap();
        }
        q.commit().unwrap();
        drop(q);
        let mut bytes = fs::read(&path).unwrap();
        let header_len = bytes.len() - 5 * 27;
        bytes[header_len + 27 * 2 + 20] ^= 0xff; // record 2's payload
        fs::write(&path, &bytes).unwrap();
        let (q, report) = FileDlq::open(&path, "p", 100, FsyncPolicy::Never, 0).unwrap();
        assert_eq!(report.records, 4);
        assert_eq!(report.damage.len(), 1);
        assert!(Path::new(report.kept_aside.as_ref().unwrap()).exists());
        let mut out = Vec::new();
        q.front(10, &mut out);
        assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 3, 4]);
    }

    #[test]
    fn replayed_records_are_truncated_and_another_pipeline_s_queue_is_refused() {
        let dir = TempQueue::new("truncate");
        let path = dir.path();
        let (mut q, _) = FileDlq::open(&path, "p", 100, FsyncPolicy::Batch, 0).unwrap();
        q.push(0, FrameInput::default()).unwrap();
        q.commit().unwrap();
        q.discard_front(1).unwrap();
        assert!(q.is_empty());
        assert!(inspect(&path).unwrap().records.is_empty());
        let e = FileDlq::open(&path, "other", 100, FsyncPolicy::Batch, 0).unwrap_err();
        assert!(e.to_string().contains("holds pipeline \"p\"'s queue"), "{e}");
    }
}
