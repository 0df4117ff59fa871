//! The dead-letter queue: where a read-only pipeline puts the input records it may not run yet, to
//! replay them in order once it is verified again.
//!
//! [`DeadLetterQueue`] is the seam; [`FileDlq`] is the durable queue the service uses (an append-only
//! file of framed records, `file.rs`), [`MemoryDlq`] keeps them in memory (tests, and what a crash
//! loses). Records are pushed, then committed together ([`DeadLetterQueue::commit`], once per accepted
//! batch, before the producer is answered); a failed commit drops what was pushed since the last one,
//! so the pipeline can refuse exactly those records.

mod file;

use std::collections::VecDeque;

use anes_core::movie::FrameInput;
use thiserror::Error;

pub use file::{DLQ_MAGIC, DlqInspection, DlqOpenReport, FileDlq, InspectedRecord, inspect};

/// Why a record was not taken.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DlqError {
    /// The queue is full; the record was not taken.
    #[error("the dead-letter queue is full ({capacity} records)")]
    Full {
        /// Records the queue holds at most.
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
/// use anes_ops::dlq::{DeadLetterQueue, MemoryDlq};
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
