//! The input journal: every record a pipeline runs, in sequence order, written before any worker runs
//! it (a write-ahead log), so the service recovers what it acknowledged after a crash, and the last N
//! steps of real traffic can be cut out and replayed (`anes movie cut`).
//!
//! Layout: `<data_dir>/<id>/journal/seg-<first sequence number, 20 digits>.ajnl`, rotating segments of
//! at most `segment_bytes` (a new one starts when the current one is full; the names sort in order and
//! say where each starts). A segment is a framed file ([`crate::framed`], magic `ANESJRNL`) whose records
//! each hold one committed batch: its first sequence number (u64) then the batch as an anes input stream
//! (`ANESINPT`, the core's format, blake3-checked itself).
//!
//! What a crash leaves, step by step:
//!
//! | crash during | on disk | at the next start |
//! |---|---|---|
//! | a batch's append (before its fsync) | the earlier batches, maybe part of this one | the torn batch is cut off; it was never acknowledged nor run (the workers get records only once committed) |
//! | after the commit | the batch | re-run from the newest durable checkpoint |
//! | starting a segment | an empty or header-only segment | read as empty; appending resumes after the last complete batch |
//! | removing old segments (retention) | one more old segment | removed later |
//!
//! Retention never removes a segment holding records at or after the oldest checkpoint the store keeps:
//! those are what recovery re-runs.

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anes_core::movie::{FrameInput, InputStream, MAX_FRAMES};
use serde::Serialize;
use thiserror::Error;

use crate::framed::{self, Damage, FileHeader, FsyncPolicy};

/// A segment's magic.
pub const JOURNAL_MAGIC: [u8; 8] = *b"ANESJRNL";
/// Default segment size cap: 8 MiB.
pub const DEFAULT_SEGMENT_BYTES: u64 = 8 << 20;
/// Default segments kept: 16.
pub const DEFAULT_SEGMENTS_KEPT: usize = 16;
/// The largest segment read: the largest `segment_bytes` (1 GiB) plus one batch of the largest record.
const MAX_SEGMENT_READ: u64 = (1 << 30) + framed::MAX_RECORD_LEN as u64 + 16;

/// A journal failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum JournalError {
    /// A file could not be read or written.
    #[error("journal {0}")]
    Io(String),
    /// Records are missing where they are needed.
    #[error(
        "journal {dir}: records {expected}..{found} are missing (segments deleted or damaged); the journal cannot give back what the service acknowledged there"
    )]
    Gap {
        /// The directory.
        dir: String,
        /// The first missing sequence number.
        expected: u64,
        /// Where records resume.
        found: u64,
    },
    /// More records asked for at once than an input stream holds.
    #[error("journal {dir}: records {from}..{end} are more than an input stream holds (2^32 - 1 frames)")]
    TooMany {
        /// The directory.
        dir: String,
        /// The first record asked for.
        from: u64,
        /// The record after the last.
        end: u64,
    },
}

fn io(path: &Path, e: impl std::fmt::Display) -> JournalError {
    JournalError::Io(format!("{}: {e}", path.display()))
}

/// Where a pipeline's accepted records go before the workers get them.
pub trait Journal: Send + std::fmt::Debug {
    /// Adds a record (pending until [`Journal::commit`]); sequence numbers are consecutive.
    fn append(&mut self, seq: u64, input: FrameInput);
    /// Writes the pending records (fsync by policy). On an error they are dropped.
    fn commit(&mut self) -> Result<(), JournalError>;
    /// Records before `seq` are no longer needed for recovery; old segments may go.
    fn release_before(&mut self, seq: u64);
}

/// A journal that keeps nothing (tests of the pipeline alone).
#[derive(Debug, Default)]
pub struct NoJournal;

impl Journal for NoJournal {
    fn append(&mut self, _seq: u64, _input: FrameInput) {}
    fn commit(&mut self) -> Result<(), JournalError> {
        Ok(())
    }
    fn release_before(&mut self, _seq: u64) {}
}

/// The segment file name for a segment starting at `first_seq`.
pub fn segment_name(first_seq: u64) -> String {
    format!("seg-{first_seq:020}.ajnl")
}

fn parse_segment_name(name: &str) -> Option<u64> {
    name.strip_prefix("seg-")?.strip_suffix(".ajnl")?.parse().ok()
}

/// One committed batch read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Sequence number of its first record.
    pub first_seq: u64,
    /// Its records, run-length encoded as in the file (a batch may declare billions of frames).
    pub inputs: InputStream,
}

