//! The dead-letter queue: where a read-only pipeline puts the input records it may not run yet, to
//! replay them in order once it is verified again.
//!
//! [`DeadLetterQueue`] is the seam; [`FileDlq`] is the durable queue the service uses (an append-only
//! file of framed records, `file.rs`), [`MemoryDlq`] keeps them in memory (tests, and what a crash
//! loses). Records are pushed, then committed together ([`DeadLetterQueue::commit`], once per accepted
//! batch, before the producer is answered); a failed commit drops what was pushed since the last one,
//! so the pipeline can refuse exactly those records.

mod file;

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

pub use anes_pipeline::storage::MemoryDlq;

// The pipeline's own in-memory queue is the non-durable queue of tests (and what a crash loses).
impl DeadLetterQueue for MemoryDlq {
    fn push(&mut self, seq: u64, record: FrameInput) -> Result<(), DlqError> {
        MemoryDlq::push(self, seq, record).map_err(|full| DlqError::Full { capacity: full.capacity })
    }

    fn commit(&mut self) -> Result<(), DlqError> {
        MemoryDlq::commit(self);
        Ok(())
    }

    fn front(&self, max: usize, out: &mut Vec<(u64, FrameInput)>) {
        MemoryDlq::front(self, max, out);
    }

    fn discard_front(&mut self, n: usize) -> Result<(), DlqError> {
        MemoryDlq::discard_front(self, n);
        Ok(())
    }

    fn len(&self) -> usize {
        MemoryDlq::len(self)
    }
}
