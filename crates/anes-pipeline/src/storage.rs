//! The dead-letter queue as the pipeline keeps it: in memory, in order, the committed records told
//! apart from those waiting for their commit. Its durable copy is the journal: a record is journaled
//! ([`crate::Action::AppendJournal`], [`crate::Action::Commit`]) before it is acknowledged, queued or
//! not, and a restarted service (or another coordinator) re-runs every journaled record after the
//! newest checkpoint ([`crate::Pipeline::recover`]).

use std::collections::VecDeque;

use anes_core::movie::FrameInput;
use thiserror::Error;

/// The queue holds as many records as it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the dead-letter queue is full ({capacity} records)")]
pub struct DlqFull {
    /// Its capacity.
    pub capacity: usize,
}

/// A bounded FIFO of input records with their sequence numbers; records pushed since the last
/// [`MemoryDlq::commit`] are pending and not handed out.
///
/// ```
/// use anes_core::movie::FrameInput;
/// use anes_pipeline::storage::MemoryDlq;
/// let mut queue = MemoryDlq::new(2);
/// queue.push(7, FrameInput::buttons(1, 0)).unwrap();
/// queue.push(8, FrameInput::buttons(2, 0)).unwrap();
/// assert!(queue.push(9, FrameInput::default()).is_err(), "bounded");
/// queue.commit();
/// let mut out = Vec::new();
/// queue.front(10, &mut out);
/// assert_eq!(out, [(7, FrameInput::buttons(1, 0)), (8, FrameInput::buttons(2, 0))]);
/// queue.discard_front(2);
/// assert!(queue.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct MemoryDlq {
    records: VecDeque<(u64, FrameInput)>,
    committed: usize,
    capacity: usize,
}

impl MemoryDlq {
    /// An empty queue that holds at most `capacity` records.
    pub fn new(capacity: usize) -> MemoryDlq {
        MemoryDlq { records: VecDeque::new(), committed: 0, capacity }
    }

    /// Appends a record at the back, pending until the next commit.
    pub fn push(&mut self, seq: u64, record: FrameInput) -> Result<(), DlqFull> {
        if self.records.len() >= self.capacity {
            return Err(DlqFull { capacity: self.capacity });
        }
        self.records.push_back((seq, record));
        Ok(())
    }

    /// Every pending record is committed.
    pub fn commit(&mut self) {
        self.committed = self.records.len();
    }

    /// The first `n` pending records are committed (a commit that covered them; records pushed since
    /// it started wait for the next).
    pub fn commit_first(&mut self, n: usize) {
        self.committed = (self.committed + n).min(self.records.len());
    }

    /// Drops the pending records; returns how many.
    pub fn drop_uncommitted(&mut self) -> u64 {
        let dropped = self.records.len() - self.committed;
        self.records.truncate(self.committed);
        dropped as u64
    }

    /// The pending records, oldest first.
    pub fn uncommitted(&self) -> impl Iterator<Item = (u64, FrameInput)> + '_ {
        self.records.iter().skip(self.committed).copied()
    }

    /// Up to `max` committed records from the front, oldest first, appended to `out`; they stay queued.
    pub fn front(&self, max: usize, out: &mut Vec<(u64, FrameInput)>) {
        out.extend(self.records.iter().take(max.min(self.committed)).copied());
    }

    /// Removes up to `n` committed records from the front.
    pub fn discard_front(&mut self, n: usize) {
        let n = n.min(self.committed);
        self.records.drain(..n);
        self.committed -= n;
    }

    /// Records held, pending included.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_bounded_and_pending_records_stay_back() {
        let mut q = MemoryDlq::new(3);
        for i in 0..3 {
            q.push(u64::from(i), FrameInput::buttons(i, 0)).unwrap();
        }
        assert_eq!(q.push(3, FrameInput::default()), Err(DlqFull { capacity: 3 }));
        let mut out = Vec::new();
        q.front(2, &mut out);
        assert!(out.is_empty(), "nothing committed yet");
        q.commit();
        q.front(2, &mut out);
        assert_eq!(out, [(0, FrameInput::buttons(0, 0)), (1, FrameInput::buttons(1, 0))]);
        q.discard_front(2);
        assert_eq!(q.len(), 1);
        q.push(3, FrameInput::buttons(3, 0)).unwrap();
        assert_eq!(q.uncommitted().collect::<Vec<_>>(), [(3, FrameInput::buttons(3, 0))]);
        assert_eq!(q.drop_uncommitted(), 1);
        assert_eq!(q.len(), 1);
    }
}

/// Why a journal commit failed, in the terms the pipeline acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitFailure {
    /// The store refused this writer (fenced by a newer epoch, or its record of the pipeline
    /// damaged): reported before the commit's answer, so the pipeline refuses those records as
    /// fenced instead of retrying them.
    pub store: Option<crate::events::StoreEvent>,
    /// What failed, for the log and the producers' answers.
    pub message: String,
}

/// Where a pipeline's journal actions are written: the service's journal (a data directory or a
/// shared store, on a thread of its own) or a test's.
pub trait JournalSink {
    /// Adds a record, pending until the next commit.
    fn append(&mut self, seq: u64, input: FrameInput);
    /// Writes the pending records durably; on a failure they are dropped.
    fn commit(&mut self) -> Result<(), CommitFailure>;
    /// Records before `seq` are no longer needed for recovery.
    fn release_before(&mut self, seq: u64);
}

/// True for the actions a [`JournalSink`] executes.
pub fn is_journal_action(action: &crate::events::Action) -> bool {
    use crate::events::Action;
    matches!(action, Action::AppendJournal { .. } | Action::Commit | Action::ReleaseJournal { .. })
}

/// Executes `action` on `sink` if it is a journal action (others are not the sink's) and returns the
/// events that answer it, in order: a commit's answer, after the store's refusal when there is one.
pub fn execute_journal_action(
    sink: &mut dyn JournalSink,
    action: &crate::events::Action,
) -> Vec<crate::events::Event> {
    use crate::events::{Action, Event};
    match action {
        Action::AppendJournal { first_seq, inputs } => {
            for (seq, &input) in (*first_seq..).zip(inputs) {
                sink.append(seq, input);
            }
        }
        Action::Commit => {
            return match sink.commit() {
                Ok(()) => vec![Event::Committed { journal_error: None }],
                Err(failure) => failure
                    .store
                    .map(Event::Store)
                    .into_iter()
                    .chain([Event::Committed { journal_error: Some(failure.message) }])
                    .collect(),
            };
        }
        Action::ReleaseJournal { seq } => sink.release_before(*seq),
        _ => {}
    }
    Vec::new()
}
