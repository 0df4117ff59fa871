//! The file journal: `<data_dir>/<id>/journal/`, the journal of pipelines whose checkpoints are in the
//! filesystem store. Rotating segments `seg-<first sequence number, 20 digits>.ajnl` of at most
//! `segment_bytes` (a new one starts when the current one is full, and where the journal continues
//! after a crash or a failed write; the names sort in order and say where each starts), and the
//! acknowledged mark, `acknowledged` (`journal/mark.rs`). A segment is a framed file
//! ([`crate::framed`], magic `ANESJRNL`, version 2: the pipeline id and the journal's identity, which
//! the mark holds) whose records each hold one committed batch ([`super::encode_batch`]).
//!
//! A segment's records count up to where the next segment starts: a segment started at `n` continues
//! the journal from `n`, whatever an older segment holds beyond it (an append that failed, or what a
//! crash left). Nothing here truncates or rewrites a file once it holds records: a segment that ends
//! in a torn write or damage is left as it is, and the journal continues in a new segment.
//!
//! What a crash leaves, step by step (a commit: the batch appended and fsynced, then the mark moved
//! and fsynced, then the producer answered):
//!
//! | crash during | on disk | at the next start |
//! |---|---|---|
//! | the batch's append | the earlier batches, maybe part of this one | the mark is below it: it was never acknowledged. The torn bytes stay; the journal continues in a new segment where the readable records end |
//! | the mark's write | the batch; the mark's newest slot torn | the other slot: the mark one commit older. The batch is read and re-run (never acknowledged, so running it is extra, never missing) |
//! | after the commit | the batch and the mark | re-run from the newest durable checkpoint |
//! | starting a segment | an empty or partial-header segment | read as holding nothing; replaced when the journal continues there |
//! | removing old segments (retention) | one more old segment | removed later |
//!
//! What no crash leaves is damage, and is never taken for a torn write: records below the mark that
//! cannot be read (a segment deleted, a record whose checksum fails, a segment cut short) are
//! reported as missing, naming the range and the file ([`super::JournalContents::missing`]); files of
//! another pipeline or another journal (copied in from another data directory) are refused by name.
//!
//! Retention never removes a segment holding records at or after the oldest checkpoint the store
//! keeps: those are what recovery re-runs.

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anes_core::movie::{FrameInput, InputStream};

use super::mark::{self, Mark, MarkState};
use super::{JournalContents, JournalError, Problem, decode_batch, encode_batch};
use crate::framed::{self, FileHeader, FsyncPolicy, IDENTITY_LEN};

/// A segment's magic.
pub const JOURNAL_MAGIC: [u8; 8] = *b"ANESJRNL";
/// The acknowledged mark's file name, in the journal's folder.
pub const MARK_FILE: &str = "acknowledged";
/// Default segment size cap: 8 MiB.
pub const DEFAULT_SEGMENT_BYTES: u64 = 8 << 20;
/// Default segments kept: 16.
pub const DEFAULT_SEGMENTS_KEPT: usize = 16;
/// The largest segment read: the largest `segment_bytes` (1 GiB) plus one batch of the largest record.
const MAX_SEGMENT_READ: u64 = (1 << 30) + framed::MAX_RECORD_LEN as u64 + 16;

fn io(path: &Path, e: impl std::fmt::Display) -> JournalError {
    JournalError::Io(format!("{}: {e}", path.display()))
}

/// The first of `candidates` nothing is at, not even a dangling symbolic link, so a file set aside
/// there replaces nothing set aside before. `None` when every one is taken.
fn free_name(candidates: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    candidates
        .into_iter()
        .find(|p| fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound))
}

/// Beside a journal folder (`journal.identity` next to `journal/`), written once the journal has its
/// mark: that a journal was kept here, and its identity. A folder found with neither mark nor
/// segment where this file is was lost, not new.
pub fn witness_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().map_or_else(|| "journal".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{name}.identity"))
}

/// The segment file name for a segment starting at `first_seq`.
pub fn segment_name(first_seq: u64) -> String {
    format!("seg-{first_seq:020}.ajnl")
}

fn parse_segment_name(name: &str) -> Option<u64> {
    name.strip_prefix("seg-")?.strip_suffix(".ajnl")?.parse().ok()
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

fn hex(bytes: &[u8]) -> String {
    anes_core::hex::to_hex(bytes)
}

/// A journal folder read back, and what its appender needs to know.
struct Read {
    contents: JournalContents,
    /// The mark's pipeline id and state (`None`: no mark file).
    mark: Option<(String, MarkState)>,
    /// Segments whose headers carry an identity (version 2).
    with_identity: usize,
    /// The identity the first of them carries.
    segment_identity: Option<[u8; IDENTITY_LEN]>,
    /// The newest segment, when the journal may append to it: it holds nothing but complete records
    /// that count, and its file ends with the last of them. Its first sequence number, the end of
    /// its records and its length.
    clean_tail: Option<(u64, u64, u64)>,
}

/// Which mark a read goes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkUse {
    /// The mark file's, refused when it is damaged.
    Trusted,
    /// None: the mark is being made again (an operator accepting a loss).
    Ignored,
}

