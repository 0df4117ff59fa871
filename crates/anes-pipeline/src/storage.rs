//! The pipeline's storage seams: the dead-letter queue and the journal it writes through. The durable
//! implementations (files, fsync) live in the service; here are the traits, their errors and the
//! in-memory queue the pipeline uses alone.

use std::collections::VecDeque;

use anes_core::movie::FrameInput;
use thiserror::Error;

/// Why a record was not taken.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DlqError {
    /// The queue is full; the record was not taken.
    #[error("the dead-letter queue is full ({capacity} records)")]
    Full {
        /// Its capacity.
        capacity: usize,
    },
    /// The queue's file could not be written or read.
    #[error("the dead-letter queue's file: {0}")]
    Io(String),
    /// The queue's file could not be read: missing, not a regular file, or larger than any queue (an
    /// [`anes_fs::ReadError`]'s message, which names the file).
    #[error("{0}")]
    Read(String),
}

/// A FIFO of input records set aside while a pipeline is read-only, each with its sequence number.
pub trait DeadLetterQueue: Send + std::fmt::Debug {
    /// Appends a record at the back (pending until [`DeadLetterQueue::commit`]).
    fn push(&mut self, seq: u64, record: FrameInput) -> Result<(), DlqError>;
    /// Makes the pending records durable (by the fsync policy). On an error they are dropped.
    fn commit(&mut self) -> Result<(), DlqError>;
    /// Up to `max` committed records from the front, oldest first, appended to `out`; they stay queued.
    fn front(&self, max: usize, out: &mut Vec<(u64, FrameInput)>);
    /// Removes `n` records from the front once they are safe elsewhere (journaled); the file is
    /// truncated when the queue is empty.
    fn discard_front(&mut self, n: usize) -> Result<(), DlqError>;
    /// Records held (pending included).
    fn len(&self) -> usize;
    /// True when empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A bounded in-memory [`DeadLetterQueue`].
///
/// ```
/// use anes_core::movie::FrameInput;
/// use anes_pipeline::storage::{DeadLetterQueue, MemoryDlq};
/// let mut queue = MemoryDlq::new(2);
/// queue.push(7, FrameInput::buttons(1, 0)).unwrap();
/// queue.push(8, FrameInput::buttons(2, 0)).unwrap();
/// assert!(queue.push(9, FrameInput::default()).is_err(), "bounded");
/// queue.commit().unwrap();
/// let mut out = Vec::new();
/// queue.front(10, &mut out);
/// assert_eq!(out, [(7, FrameInput::buttons(1, 0)), (8, FrameInput::buttons(2, 0))]);
/// queue.discard_front(2).unwrap();
/// assert!(queue.is_empty());
/// ```
#[derive(Debug)]
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
}

impl DeadLetterQueue for MemoryDlq {
    fn push(&mut self, seq: u64, record: FrameInput) -> Result<(), DlqError> {
        if self.records.len() >= self.capacity {
            return Err(DlqError::Full { capacity: self.capacity });
        }
        self.records.push_back((seq, record));
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DlqError> {
        self.committed = self.records.len();
        Ok(())
    }

    fn front(&self, max: usize, out: &mut Vec<(u64, FrameInput)>) {
        out.extend(self.records.iter().take(max.min(self.committed)).copied());
    }

    fn discard_front(&mut self, n: usize) -> Result<(), DlqError> {
        let n = n.min(self.committed);
        self.records.drain(..n);
        self.committed -= n;
        Ok(())
    }

    fn len(&self) -> usize {
        self.records.len()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_and_bounded() {
        let mut q = MemoryDlq::new(3);
        for i in 0..3 {
            q.push(u64::from(i), FrameInput::buttons(i, 0)).unwrap();
        }
        assert_eq!(q.push(3, FrameInput::default()), Err(DlqError::Full { capacity: 3 }));
        let mut out = Vec::new();
        q.front(2, &mut out);
        assert!(out.is_empty(), "nothing committed yet");
        q.commit().unwrap();
        q.front(2, &mut out);
        assert_eq!(out, [(0, FrameInput::buttons(0, 0)), (1, FrameInput::buttons(1, 0))]);
        q.discard_front(2).unwrap();
        assert_eq!(q.len(), 1);
    }
}