/// A journal directory read back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JournalContents {
    /// Segments, in order, with their first sequence numbers.
    pub segments: Vec<(String, u64)>,
    /// The batches that verify, in sequence order.
    #[serde(skip)]
    pub batches: Vec<Batch>,
    /// Damage found (segment name, stretch).
    pub damage: Vec<(String, Damage)>,
    /// A torn last batch: segment and bytes.
    pub torn_tail: Option<(String, u64)>,
}

impl JournalContents {
    /// The sequence number after the last record.
    pub fn end(&self) -> u64 {
        self.batches.last().map_or(0, |b| b.first_seq + b.inputs.len() as u64)
    }

    /// The first sequence number held.
    pub fn start(&self) -> Option<u64> {
        self.batches.first().map(|b| b.first_seq)
    }

    /// Records `from..end()`, which must be held without a gap.
    pub fn records_from(&self, dir: &Path, from: u64) -> Result<InputStream, JournalError> {
        self.window(dir, from, self.end().saturating_sub(from))
    }

    /// Records `from..from + count`, which must be held without a gap, as one input stream built run by
    /// run (memory follows the runs, never the frame count).
    pub fn window(&self, dir: &Path, from: u64, count: u64) -> Result<InputStream, JournalError> {
        let end = from.saturating_add(count);
        if count > MAX_FRAMES as u64 {
            return Err(JournalError::TooMany { dir: dir.display().to_string(), from, end });
        }
        let mut out = InputStream::new();
        let mut next = from;
        for b in &self.batches {
            if next >= end {
                break;
            }
            let batch_end = b.first_seq + b.inputs.len() as u64;
            if batch_end <= next {
                continue;
            }
            if b.first_seq > next {
                break;
            }
            // Both offsets are within the batch, whose length fits in usize.
            let skip = (next - b.first_seq) as usize;
            let take = (batch_end.min(end) - b.first_seq) as usize;
            out.append(&b.inputs.slice(skip..take));
            next = batch_end.min(end);
        }
        if next < end {
            let found = self.batches.iter().map(|b| b.first_seq).find(|&first| first > next).unwrap_or(end);
            return Err(JournalError::Gap { dir: dir.display().to_string(), expected: next, found });
        }
        Ok(out)
    }
}

fn segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>, JournalError> {
    let mut out = Vec::new();
    match fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry.map_err(|e| io(dir, e))?;
                if let Some(first) = parse_segment_name(&entry.file_name().to_string_lossy()) {
                    out.push((first, entry.path()));
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(dir, e)),
    }
    out.sort();
    Ok(out)
}

fn decode_batch(payload: &[u8]) -> Result<Batch, String> {
    if payload.len() < 8 {
        return Err("a batch shorter than its sequence number".into());
    }
    let first_seq = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
    let inputs = InputStream::from_bytes(&payload[8..]).map_err(|e| e.to_string())?;
    if first_seq.checked_add(inputs.len() as u64).is_none() {
        return Err(format!(
            "a batch of {} records from sequence number {first_seq} runs past 2^64",
            inputs.len()
        ));
    }
    Ok(Batch { first_seq, inputs })
}

/// Reads every segment of a journal directory, verifying each batch, without changing anything.
pub fn read_journal(dir: &Path) -> Result<JournalContents, JournalError> {
    let mut contents = JournalContents::default();
    let list = segments(dir)?;
    for (i, (first, path)) in list.iter().enumerate() {
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        contents.segments.push((name.clone(), *first));
        let bytes = anes_fs::read_capped(path, MAX_SEGMENT_READ, "journal segment")
            .map_err(|e| JournalError::Io(e.to_string()))?;
        let scan = match framed::scan(&bytes, &JOURNAL_MAGIC, framed::MAX_RECORD_LEN) {
            Ok(scan) => scan,
            // A segment whose header never made it to disk (a crash as it was created) holds nothing.
            Err(_) if bytes.len() < 64 && i + 1 == list.len() => {
                contents.torn_tail = Some((name, bytes.len() as u64));
                continue;
            }
            Err(e) => return Err(io(path, e)),
        };
        for d in scan.damage {
            contents.damage.push((name.clone(), d));
        }
        for range in scan.records {
            match decode_batch(&bytes[range.clone()]) {
                Ok(batch) => contents.batches.push(batch),
                Err(reason) => contents.damage.push((
                    name.clone(),
                    Damage { offset: range.start as u64 - 16, len: range.len() as u64 + 16, reason },
                )),
            }
        }
        if let Some(t) = scan.torn_tail {
            contents.torn_tail = Some((name, (bytes.len() - t) as u64));
        }
    }
    contents.batches.sort_by_key(|b| b.first_seq);
    Ok(contents)
}