/// Reads a journal folder without changing anything. `pipeline`: the pipeline it must belong to (the
/// mark's, or the first segment's, when `None`).
fn read_folder(dir: &Path, pipeline: Option<&str>, mark_use: MarkUse) -> Result<Read, JournalError> {
    let mark_path = dir.join(MARK_FILE);
    let mark = match anes_fs::read_capped(&mark_path, mark::MAX_MARK_LEN, "journal mark") {
        Ok(_) if mark_use == MarkUse::Ignored => None,
        Ok(bytes) => Some(mark::decode(&bytes).map_err(|problem| JournalError::Mark {
            file: mark_path.display().to_string(),
            problem: format!(
                "{problem}; it says which records the service acknowledged: restore it from a backup, or accept the loss with `anes journal accept-loss` (docs/OPERATIONS.md)"
            ),
        })?),
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => None,
        Err(e) => return Err(JournalError::Io(e.to_string())),
    };
    let mut owner = pipeline.map(str::to_string).or_else(|| mark.as_ref().map(|(p, _)| p.clone()));
    if let (Some(expected), Some((marked, _))) = (&owner, &mark)
        && expected != marked
    {
        return Err(JournalError::Foreign {
            file: mark_path.display().to_string(),
            problem: format!("holds pipeline {marked:?}'s mark, not {expected:?}'s"),
        });
    }
    let mut identity = mark.as_ref().map(|(_, m)| m.identity);
    let mut read = Read {
        contents: JournalContents {
            source: dir.display().to_string(),
            acknowledged_end: mark.as_ref().map(|(_, m)| m.end),
            ..JournalContents::default()
        },
        mark,
        with_identity: 0,
        segment_identity: None,
        clean_tail: None,
    };
    let list = segments(dir)?;
    for (i, (first, path)) in list.iter().enumerate() {
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        read.contents.places.push((name.clone(), *first));
        let newest = i + 1 == list.len();
        let limit = list.get(i + 1).map_or(u64::MAX, |next| next.0);
        let bytes = anes_fs::read_capped(path, MAX_SEGMENT_READ, "journal segment")
            .map_err(|e| JournalError::Io(e.to_string()))?;
        let scan = match framed::scan(&bytes, &JOURNAL_MAGIC, framed::MAX_RECORD_LEN) {
            Ok(scan) => scan,
            Err(e) => {
                // A segment whose header never made it to disk whole holds nothing: what a crash while
                // it was being created leaves (when it is the newest). Anything else is damage.
                let torn = newest
                    && bytes.len()
                        < FileHeader {
                            magic: JOURNAL_MAGIC,
                            pipeline_id: owner.clone().unwrap_or_default(),
                            identity: Some([0; IDENTITY_LEN]),
                        }
                        .encode()
                        .len();
                read.contents.problems.push(Problem {
                    place: name,
                    bytes: Some((0, bytes.len() as u64)),
                    after_seq: *first,
                    reason: e.to_string(),
                    torn,
                });
                continue;
            }
        };
        let foreign = |problem: String| JournalError::Foreign { file: path.display().to_string(), problem };
        match &owner {
            Some(expected) if *expected != scan.header.pipeline_id => {
                return Err(foreign(format!(
                    "holds pipeline {:?}'s records, not {expected:?}'s",
                    scan.header.pipeline_id
                )));
            }
            Some(_) => {}
            None => owner = Some(scan.header.pipeline_id.clone()),
        }
        if let Some(theirs) = scan.header.identity {
            read.with_identity += 1;
            read.segment_identity.get_or_insert(theirs);
            if mark_use == MarkUse::Ignored {
                identity.get_or_insert(theirs);
            }
            if let Some(ours) = identity
                && theirs != ours
            {
                return Err(foreign(format!(
                    "was written by another journal (identity {}; this journal's is {}): a segment copied from another data directory",
                    hex(&theirs),
                    hex(&ours)
                )));
            }
        }
        // Records and damage in file order: each problem sits after the records before it.
        let mut held = *first;
        let mut damage = scan.damage.iter().peekable();
        let mut last_counted = None;
        for range in &scan.records {
            while let Some(d) = damage.next_if(|d| d.offset < range.start as u64) {
                read.contents.problems.push(Problem {
                    place: name.clone(),
                    bytes: Some((d.offset, d.len)),
                    after_seq: held,
                    reason: d.reason.clone(),
                    torn: false,
                });
            }
            let frame_start = range.start as u64 - 16;
            match decode_batch(&bytes[range.clone()]) {
                Ok(batch) if batch.first_seq < *first => read.contents.problems.push(Problem {
                    place: name.clone(),
                    bytes: Some((frame_start, range.len() as u64 + 16)),
                    after_seq: held,
                    reason: format!(
                        "a batch from sequence number {} in a segment that starts at {first}",
                        batch.first_seq
                    ),
                    torn: false,
                }),
                Ok(batch) => {
                    held = batch.end();
                    last_counted = Some(batch.end().min(limit));
                    read.contents.add(batch, limit);
                }
                Err(reason) => read.contents.problems.push(Problem {
                    place: name.clone(),
                    bytes: Some((frame_start, range.len() as u64 + 16)),
                    after_seq: held,
                    reason,
                    torn: false,
                }),
            }
        }
        for d in damage {
            read.contents.problems.push(Problem {
                place: name.clone(),
                bytes: Some((d.offset, d.len)),
                after_seq: held,
                reason: d.reason.clone(),
                torn: false,
            });
        }
        if let Some(t) = scan.torn_tail {
            // Only the newest segment's end is where an append was interrupted; in an older one the same
            // bytes are damage (the journal went on after them).
            read.contents.problems.push(Problem {
                place: name.clone(),
                bytes: Some((t as u64, (bytes.len() - t) as u64)),
                after_seq: held,
                reason: if newest {
                    "cut short (a write interrupted by a crash)".into()
                } else {
                    "cut short, in a segment the journal continued after".into()
                },
                torn: newest,
            });
        }
        let clean = scan.damage.is_empty() && scan.torn_tail.is_none() && scan.good_end == bytes.len();
        if newest && clean && read.contents.problems.iter().all(|p| p.place != name) {
            read.clean_tail = Some((*first, last_counted.unwrap_or(*first), bytes.len() as u64));
        }
    }
    Ok(read)
}

