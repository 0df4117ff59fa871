//! The dead-letter queue: where a read-only pipeline puts the input records it may not run yet, to
//! replay them in order once it is verified again.
//!
//! [`DeadLetterQueue`] is the seam for a durable queue (a later change); [`MemoryDlq`] keeps them in
//! memory, so a crash of the service loses what it holds (and says so in the docs).

use std::collections::VecDeque;

use anes_core::movie::FrameInput;
use thiserror::Error;

/// The queue is full; the record was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the dead-letter queue is full ({capacity} records)")]
pub struct DlqFull {
    /// Its capacity.
    pub capacity: usize,
}

/// A FIFO of input records set aside while a pipeline is read-only.
pub trait DeadLetterQueue: Send + std::fmt::Debug {
    /// Appends a record at the back.
    fn push(&mut self, record: FrameInput) -> Result<(), DlqFull>;
    /// Takes up to `max` records from the front, oldest first, appending them to `out`.
    fn take_front(&mut self, max: usize, out: &mut Vec<FrameInput>);
    /// Records held.
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
/// queue.push(FrameInput::buttons(1, 0)).unwrap();
/// queue.push(FrameInput::buttons(2, 0)).unwrap();
/// assert!(queue.push(FrameInput::default()).is_err(), "bounded");
/// let mut out = Vec::new();
/// queue.take_front(10, &mut out);
/// assert_eq!(out, [FrameInput::buttons(1, 0), FrameInput::buttons(2, 0)]);
/// ```
#[derive(Debug)]
pub struct MemoryDlq {
    records: VecDeque<FrameInput>,
    capacity: usize,
}

impl MemoryDlq {
    /// An empty queue that holds at most `capacity` records.
    pub fn new(capacity: usize) -> MemoryDlq {
        MemoryDlq { records: VecDeque::new(), capacity }
    }
}

impl DeadLetterQueue for MemoryDlq {
    fn push(&mut self, record: FrameInput) -> Result<(), DlqFull> {
        if self.records.len() >= self.capacity {
            return Err(DlqFull { capacity: self.capacity });
        }
        self.records.push_back(record);
        Ok(())
    }

    fn take_front(&mut self, max: usize, out: &mut Vec<FrameInput>) {
        let n = max.min(self.records.len());
        out.extend(self.records.drain(..n));
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
            q.push(FrameInput::buttons(i, 0)).unwrap();
        }
        assert_eq!(q.push(FrameInput::default()), Err(DlqFull { capacity: 3 }));
        let mut out = Vec::new();
        q.take_front(2, &mut out);
        assert_eq!(out, [FrameInput::buttons(0, 0), FrameInput::buttons(1, 0)]);
        assert_eq!(q.len(), 1);
    }
}
