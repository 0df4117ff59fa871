//! The input journal: every record a pipeline takes, in sequence order, written before it is
//! acknowledged and before any worker runs it (a write-ahead log). Records set aside in the
//! dead-letter queue are journaled too: the journal holds everything a producer was promised, so
//! after a crash or a takeover the newest verified checkpoint plus the journal after it give back
//! every acknowledged record, exactly once and in order. The last N steps of real traffic can be cut
//! out and replayed (`anes movie cut`).
//!
//! Where it lives follows the checkpoint store: with the filesystem store, segments in the data
//! directory ([`file`](mod@file)); with a store another coordinator can reach (Redis, PostgreSQL, S3), in that
//! store, appended under the same epoch fence as the checkpoints ([`shared`]), so a coordinator that
//! takes the pipeline over continues from every record any earlier owner acknowledged, and a fenced
//! coordinator can never acknowledge again.
//!
//! Both keep an **acknowledged mark**, the end of what was acknowledged, durable before the answer
//! goes out (the file journal's `acknowledged` file; the store's journal end, written in the same
//! transaction as the batch). Reading compares what it can read with the mark: records below it that
//! cannot be read are missing ([`JournalError::Missing`], naming the range and where it should be),
//! never silently dropped, and records are never renumbered: each batch stores its first sequence
//! number.

pub mod file;
mod mark;
pub mod shared;

use std::ops::Range;

use anes_core::movie::{FrameInput, InputStream, MAX_FRAMES};
use serde::Serialize;
use thiserror::Error;

use crate::store::StoreError;

pub use file::{
    DEFAULT_SEGMENT_BYTES, DEFAULT_SEGMENTS_KEPT, FileJournal, JOURNAL_MAGIC, JournalSettings, MARK_FILE,
    accept_loss, read_for_loss, read_journal, segment_name,
};
pub use shared::{SharedJournal, read_shared};

/// Where a pipeline's accepted records go before they are acknowledged or run.
pub trait Journal: Send + std::fmt::Debug {
    /// Adds a record (pending until [`Journal::commit`]); sequence numbers are consecutive. The first
    /// one after a commit continues what the journal holds, or is below its end after a commit that
    /// failed: its records (never acknowledged) are replaced from there.
    fn append(&mut self, seq: u64, input: FrameInput);
    /// Writes the pending records durably, the acknowledged mark with them. On an error they are
    /// dropped.
    fn commit(&mut self) -> Result<(), JournalError>;
    /// Records before `seq` are no longer needed for recovery; old segments or batches may go.
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

/// Acknowledged records that cannot be read: `from..to`, and where they should be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingRange {
    /// The first missing sequence number.
    pub from: u64,
    /// The one after the last.
    pub to: u64,
    /// Where they should be, and what is wrong there.
    pub place: String,
}

impl std::fmt::Display for MissingRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "records {}..{} ({})", self.from, self.to, self.place)
    }
}

/// A journal failure.
#[derive(Debug, Error)]
pub enum JournalError {
    /// A file could not be read or written.
    #[error("journal {0}")]
    Io(String),
    /// Records are missing where they are needed: below the acknowledged mark, or asked for.
    #[error(
        "journal {journal}: {} missing: the service acknowledged them and the journal cannot give them back. Restore what is named from a backup, or accept the loss with `anes journal accept-loss` (docs/OPERATIONS.md, \"Refusals at start-up\")",
        crate::framed::describe_all(missing)
    )]
    Missing {
        /// The journal (a folder, or a store and pipeline).
        journal: String,
        /// The ranges, in order.
        missing: Vec<MissingRange>,
    },
    /// A file that is not this journal's: another pipeline's, or another data directory's.
    #[error("journal {file}: {problem}; move it out of the journal's folder")]
    Foreign {
        /// The file.
        file: String,
        /// Whose it is.
        problem: String,
    },
    /// The acknowledged mark cannot be trusted or is gone.
    #[error("journal {file}: {problem}")]
    Mark {
        /// The mark's file (or store key).
        file: String,
        /// What is wrong, and what to do.
        problem: String,
    },
    /// More records asked for at once than an input stream holds.
    #[error("journal {journal}: records {from}..{end} are more than an input stream holds (2^32 - 1 frames)")]
    TooMany {
        /// The journal.
        journal: String,
        /// The first record asked for.
        from: u64,
        /// The record after the last.
        end: u64,
    },
    /// The shared store refused or failed the append (a fence refusal among them).
    #[error("journal: {0}")]
    Store(StoreError),
}

impl JournalError {
    /// True when the store's record of the pipeline is damaged (its epoch or the journal's end, or
    /// records this journal committed that the store no longer holds).
    pub fn store_damaged(&self) -> bool {
        matches!(self, JournalError::Store(StoreError::Damaged(_)))
    }

    /// The store's fencing refusal, when this is one: the writer's epoch and the store's.
    pub fn fence(&self) -> Option<(u64, u64)> {
        match self {
            JournalError::Store(
                StoreError::Fenced { writer, current, .. } | StoreError::EpochAhead { writer, current, .. },
            ) => Some((*writer, *current)),
            _ => None,
        }
    }
}