/// Reads every segment of a journal folder and its mark, verifying each batch, without changing
/// anything (`anes movie cut`, `anes journal inspect`).
pub fn read_journal(dir: &Path) -> Result<JournalContents, JournalError> {
    Ok(read_folder(dir, None, MarkUse::Trusted)?.contents)
}

/// A journal folder read as [`accept_loss`] reads it: its records, its mark as it stands when it can
/// be read (`acknowledged_end`; `None` when it is missing or damaged).
pub fn read_for_loss(dir: &Path, pipeline: &str) -> Result<JournalContents, JournalError> {
    let mut contents = read_folder(dir, Some(pipeline), MarkUse::Ignored)?.contents;
    contents.acknowledged_end =
        read_folder(dir, Some(pipeline), MarkUse::Trusted).ok().and_then(|r| r.contents.acknowledged_end);
    Ok(contents)
}

/// Gives up the records the mark claims from `end` on (an operator accepting their loss: `anes
/// journal accept-loss`): the mark moves down to `end`, or, missing or damaged, is made again at `end`
/// with the identity the segments carry. Nothing else changes here: the journal continues at `end` in
/// a new segment, which supersedes what older ones hold from there, and sets aside the segments that
/// start after it (`.ajnl.superseded-N`). Returns the mark's end before, when it could be read.
pub fn accept_loss(dir: &Path, pipeline: &str, end: u64) -> Result<Option<u64>, JournalError> {
    // A lost folder is made again: the mark goes in it.
    fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let read = read_folder(dir, Some(pipeline), MarkUse::Ignored)?;
    let mark_path = dir.join(MARK_FILE);
    let io_error = |e: std::io::Error| io(&mark_path, e);
    if let Ok(Read { mark: Some((_, state)), .. }) = read_folder(dir, Some(pipeline), MarkUse::Trusted) {
        let mut mark = Mark::open(&mark_path, pipeline, state, true).map_err(io_error)?;
        mark.set(end).map_err(io_error)?;
        return Ok(Some(state.end));
    }
    let identity = read.segment_identity.unwrap_or_else(mark::new_identity);
    if mark_path.exists() {
        // A mark an earlier accept-loss set aside is evidence too: never renamed over.
        let numbered = (1..=u32::MAX).map(|n| dir.join(format!("{MARK_FILE}.damaged-{n}")));
        let aside = free_name(std::iter::once(mark_path.with_extension("damaged")).chain(numbered))
            .ok_or_else(|| io(&mark_path, "no free name to set the damaged mark aside under"))?;
        fs::rename(&mark_path, &aside).map_err(io_error)?;
        tracing::warn!(file = %mark_path.display(), kept = %aside.display(), "journal: a damaged acknowledged mark set aside");
    }
    Mark::create(&mark_path, pipeline, identity, end, true).map_err(io_error)?;
    Ok(None)
}