/// How a journal writes.
#[derive(Debug, Clone, Copy)]
pub struct JournalSettings {
    /// A new segment starts once the current one reaches this size.
    pub segment_bytes: u64,
    /// Segments kept at least (older ones go once recovery no longer needs them).
    pub segments_kept: usize,
    /// When batches are fsynced.
    pub fsync: FsyncPolicy,
}

impl Default for JournalSettings {
    fn default() -> JournalSettings {
        JournalSettings {
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            segments_kept: DEFAULT_SEGMENTS_KEPT,
            fsync: FsyncPolicy::Batch,
        }
    }
}

/// The durable [`Journal`].
#[derive(Debug)]
pub struct FileJournal {
    dir: PathBuf,
    pipeline: String,
    settings: JournalSettings,
    /// The segment being appended to: first sequence number, file, length.
    current: Option<(u64, File, u64)>,
    /// The next sequence number the current segment expects.
    end: u64,
    pending: Vec<FrameInput>,
    pending_first: u64,
}

impl FileJournal {
    /// Opens a journal directory for appending: reads it back ([`read_journal`]), cuts a torn last
    /// batch, and returns the journal and what it holds (for recovery).
    pub fn open(
        dir: &Path,
        pipeline: &str,
        settings: JournalSettings,
    ) -> Result<(FileJournal, JournalContents), JournalError> {
        fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let contents = read_journal(dir)?;
        if let Some((name, bytes)) = &contents.torn_tail {
            let path = dir.join(name);
            let len = fs::metadata(&path).map_err(|e| io(&path, e))?.len();
            tracing::warn!(file = %path.display(), bytes, "journal: cutting a batch torn by a crash (it was never acknowledged)");
            if *bytes >= len {
                // A segment whose header never made it: removed, started again when needed.
                fs::remove_file(&path).map_err(|e| io(&path, e))?;
            } else {
                let file = OpenOptions::new().write(true).open(&path).map_err(|e| io(&path, e))?;
                file.set_len(len - bytes).and_then(|()| file.sync_all()).map_err(|e| io(&path, e))?;
            }
        }
        if !contents.damage.is_empty() {
            tracing::error!(dir = %dir.display(), damage = %crate::framed::describe_all(contents.damage.iter().map(|(segment, d)| format!("{segment}: {d}"))), "journal: damaged batches skipped");
        }
        let end = contents.end();
        let mut journal = FileJournal {
            dir: dir.to_path_buf(),
            pipeline: pipeline.to_string(),
            settings,
            current: None,
            end,
            pending: Vec::new(),
            pending_first: end,
        };
        // Append to the last segment when it is the one holding the end.
        if let Some((first, path)) = segments(dir)?.pop() {
            let len = fs::metadata(&path).map_err(|e| io(&path, e))?.len();
            if contents.batches.last().is_some_and(|b| b.first_seq >= first) || (len > 0 && end == first) {
                let mut file =
                    OpenOptions::new().read(true).write(true).open(&path).map_err(|e| io(&path, e))?;
                file.seek(SeekFrom::End(0)).map_err(|e| io(&path, e))?;
                journal.current = Some((first, file, len));
            }
        }
        Ok((journal, contents))
    }

    /// The next sequence number expected.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Continues at `seq` (after recovery from a checkpoint beyond the journal's end: a new segment
    /// starts there, so the gap is visible in the names).
    pub fn continue_at(&mut self, seq: u64) {
        if seq != self.end {
            self.current = None;
            self.end = seq;
        }
        self.pending.clear();
        self.pending_first = seq;
    }

    fn sync(&self) -> bool {
        self.settings.fsync != FsyncPolicy::Never
    }

    fn start_segment(&mut self, first: u64) -> Result<(), JournalError> {
        let path = self.dir.join(segment_name(first));
        let header = FileHeader { magic: JOURNAL_MAGIC, pipeline_id: self.pipeline.clone() }.encode();
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        file.write_all(&header).map_err(|e| io(&path, e))?;
        if self.sync() {
            file.sync_all().map_err(|e| io(&path, e))?;
            crate::store::fs::sync_dir(&self.dir).map_err(|e| io(&self.dir, e))?;
        }
        self.current = Some((first, file, header.len() as u64));
        Ok(())
    }