/// One committed batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Sequence number of its first record.
    pub first_seq: u64,
    /// Its records, run-length encoded as stored (a batch may declare billions of frames).
    pub inputs: InputStream,
}

impl Batch {
    /// The sequence number after its last record.
    pub fn end(&self) -> u64 {
        self.first_seq + self.inputs.len() as u64
    }
}

/// A batch as stored: its first sequence number (u64, little-endian) then the records as an anes input
/// stream (`ANESINPT`, blake3-checked itself).
pub fn encode_batch(first_seq: u64, inputs: &InputStream) -> Vec<u8> {
    let mut payload = first_seq.to_le_bytes().to_vec();
    payload.extend_from_slice(&inputs.to_bytes());
    payload
}

/// Reads a stored batch back; the reason it cannot be read otherwise.
pub fn decode_batch(payload: &[u8]) -> Result<Batch, String> {
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

/// Something read that is not a record: damage, what a torn write left, or leftovers of an append
/// that was never acknowledged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The segment file or stored batch.
    pub place: String,
    /// Where in it and how long (files).
    pub bytes: Option<(u64, u64)>,
    /// The records the journal holds up to this point of its place (the problem sits after them).
    pub after_seq: u64,
    /// What is wrong.
    pub reason: String,
    /// A torn tail (an incomplete last record of the newest file): what a crash during an append
    /// leaves. Damage otherwise.
    pub torn: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.torn { "an incomplete last record" } else { "damage" };
        match self.bytes {
            Some((offset, len)) => {
                write!(f, "{}: {what}, {len} bytes at offset {offset}: {}", self.place, self.reason)
            }
            None => write!(f, "{}: {what}: {}", self.place, self.reason),
        }
    }
}

/// A journal read back, without changing anything: its batches as they count (a segment's records
/// count up to where the next segment starts: a new segment continues the journal where it starts,
/// after a crash or a failed commit), what could not be read, and the acknowledged mark.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JournalContents {
    /// The journal, for messages (a folder, or a store and pipeline).
    pub source: String,
    /// Segment files (file journals) or stored batches, in order, with their first sequence numbers.
    pub places: Vec<(String, u64)>,
    /// The batches that verify, in sequence order, without overlap.
    #[serde(skip)]
    pub batches: Vec<Batch>,
    /// What could not be read.
    pub problems: Vec<Problem>,
    /// The end of what was acknowledged (`None`: a journal of an earlier version, without a mark).
    pub acknowledged_end: Option<u64>,
}

impl JournalContents {
    /// The sequence number after the last record held.
    pub fn end(&self) -> u64 {
        self.batches.last().map_or(0, Batch::end)
    }

    /// The first sequence number held.
    pub fn start(&self) -> Option<u64> {
        self.batches.first().map(|b| b.first_seq)
    }

    /// Where the records held without a gap from `from` end (`from` itself when none is held there).
    pub fn contiguous_end(&self, from: u64) -> u64 {
        let mut next = from;
        for b in &self.batches {
            if b.end() <= next {
                continue;
            }
            if b.first_seq > next {
                break;
            }
            next = b.end();
        }
        next
    }

    /// The records in `from..to` that cannot be read, each with where it should be.
    pub fn missing(&self, from: u64, to: u64) -> Vec<MissingRange> {
        // The problems by the sequence number they follow, sorted once: a segment of a million gaps
        // and a million damaged stretches once took each gap a pass over every problem.
        let mut problems: Vec<(u64, usize)> =
            self.problems.iter().enumerate().map(|(i, p)| (p.after_seq, i)).collect();
        problems.sort_unstable();
        let mut out = Vec::new();
        let mut next = from;
        for b in &self.batches {
            if next >= to {
                break;
            }
            if b.end() <= next {
                continue;
            }
            if b.first_seq > next {
                out.push(self.missing_range(next..b.first_seq.min(to), &problems));
            }
            next = next.max(b.end());
        }
        if next < to {
            out.push(self.missing_range(next..to, &problems));
        }
        out
    }

    /// `range` and where its records should be: the problems that follow a sequence number in it
    /// (`sorted`: their indices by that number; the first few named, the rest counted), else the
    /// segment that ends before it.
    fn missing_range(&self, range: Range<u64>, sorted: &[(u64, usize)]) -> MissingRange {
        const NAMED: usize = 8;
        let first = sorted.partition_point(|&(seq, _)| seq < range.start);
        let end = range.end.max(range.start + 1);
        let count = sorted[first..].iter().take_while(|&&(seq, _)| seq < end).count();
        let mut problems: Vec<String> = sorted[first..first + count]
            .iter()
            .take(NAMED)
            .map(|&(_, i)| self.problems[i].to_string())
            .collect();
        if count > NAMED {
            problems.push(format!("and {} more problems", count - NAMED));
        }
        let place = if !problems.is_empty() {
            problems.join("; ")
        } else {
            match self.places.iter().rev().find(|(_, first)| *first <= range.start) {
                Some((name, _)) => format!(
                    "{name} ends before them and no later segment starts at {}: deleted or never written",
                    range.start
                ),
                None if self.places.is_empty() => "the journal holds nothing: deleted?".to_string(),
                None => format!("no segment starts at or before {}: deleted?", range.start),
            }
        };
        MissingRange { from: range.start, to: range.end, place }
    }