/// How a journal writes.
#[derive(Debug, Clone, Copy)]
pub struct JournalSettings {
    /// A new segment starts once the current one reaches this size.
    pub segment_bytes: u64,
    /// Segments kept at least (older ones go once recovery no longer needs them).
    pub segments_kept: usize,
    /// When batches and the mark are fsynced.
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

/// The durable [`super::Journal`] of the filesystem store's pipelines.
#[derive(Debug)]
pub struct FileJournal {
    dir: PathBuf,
    pipeline: String,
    identity: [u8; IDENTITY_LEN],
    settings: JournalSettings,
    mark: Mark,
    /// The segment being appended to: first sequence number, file, length.
    current: Option<(u64, File, u64)>,
    /// The newest segment as read at open, when it may be appended to (see [`Read::clean_tail`]).
    clean_tail: Option<(u64, u64, u64)>,
    /// The next sequence number the journal expects (the end of what it holds).
    end: u64,
    pending: Vec<FrameInput>,
    pending_first: u64,
}

impl FileJournal {
    /// Opens a journal folder for appending (creating it, or adopting one of an earlier version that
    /// has no mark): reads it back without changing it and returns the journal and what it holds. It
    /// appends where its records end, or from [`FileJournal::continue_at`]. Refused: files of another pipeline or journal, a
    /// damaged mark, a missing mark while segments of this version remain.
    pub fn open(
        dir: &Path,
        pipeline: &str,
        settings: JournalSettings,
    ) -> Result<(FileJournal, JournalContents), JournalError> {
        let witness = witness_path(dir);
        let created = !dir.exists();
        fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        if created && let Some(parent) = dir.parent() {
            // The new folder's entry survives a power failure before anything in it is acknowledged.
            crate::store::fs::sync_dir(parent).map_err(|e| io(parent, e))?;
        }
        let read = read_folder(dir, Some(pipeline), MarkUse::Trusted)?;
        let mut contents = read.contents;
        let sync = settings.fsync != FsyncPolicy::Never;
        let mark_path = dir.join(MARK_FILE);
        if read.mark.is_none() && contents.places.is_empty() && fs::symlink_metadata(&witness).is_ok() {
            // Neither a mark nor a segment, where a journal was: the folder was lost (deleted, a volume
            // not mounted, a restore without it), not new. Taken as new, every record it acknowledged
            // after the newest checkpoint would be lost without a word.
            return Err(JournalError::Mark {
                file: mark_path.display().to_string(),
                problem: format!(
                    "missing, and no segment either, while {} says a journal was kept here: the journal folder was lost (deleted, a volume not mounted, a restore without it) with the records it acknowledged. Restore it from a backup, or accept the loss with `anes journal accept-loss` (docs/OPERATIONS.md)",
                    witness.display()
                ),
            });
        }
        let mark = match read.mark {
            Some((_, state)) => {
                Mark::open(&mark_path, pipeline, state, sync).map_err(|e| io(&mark_path, e))?
            }
            None if read.with_identity > 0 => {
                return Err(JournalError::Mark {
                    file: mark_path.display().to_string(),
                    problem: format!(
                        "missing, while {} segments of this journal remain: it says which records the service acknowledged. Restore it from a backup, or accept the loss with `anes journal accept-loss` (docs/OPERATIONS.md)",
                        read.with_identity
                    ),
                });
            }
            None => {
                // A new journal, or one written before journals had a mark: what it holds is taken as
                // acknowledged, once.
                let end = contents.end();
                if !contents.places.is_empty() {
                    tracing::warn!(dir = %dir.display(), end, "journal of an earlier version (no acknowledged mark): adopted, its records taken as acknowledged");
                }
                let mark = Mark::create(&mark_path, pipeline, mark::new_identity(), end, true)
                    .map_err(|e| io(&mark_path, e))?;
                contents.acknowledged_end = Some(end);
                mark
            }
        };
        if fs::symlink_metadata(&witness).is_err() {
            mark::write_witness(&witness, &mark.identity()).map_err(|e| io(&witness, e))?;
        }
        for p in &contents.problems {
            if p.torn {
                tracing::warn!(dir = %dir.display(), problem = %p, "journal: a write torn by a crash (the bytes are kept; the journal continues in a new segment)");
            } else {
                tracing::error!(dir = %dir.display(), problem = %p, "journal: damaged (the file is kept as it is)");
            }
        }
        let end = contents.end();
        let mut journal = FileJournal {
            dir: dir.to_path_buf(),
            pipeline: pipeline.to_string(),
            identity: mark.identity(),
            settings,
            mark,
            current: None,
            clean_tail: read.clean_tail,
            end,
            pending: Vec::new(),
            pending_first: end,
        };
        journal.continue_at(end);
        Ok((journal, contents))
    }

    /// The next sequence number expected.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The acknowledged mark.
    pub fn acknowledged_end(&self) -> u64 {
        self.mark.end()
    }

    /// Appends from `seq` on: to the newest segment when its records end exactly there and nothing
    /// follows them in the file, else in a new segment starting at `seq` (which supersedes what older
    /// segments hold from `seq` on).
    pub fn continue_at(&mut self, seq: u64) {
        self.end = seq;
        self.pending.clear();
        self.pending_first = seq;
        self.current = None;
        if let Some((first, held_end, len)) = self.clean_tail
            && held_end == seq
        {
            let path = self.dir.join(segment_name(first));
            if let Ok(mut file) = OpenOptions::new().read(true).write(true).open(&path)
                && file.seek(SeekFrom::End(0)).is_ok_and(|at| at == len)
            {
                self.current = Some((first, file, len));
            }
        }
    }

    fn sync(&self) -> bool {
        self.settings.fsync != FsyncPolicy::Never
    }