    fn write_pending(&mut self) -> Result<(), JournalError> {
        let needs_new = match &self.current {
            None => true,
            Some((_, _, len)) => *len >= self.settings.segment_bytes || self.pending_first != self.end,
        };
        if needs_new {
            self.start_segment(self.pending_first)?;
        }
        let mut payload = self.pending_first.to_le_bytes().to_vec();
        payload.extend_from_slice(&InputStream::from_frames(std::mem::take(&mut self.pending)).to_bytes());
        let mut record = Vec::with_capacity(payload.len() + 16);
        framed::encode_record(&payload, &mut record);
        let sync = self.sync();
        let (first, file, len) = self.current.as_mut().expect("a segment is open");
        let path = self.dir.join(segment_name(*first));
        let written = file.write_all(&record).and_then(|()| if sync { file.sync_data() } else { Ok(()) });
        if let Err(e) = written {
            // Leave only complete batches behind.
            let _ = file.set_len(*len).and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()));
            return Err(io(&path, e));
        }
        *len += record.len() as u64;
        Ok(())
    }
}

impl Journal for FileJournal {
    fn append(&mut self, seq: u64, input: FrameInput) {
        if self.pending.is_empty() {
            self.pending_first = seq;
        }
        self.pending.push(input);
    }

    fn commit(&mut self) -> Result<(), JournalError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let count = self.pending.len() as u64;
        let first = self.pending_first;
        match self.write_pending() {
            Ok(()) => {
                self.end = first + count;
                self.pending_first = self.end;
                Ok(())
            }
            Err(e) => {
                self.pending.clear();
                self.pending_first = self.end;
                Err(e)
            }
        }
    }

    fn release_before(&mut self, seq: u64) {
        let Ok(list) = segments(&self.dir) else { return };
        let current = self.current.as_ref().map(|c| c.0);
        let mut removable = list.len().saturating_sub(self.settings.segments_kept);
        for (i, (first, path)) in list.iter().enumerate() {
            if removable == 0 || Some(*first) == current {
                break;
            }
            // The segment ends where the next begins: gone only when wholly before `seq`.
            let Some((next_first, _)) = list.get(i + 1) else { break };
            if *next_first > seq {
                break;
            }
            if fs::remove_file(path).is_ok() {
                tracing::debug!(file = %path.display(), "journal segment removed (retention)");
                removable -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "anes-journal-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ))
    }

    fn input(seq: u64) -> FrameInput {
        FrameInput::buttons((seq * 7 % 251) as u8, (seq % 3) as u8)
    }

    fn write(journal: &mut FileJournal, from: u64, to: u64, batch: u64) {
        let mut seq = from;
        while seq < to {
            for s in seq..(seq + batch).min(to) {
                journal.append(s, input(s));
            }
            journal.commit().unwrap();
            seq += batch;
        }
    }

    #[test]
    fn rotates_reads_back_and_keeps_what_recovery_needs() {
        let dir = temp("rotate");
        let settings = JournalSettings { segment_bytes: 300, segments_kept: 2, fsync: FsyncPolicy::Never };
        let (mut j, contents) = FileJournal::open(&dir, "p", settings).unwrap();
        assert_eq!(contents.end(), 0);
        write(&mut j, 0, 500, 17);
        let back = read_journal(&dir).unwrap();
        assert!(back.segments.len() > 3, "{:?}", back.segments);
        assert_eq!(back.records_from(&dir, 0).unwrap(), (0..500).map(input).collect::<InputStream>());
        assert_eq!(back.segments[1].1, 17 * (back.segments[1].1 / 17), "segments start at batch boundaries");
        j.release_before(200);
        let after = read_journal(&dir).unwrap();
        assert!(after.start().unwrap() <= 200, "records from 200 on are kept");
        assert!(after.start().unwrap() > 0, "older segments went");
        assert_eq!(after.records_from(&dir, 200).unwrap(), (200..500).map(input).collect::<InputStream>());
        // Reopened, it continues where it was.
        drop(j);
        let (mut j, contents) = FileJournal::open(&dir, "p", settings).unwrap();
        assert_eq!(contents.end(), 500);
        write(&mut j, 500, 520, 20);
        assert_eq!(read_journal(&dir).unwrap().end(), 520);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_crash_at_every_byte_of_the_last_batch_loses_only_that_batch() {
        let dir = temp("crash");
        let settings =
            JournalSettings { segment_bytes: 1 << 20, segments_kept: 2, fsync: FsyncPolicy::Never };
        let (mut j, _) = FileJournal::open(&dir, "p", settings).unwrap();
        write(&mut j, 0, 40, 10);
        drop(j);
        let path = dir.join(segment_name(0));
        let full = fs::read(&path).unwrap();
        assert_eq!(read_journal(&dir).unwrap().end(), 40);
        // A batch of 10 frames is a 16-byte frame header, 8 bytes of sequence number and an input
        // stream of at least 57 bytes: any cut within 60 bytes tears the last batch only.
        for cut in 1..60 {
            fs::write(&path, &full[..full.len() - cut]).unwrap();
            let (mut j, contents) = FileJournal::open(&dir, "p", settings).unwrap();
            assert_eq!(contents.end(), 30, "cut {cut}");
            assert!(contents.torn_tail.is_some());
            write(&mut j, 30, 45, 15);
            let back = read_journal(&dir).unwrap();
            assert_eq!(
                back.records_from(&dir, 0).unwrap(),
                (0..45).map(input).collect::<InputStream>(),
                "cut {cut}"
            );
            assert!(back.torn_tail.is_none() && back.damage.is_empty());
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A batch declaring 2^32 - 1 records in a few hundred kilobytes: read and windowed run by run
    /// (expanded, it would take 12 GiB).
    #[test]
    fn a_batch_of_four_billion_records_is_read_and_cut_run_by_run() {
        let dir = temp("huge");
        fs::create_dir_all(&dir).unwrap();
        let mut stream = InputStream::new();
        stream.push_repeated(FrameInput::buttons(1, 0), MAX_FRAMES - 1);
        stream.push(FrameInput::buttons(2, 0));
        let mut payload = 100u64.to_le_bytes().to_vec();
        payload.extend_from_slice(&stream.to_bytes());
        let mut segment = FileHeader { magic: JOURNAL_MAGIC, pipeline_id: "p".into() }.encode();
        framed::encode_record(&payload, &mut segment);
        fs::write(dir.join(segment_name(100)), &segment).unwrap();
        let back = read_journal(&dir).unwrap();
        assert_eq!((back.start(), back.end()), (Some(100), 100 + MAX_FRAMES as u64));
        let last = back.window(&dir, 100 + MAX_FRAMES as u64 - 2, 2).unwrap();
        assert_eq!(last.frames().collect::<Vec<_>>(), [FrameInput::buttons(1, 0), FrameInput::buttons(2, 0)]);
        assert_eq!(back.records_from(&dir, 100).unwrap(), stream);
        let e = back.window(&dir, 50, 60).unwrap_err();
        assert!(matches!(e, JournalError::Gap { expected: 50, found: 100, .. }), "{e}");
        let e = back.window(&dir, 100 + MAX_FRAMES as u64 - 1, 2).unwrap_err();
        assert!(
            matches!(e, JournalError::Gap { expected, found, .. } if expected == 100 + MAX_FRAMES as u64 && found == expected + 1),
            "{e}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_segment_that_is_a_fifo_is_refused_at_once() {
        let dir = temp("fifo");
        fs::create_dir_all(&dir).unwrap();
        let status = std::process::Command::new("mkfifo").arg(dir.join(segment_name(0))).status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("note: mkfifo unavailable: FIFO segment test skipped");
            return;
        }
        let e = read_journal(&dir).unwrap_err();
        assert!(e.to_string().contains("is a FIFO (named pipe), not a regular file"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_gap_is_reported_not_papered_over() {
        let dir = temp("gap");
        let settings =
            JournalSettings { segment_bytes: 1 << 20, segments_kept: 2, fsync: FsyncPolicy::Never };
        let (mut j, _) = FileJournal::open(&dir, "p", settings).unwrap();
        write(&mut j, 0, 10, 10);
        j.continue_at(50);
        write(&mut j, 50, 60, 10);
        let back = read_journal(&dir).unwrap();
        assert_eq!(back.segments.len(), 2);
        assert_eq!(back.records_from(&dir, 55).unwrap().len(), 5);
        let e = back.records_from(&dir, 5).unwrap_err();
        assert!(matches!(e, JournalError::Gap { expected: 10, found: 50, .. }), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