    /// Records `from..end()`, which must be held without a gap.
    pub fn records_from(&self, from: u64) -> Result<InputStream, JournalError> {
        self.window(from, self.end().saturating_sub(from))
    }

    /// Records `from..from + count`, which must be held without a gap, as one input stream built run by
    /// run (memory follows the runs, never the frame count).
    pub fn window(&self, from: u64, count: u64) -> Result<InputStream, JournalError> {
        let end = from.saturating_add(count);
        if count > MAX_FRAMES as u64 {
            return Err(JournalError::TooMany { journal: self.source.clone(), from, end });
        }
        let missing = self.missing(from, end);
        if !missing.is_empty() {
            return Err(JournalError::Missing { journal: self.source.clone(), missing });
        }
        let mut out = InputStream::new();
        let mut next = from;
        for b in &self.batches {
            if next >= end {
                break;
            }
            if b.end() <= next {
                continue;
            }
            // Both offsets are within the batch, whose length fits in usize.
            let skip = (next - b.first_seq) as usize;
            let take = (b.end().min(end) - b.first_seq) as usize;
            out.append(&b.inputs.slice(skip..take));
            next = b.end().min(end);
        }
        Ok(out)
    }

    /// Checks that every acknowledged record from `from` on can be read: the records `from..` the
    /// acknowledged mark.
    pub fn require_acknowledged_from(&self, from: u64) -> Result<(), JournalError> {
        let Some(acknowledged) = self.acknowledged_end else { return Ok(()) };
        let missing = self.missing(from, acknowledged);
        if missing.is_empty() {
            Ok(())
        } else {
            Err(JournalError::Missing { journal: self.source.clone(), missing })
        }
    }

    /// Adds `batch`, read from `place`, as a segment's batch counts: only its records before `limit`
    /// (where the next segment starts). Batches come in sequence order.
    fn add(&mut self, batch: Batch, limit: u64) {
        if batch.first_seq >= limit {
            return;
        }
        let batch = if batch.end() > limit {
            // Within the batch, whose length fits in usize.
            let keep = (limit - batch.first_seq) as usize;
            Batch { first_seq: batch.first_seq, inputs: batch.inputs.slice(0..keep) }
        } else {
            batch
        };
        // A batch that overlaps what an earlier one of the same place holds is not a continuation
        // (damage rewrote its sequence number): it counts from where the held records end.
        if let Some(last) = self.batches.last()
            && batch.first_seq < last.end()
        {
            if batch.end() <= last.end() {
                return;
            }
            let skip = (last.end() - batch.first_seq) as usize;
            let len = batch.inputs.len();
            let trimmed = Batch { first_seq: last.end(), inputs: batch.inputs.slice(skip..len) };
            self.batches.push(trimmed);
            return;
        }
        self.batches.push(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One record at every even sequence number below `2 * gaps` (the odd ones missing), and
    /// `problems[k]` problems after record `2k + 1` for each gap `k`.
    fn gappy(gaps: u64, problems: impl Fn(u64) -> u64) -> JournalContents {
        let mut contents = JournalContents { source: "test".into(), ..JournalContents::default() };
        for k in 0..gaps {
            let inputs = InputStream::from_frames(vec![FrameInput::default()]);
            contents.batches.push(Batch { first_seq: 2 * k, inputs });
            for i in 0..problems(k) {
                contents.problems.push(Problem {
                    place: format!("seg-{k}"),
                    bytes: Some((i, 1)),
                    after_seq: 2 * k + 1,
                    reason: "junk".into(),
                    torn: false,
                });
            }
        }
        contents.places.push(("seg-0".into(), 0));
        contents
    }

    #[test]
    fn each_gap_names_the_problems_after_its_start() {
        // Problems in reverse order of their records: the names come from the sequence numbers.
        let mut contents = gappy(50, |k| if k == 7 { 20 } else { 1 });
        contents.problems.reverse();
        let missing = contents.missing(0, 100);
        assert_eq!(missing.len(), 50);
        for (k, range) in missing.iter().enumerate() {
            assert_eq!((range.from, range.to), (2 * k as u64 + 1, 2 * k as u64 + 2));
            assert!(range.place.starts_with(&format!("seg-{k}: damage")), "{range:?}");
            let named = range.place.matches(": damage").count();
            assert_eq!(named, if k == 7 { 8 } else { 1 }, "{range:?}");
        }
        assert!(missing[7].place.ends_with("; and 12 more problems"), "{:?}", missing[7]);
    }

    #[test]
    fn two_hundred_thousand_gaps_and_problems_are_listed_in_one_pass() {
        // With a pass over the problems per gap, 40 billion steps.
        let contents = gappy(200_000, |_| 1);
        let missing = contents.missing(0, 400_000);
        assert_eq!(missing.len(), 200_000);
        assert!(missing[199_999].place.starts_with("seg-199999: damage"), "{:?}", missing[199_999]);
    }
}