    fn start_segment(&mut self, first: u64) -> Result<(), JournalError> {
        let path = self.dir.join(segment_name(first));
        let header = FileHeader {
            magic: JOURNAL_MAGIC,
            pipeline_id: self.pipeline.clone(),
            identity: Some(self.identity),
        }
        .encode();
        // Segments that start after this one hold records the journal no longer continues with
        // (records an operator accepted the loss of, or appends never acknowledged): set aside, never
        // deleted. Left in place, the reader would take their records over the new segment's from
        // where each starts: acknowledged records replaced by old ones, without an error.
        for (later, later_path) in segments(&self.dir)? {
            if later <= first {
                continue;
            }
            let aside =
                free_name((1..=u32::MAX).map(|n| later_path.with_extension(format!("ajnl.superseded-{n}"))))
                    .ok_or_else(|| io(&later_path, "no free name to set a superseded segment aside under"))?;
            fs::rename(&later_path, &aside).map_err(|e| io(&later_path, e))?;
            tracing::warn!(file = %later_path.display(), kept = %aside.display(), continues_at = first, "journal: a segment after where the journal continues set aside");
        }
        // A file of that name holding more than a header (records an append left, never acknowledged)
        // is kept aside, never overwritten.
        if fs::metadata(&path).is_ok_and(|m| m.len() > header.len() as u64) {
            let aside =
                free_name((1..=u32::MAX).map(|n| path.with_extension(format!("ajnl.unacknowledged-{n}"))))
                    .ok_or_else(|| {
                        io(&path, "no free name to keep its unacknowledged records aside under")
                    })?;
            fs::rename(&path, &aside).map_err(|e| io(&path, e))?;
            tracing::warn!(file = %path.display(), kept = %aside.display(), "journal: a segment's unacknowledged records kept aside; the journal continues there");
        }
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

    /// Appends the pending batch and makes it durable, then moves the mark. On any failure the bytes it
    /// wrote are cut off again, or, if they cannot be, the journal continues in a new segment (which
    /// supersedes them).
    fn write_pending(&mut self) -> Result<(), JournalError> {
        let needs_new = match &self.current {
            None => true,
            Some((_, _, len)) => *len >= self.settings.segment_bytes || self.pending_first != self.end,
        };
        if needs_new {
            self.start_segment(self.pending_first)?;
        }
        let count = self.pending.len() as u64;
        let payload =
            encode_batch(self.pending_first, &InputStream::from_frames(std::mem::take(&mut self.pending)));
        let mut record = Vec::with_capacity(payload.len() + 16);
        framed::encode_record(&payload, &mut record);
        let sync = self.sync();
        let end = self.pending_first + count;
        let (first, file, _) = self.current.as_mut().expect("a segment is open");
        let segment = self.dir.join(segment_name(*first));
        let written = file
            .write_all(&record)
            .and_then(|()| if sync { file.sync_data() } else { Ok(()) })
            .map_err(|e| io(&segment, e));
        // Invariant: the mark moves only once the batch is durable, so it never claims a record a crash
        // could take back.
        let result = written.and_then(|()| self.mark.set(end).map_err(|e| io(self.mark.path(), e)));
        let (_, file, len) = self.current.as_mut().expect("a segment is open");
        match result {
            Ok(()) => {
                *len += record.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Leave only complete, acknowledged batches behind.
                let cut = file.set_len(*len).and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()));
                if cut.is_err() {
                    self.current = None;
                }
                Err(e)
            }
        }
    }
}

impl super::Journal for FileJournal {
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
    use crate::journal::Journal;
    use anes_core::movie::MAX_FRAMES;

    /// A journal folder removed with its parent when dropped (on every exit path of a test).
    struct Temp(PathBuf);

    impl Temp {
        fn new(name: &str) -> Temp {
            let dir = std::env::temp_dir().join(format!(
                "anes-journal-{name}-{}-{}",
                std::process::id(),
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            ));
            Temp(dir)
        }

        fn dir(&self) -> PathBuf {
            self.0.join("journal")
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
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

    const QUICK: JournalSettings =
        JournalSettings { segment_bytes: 1 << 20, segments_kept: 2, fsync: FsyncPolicy::Never };

    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name().to_string_lossy().to_string(), fs::read(e.path()).unwrap()))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn rotates_reads_back_and_keeps_what_recovery_needs() {
        let temp = Temp::new("rotate");
        let dir = temp.dir();
        let settings = JournalSettings { segment_bytes: 300, segments_kept: 2, fsync: FsyncPolicy::Never };
        let (mut j, contents) = FileJournal::open(&dir, "p", settings).unwrap();
        assert_eq!((contents.end(), contents.acknowledged_end), (0, Some(0)));
        write(&mut j, 0, 500, 17);
        let back = read_journal(&dir).unwrap();
        assert!(back.places.len() > 3, "{:?}", back.places);
        assert_eq!(back.acknowledged_end, Some(500));
        assert_eq!(back.records_from(0).unwrap(), (0..500).map(input).collect::<InputStream>());
        assert_eq!(back.places[1].1, 17 * (back.places[1].1 / 17), "segments start at batch boundaries");
        j.release_before(200);
        let after = read_journal(&dir).unwrap();
        assert!(after.start().unwrap() <= 200, "records from 200 on are kept");
        assert!(after.start().unwrap() > 0, "older segments went");
        assert_eq!(after.records_from(200).unwrap(), (200..500).map(input).collect::<InputStream>());
        after.require_acknowledged_from(200).unwrap();
        // Reopened, it continues where it was, in the newest segment while it has room.
        drop(j);
        let segments_before = read_journal(&dir).unwrap().places.len();
        let newest_len = fs::metadata(segments(&dir).unwrap().last().unwrap().1.clone()).unwrap().len();
        let (mut j, contents) = FileJournal::open(&dir, "p", settings).unwrap();
        assert_eq!(contents.end(), 500);
        write(&mut j, 500, 510, 10);
        let back = read_journal(&dir).unwrap();
        assert_eq!((back.end(), back.acknowledged_end), (510, Some(510)));
        let new_segments = usize::from(newest_len >= settings.segment_bytes);
        assert_eq!(
            back.places.len(),
            segments_before + new_segments,
            "appended to the newest segment ({newest_len} bytes)"
        );
    }

