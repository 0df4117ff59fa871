//! The pipeline's input log: every record from the oldest kept checkpoint on, in sequence order, and
//! the accounting that proves nothing is lost.
//!
//! A record's sequence number is its position in the order the pipeline accepted records: the dead-
//! letter queue is first-in first-out and drains before normal intake resumes, so that order never
//! changes. Invariants (checked by [`Accounting::balanced`]):
//! `received = log_end + in_dlq` and `log_end = verified_direct + verified_after_dlq + unverified`.

use std::collections::VecDeque;

use anes_core::movie::FrameInput;
use serde::Serialize;

/// One record of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogRecord {
    pub input: FrameInput,
    /// It waited in the dead-letter queue before it entered the log.
    pub via_dlq: bool,
}

/// Where every accepted record is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Accounting {
    /// Records accepted.
    pub received: u64,
    /// Distinct records verified that never waited in the dead-letter queue.
    pub verified_direct: u64,
    /// Distinct records verified after waiting in the dead-letter queue.
    pub verified_after_dlq: u64,
    /// Records put in the dead-letter queue.
    pub dead_lettered: u64,
    /// Records taken from the dead-letter queue back into the log.
    pub replayed_from_dlq: u64,
    /// Records in the dead-letter queue now.
    pub in_dlq: u64,
    /// Records in the log never verified yet.
    pub unverified: u64,
    /// Records verified in an earlier run of the service (before the checkpoint it recovered from).
    pub verified_before_start: u64,
}

impl Accounting {
    /// True when every accepted record is verified, waiting in the log, or waiting in the queue.
    pub fn balanced(&self) -> bool {
        self.received
            == self.verified_before_start
                + self.verified_direct
                + self.verified_after_dlq
                + self.unverified
                + self.in_dlq
            && self.dead_lettered == self.replayed_from_dlq + self.in_dlq
    }
}

/// The records from `base` (the oldest kept checkpoint) to `end`.
#[derive(Debug, Default)]
pub(crate) struct InputLog {
    base: u64,
    records: VecDeque<LogRecord>,
    /// Records below this were verified at least once.
    verified_high: u64,
    verified_direct: u64,
    verified_after_dlq: u64,
    /// Records below this are committed (journaled): only they may run.
    committed: u64,
}

impl InputLog {
    /// A log continuing at `seq`: records before it were verified in an earlier run of the service.
    pub fn starting_at(seq: u64) -> InputLog {
        InputLog { base: seq, verified_high: seq, committed: seq, ..InputLog::default() }
    }

    /// Where the committed records end.
    pub fn committed_end(&self) -> u64 {
        self.committed
    }

    /// Every record pushed so far is committed.
    pub fn commit(&mut self) {
        self.committed = self.end();
    }

    /// The records before `seq` are committed.
    pub fn commit_to(&mut self, seq: u64) {
        self.committed = seq.clamp(self.committed, self.end());
    }

    /// Drops the records pushed since the last commit; returns how many.
    pub fn rollback_uncommitted(&mut self) -> u64 {
        let dropped = self.end() - self.committed;
        for _ in 0..dropped {
            self.records.pop_back();
        }
        dropped
    }

    pub fn end(&self) -> u64 {
        self.base + self.records.len() as u64
    }

    pub fn push(&mut self, record: LogRecord) -> u64 {
        self.records.push_back(record);
        self.end() - 1
    }

    /// Records never verified yet.
    pub fn unverified(&self) -> u64 {
        self.end() - self.verified_high
    }

    pub fn verified_high(&self) -> u64 {
        self.verified_high
    }

    pub fn get(&self, seq: u64) -> Option<LogRecord> {
        let index = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        self.records.get(index).copied()
    }

    /// Inputs of `from..to` (clamped to what the log holds).
    pub fn inputs(&self, from: u64, to: u64, out: &mut Vec<FrameInput>) {
        for seq in from.max(self.base)..to.min(self.end()) {
            if let Some(r) = self.get(seq) {
                out.push(r.input);
            }
        }
    }

    /// Counts `seq` as verified; only the first verification of a record counts.
    pub fn mark_verified(&mut self, seq: u64) -> bool {
        if seq < self.verified_high || seq >= self.end() {
            return false;
        }
        // Records are verified in order, so this is the next one.
        let via_dlq = self.get(seq).is_some_and(|r| r.via_dlq);
        if via_dlq {
            self.verified_after_dlq += 1;
        } else {
            self.verified_direct += 1;
        }
        self.verified_high = seq + 1;
        true
    }

    /// Forgets the records before `seq` (no checkpoint older than it is kept any more).
    pub fn trim_before(&mut self, seq: u64) {
        let seq = seq.min(self.verified_high);
        while self.base < seq && !self.records.is_empty() {
            self.records.pop_front();
            self.base += 1;
        }
    }

    pub fn verified_counts(&self) -> (u64, u64) {
        (self.verified_direct, self.verified_after_dlq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_record_once_and_trims() {
        let mut log = InputLog::default();
        for i in 0..10 {
            log.push(LogRecord { input: FrameInput::buttons(i, 0), via_dlq: i >= 8 });
        }
        for seq in 0..10 {
            assert!(log.mark_verified(seq));
        }
        assert!(!log.mark_verified(3), "a second verification after a rollback does not count");
        assert_eq!(log.verified_counts(), (8, 2));
        log.trim_before(6);
        assert_eq!(log.get(5), None);
        assert_eq!(log.get(6).unwrap().input, FrameInput::buttons(6, 0));
        let mut out = Vec::new();
        log.inputs(4, 8, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(log.end(), 10);
    }
}