    /// A crash during an append (the mark not moved yet) at every byte of the batch: the bytes stay,
    /// nothing acknowledged is missing, and the journal continues in a new segment that supersedes
    /// them.
    #[test]
    fn a_crash_at_every_byte_of_an_append_keeps_the_bytes_and_loses_nothing_acknowledged() {
        let temp = Temp::new("crash");
        let dir = temp.dir();
        let (mut j, _) = FileJournal::open(&dir, "p", QUICK).unwrap();
        write(&mut j, 0, 30, 10);
        drop(j);
        let path = dir.join(segment_name(0));
        let before = fs::read(&path).unwrap();
        let mark = fs::read(dir.join(MARK_FILE)).unwrap();
        let mut record = Vec::new();
        let batch: InputStream = (30..40).map(input).collect();
        framed::encode_record(&encode_batch(30, &batch), &mut record);
        for cut in 1..record.len() {
            let mut torn = before.clone();
            torn.extend_from_slice(&record[..cut]);
            fs::write(&path, &torn).unwrap();
            fs::write(dir.join(MARK_FILE), &mark).unwrap();
            for extra in segments(&dir).unwrap().into_iter().filter(|(first, _)| *first > 0) {
                fs::remove_file(extra.1).unwrap();
            }
            let (mut j, contents) = FileJournal::open(&dir, "p", QUICK).unwrap();
            assert_eq!((contents.end(), contents.acknowledged_end), (30, Some(30)), "cut {cut}");
            contents.require_acknowledged_from(0).unwrap();
            assert!(contents.problems.iter().all(|p| p.torn), "cut {cut}: {:?}", contents.problems);
            write(&mut j, 30, 45, 15);
            let back = read_journal(&dir).unwrap();
            assert_eq!(
                back.records_from(0).unwrap(),
                (0..45).map(input).collect::<InputStream>(),
                "cut {cut}"
            );
            assert_eq!(fs::read(&path).unwrap(), torn, "cut {cut}: the torn segment is not changed");
            assert_eq!(back.places.len(), 2, "cut {cut}: a new segment at 30");
        }
    }

    /// Issue 44's damage cases on the file journal: each reports the missing range naming its place,
    /// and nothing is changed.
    #[test]
    fn acknowledged_records_that_cannot_be_read_are_missing_never_cut() {
        let settings = JournalSettings { segment_bytes: 400, segments_kept: 100, fsync: FsyncPolicy::Never };
        let fresh = |name: &str| {
            let temp = Temp::new(name);
            let (mut j, _) = FileJournal::open(&temp.dir(), "p", settings).unwrap();
            write(&mut j, 0, 200, 10);
            temp
        };
        let segment_holding = |dir: &Path, seq: u64| {
            segments(dir).unwrap().into_iter().rev().find(|(first, _)| *first <= seq).unwrap().1
        };
        let missing = |dir: &Path| {
            let (_, contents) = FileJournal::open(dir, "p", settings).unwrap();
            match contents.require_acknowledged_from(0) {
                Err(JournalError::Missing { missing, .. }) => missing,
                other => panic!("{other:?}"),
            }
        };
        // A flipped byte in the last batch (complete: not a torn write).
        let temp = fresh("flip-last");
        let last = segment_holding(&temp.dir(), 199);
        let mut bytes = fs::read(&last).unwrap();
        let at = bytes.len() - 5;
        bytes[at] ^= 0x10;
        fs::write(&last, &bytes).unwrap();
        let files = snapshot(&temp.dir());
        let m = missing(&temp.dir());
        assert_eq!((m.len(), m[0].from, m[0].to), (1, 190, 200), "{m:?}");
        assert!(
            m[0].place.contains("damage")
                && m[0].place.contains(&last.file_name().unwrap().to_string_lossy().to_string()),
            "{}",
            m[0].place
        );
        assert_eq!(snapshot(&temp.dir()), files, "nothing changed");
        // The last batch cut short by 10 bytes, and to nothing.
        for cut in [10, usize::MAX] {
            let temp = fresh("cut-last");
            let last = segment_holding(&temp.dir(), 199);
            let bytes = fs::read(&last).unwrap();
            let keep = if cut == usize::MAX { 0 } else { bytes.len() - cut };
            fs::write(&last, &bytes[..keep]).unwrap();
            let m = missing(&temp.dir());
            assert_eq!(m.last().map(|m| m.to), Some(200), "{m:?}");
            assert!(m[0].from < 200 && m[0].from >= 150, "{m:?}");
        }
        // A flipped byte in a batch of an older segment.
        let temp = fresh("flip-old");
        let older = segment_holding(&temp.dir(), 25);
        let mut bytes = fs::read(&older).unwrap();
        let at = bytes.len() - 5;
        bytes[at] ^= 0x01;
        fs::write(&older, &bytes).unwrap();
        let m = missing(&temp.dir());
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].to <= segment_holding(&temp.dir(), 199).file_name().map(|_| 200).unwrap());
        // The newest segment deleted; all of them.
        let temp = fresh("delete-newest");
        let newest = segment_holding(&temp.dir(), 199);
        let first_of_newest = parse_segment_name(&newest.file_name().unwrap().to_string_lossy()).unwrap();
        fs::remove_file(&newest).unwrap();
        let m = missing(&temp.dir());
        assert_eq!((m[0].from, m[0].to), (first_of_newest, 200), "{m:?}");
        assert!(m[0].place.contains("deleted"), "{}", m[0].place);
        let temp = fresh("delete-all");
        for (_, path) in segments(&temp.dir()).unwrap() {
            fs::remove_file(path).unwrap();
        }
        let m = missing(&temp.dir());
        assert_eq!((m[0].from, m[0].to), (0, 200), "{m:?}");
    }

    #[test]
    fn files_of_another_pipeline_or_journal_and_a_lost_mark_are_refused_by_name() {
        let a = Temp::new("owner-a");
        let (mut j, _) = FileJournal::open(&a.dir(), "p", QUICK).unwrap();
        write(&mut j, 0, 20, 10);
        drop(j);
        let b = Temp::new("owner-b");
        let (mut j, _) = FileJournal::open(&b.dir(), "p", QUICK).unwrap();
        write(&mut j, 0, 20, 10);
        drop(j);
        let c = Temp::new("owner-c");
        let (mut j, _) = FileJournal::open(&c.dir(), "q", QUICK).unwrap();
        write(&mut j, 0, 30, 10);
        drop(j);
        // Another data directory's segment of the same pipeline.
        fs::copy(b.dir().join(segment_name(0)), a.dir().join(segment_name(20))).unwrap();
        let e = FileJournal::open(&a.dir(), "p", QUICK).unwrap_err();
        assert!(matches!(&e, JournalError::Foreign { file, .. } if file.ends_with(&segment_name(20))), "{e}");
        assert!(e.to_string().contains("another journal"), "{e}");
        fs::remove_file(a.dir().join(segment_name(20))).unwrap();
        // Another pipeline's.
        fs::copy(c.dir().join(segment_name(0)), a.dir().join(segment_name(20))).unwrap();
        let e = FileJournal::open(&a.dir(), "p", QUICK).unwrap_err();
        assert!(e.to_string().contains("holds pipeline \"q\"'s records, not \"p\"'s"), "{e}");
        fs::remove_file(a.dir().join(segment_name(20))).unwrap();
        // The mark deleted while segments remain; damaged.
        let mark = fs::read(a.dir().join(MARK_FILE)).unwrap();
        fs::remove_file(a.dir().join(MARK_FILE)).unwrap();
        let e = FileJournal::open(&a.dir(), "p", QUICK).unwrap_err();
        assert!(
            matches!(e, JournalError::Mark { .. }) && e.to_string().contains("missing, while 1 segments"),
            "{e}"
        );
        let mut damaged = mark.clone();
        damaged[5] ^= 1;
        fs::write(a.dir().join(MARK_FILE), &damaged).unwrap();
        let e = FileJournal::open(&a.dir(), "p", QUICK).unwrap_err();
        assert!(matches!(e, JournalError::Mark { .. }), "{e}");
        fs::write(a.dir().join(MARK_FILE), &mark).unwrap();
        assert_eq!(FileJournal::open(&a.dir(), "p", QUICK).unwrap().1.end(), 20);
    }

    /// Each accept-loss over a damaged mark sets it aside under a name of its own: an earlier run's
    /// `acknowledged.damaged` is kept, never renamed over.
    #[test]
    fn accept_loss_keeps_every_damaged_mark_it_sets_aside() {
        let temp = Temp::new("accept-loss-twice");
        let dir = temp.dir();
        let (mut j, _) = FileJournal::open(&dir, "p", QUICK).unwrap();
        write(&mut j, 0, 20, 10);
        drop(j);
        let mark_path = dir.join(MARK_FILE);
        let mut damaged = Vec::new();
        for run in 0..3u8 {
            let mut bytes = fs::read(&mark_path).unwrap();
            bytes[5] ^= 1 << run;
            fs::write(&mark_path, &bytes).unwrap();
            assert!(matches!(FileJournal::open(&dir, "p", QUICK), Err(JournalError::Mark { .. })));
            assert_eq!(accept_loss(&dir, "p", 20).unwrap(), None, "run {run}: the mark was unreadable");
            damaged.push(bytes);
        }
        let aside = |name: &str| fs::read(dir.join(name)).unwrap();
        assert_eq!(aside("acknowledged.damaged"), damaged[0]);
        assert_eq!(aside("acknowledged.damaged-1"), damaged[1]);
        assert_eq!(aside("acknowledged.damaged-2"), damaged[2]);
        assert_eq!(FileJournal::open(&dir, "p", QUICK).unwrap().1.acknowledged_end, Some(20));
    }

    /// After an accept-loss the journal continues below segments that hold the given-up records: the
    /// new records, acknowledged, are what a later start reads, not the old ones from where each old
    /// segment starts.
    #[test]
    fn segments_after_where_the_journal_continues_are_set_aside() {
        let temp = Temp::new("superseded");
        let dir = temp.dir();
        let small = JournalSettings { segment_bytes: 64, ..QUICK };
        let (mut j, _) = FileJournal::open(&dir, "p", small).unwrap();
        write(&mut j, 0, 40, 10);
        drop(j);
        assert!(dir.join(segment_name(30)).exists(), "one segment per batch: {:?}", snapshot(&dir));
        accept_loss(&dir, "p", 15).unwrap();
        let (mut j, _) = FileJournal::open(&dir, "p", small).unwrap();
        j.continue_at(15);
        let new = |seq: u64| FrameInput::buttons(0xEE, (seq % 2) as u8);
        for batch in [15..25, 25..35, 35..45] {
            for seq in batch {
                j.append(seq, new(seq));
            }
            j.commit().unwrap();
        }
        drop(j);
        let back = FileJournal::open(&dir, "p", small).unwrap().1;
        assert_eq!(back.acknowledged_end, Some(45));
        let expected: InputStream = (0..15).map(input).chain((15..45).map(new)).collect();
        assert_eq!(back.records_from(0).unwrap(), expected);
        for first in [20, 30] {
            let aside = dir.join(segment_name(first)).with_extension("ajnl.superseded-1");
            assert!(aside.exists(), "seg {first} kept aside: {:?}", snapshot(&dir));
        }
    }

    /// A journal of an earlier version (segments without identity, no mark) is adopted once.
    #[test]
    fn a_journal_of_an_earlier_version_is_adopted() {
        let temp = Temp::new("legacy");
        let dir = temp.dir();
        fs::create_dir_all(&dir).unwrap();
        let mut segment =
            FileHeader { magic: JOURNAL_MAGIC, pipeline_id: "p".into(), identity: None }.encode();
        framed::encode_record(&encode_batch(0, &(0..25).map(input).collect()), &mut segment);
        fs::write(dir.join(segment_name(0)), &segment).unwrap();
        let (mut j, contents) = FileJournal::open(&dir, "p", QUICK).unwrap();
        assert_eq!((contents.end(), contents.acknowledged_end), (25, Some(25)));
        write(&mut j, 25, 30, 5);
        drop(j);
        let back = FileJournal::open(&dir, "p", QUICK).unwrap().1;
        assert_eq!(back.records_from(0).unwrap(), (0..30).map(input).collect::<InputStream>());
    }

    /// A batch declaring 2^32 - 1 records in a few hundred kilobytes: read and windowed run by run
    /// (expanded, it would take 12 GiB).
    #[test]
    fn a_batch_of_four_billion_records_is_read_and_cut_run_by_run() {
        let temp = Temp::new("huge");
        let dir = temp.dir();
        fs::create_dir_all(&dir).unwrap();
        let mut stream = InputStream::new();
        stream.push_repeated(FrameInput::buttons(1, 0), MAX_FRAMES - 1);
        stream.push(FrameInput::buttons(2, 0));
        let mut segment =
            FileHeader { magic: JOURNAL_MAGIC, pipeline_id: "p".into(), identity: None }.encode();
        framed::encode_record(&encode_batch(100, &stream), &mut segment);
        fs::write(dir.join(segment_name(100)), &segment).unwrap();
        let back = read_journal(&dir).unwrap();
        assert_eq!((back.start(), back.end()), (Some(100), 100 + MAX_FRAMES as u64));
        let last = back.window(100 + MAX_FRAMES as u64 - 2, 2).unwrap();
        assert_eq!(last.frames().collect::<Vec<_>>(), [FrameInput::buttons(1, 0), FrameInput::buttons(2, 0)]);
        assert_eq!(back.records_from(100).unwrap(), stream);
        let e = back.window(50, 60).unwrap_err();
        assert!(
            matches!(&e, JournalError::Missing { missing, .. } if missing[0].from == 50 && missing[0].to == 100),
            "{e}"
        );
        let e = back.window(100 + MAX_FRAMES as u64 - 1, 2).unwrap_err();
        assert!(
            matches!(&e, JournalError::Missing { missing, .. } if missing[0].from == 100 + MAX_FRAMES as u64),
            "{e}"
        );
    }

    #[test]
    fn a_segment_that_is_a_fifo_is_refused_at_once() {
        let temp = Temp::new("fifo");
        let dir = temp.dir();
        fs::create_dir_all(&dir).unwrap();
        let status = std::process::Command::new("mkfifo").arg(dir.join(segment_name(0))).status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("note: mkfifo unavailable: FIFO segment test skipped");
            return;
        }
        let e = read_journal(&dir).unwrap_err();
        assert!(e.to_string().contains("is a FIFO (named pipe), not a regular file"), "{e}");
    }

    #[test]
    fn a_journal_continued_past_its_end_shows_the_gap() {
        let temp = Temp::new("gap");
        let dir = temp.dir();
        let (mut j, _) = FileJournal::open(&dir, "p", QUICK).unwrap();
        write(&mut j, 0, 10, 10);
        j.continue_at(50);
        write(&mut j, 50, 60, 10);
        let back = read_journal(&dir).unwrap();
        assert_eq!(back.places.len(), 2);
        assert_eq!(back.records_from(55).unwrap().len(), 5);
        assert_eq!(back.acknowledged_end, Some(60));
        let e = back.records_from(5).unwrap_err();
        assert!(
            matches!(&e, JournalError::Missing { missing, .. } if missing[0].from == 10 && missing[0].to == 50),
            "{e}"
        );
        back.require_acknowledged_from(50).unwrap();
    }

    /// A segment started where an older one already holds records (after a failed write) supersedes
    /// them from its first sequence number on.
    #[test]
    fn a_newer_segment_supersedes_what_an_older_one_holds_from_its_start() {
        let temp = Temp::new("supersede");
        let dir = temp.dir();
        let (mut j, _) = FileJournal::open(&dir, "p", QUICK).unwrap();
        write(&mut j, 0, 40, 10);
        j.continue_at(20);
        for seq in 20..30 {
            j.append(seq, FrameInput::buttons(0xff, 0xff));
        }
        j.commit().unwrap();
        let back = read_journal(&dir).unwrap();
        let expected: InputStream =
            (0..20).map(input).chain((20..30).map(|_| FrameInput::buttons(0xff, 0xff))).collect();
        assert_eq!(back.records_from(0).unwrap(), expected);
    }
}
